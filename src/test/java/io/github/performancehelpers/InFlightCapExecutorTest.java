package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * The cap on the tasks in flight ({@link InFlightCap}) as the executor applies it, on a fake
 * ticker with the tick run by hand: a window of calls that all waited inside the downstream (each
 * ran 160 ms with up to 32 in flight, against a 100-ms target) caps what the delegate runs at once,
 * and the cap shows in {@code inFlightLimit()} and {@code stats()}. A fixed rate caps nothing.
 */
class InFlightCapExecutorTest {

    /** Runs {@code batch} tasks at once that all end {@code millis} of fake time after the last started. */
    private static void runBatch(PowerFlowExecutor e, FakeTicker t, int batch, long millis) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        long recorded = e.stats().recorded();
        for (int i = 0; i < batch; i++) {
            fs.add(e.submit(() -> {
                running.incrementAndGet();
                release.await();
                return null;
            }));
        }
        await(() -> running.get() == batch);
        t.advanceMillis(millis);
        release.countDown();
        for (Future<?> f : fs) {
            f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        }
        e.stats(); // drains the recorders' counts
        await(() -> e.stats().recorded() >= recorded + batch);
    }

    /**
     * Runs {@code tasks} tasks that each wait for a permit of a fair gate, {@code inFlight} at a
     * time: once that many wait, one is released, {@code millis} of fake time after the last, and
     * another submitted, so that each after the first {@code inFlight} starts with that many in
     * flight, and none waits in the queue.
     */
    private static void runThroughGate(PowerFlowExecutor e, FakeTicker t, int tasks, int inFlight, long millis)
            throws Exception {
        Semaphore gate = new Semaphore(0, true);
        List<Future<?>> fs = new ArrayList<>();
        long recorded = e.stats().recorded();
        for (int i = 0; i < tasks; i++) {
            fs.add(e.submit(() -> {
                gate.acquire();
                return null;
            }));
            int waiting = Math.min(i + 1, inFlight);
            await(() -> gate.getQueueLength() == waiting);
            if (waiting == inFlight) {
                t.advanceMillis(millis);
                gate.release();
                await(() -> gate.getQueueLength() == inFlight - 1);
            }
        }
        t.advanceMillis(millis);
        gate.release(inFlight);
        for (Future<?> f : fs) {
            f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        }
        e.stats();
        await(() -> e.stats().recorded() >= recorded + tasks);
    }

    /** Submits 30 tasks that block until released and returns the most that ran at once. */
    private static int peakOfThirty(PowerFlowExecutor e, int expectedPeak) throws Exception {
        return peakOfThirty(e, expectedPeak, 30);
    }

    /**
     * As {@link #peakOfThirty(PowerFlowExecutor, int)}, where the door takes only
     * {@code expectedAccepted} of the 30 and refuses the rest with a {@link ShedException}.
     */
    private static int peakOfThirty(PowerFlowExecutor e, int expectedPeak, int expectedAccepted) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger now = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            try {
                fs.add(e.submit(() -> {
                    peak.accumulateAndGet(now.incrementAndGet(), Math::max);
                    release.await();
                    now.decrementAndGet();
                    return null;
                }));
            } catch (ShedException refused) {
                // counted below
            }
        }
        assertEquals(expectedAccepted, fs.size(), "accepted at the door");
        await(() -> now.get() == expectedPeak && e.stats().depth() == expectedAccepted - expectedPeak);
        release.countDown();
        for (Future<?> f : fs) {
            f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        }
        return peak.get();
    }

    /**
     * An executor of 32 slots and a 100-ms target that has run two batches of 32 calls of 160 ms
     * each, all late, and observed that window (cap open before it), with a pause of the process
     * of {@code pauseMillis} noted in it (0 for none).
     */
    private static PowerFlowExecutor afterTwoLateBatches(String delegate, boolean fixedRate, long pauseMillis)
            throws Exception {
        return afterTwoLateBatches(delegate, fixedRate, pauseMillis, new FakeTicker(), new ManualScheduler());
    }

    /** As above, on the given ticker and scheduler, left at the end of that window. */
    private static PowerFlowExecutor afterTwoLateBatches(String delegate, boolean fixedRate, long pauseMillis,
            FakeTicker t, ManualScheduler s) throws Exception {
        PowerFlowExecutor e = executor(delegate, fixedRate, t, s);
        assertEquals(-1, e.inFlightLimit());
        runBatch(e, t, 32, 160);
        runBatch(e, t, 32, 160);
        t.advanceMillis(1000 - 2 * 160); // the window one interval long: a tick later than that notes a pause
        if (pauseMillis > 0) {
            Access.controller().noteStall(e.controller(), TimeUnit.MILLISECONDS.toNanos(pauseMillis));
        }
        s.runAll();
        return e;
    }

    /** An executor of 32 slots and a 100-ms target, its rate effectively unlimited. */
    private static PowerFlowExecutor executor(String delegate, boolean fixedRate, FakeTicker t, ManualScheduler s) {
        PowerFlowExecutor.Builder b = PowerFlowExecutor.builder().rate(1e6).minRate(1e5).maxRate(1e6).burst(1000)
                .targetP99(100).ticker(t).scheduler(s).poolSizer(rate -> 32).fixedRate(fixedRate);
        if (delegate.equals("pool")) {
            b.delegate(new ThreadPoolExecutor(32, 32, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>()))
                    .ownsDelegate(true);
        }
        return b.build();
    }

    /**
     * 64 calls that each ran 160 ms, started at 16.5 in flight on average and all late: the cap is
     * max(16.5 / 2, 16.5 × 50 / 160), 9, and 30 tasks then run 9 at a time. The queue starts one
     * every 160 / 9 ≈ 18 ms, so with the wait budget at its floor (10 ms: the run time is over the
     * target) the door takes one to wait and refuses the other 20.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pool", "virtual"})
    void callsThatQueuedInsideCapTheTasksInFlight(String delegate) throws Exception {
        PowerFlowExecutor e = afterTwoLateBatches(delegate, false, 0);
        assertEquals(9, e.inFlightLimit());
        assertEquals(9, e.stats().inFlightLimit());
        assertEquals(32, e.stats().poolSize(), "the pool's size is the sizer's");
        assertEquals(9, peakOfThirty(e, 9, 10));
        terminate(e);
    }

    /**
     * The same 64 late calls at half the pace, one batch of 32 a window: the first window, too few
     * calls to read a p99 from, leaves the cap open, and is read with the second as one
     * ({@link CapWindows}): the cap is 9, as from one window of 64.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pool", "virtual"})
    void sparseWindowsAreReadTogether(String delegate) throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = executor(delegate, false, t, s);
        runBatch(e, t, 32, 160);
        t.advanceMillis(1000 - 160);
        s.runAll();
        assertEquals(-1, e.inFlightLimit(), "32 calls: too few to read");
        runBatch(e, t, 32, 160);
        t.advanceMillis(1000 - 160);
        s.runAll();
        assertEquals(9, e.inFlightLimit());
        terminate(e);
    }

    /**
     * The window after the cut: 60 calls (enough to be read), all on time. Run through a gate with
     * 9 in flight, at the cap, it binds, and the rate law is not stepped on the window (its
     * observations do not move): a window the cap limited would read to it as saturated at the
     * cap's throughput. Two at a time bind nothing, and the law steps.
     */
    @ParameterizedTest
    @ValueSource(ints = {9, 2})
    void aWindowInWhichTheCapBindsIsNotGivenToTheLaw(int inFlight) throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = afterTwoLateBatches("pool", false, 0, t, s);
        assertEquals(9, e.inFlightLimit());
        long observations = e.controller().stats().observations();
        if (inFlight == 9) {
            runThroughGate(e, t, 60, 9, 2);
        } else {
            for (int i = 0; i < 30; i++) {
                runBatch(e, t, 2, 4);
            }
        }
        t.advanceMillis(1000 - 120);
        s.runAll();
        assertEquals(inFlight == 9 ? observations : observations + 1, e.controller().stats().observations());
        terminate(e);
    }

    /**
     * After the cut to 9, the downstream is a FIFO server that ends a call every 2 ms: with 9 in
     * flight each runs 18 ms, under the cap's budget (50 ms), and the cap grows by the budget's
     * ratio, at most twice, to 18. At 18 in flight the calls will run 36 ms, so the next window's
     * wait budget is set from 18 ms times that growth: 90 - 36 = 54 ms, not the 72 ms the last
     * window's run time alone would leave, with which a task that waited its budget would end at
     * 108 ms against the 100-ms target. The next window does run 36 ms, and the cap grows to 25:
     * 90 - 36 × 25 / 18 = 40 ms.
     */
    @Test
    void aCapThatGrowsSetsTheNextWaitBudgetFromTheRunTimeItWillBring() throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = afterTwoLateBatches("pool", false, 0, t, s);
        assertEquals(9, e.inFlightLimit());
        int[] caps = {18, 25};
        double[] runs = {18, 36};
        double[] budgets = {54, 40};
        for (int k = 0; k < caps.length; k++) {
            runThroughGate(e, t, 60, e.inFlightLimit(), 2);
            t.advanceMillis(1000 - 120);
            s.runAll();
            assertEquals(runs[k], e.controller().lastObservedP99(), runs[k] * 0.02);
            assertEquals(caps[k], e.inFlightLimit());
            assertEquals(budgets[k] * 1e6, e.waitBudgetNanos(), budgets[k] * 1e6 * 0.02);
        }
        terminate(e);
    }

    /**
     * The cap doubled from 9 to 18 on the FIFO server above (calls of 18 ms under a 50-ms budget).
     * The next tick's window holds 30 calls, too few for the cap to step on, so it is gathered; but
     * the doubling is judged on them ({@code InFlightCap.judgeGrowth}). Where the server now ends a
     * call every 10 ms, they ran five times as long as the reference's at 9 in flight, a p99 that
     * would be over the budget: the cap goes back to 9 at that tick. Where it still ends one every
     * 2 ms, they ran as the doubling predicted, within the budget, and the cap stays at 18.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 10})
    void aDoubledCapWhoseFirstCallsQueuePastTheBudgetGoesBackAtTheNextTick(int everyMillis) throws Exception {
        FakeTicker t = new FakeTicker();
        ManualScheduler s = new ManualScheduler();
        PowerFlowExecutor e = afterTwoLateBatches("pool", false, 0, t, s);
        runThroughGate(e, t, 60, e.inFlightLimit(), 2);
        t.advanceMillis(1000 - 120);
        s.runAll();
        assertEquals(18, e.inFlightLimit(), "doubled");
        runThroughGate(e, t, 30, 18, everyMillis);
        t.advanceMillis(1000 - 14 * everyMillis);
        s.runAll();
        assertEquals(everyMillis == 2 ? 18 : 9, e.inFlightLimit());
        terminate(e);
    }

    /** At a fixed rate the same windows cap nothing: all 30 run at once on the 32 slots. */
    @ParameterizedTest
    @ValueSource(strings = {"pool", "virtual"})
    void aFixedRateCapsNothing(String delegate) throws Exception {
        assertCapsNothing(afterTwoLateBatches(delegate, true, 0));
    }

    /**
     * The same window with a pause of 120 ms noted in it (over half the 100-ms target): it caps
     * nothing, as the knee-aware law does not cut on it; every call in flight during a pause ends
     * late whatever the downstream did.
     */
    @ParameterizedTest
    @ValueSource(strings = {"pool", "virtual"})
    void aWindowWithAPauseCapsNothing(String delegate) throws Exception {
        assertCapsNothing(afterTwoLateBatches(delegate, false, 120));
    }

    /** No cap: all 30 tasks run at once on the 32 slots; then terminates the executor. */
    private static void assertCapsNothing(PowerFlowExecutor e) throws Exception {
        assertEquals(-1, e.inFlightLimit());
        assertEquals(30, peakOfThirty(e, 30));
        terminate(e);
    }
}
