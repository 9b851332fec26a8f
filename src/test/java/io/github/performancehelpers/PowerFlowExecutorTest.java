package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * The {@link java.util.concurrent.ExecutorService} contract of {@link PowerFlowExecutor}, in the
 * spirit of the JDK TCK's ThreadPoolExecutor and AbstractExecutorService tests: each method,
 * interrupts, cancellation, rejection, and the lifecycle.
 */
class PowerFlowExecutorTest {

    static final long LONG_DELAY_MS = 10_000;

    /** Waits (polling) until the condition holds; fails after 10 s. Not a timing assertion. */
    static void await(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LONG_DELAY_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("condition not reached in " + LONG_DELAY_MS + " ms");
            }
            Thread.onSpinWait();
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** An executor that admits at once: a high rate and burst, a manual tick. */
    static PowerFlowExecutor fast() {
        return PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(10_000).queueCapacity(1000)
                .scheduler(new ManualScheduler()).build();
    }

    /**
     * An executor on a frozen fake ticker at 1000/s with no burst: it admits exactly one task, and
     * one more per millisecond the test advances the ticker.
     */
    static PowerFlowExecutor frozen(FakeTicker t, int capacity) {
        return PowerFlowExecutor.builder().rate(1000).minRate(1).queueCapacity(capacity).ticker(t)
                .scheduler(new ManualScheduler()).build();
    }

    static void terminate(ExecutorService e) throws InterruptedException {
        e.shutdownNow();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
    }

    // ------------------------------------------------------------ execute and submit

    /** execute runs the task on another thread. */
    @Test
    void executeRunsTheTask() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            CountDownLatch done = new CountDownLatch(1);
            AtomicReference<Thread> ran = new AtomicReference<>();
            e.execute(() -> {
                ran.set(Thread.currentThread());
                done.countDown();
            });
            assertTrue(done.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertNotSame(Thread.currentThread(), ran.get());
        }
    }

    /** submit(Runnable) returns a Future that completes with null. */
    @Test
    void submitRunnableCompletesWithNull() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            Future<?> f = e.submit(() -> { });
            assertNull(f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertTrue(f.isDone());
        }
    }

    /** submit(Runnable, result) returns a Future that completes with the given result. */
    @Test
    void submitRunnableWithResultCompletesWithTheResult() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            assertEquals("r", e.submit(() -> { }, "r").get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
    }

    /** submit(Callable) returns a Future that completes with the callable's value. */
    @Test
    void submitCallableCompletesWithItsValue() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            assertEquals(42, e.submit(() -> 42).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
    }

    /** Every submission method throws NullPointerException for a null task. */
    @Test
    void nullTasksThrowNullPointerException() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            assertThrows(NullPointerException.class, () -> e.execute(null));
            assertThrows(NullPointerException.class, () -> e.submit((Runnable) null));
            assertThrows(NullPointerException.class, () -> e.submit((Runnable) null, "r"));
            assertThrows(NullPointerException.class, () -> e.submit((Callable<?>) null));
            assertThrows(NullPointerException.class, () -> e.invokeAll(null));
            assertThrows(NullPointerException.class, () -> e.invokeAny(null));
            List<Callable<Integer>> withNull = new ArrayList<>();
            withNull.add(() -> 1);
            withNull.add(null);
            assertThrows(NullPointerException.class, () -> e.invokeAll(withNull));
            // as in the TCK: the first task must not complete before invokeAny reaches the null
            CountDownLatch never = new CountDownLatch(1);
            List<Callable<Integer>> blockingThenNull = new ArrayList<>();
            blockingThenNull.add(() -> {
                never.await();
                return 1;
            });
            blockingThenNull.add(null);
            assertThrows(NullPointerException.class, () -> e.invokeAny(blockingThenNull));
        }
    }

    /** After shutdown, every submission method throws RejectedExecutionException, counted as rejected. */
    @Test
    void submissionsAfterShutdownAreRejected() throws Exception {
        PowerFlowExecutor e = fast();
        e.shutdown();
        assertThrows(RejectedExecutionException.class, () -> e.execute(() -> { }));
        assertThrows(RejectedExecutionException.class, () -> e.submit(() -> { }));
        assertThrows(RejectedExecutionException.class, () -> e.submit(() -> 1));
        assertThrows(RejectedExecutionException.class, () -> e.invokeAll(List.of(() -> 1)));
        assertEquals(4, e.stats().rejected());
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertThrows(RejectedExecutionException.class, () -> e.execute(() -> { }));
    }

    // ------------------------------------------------------------ invokeAll / invokeAny

    /** invokeAll returns every Future done, in the order of the tasks. */
    @Test
    void invokeAllReturnsDoneFuturesInOrder() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            List<Future<Integer>> fs = e.invokeAll(List.of(() -> 1, () -> 2, () -> 3));
            assertEquals(3, fs.size());
            for (int i = 0; i < 3; i++) {
                assertTrue(fs.get(i).isDone());
                assertEquals(i + 1, fs.get(i).get());
            }
        }
    }

    /** invokeAll of an empty collection returns an empty list. */
    @Test
    void invokeAllOfNothingIsEmpty() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            assertTrue(e.invokeAll(List.of()).isEmpty());
        }
    }

    /** A failing task's Future in invokeAll fails with the task's exception as the cause. */
    @Test
    void invokeAllReportsAFailingTask() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            List<Future<Integer>> fs = e.invokeAll(List.of(() -> 1, () -> {
                throw new IllegalStateException("boom");
            }));
            assertEquals(1, fs.get(0).get());
            ExecutionException x = assertThrows(ExecutionException.class, () -> fs.get(1).get());
            assertInstanceOf(IllegalStateException.class, x.getCause());
        }
    }

    /** Timed invokeAll cancels the tasks that have not completed when the timeout elapses. */
    @Test
    void timedInvokeAllCancelsUnfinishedTasks() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            CountDownLatch never = new CountDownLatch(1);
            List<Future<Integer>> fs = e.invokeAll(List.of(() -> 1, () -> {
                never.await();
                return 2;
            }), 100, TimeUnit.MILLISECONDS);
            assertEquals(1, fs.get(0).get());
            assertTrue(fs.get(1).isCancelled());
        }
    }

    /** invokeAny returns the result of a task that completed normally. */
    @Test
    void invokeAnyReturnsACompletedResult() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            CountDownLatch never = new CountDownLatch(1);
            assertEquals("ok", e.invokeAny(List.of(() -> {
                never.await();
                return "late";
            }, () -> "ok")));
        }
    }

    /** invokeAny throws ExecutionException when every task fails. */
    @Test
    void invokeAnyThrowsWhenAllFail() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            Callable<String> fail = () -> {
                throw new IllegalStateException("boom");
            };
            ExecutionException x = assertThrows(ExecutionException.class, () -> e.invokeAny(List.of(fail, fail)));
            assertInstanceOf(IllegalStateException.class, x.getCause());
        }
    }

    /** Timed invokeAny throws TimeoutException when no task completes in time. */
    @Test
    void timedInvokeAnyTimesOut() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            CountDownLatch never = new CountDownLatch(1);
            assertThrows(TimeoutException.class, () -> e.invokeAny(List.of(() -> {
                never.await();
                return 1;
            }), 50, TimeUnit.MILLISECONDS));
        }
    }

    /** invokeAny of an empty collection throws IllegalArgumentException. */
    @Test
    void invokeAnyOfNothingThrows() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            assertThrows(IllegalArgumentException.class, () -> e.invokeAny(List.of()));
        }
    }

    /** invokeAll is interruptible: an interrupted caller gets InterruptedException and the tasks are cancelled. */
    @Test
    void invokeAllIsInterruptible() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch never = new CountDownLatch(1);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread caller = new Thread(() -> {
                try {
                    e.invokeAll(List.of(() -> {
                        started.countDown();
                        never.await();
                        return 1;
                    }));
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            caller.start();
            assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            caller.interrupt();
            caller.join(LONG_DELAY_MS);
            assertFalse(caller.isAlive());
            assertInstanceOf(InterruptedException.class, thrown.get());
        }
    }

    // ------------------------------------------------------------ failures

    /** A task that throws is still timed, its Future fails with the cause, and the dispatcher keeps going. */
    @Test
    void aThrowingTaskIsTimedAndFailsItsFuture() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            Future<?> f = e.submit(() -> {
                throw new IllegalStateException("boom");
            });
            ExecutionException x = assertThrows(ExecutionException.class, () -> f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertEquals("boom", x.getCause().getMessage());
            assertEquals(7, e.submit(() -> 7).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            await(() -> e.stats().completed() == 1);
            assertEquals(1, e.stats().failed());
            assertEquals(2, e.stats().recorded());
        }
    }

    /** An execute() task's exception reaches its thread's uncaught-exception handler, and the executor keeps going. */
    @Test
    void anExecuteTasksExceptionReachesTheUncaughtExceptionHandler() throws Exception {
        ArrayBlockingQueue<Throwable> caught = new ArrayBlockingQueue<>(4);
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r);
            t.setUncaughtExceptionHandler((th, x) -> caught.add(x));
            return t;
        });
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .delegate(pool).ownsDelegate(true).scheduler(new ManualScheduler()).build()) {
            e.execute(() -> {
                throw new IllegalStateException("boom");
            });
            Throwable t = caught.poll(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            assertNotNull(t);
            assertEquals("boom", t.getMessage());
            assertEquals(3, e.submit(() -> 3).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertEquals(1, e.stats().failed());
        }
        assertTrue(pool.isTerminated());
    }

    /** On the default (virtual-thread) delegate, an execute() task's exception reaches the default uncaught handler. */
    @Test
    void anExecuteTasksExceptionOnAVirtualThreadReachesTheDefaultHandler() throws Exception {
        ArrayBlockingQueue<Throwable> caught = new ArrayBlockingQueue<>(4);
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((th, x) -> caught.add(x));
        try (PowerFlowExecutor e = fast()) {
            e.execute(() -> {
                throw new IllegalStateException("virtual boom");
            });
            Throwable t = caught.poll(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
            assertNotNull(t);
            assertEquals("virtual boom", t.getMessage());
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
    }

    // ------------------------------------------------------------ cancellation

    /** A cancelled Future still queued is skipped without consuming admission, and counted as cancelled. */
    @Test
    void aCancelledQueuedTaskIsSkippedWithoutAdmission() throws Exception {
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = frozen(t, 10);
        CountDownLatch release = new CountDownLatch(1);
        Future<?> first = e.submit(() -> {
            release.await();
            return null;
        });
        await(() -> e.stats().running() == 1);
        Future<?> second = e.submit(() -> { }); // held by the dispatcher, waiting for admission
        Future<?> third = e.submit(() -> { });  // queued
        await(() -> e.stats().depth() == 1);
        assertTrue(second.cancel(false));
        assertTrue(third.cancel(false));
        t.advanceMillis(1); // one admission's worth of time
        Future<Integer> fourth = e.submit(() -> 4);
        assertEquals(4, fourth.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertEquals(2, e.stats().admitted()); // first and fourth: the cancelled ones took none
        assertEquals(2, e.stats().cancelled());
        release.countDown();
        first.get();
        e.shutdown();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
    }

    /** Cancelling a running task's Future with interruption interrupts it. */
    @Test
    void cancellingARunningTaskInterruptsIt() throws Exception {
        try (PowerFlowExecutor e = fast()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch interrupted = new CountDownLatch(1);
            Future<?> f = e.submit(() -> {
                started.countDown();
                try {
                    Thread.sleep(LONG_DELAY_MS);
                } catch (InterruptedException x) {
                    interrupted.countDown();
                }
            });
            assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertTrue(f.cancel(true));
            assertTrue(interrupted.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertThrows(CancellationException.class, f::get);
            await(() -> e.stats().cancelled() == 1);
        }
    }

    // ------------------------------------------------------------ queue full

    /** A full queue refuses with QueueFullException, counted in dropped and rejected. */
    @Test
    void aFullQueueRejectsWithQueueFullException() throws Exception {
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = frozen(t, 2);
        CountDownLatch release = new CountDownLatch(1);
        e.execute(() -> awaitQuietly(release));
        await(() -> e.stats().running() == 1);
        e.execute(() -> { });
        await(() -> e.stats().depth() == 0); // held by the dispatcher
        e.execute(() -> { });
        e.execute(() -> { });
        assertThrows(QueueFullException.class, () -> e.execute(() -> { }));
        assertThrows(RejectedExecutionException.class, () -> e.submit(() -> 1));
        assertEquals(2, e.stats().dropped());
        assertEquals(2, e.stats().rejected());
        assertEquals(4, e.stats().submitted());
        release.countDown();
        terminate(e);
    }

    /**
     * An executor with a queue of one under {@code policy}, saturated: one task running until
     * {@code release} opens, one held by the dispatcher, and one filling the queue, so the next
     * task is refused.
     */
    private static PowerFlowExecutor saturated(RejectionPolicy policy, CountDownLatch release) {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1000).minRate(1).queueCapacity(1)
                .ticker(new FakeTicker()).rejectionPolicy(policy).scheduler(new ManualScheduler()).build();
        e.execute(() -> awaitQuietly(release));
        await(() -> e.stats().running() == 1);
        e.execute(() -> { });
        await(() -> e.stats().depth() == 0); // held by the dispatcher
        e.execute(() -> { }); // fills the queue
        return e;
    }

    /** CALLER_RUNS runs a refused task in the submitting thread. */
    @Test
    void callerRunsRunsARefusedTaskInTheCaller() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        PowerFlowExecutor e = saturated(RejectionPolicy.CALLER_RUNS, release);
        AtomicReference<Thread> ran = new AtomicReference<>();
        e.execute(() -> ran.set(Thread.currentThread()));
        assertSame(Thread.currentThread(), ran.get());
        assertEquals(1, e.stats().rejected());
        release.countDown();
        terminate(e);
    }

    /** DISCARD drops a refused task and cancels its Future, so nobody waits for it forever. */
    @Test
    void discardCancelsTheRefusedFuture() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        PowerFlowExecutor e = saturated(RejectionPolicy.DISCARD, release);
        Future<?> f = e.submit(() -> 1);
        assertTrue(f.isCancelled());
        assertEquals(1, e.stats().rejected());
        release.countDown();
        terminate(e);
    }

    // ------------------------------------------------------------ shutdown

    /** shutdown refuses new tasks but still runs the queued ones under the limiter, then terminates. */
    @Test
    void shutdownRunsQueuedTasksUnderTheLimiter() throws Exception {
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = frozen(t, 10);
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            e.execute(ran::incrementAndGet);
        }
        await(() -> ran.get() == 1);
        e.shutdown();
        assertTrue(e.isShutdown());
        assertFalse(e.isTerminated());
        assertFalse(e.awaitTermination(20, TimeUnit.MILLISECONDS)); // two still need admission
        assertEquals(1, ran.get());
        t.advanceMillis(1);
        await(() -> ran.get() == 2);
        t.advanceMillis(1);
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertTrue(e.isTerminated());
        assertEquals(3, ran.get());
        assertEquals(3, e.stats().completed());
    }

    /** shutdown of an idle executor terminates it promptly. */
    @Test
    void shutdownOfAnIdleExecutorTerminates() throws Exception {
        PowerFlowExecutor e = fast();
        assertFalse(e.isShutdown());
        e.shutdown();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertTrue(e.isTerminated());
        e.shutdown(); // idempotent
        assertTrue(e.shutdownNow().isEmpty());
        assertTrue(e.isTerminated());
    }

    /** shutdownNow returns every task that never started (queued and held) as submitted, and interrupts the running one. */
    @Test
    void shutdownNowReturnsUnstartedTasksAndInterruptsRunningOnes() throws Exception {
        FakeTicker t = new FakeTicker();
        PowerFlowExecutor e = frozen(t, 10);
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Future<?> running = e.submit(() -> {
            started.countDown();
            try {
                Thread.sleep(LONG_DELAY_MS);
            } catch (InterruptedException x) {
                interrupted.set(true);
            }
        });
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        Future<?> held = e.submit(() -> { });
        await(() -> e.stats().depth() == 0);
        Runnable plain = () -> { };
        e.execute(plain);
        Future<?> queued = e.submit(() -> 1);
        List<Runnable> never = e.shutdownNow();
        assertEquals(List.of(held, plain, queued), never);
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertTrue(interrupted.get());
        assertTrue(running.isDone());
        assertFalse(held.isDone()); // returned to the caller, never run
        assertEquals(0, e.stats().depth());
    }

    /** shutdownNow takes back the tasks waiting in a caller's ThreadPoolExecutor queue, leaving the pool running. */
    @Test
    void shutdownNowTakesTasksBackFromACallersPoolQueue() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        CountDownLatch blockPool = new CountDownLatch(1);
        pool.execute(() -> awaitQuietly(blockPool)); // the caller's own work occupies the thread
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .delegate(pool).poolSizer(rate -> 1).scheduler(new ManualScheduler()).build();
        AtomicBoolean ran = new AtomicBoolean();
        Future<?> f = e.submit(() -> ran.set(true));
        await(() -> pool.getQueue().size() == 1); // handed off, waiting in the pool's queue
        List<Runnable> never = e.shutdownNow();
        assertEquals(List.of(f), never);
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertFalse(pool.isShutdown()); // not owned
        blockPool.countDown();
        assertEquals(5, pool.submit(() -> 5).get());
        assertFalse(ran.get());
        pool.shutdown();
        assertTrue(pool.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
    }

    /** shutdownNow of an owned ThreadPoolExecutor delegate returns the tasks in its queue and shuts it down. */
    @Test
    void shutdownNowStopsAnOwnedPoolAndReturnsItsQueuedTasks() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        CountDownLatch blockPool = new CountDownLatch(1);
        pool.execute(() -> awaitQuietly(blockPool));
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .delegate(pool).ownsDelegate(true).poolSizer(rate -> 1).scheduler(new ManualScheduler()).build();
        Future<?> f = e.submit(() -> { });
        await(() -> pool.getQueue().size() == 1);
        List<Runnable> never = e.shutdownNow();
        assertEquals(List.of(f), never);
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertTrue(pool.isTerminated()); // its own blocker was interrupted by shutdownNow
    }

    /**
     * A ThreadPoolExecutor delegate of size 2 holds 2 tasks in flight (both running, none in its
     * queue: its finishing workers take the next task from this executor's queue themselves), the
     * size stays the sizer's 2, and shutdownNow returns the queued tasks and interrupts the running
     * ones (through the owned pool's own shutdownNow).
     */
    @Test
    void aPoolDelegateHoldsOneTaskPerThreadInFlight() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .delegate(pool).ownsDelegate(true).poolSizer(rate -> 2).scheduler(new ManualScheduler()).build();
        assertPoolInFlight(e, pool, 2, 0);
    }

    /**
     * With a global limiter (whose admissions cannot be refunded, so workers do not take tasks
     * themselves) the pool of size 2 holds 4 tasks in flight: 2 running and 2 in its queue, so that
     * a finishing worker finds its next task there instead of waiting for the dispatcher;
     * shutdownNow returns the queued and the pool-queued tasks.
     */
    @Test
    void withAGlobalLimiterAPoolDelegateHoldsTwoTasksPerThreadInFlight() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .globalLimiter(PowerGCRA.builder().rate(1_000_000).burst(1000).build())
                .delegate(pool).ownsDelegate(true).poolSizer(rate -> 2).scheduler(new ManualScheduler()).build();
        assertPoolInFlight(e, pool, 2, 2);
    }

    /**
     * Submits 6 blocking tasks and checks that {@code running} run and {@code poolQueued} wait in
     * the pool's queue, the rest in the executor's queue; then shutdownNow returns the executor's
     * queued tasks followed by the pool's, interrupts the running ones and terminates the pool.
     */
    private static void assertPoolInFlight(PowerFlowExecutor e, ThreadPoolExecutor pool, int running,
            int poolQueued) throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger interrupted = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            fs.add(e.submit(() -> {
                try {
                    never.await();
                } catch (InterruptedException x) {
                    interrupted.incrementAndGet();
                }
            }));
        }
        int queued = 6 - running - poolQueued;
        // the dispatcher waits for a slot before it takes a task, so it holds none
        await(() -> pool.getActiveCount() == running && pool.getQueue().size() == poolQueued
                && e.stats().depth() == queued);
        assertEquals(2, e.poolSize());
        assertEquals(2, pool.getMaximumPoolSize());
        List<Runnable> back = e.shutdownNow();
        List<Future<?>> expected = new ArrayList<>(fs.subList(running + poolQueued, 6));
        expected.addAll(fs.subList(running, running + poolQueued));
        assertEquals(expected, back);
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertEquals(running, interrupted.get());
        assertTrue(pool.isTerminated());
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(running, st.completed()); // the interrupted tasks returned normally
        assertEquals(0, st.running());
    }

    /** shutdownNow interrupts this executor's running tasks on a caller's ThreadPoolExecutor, which it does not stop. */
    @Test
    void shutdownNowInterruptsRunningTasksOnACallersPool() throws Exception {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .delegate(pool).poolSizer(rate -> 1).scheduler(new ManualScheduler()).build();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        e.execute(() -> {
            started.countDown();
            try {
                Thread.sleep(LONG_DELAY_MS);
            } catch (InterruptedException x) {
                interrupted.set(true);
            }
        });
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertEquals(List.of(), e.shutdownNow());
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertTrue(interrupted.get());
        assertFalse(pool.isShutdown());
        pool.shutdown();
        assertTrue(pool.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
    }

    /** awaitTermination returns false while a task still runs after shutdown, and true once it ends. */
    @Test
    void awaitTerminationTimesOutWhileATaskRuns() throws Exception {
        PowerFlowExecutor e = fast();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        e.execute(() -> {
            started.countDown();
            awaitQuietly(release);
        });
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        e.shutdown();
        assertFalse(e.awaitTermination(10, TimeUnit.MILLISECONDS));
        assertFalse(e.isTerminated());
        assertTrue(e.isTerminating());
        release.countDown();
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertFalse(e.isTerminating());
    }

    /** awaitTermination throws InterruptedException when the waiting thread is interrupted. */
    @Test
    void awaitTerminationIsInterruptible() throws Exception {
        PowerFlowExecutor e = fast();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertFalse(Thread.interrupted());
        terminate(e);
    }

    // ------------------------------------------------------------ close

    /** close() from try-with-resources waits for running and queued tasks to complete. */
    @Test
    void closeWaitsForRunningTasks() throws Exception {
        AtomicBoolean finished = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(1);
        PowerFlowExecutor outside;
        try (PowerFlowExecutor e = fast()) {
            outside = e;
            e.execute(() -> {
                started.countDown();
                try {
                    Thread.sleep(100);
                } catch (InterruptedException x) {
                    return;
                }
                finished.set(true);
            });
            assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
        assertTrue(finished.get());
        assertTrue(outside.isTerminated());
    }

    /** Interrupting the thread blocked in close() stops the executor, and close returns with the interrupt status set. */
    @Test
    void closeInterruptedStopsTheExecutorAndKeepsTheInterruptStatus() throws Exception {
        PowerFlowExecutor e = fast();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean taskInterrupted = new AtomicBoolean();
        e.execute(() -> {
            started.countDown();
            try {
                Thread.sleep(LONG_DELAY_MS);
            } catch (InterruptedException x) {
                taskInterrupted.set(true);
            }
        });
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        AtomicBoolean interruptStatusAfterClose = new AtomicBoolean();
        Thread closer = new Thread(() -> {
            e.close();
            interruptStatusAfterClose.set(Thread.currentThread().isInterrupted());
        });
        closer.start();
        await(() -> closer.getState() == Thread.State.WAITING || closer.getState() == Thread.State.TIMED_WAITING);
        closer.interrupt();
        closer.join(LONG_DELAY_MS);
        assertFalse(closer.isAlive());
        assertTrue(interruptStatusAfterClose.get());
        assertTrue(taskInterrupted.get());
        assertTrue(e.isTerminated());
    }

    /** close() on a terminated executor returns at once. */
    @Test
    void closeIsIdempotent() {
        PowerFlowExecutor e = fast();
        e.close();
        e.close();
        assertTrue(e.isTerminated());
    }

    // ------------------------------------------------------------ threads

    /** After termination no thread of the executor is alive: dispatcher, tick and workers, found by name. */
    @Test
    void noThreadOfTheExecutorOutlivesTermination() throws Exception {
        List<Thread> workers = new ArrayList<>();
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000).name("thread-check")
                .observeInterval(Duration.ofMillis(5)).build();
        for (int i = 0; i < 10; i++) {
            e.submit(() -> {
                synchronized (workers) {
                    workers.add(Thread.currentThread());
                }
            }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        }
        assertTrue(liveThreadsNamed("thread-check-tick") > 0);
        e.close();
        assertTrue(e.isTerminated());
        assertEquals(0, awaitNoLiveThreadsNamed("thread-check"));
        assertFalse(e.dispatcherThread().isAlive());
        for (Thread w : workers) {
            assertEquals("thread-check-worker", w.getName());
            w.join(LONG_DELAY_MS); // at most finishing its last instructions
            assertFalse(w.isAlive());
        }
    }

    /** The tick thread is a daemon and the dispatcher a virtual thread: neither keeps the JVM alive. */
    @Test
    void ownedThreadsNeverKeepTheJvmAlive() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(1).name("daemon-check").build();
        try {
            assertTrue(e.dispatcherThread().isVirtual());
            boolean sawTick = false;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("daemon-check")) {
                    assertTrue(t.isDaemon(), t.getName());
                    sawTick = true;
                }
            }
            assertTrue(sawTick);
        } finally {
            terminate(e);
        }
    }

    /**
     * Waits (at most LONG_DELAY_MS) until no live thread's name starts with {@code prefix}, and
     * returns how many are still alive then. A pool worker or a scheduler thread signals its pool's
     * termination a few instructions before the thread itself ends, so a count taken at the
     * instant of termination can still see it.
     */
    static int awaitNoLiveThreadsNamed(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LONG_DELAY_MS);
        int n;
        while ((n = liveThreadsNamed(prefix)) > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
        return n;
    }

    static int liveThreadsNamed(String prefix) {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix) && t.isAlive()) {
                n++;
            }
        }
        return n;
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A caller's plain ExecutorService is used as is: not sized (poolSize -1), and not shut down. */
    @Test
    void aCallersPlainExecutorIsNeitherSizedNorShutDown() throws Exception {
        ExecutorService plain = Executors.newSingleThreadExecutor();
        try {
            PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                    .delegate(plain).scheduler(new ManualScheduler()).build();
            assertEquals(9, e.submit(() -> 9).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
            assertEquals(-1, e.stats().poolSize());
            e.close();
            assertFalse(plain.isShutdown());
        } finally {
            plain.shutdown();
        }
    }
}
