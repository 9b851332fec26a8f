package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * The closed loop inside {@link PowerFlowExecutor}: run times and queue waits, the tick, resizing
 * the delegate as the rate moves, callback failures, and the builder. Driven by a fake ticker and
 * a tick run by hand.
 */
class PowerFlowExecutorLoopTest {

    /**
     * Runs a task that takes {@code millis} of fake time, and waits until its run time is recorded
     * (which happens just after its Future completes).
     */
    static void runTaking(PowerFlowExecutor e, FakeTicker t, long millis) throws Exception {
        long recorded = e.stats().recorded();
        e.submit(() -> t.advanceMillis(millis)).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        await(() -> e.stats().recorded() == recorded + 1);
    }

    /**
     * An executor on the PI law (pinned: the executor builder's default is the knee-aware law), whose
     * first step from a single sample is kp × error, below the floor: the loop tests assert those numbers.
     */
    static PowerFlowExecutor.Builder loop(FakeTicker t, ManualScheduler s) {
        return PowerFlowExecutor.builder().rate(100).minRate(10).maxRate(200).targetP99(50).ticker(t).scheduler(s)
                .controlLaw(PowerFlowController.ControlLaw.PI);
    }

    // ------------------------------------------------------------ what is measured

    /** The latency recorded is the task's run time on the delegate, in ms, into the controller's window. */
    @Test
    void theRecordedLatencyIsTheRunTime() throws Exception {
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = loop(t, new ManualScheduler()).build();
        runTaking(e, t, 7);
        await(() -> e.stats().recorded() == 1);
        assertEquals(7.0, e.stats().p99(), 7.0 * 0.011);
        terminate(e);
    }

    /** The time a task waits before it starts is tracked separately, as queueWaitP99, and is not fed to the loop. */
    @Test
    void theQueueWaitIsTrackedSeparately() throws Exception {
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1000).minRate(1).ticker(t)
                .scheduler(new ManualScheduler()).build();
        e.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS); // waited 0
        // The worker reads the ticker for the run's end after the future completes: wait for the
        // record, or the advance below can land inside the first run.
        await(() -> e.stats().recorded() == 1);
        Future<?> second = e.submit(() -> { });                        // wait for admission
        Future<?> third = e.submit(() -> { });
        await(() -> e.stats().depth() == 1);
        t.advanceMillis(3);
        second.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        third.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        await(() -> e.stats().recorded() == 3);
        assertEquals(3.0, e.stats().queueWaitP99(), 3.0 * 0.011); // two of three waited 3 ms
        assertEquals(0.0, e.stats().p99(), 1e-9); // run times: both 0 ms of fake time
        terminate(e);
    }

    /** The tick observes with the elapsed time measured by the ticker; without elapsed time, nothing is observed. */
    @Test
    void theTickObservesOnlyWhenTimeHasPassed() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).build();
        runTaking(e, t, 5);
        t.set(0); // back to the construction reading: no time has passed
        assertEquals(1, s.runAll());
        assertEquals(0, e.stats().observations());
        t.advanceMillis(1000);
        s.runAll();
        assertEquals(1, e.stats().observations());
        assertEquals(5.0, e.stats().lastObservedP99(), 5.0 * 0.011);
        assertTrue(Double.isNaN(e.stats().p99())); // the window was reset
        terminate(e);
    }

    /** In fixed-rate mode the tick rolls the windows over but never moves the rate; minRate is optional. */
    @Test
    void fixedRateKeepsTheRate() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).fixedRate(true).ticker(t).scheduler(s).build();
        runTaking(e, t, 500);
        t.advanceMillis(1000);
        s.runAll();
        assertEquals(100, e.stats().rate());
        assertEquals(0, e.stats().observations());
        assertTrue(Double.isNaN(e.stats().p99()));
        terminate(e);
    }

    /** Stats is built from parts; every flat accessor reads the same figure from its part. */
    @Test
    void theStatsPartsCarryTheFlatFigures() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).build();
        runTaking(e, t, 5);
        t.advanceMillis(1000);
        s.runAll();
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(1, st.observations());
        assertEquals(st.loop().rate(), st.rate());
        assertEquals(st.loop().minRate(), st.minRate());
        assertEquals(st.loop().maxRate(), st.maxRate());
        assertEquals(st.loop().targetP99(), st.targetP99());
        assertEquals(st.loop().quantile(), st.quantile());
        assertEquals(st.loop().observations(), st.observations());
        assertEquals(st.loop().p99(), st.p99());
        assertEquals(st.loop().lastObservedP99(), st.lastObservedP99());
        assertEquals(st.loop().saturated(), st.saturated());
        assertEquals(st.loop().pausesExcused(), st.pausesExcused());
        assertEquals(st.queue().depth(), st.depth());
        assertEquals(st.queue().queueCapacity(), st.queueCapacity());
        assertEquals(st.queue().dropped(), st.dropped());
        assertEquals(st.queue().queueWaitP99(), st.queueWaitP99());
        assertEquals(st.tasks().submitted(), st.submitted());
        assertEquals(st.tasks().admitted(), st.admitted());
        assertEquals(st.tasks().recorded(), st.recorded());
        assertEquals(st.tasks().rejected(), st.rejected());
        assertEquals(st.tasks().running(), st.running());
        assertEquals(st.tasks().completed(), st.completed());
        assertEquals(st.tasks().failed(), st.failed());
        assertEquals(st.tasks().cancelled(), st.cancelled());
        assertEquals(1, st.submitted());
        assertEquals(1, st.completed());
        assertEquals(e.poolSize(), st.poolSize());
        assertEquals(e.controller().rate(), st.rate());
        assertEquals(e.controller().lastObservedP99(), st.lastObservedP99());
        terminate(e);
    }

    // ------------------------------------------------------------ resizing

    /** A caller's ThreadPoolExecutor is resized to the sizer's answer as the loop moves the rate, down and up. */
    @Test
    void aThreadPoolExecutorIsResizedAsTheRateMoves() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(4, 20, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        PoolSizer sizer = PoolSizer.littlesLaw(Duration.ofMillis(50), 1, 100);
        PowerFlowExecutor e = loop(t, s).delegate(pool).build();
        assertEquals(10, sizer.poolSize(100));
        assertPoolSized(pool, 10, e);

        List<Double> rates = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            runTaking(e, t, 5);
            t.advanceMillis(1000);
            s.runAll();
            rates.add(e.stats().rate());
            assertPoolSized(pool, sizer.poolSize(e.stats().rate()), e);
        }
        assertEquals(102.0, rates.get(0), 0.05 * 5 * 0.011); // bumpless: 100 + kp × (45 − 5)
        assertTrue(rates.get(1) > rates.get(0), rates.toString());
        assertTrue(rates.get(2) > rates.get(1), rates.toString());
        assertTrue(sizer.poolSize(rates.get(2)) > 1);
        terminate(e);
        assertFalse(pool.isShutdown()); // not owned
        pool.shutdown();
    }

    static void assertPoolSized(ThreadPoolExecutor pool, int size, PowerFlowExecutor e) {
        assertEquals(size, pool.getCorePoolSize());
        assertEquals(size, pool.getMaximumPoolSize());
        assertEquals(size, e.stats().poolSize());
    }

    /** The default delegate's concurrency bound follows the sizer as the rate moves. */
    @Test
    void theDefaultDelegatesBoundIsResizedAsTheRateMoves() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).poolSizer(rate -> (int) (rate / 5)).build();
        assertEquals(20, e.stats().poolSize());
        runTaking(e, t, 500);
        t.advanceMillis(500);
        s.runAll();
        assertEquals(77.25, e.stats().rate(), 0.05 * 500 * 0.011); // 100 + kp × (45 − 500)
        assertEquals(15, e.stats().poolSize());
        terminate(e);
    }

    /** The default delegate never runs more tasks at once than its bound. */
    @Test
    void theDefaultDelegateHonoursItsBound() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .poolSizer(rate -> 3).scheduler(new ManualScheduler()).build();
        AtomicInteger now = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            fs.add(e.submit(() -> {
                peak.accumulateAndGet(now.incrementAndGet(), Math::max);
                Thread.sleep(2);
                now.decrementAndGet();
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        }
        assertTrue(peak.get() <= 3, "peak " + peak.get());
        terminate(e);
    }

    /** A sizer's answer below 1 is taken as 1, so the executor never stops. */
    @Test
    void aSizerAnswerBelowOneIsOne() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1000).minRate(1).poolSizer(rate -> 0)
                .scheduler(new ManualScheduler()).build();
        assertEquals(1, e.stats().poolSize());
        assertEquals(1, e.submit(() -> 1).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        terminate(e);
    }

    // ------------------------------------------------------------ callbacks

    /**
     * The user's onRateChange runs on the executor's callback thread (not the tick's), once per
     * move of the rate, after the resize (it sees the new pool size), and not for a tick whose
     * window is empty; the tick returns once it has run.
     */
    @Test
    void theRateListenerRunsOnTheTickAfterTheResizeOnlyWhenTheRateMoves() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        List<Thread> threads = new ArrayList<>();
        List<double[]> calls = new ArrayList<>();
        AtomicReference<PowerFlowExecutor> self = new AtomicReference<>();
        PowerFlowExecutor e = loop(t, s).poolSizer(rate -> (int) rate).onRateChange((rate, previous) -> {
            threads.add(Thread.currentThread());
            calls.add(new double[] {rate, previous, self.get().poolSize()});
        }).build();
        self.set(e);
        t.advanceMillis(1000);
        s.runAll(); // an empty window: the rate does not move
        assertEquals(0, calls.size());
        runTaking(e, t, 500);
        t.advanceMillis(500);
        s.runAll();
        assertEquals(1, calls.size());
        assertArrayEquals(new double[] {77.25, 100, 77}, calls.get(0), 0.3); // 100 + kp × (45 − 500)
        assertEquals(e.name() + "-callbacks", threads.get(0).getName()); // not the tick's thread (here, this one)
        assertEquals(0, e.callbackFailures());
        terminate(e);
    }

    /** The user's onRateChange is called after the resize; one that throws is counted and stops neither the loop nor the dispatcher. */
    @Test
    void aThrowingRateListenerIsCountedAndStopsNothing() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        List<double[]> calls = new ArrayList<>();
        PowerFlowExecutor e = loop(t, s).poolSizer(rate -> (int) rate).onRateChange((rate, previous) -> {
            calls.add(new double[] {rate, previous});
            throw new IllegalStateException("listener boom");
        }).build();
        runTaking(e, t, 500);
        t.advanceMillis(500);
        s.runAll();
        assertEquals(1, calls.size());
        assertArrayEquals(new double[] {77.25, 100}, calls.get(0), 0.3); // 100 + kp × (45 − 500)
        assertEquals((int) calls.get(0)[0], e.stats().poolSize()); // resized before the listener ran
        assertEquals(1, e.callbackFailures());
        runTaking(e, t, 5);
        t.advanceMillis(1000);
        s.runAll();
        assertEquals(2, e.stats().observations());
        assertEquals(2, e.callbackFailures());
        terminate(e);
    }

    /** A pool sizer that throws is counted; the size stays, the rate still changes, and the loop goes on. */
    @Test
    void aThrowingPoolSizerIsCountedAndStopsNothing() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        AtomicInteger calls = new AtomicInteger();
        PowerFlowExecutor e = loop(t, s).poolSizer(rate -> {
            if (calls.getAndIncrement() > 0) {
                throw new IllegalStateException("sizer boom");
            }
            return 7;
        }).build();
        runTaking(e, t, 500);
        t.advanceMillis(500);
        s.runAll();
        assertEquals(77.25, e.stats().rate(), 0.3); // 100 + kp × (45 − 500)
        assertEquals(7, e.stats().poolSize());
        assertEquals(1, e.callbackFailures());
        runTaking(e, t, 5);
        terminate(e);
    }

    /** A rate change wakes a dispatcher that is already waiting for admission: the new rate applies at once. */
    @Test
    void aRateChangeWakesAWaitingDispatcher() throws Exception {
        ManualScheduler s = new ManualScheduler();
        // kp so high that one observation with any latency under target drives the rate to maxRate.
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(0.5).minRate(0.1).maxRate(1000).targetP99(50)
                .kp(1000).ki(0).scheduler(s).build();
        e.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        AtomicLong startedAt = new AtomicLong();
        Future<?> waiting = e.submit(() -> startedAt.set(System.nanoTime()));
        await(() -> e.stats().depth() == 0); // held: the next admission is 2 s away at 0.5/s
        long tickAt = System.nanoTime();
        s.runAll();
        assertEquals(1000, e.stats().rate(), 1e-9);
        waiting.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        long afterTickMs = (startedAt.get() - tickAt) / 1_000_000;
        assertTrue(afterTickMs < 1000, "started " + afterTickMs + " ms after the rate change; 2000 without the wake-up");
        terminate(e);
    }

    /** The tick survives a throwing observation: it is counted and the next tick runs. */
    @Test
    void aFailingTickIsCountedAndTheNextRuns() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = loop(t, s).build();
        runTaking(e, t, 5);
        t.advanceNanos(Long.MAX_VALUE / 2); // an absurd elapsed time still observes; nothing may throw out of the tick
        s.runAll();
        s.runAll();
        runTaking(e, t, 5);
        t.advanceMillis(1000);
        s.runAll();
        assertTrue(e.stats().observations() >= 1);
        terminate(e);
    }

    /** The tick is cancelled at termination, and a caller's scheduler is not shut down. */
    @Test
    void terminationCancelsTheTickButKeepsACallersScheduler() throws Exception {
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(1).scheduler(s).build();
        e.close();
        assertTrue(s.all().get(0).isCancelled());
        assertFalse(s.isShutdown());
        assertEquals(0, s.runAll());
    }

    // ------------------------------------------------------------ builder

    /** Unlike the flow controller, the executor requires no rate: only fixed-rate mode needs one. */
    @Test
    void onlyAFixedRateIsRequired() throws Exception {
        assertThrows(IllegalStateException.class, () -> PowerFlowExecutor.builder().fixedRate(true).build());
        // Unset, the ceiling is the open rate, the start the ceiling, the floor 1/s (or lower).
        PowerFlowExecutor open = PowerFlowExecutor.builder().scheduler(new ManualScheduler()).build();
        assertEquals(PowerFlowExecutor.OPEN_RATE, open.stats().maxRate());
        assertEquals(PowerFlowExecutor.OPEN_RATE, open.stats().rate());
        assertEquals(1.0, open.stats().minRate());
        terminate(open);
        PowerFlowExecutor capped = PowerFlowExecutor.builder().maxRate(50).scheduler(new ManualScheduler()).build();
        assertEquals(50, capped.stats().rate());
        assertEquals(0.5, capped.stats().minRate()); // maxRate / 100
        terminate(capped);
        PowerFlowExecutor slow = PowerFlowExecutor.builder().rate(0.2).scheduler(new ManualScheduler()).build();
        assertEquals(0.2, slow.stats().minRate()); // never above the starting rate
        terminate(slow);
    }

    /** The flow-controller options are validated with the controller's messages, and nothing starts on a bad build. */
    @Test
    void flowOptionsAreValidatedAsTheControllersAre() {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().rate(Double.NaN));
        assertEquals("rate must be finite and > 0: NaN", x.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().minRate(0));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().maxRate(-1));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().burst(-1));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().targetP99(0));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().targetP99(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().quantile(1.5));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().queueCapacity(0));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().kp(-1));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().ki(Double.POSITIVE_INFINITY));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().kd(-1));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().derivativeFilter(1));
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().relativeAccuracy(0));
        assertThrows(NullPointerException.class, () -> PowerFlowExecutor.builder().ticker(null));
        IllegalArgumentException cross = assertThrows(IllegalArgumentException.class,
                () -> PowerFlowExecutor.builder().rate(5).minRate(10).name("never-started").build());
        assertTrue(cross.getMessage().contains("rate must be within"), cross.getMessage());
        assertEquals(0, PowerFlowExecutorTest.liveThreadsNamed("never-started"));
    }

    /** The executor's own options are validated, naming the option and the value. */
    @Test
    void executorOptionsAreValidated() {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> PowerFlowExecutor.builder().observeInterval(Duration.ZERO));
        assertEquals("observeInterval must be positive: PT0S", x.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().observeInterval(Duration.ofMillis(-1)));
        x = assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().maxConcurrency(0));
        assertEquals("maxConcurrency must be >= 1: 0", x.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PowerFlowExecutor.builder().name(" "));
        NullPointerException n = assertThrows(NullPointerException.class, () -> PowerFlowExecutor.builder().observeInterval(null));
        assertEquals("observeInterval", n.getMessage());
        assertThrows(NullPointerException.class, () -> PowerFlowExecutor.builder().delegate(null));
        assertThrows(NullPointerException.class, () -> PowerFlowExecutor.builder().poolSizer(null));
        assertThrows(NullPointerException.class, () -> PowerFlowExecutor.builder().rejectionPolicy(null));
        assertThrows(NullPointerException.class, () -> PowerFlowExecutor.builder().scheduler(null));
        assertThrows(NullPointerException.class, () -> PowerFlowExecutor.builder().name(null));
    }

    /** The default name is power-flow-N and the threads carry it. */
    @Test
    void theDefaultNameIsPowerFlowN() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(1).scheduler(new ManualScheduler()).build();
        assertTrue(e.name().matches("power-flow-\\d+"), e.name());
        assertEquals(e.name() + "-dispatcher", e.dispatcherThread().getName());
        CountDownLatch ran = new CountDownLatch(1);
        String[] worker = new String[1];
        e.execute(() -> {
            worker[0] = Thread.currentThread().getName();
            ran.countDown();
        });
        assertTrue(ran.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertEquals(e.name() + "-worker", worker[0]);
        terminate(e);
    }

    /** stats() carries the controller's configuration through. */
    @Test
    void statsCarryTheControllersFields() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(5).maxRate(800).targetP99(30)
                .quantile(0.95).queueCapacity(256).scheduler(new ManualScheduler()).build();
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(100, st.rate());
        assertEquals(5, st.minRate());
        assertEquals(800, st.maxRate());
        assertEquals(30, st.targetP99());
        assertEquals(0.95, st.quantile());
        assertEquals(256, st.queueCapacity());
        assertEquals(0, st.submitted());
        assertTrue(Double.isNaN(st.lastObservedP99()));
        assertTrue(Double.isNaN(st.queueWaitP99()));
        assertSame(e.controller(), e.controller());
        assertEquals(100, e.controller().rate());
        terminate(e);
    }

    /**
     * With a global limiter (issue 9's fleet-wide ceiling), a task starts only when both limiters
     * admit it, and the local limiter is never left charged for a task the global one refused.
     */
    @Test
    void aGlobalLimiterMustAlsoAdmitAndARefusalChargesNothingLocally() throws Exception {
        FakeTicker t = new FakeTicker();
        PowerGCRA global = PowerGCRA.builder().rate(1).ticker(t).build(); // 1/s, burst 0
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1000).minRate(1).maxRate(2000).targetP99(50)
                .ticker(t).scheduler(new ManualScheduler()).globalLimiter(global)
                .shedding(false).build(); // the second task waits 1 s of fake time, 20 × the target
        AtomicInteger ran = new AtomicInteger();
        e.submit(ran::incrementAndGet).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        Future<?> second = e.submit(ran::incrementAndGet);
        await(() -> e.stats().depth() == 0); // the dispatcher holds it, waiting for the global limiter
        // 100 ms later the local limiter (1000/s) would admit again, the global one (1/s) not yet.
        // The fake clock then stands still while the dispatcher keeps asking (about once per
        // millisecond of real time): had a refused attempt left the local limiter charged, its
        // next admission would move further into the future at every attempt.
        t.advanceMillis(100);
        for (int i = 0; i < 50 && !second.isDone(); i++) {
            Thread.sleep(1);
        }
        assertFalse(second.isDone(), "the global limiter (1/s, clock frozen) cannot have admitted it");
        assertEquals(1, ran.get());
        assertEquals(0, e.controller().limiter().retryAfterNanos(1),
                "the local limiter was charged for attempts the global one refused");
        assertEquals(1, e.controller().limiter().available());
        t.advanceMillis(900);
        second.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        assertEquals(2, ran.get());
        assertEquals(2, e.stats().admitted());
        terminate(e);
    }
    // ------------------------------------------------------------ pauses of the process

    /**
     * The dispatcher paces the second task for 1 s; the fake clock passes 1.3 s before it wakes
     * (a pause of the process, as far as it can tell): it notes 300 ms, and the knee-aware law
     * excuses the window, holding 1/s. Woken on time, the same window climbs by 30 %. The
     * observe interval is 2 s, so that the tick, at 1.3 s, is not late itself.
     */
    @Test
    void aLateWakeUpOfTheDispatcherIsNotedAsAPause() throws Exception {
        assertEquals(1.0, rateAfterWakingLate(300), 1e-9);
        assertEquals(1.3, rateAfterWakingLate(0), 1e-9);
    }

    /**
     * At 1/s, runs one task (admitted at once), queues a second, waits for the dispatcher to
     * park for its admission (1 s of fake time away), moves the clock {@code 1000 + lateMs}
     * on, wakes the dispatcher, and runs one tick; returns the rate after it.
     */
    private static double rateAfterWakingLate(long lateMs) throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = pausing(t, s).observeInterval(Duration.ofSeconds(2))
                .shedding(false).build(); // the second task waits 1 s of fake time, over the target
        e.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        Future<?> second = e.submit(() -> { });
        // The dispatcher's only timed park is the wait for admission.
        await(() -> e.dispatcherThread().getState() == Thread.State.TIMED_WAITING);
        t.advanceMillis(1000 + lateMs);
        java.util.concurrent.locks.LockSupport.unpark(e.dispatcherThread());
        second.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        await(() -> e.stats().recorded() == 2);
        return tickOnce(e, s);
    }

    /**
     * A tick 300 ms after its 1-s interval (held up by a pause of the process) notes the
     * lateness, and the law excuses the window: 1/s holds. On time, or 10 ms late (noted: the
     * law reads only pauses of 50 ms or more), the window climbs by 30 %.
     */
    @Test
    void aLateTickIsNotedAsAPause() throws Exception {
        assertEquals(1.0, rateAfterTickingLate(1300), 1e-9);
        assertEquals(1.3, rateAfterTickingLate(1000), 1e-9);
        assertEquals(1.3, rateAfterTickingLate(1040), 1e-9);
    }

    /** At 1/s, runs one task, moves the clock {@code ms} on and runs one tick; returns the rate after it. */
    private static double rateAfterTickingLate(long ms) throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = pausing(t, s).build();
        e.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        await(() -> e.stats().recorded() == 1);
        t.advanceMillis(ms);
        return tickOnce(e, s);
    }

    /** An executor on the knee-aware law at 1/s (at most 100/s), target 50 ms. */
    static PowerFlowExecutor.Builder pausing(FakeTicker t, ManualScheduler s) {
        return PowerFlowExecutor.builder().rate(1).minRate(1).maxRate(100).targetP99(50).ticker(t).scheduler(s);
    }

    /**
     * Runs the tick once, checks that it observed and that the executor's stats count a pause
     * excused exactly when the rate held at 1/s (otherwise the window climbs), terminates the
     * executor; returns the rate after the tick.
     */
    private static double tickOnce(PowerFlowExecutor e, ManualScheduler s) throws Exception {
        s.runAll();
        assertEquals(1, e.stats().observations());
        double rate = e.controller().rate();
        assertEquals(rate == 1.0 ? 1 : 0, e.stats().pausesExcused());
        terminate(e);
        return rate;
    }
}
