package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * The executor's two fast paths, which keep the dispatcher out of the common case: a submitter
 * that finds nothing waiting hands its task off itself, and a worker that finishes a task takes
 * the next queued one itself. Both keep the queue's order, the limiter and the slot bound.
 */
class PowerFlowExecutorFastPathTest {

    /** A pool that records which thread handed it each task. */
    static final class RecordingPool extends ThreadPoolExecutor {
        final List<Thread> callers = new CopyOnWriteArrayList<>();

        RecordingPool(int size) {
            super(size, size, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        }

        @Override
        public void execute(Runnable command) {
            callers.add(Thread.currentThread());
            super.execute(command);
        }
    }

    /** A task that records its name and thread when it starts, then waits for its gate. */
    record Step(String name, CountDownLatch gate, List<String> starts, List<Thread> threads) implements Runnable {
        @Override
        public void run() {
            starts.add(name);
            threads.add(Thread.currentThread());
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * An executor in front of a one-thread pool (one slot), admitting at once, ticked by hand.
     * Shedding off here and in {@link #onTheDefaultDelegateEveryChainedTaskHasItsOwnVirtualThread},
     * which queue tasks behind a blocked one: the head's wait is real time, and the door refused
     * the 72nd of 99 tasks queued once the head had waited 0.7 ms (a 50-ms budget over 72 places)
     * on a loaded machine.
     */
    static PowerFlowExecutor onePoolThread(RecordingPool pool, ManualScheduler tick) {
        return PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000).shedding(false).delegate(pool)
                .ownsDelegate(true).poolSizer(rate -> 1).scheduler(tick).build();
    }

    /**
     * Runs "first" on the one-slot executor until five more tasks ("q0".."q4") are queued behind
     * it (all five wait in the executor's queue: the only slot is busy), then lets all six run
     * and waits until they have completed.
     */
    static void runFirstThenFiveQueued(PowerFlowExecutor e, List<String> starts, List<Thread> threads) {
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(0);
        e.execute(new Step("first", first, starts, threads));
        await(() -> starts.size() == 1);
        for (int i = 0; i < 5; i++) {
            e.execute(new Step("q" + i, open, starts, threads));
        }
        assertEquals(5, e.stats().depth());
        first.countDown();
        await(() -> e.stats().completed() == 6);
    }

    /** An idle executor hands a task to its pool on the submitting thread, before execute returns. */
    @Test
    void anIdleExecutorHandsOffOnTheSubmittingThread() throws Exception {
        RecordingPool pool = new RecordingPool(2);
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .delegate(pool).ownsDelegate(true).poolSizer(rate -> 2).scheduler(new ManualScheduler()).build();
        try {
            e.execute(() -> { });
            assertEquals(List.of(Thread.currentThread()), pool.callers);
            assertEquals(1, e.stats().submitted());
            assertEquals(1, e.stats().admitted());
        } finally {
            terminate(e);
        }
    }

    /**
     * If shutdownNow() stops the owned pool between the fast path's state check and its hand-off,
     * the pool's refusal becomes this executor's: execute throws RejectedExecutionException, the
     * task never runs and counts as rejected, not submitted, and the executor terminates.
     */
    @Test
    void aFastPathHandOffRacingShutdownNowIsRefusedNotLost() throws Exception {
        AtomicReference<PowerFlowExecutor> self = new AtomicReference<>();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>()) {
            @Override
            public void execute(Runnable command) {
                self.get().shutdownNow(); // lands exactly inside the window
                super.execute(command);
            }
        };
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .delegate(pool).ownsDelegate(true).poolSizer(rate -> 2).scheduler(new ManualScheduler()).build();
        self.set(e);
        AtomicBoolean ran = new AtomicBoolean();
        assertThrows(RejectedExecutionException.class, () -> e.execute(() -> ran.set(true)));
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        assertFalse(ran.get());
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(1, st.rejected());
        assertEquals(0, st.submitted());
        assertEquals(0, st.admitted());
        assertEquals(0, e.callbackFailures()); // not reported as a delegate failure
    }

    /**
     * On a frozen clock at 1000/s without burst: the first task goes straight through; the second
     * is refused by the limiter and queued; the third finds it in the queue and queues behind it,
     * though a slot is free. Each millisecond the clock advances admits exactly the next one, in
     * submission order, handed off by the dispatcher, never by the submitter.
     */
    @Test
    void aTaskBehindAQueuedOneQueuesAndKeepsItsOrder() throws Exception {
        FakeTicker t = new FakeTicker();
        RecordingPool pool = new RecordingPool(4);
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1000).minRate(1).ticker(t)
                .delegate(pool).ownsDelegate(true).poolSizer(rate -> 4).scheduler(new ManualScheduler()).build();
        List<String> starts = new CopyOnWriteArrayList<>();
        List<Thread> threads = new CopyOnWriteArrayList<>();
        CountDownLatch open = new CountDownLatch(0);
        try {
            e.execute(new Step("a", open, starts, threads));
            e.execute(new Step("b", open, starts, threads));
            e.execute(new Step("c", open, starts, threads));
            assertEquals(List.of(Thread.currentThread()), pool.callers); // only a went straight through
            assertEquals(3, e.stats().submitted());
            assertEquals(1, e.stats().admitted());
            await(() -> starts.equals(List.of("a")));
            t.advanceMillis(1);
            await(() -> starts.equals(List.of("a", "b")));
            t.advanceMillis(1);
            await(() -> starts.equals(List.of("a", "b", "c")));
            assertEquals(3, pool.callers.size());
            assertFalse(pool.callers.subList(1, 3).contains(Thread.currentThread()));
        } finally {
            terminate(e);
        }
    }

    /**
     * With every slot of a one-thread pool busy, queued tasks are run by the pool thread that
     * finishes, one after another and in queue order, without going back through the pool (its
     * execute is not called for them) and without running more than one at a time.
     */
    @Test
    void aFinishingWorkerRunsTheNextQueuedTasksOnItsOwnThreadInOrder() throws Exception {
        RecordingPool pool = new RecordingPool(1);
        PowerFlowExecutor e = onePoolThread(pool, new ManualScheduler());
        List<String> starts = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new CopyOnWriteArrayList<>();
        try {
            runFirstThenFiveQueued(e, starts, threads);
            assertEquals(List.of("first", "q0", "q1", "q2", "q3", "q4"), starts);
            assertEquals(1, new HashSet<>(threads).size()); // all on the pool's one thread
            assertEquals(1, pool.callers.size()); // only "first" went through pool.execute
            assertEquals(1, pool.getLargestPoolSize());
        } finally {
            terminate(e);
        }
    }

    /**
     * The run times a pool thread records while it runs a chain of tasks (in its own recorder)
     * reach the loop's window: stats() counts all six, and the next tick feeds the servo a
     * window of six samples, after which the window is empty.
     */
    @Test
    void runTimesRecordedDuringAChainReachTheLoop() throws Exception {
        ManualScheduler tick = new ManualScheduler();
        PowerFlowExecutor e = onePoolThread(new RecordingPool(1), tick);
        try {
            runFirstThenFiveQueued(e, Collections.synchronizedList(new ArrayList<>()), new CopyOnWriteArrayList<>());
            PowerFlowExecutor.Stats st = e.stats();
            assertEquals(6, st.recorded());
            assertEquals(6, e.controller().latency().count()); // stats() moved the chain's samples in
            assertFalse(Double.isNaN(st.queueWaitP99()));
            assertEquals(1, tick.runAll());
            assertEquals(0, e.controller().latency().count()); // the tick observed and reset them
            assertFalse(Double.isNaN(e.stats().lastObservedP99()));
        } finally {
            terminate(e);
        }
    }

    /**
     * On the default delegate, a finishing worker hands its slot to the next queued task, which
     * still gets a virtual thread of its own: one thread per task, as the delegate promises, and
     * never more tasks running than the bound (here 1).
     */
    @Test
    void onTheDefaultDelegateEveryChainedTaskHasItsOwnVirtualThread() throws Exception {
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1_000_000).minRate(1).burst(1000)
                .shedding(false).poolSizer(rate -> 1).scheduler(new ManualScheduler()).build();
        List<String> starts = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new CopyOnWriteArrayList<>();
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(0);
        int[] maxRunning = new int[1];
        try {
            e.execute(new Step("first", first, starts, threads));
            await(() -> starts.size() == 1);
            for (int i = 0; i < 20; i++) {
                e.execute(() -> {
                    synchronized (maxRunning) {
                        maxRunning[0] = Math.max(maxRunning[0], e.stats().running());
                    }
                    new Step("q", open, starts, threads).run();
                });
            }
            first.countDown();
            await(() -> e.stats().completed() == 21);
            Set<Thread> distinct = new HashSet<>(threads);
            assertEquals(21, distinct.size());
            assertTrue(distinct.stream().allMatch(Thread::isVirtual));
            assertEquals(1, maxRunning[0]);
        } finally {
            terminate(e);
        }
        assertTrue(e.awaitTermination(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
    }

    /**
     * Under pacing, a worker that finishes with tasks queued and no admission due gives its slot
     * back, and each admission (one per advanced millisecond on a frozen clock) goes to the oldest
     * waiting task.
     */
    @Test
    void underPacingEachAdmissionGoesToTheOldestWaitingTask() throws Exception {
        FakeTicker t = new FakeTicker();
        RecordingPool pool = new RecordingPool(1);
        PowerFlowExecutor e = PowerFlowExecutor.builder().rate(1000).minRate(1).ticker(t)
                .delegate(pool).ownsDelegate(true).poolSizer(rate -> 1).scheduler(new ManualScheduler()).build();
        List<String> starts = new CopyOnWriteArrayList<>();
        List<Thread> threads = new CopyOnWriteArrayList<>();
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(0);
        try {
            e.execute(new Step("first", first, starts, threads)); // admitted, runs, holds the slot
            e.execute(new Step("b", open, starts, threads));
            e.execute(new Step("c", open, starts, threads));
            await(() -> starts.size() == 1);
            first.countDown(); // the worker finishes with b and c queued and no admission due
            await(() -> e.stats().completed() == 1);
            t.advanceMillis(1);
            await(() -> starts.size() == 2);
            t.advanceMillis(1);
            await(() -> starts.size() == 3);
            assertEquals(List.of("first", "b", "c"), starts);
        } finally {
            terminate(e);
        }
    }
    /**
     * A chain counts its admissions, completions and recorded latencies locally and adds them
     * every {@link Recorders#COUNT_FLUSH_EVERY} tasks and when it ends: read from inside
     * the chain they lag by at most that many tasks, and once it has ended they are exact.
     */
    @Test
    void aChainsCountsLagByLessThanTheFlushIntervalAndAreExactWhenItEnds() throws Exception {
        PowerFlowExecutor e = onePoolThread(new RecordingPool(1), new ManualScheduler());
        try {
            List<String> starts = new CopyOnWriteArrayList<>();
            List<Thread> threads = new CopyOnWriteArrayList<>();
            CountDownLatch first = new CountDownLatch(1);
            e.execute(new Step("first", first, starts, threads));
            await(() -> starts.size() == 1);
            int n = 100;
            int probe = 90; // tasks 0 .. 89 have completed when task 90 runs
            AtomicReference<PowerFlowExecutor.Stats> inside = new AtomicReference<>();
            for (int i = 1; i < n; i++) {
                int k = i;
                e.execute(() -> {
                    if (k == probe) {
                        inside.set(e.stats());
                    }
                });
            }
            first.countDown();
            await(() -> e.stats().completed() == n);
            PowerFlowExecutor.Stats in = inside.get();
            int lagBound = Recorders.COUNT_FLUSH_EVERY;
            assertTrue(in.completed() <= probe && in.completed() >= probe - lagBound, "completed " + in.completed());
            assertTrue(in.recorded() <= probe && in.recorded() >= probe - lagBound, "recorded " + in.recorded());
            assertTrue(in.admitted() <= n && in.admitted() >= probe + 1 - lagBound, "admitted " + in.admitted());
            PowerFlowExecutor.Stats after = e.stats();
            assertEquals(n, after.completed());
            assertEquals(n, after.recorded());
            assertEquals(n, after.admitted());
            assertEquals(n, after.submitted());
        } finally {
            terminate(e);
        }
    }
}
