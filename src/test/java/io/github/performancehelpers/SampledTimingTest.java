package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;
import org.junit.jupiter.api.Test;

/**
 * Sampled timing on the virtual delegate: once a window completes more than
 * {@link PowerFlowExecutor#SAMPLE_FROM} tasks, only one direct task in {@code mask + 1} is timed
 * (two clock reads and three records), each standing for {@code mask + 1} in the histograms, and
 * the others are run and counted without a clock read; every count stays exact.
 */
class SampledTimingTest {

    private final FakeTicker fake = new FakeTicker();
    private final AtomicLong reads = new AtomicLong();
    private final Ticker counting = () -> {
        reads.incrementAndGet();
        return fake.read();
    };
    private final ManualScheduler s = new ManualScheduler();

    /** Below the threshold nothing is sampled; above it, the interval keeps 8,192 timed, at most one in 64. */
    @Test
    void theIntervalKeepsEnoughTimedTasks() {
        assertEquals(0, PowerFlowExecutor.sampleMaskFor(0));
        assertEquals(0, PowerFlowExecutor.sampleMaskFor(16_384));
        assertEquals(1, PowerFlowExecutor.sampleMaskFor(16_385));
        assertEquals(7, PowerFlowExecutor.sampleMaskFor(70_000));
        assertEquals(7, PowerFlowExecutor.sampleMaskFor(131_071));
        assertEquals(15, PowerFlowExecutor.sampleMaskFor(131_072));
        assertEquals(63, PowerFlowExecutor.sampleMaskFor(10_000_000));
        assertEquals(63, PowerFlowExecutor.sampleMaskFor(Long.MAX_VALUE));
    }

    private PowerFlowExecutor executor() {
        return PowerFlowExecutor.builder().targetP99(60).ticker(counting).scheduler(s).build();
    }

    /**
     * Runs {@code n} trivial tasks from this thread, 1,000 at a time (so that they find a free
     * slot and an empty queue, the direct path), and waits until every one has ended.
     */
    private static void run(PowerFlowExecutor e, int n, AtomicLong ran) throws InterruptedException {
        for (int left = n; left > 0; left -= 1_000) {
            int k = Math.min(1_000, left);
            CountDownLatch done = new CountDownLatch(k);
            for (int i = 0; i < k; i++) {
                e.execute(() -> {
                    ran.incrementAndGet();
                    done.countDown();
                });
            }
            assertTrue(done.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        }
        await(() -> e.inFlight() == 0);
    }

    /** Ends the window at one second of ticker time and lets the tick observe it. */
    private void tick() {
        fake.advanceMillis(1000);
        s.runAll();
    }

    /**
     * After a window of 70,000 tasks the executor times one direct task in eight: 8,000 more
     * tasks read the clock at most 4,000 times (16,000 without sampling) and record about 1,000
     * latencies, yet the end-to-end histogram counts about 8,000, the completions are exact, and
     * the next window, of 8,000 tasks, brings back timing of every task.
     */
    @Test
    void aBusyWindowTimesOneDirectTaskInEight() throws Exception {
        PowerFlowExecutor e = executor();
        try {
            AtomicLong ran = new AtomicLong();
            run(e, 70_000, ran);
            assertEquals(0, e.sampleMask(), "the first window times every task");
            tick();
            assertEquals(7, e.sampleMask());

            long recordedBefore = e.stats().tasks().recorded();
            reads.set(0);
            run(e, 8_000, ran);
            long readsDuring = reads.get();
            e.drainRecorders();
            long weighted = e.endToEnd.count();
            PowerFlowExecutor.Stats st = e.stats();
            long recorded = st.tasks().recorded() - recordedBefore;
            assertTrue(readsDuring <= 4_000, "clock reads for 8,000 tasks: " + readsDuring);
            assertTrue(recorded >= 1_000 && recorded <= 2_000, "latencies recorded: " + recorded);
            assertTrue(weighted >= 7_000 && weighted <= 9_000, "tasks the end-to-end histogram stands for: " + weighted);
            assertEquals(78_000, st.tasks().completed());
            assertEquals(78_000, e.completedCount());
            assertEquals(78_000, ran.get());
            assertEquals(0, st.tasks().failed());

            tick();
            assertEquals(0, e.sampleMask(), "8,000 tasks a window: every one timed again");
        } finally {
            terminate(e);
        }
        assertEquals(78_000, e.stats().tasks().completed());
    }

    /**
     * Untimed tasks that fail or whose Future is cancelled are counted so, and not as completed;
     * the completion count read while tasks run never falls and is never above the tasks that
     * have run.
     */
    @Test
    void untimedOutcomesAreExactAndTheCountNeverRunsAhead() throws Exception {
        PowerFlowExecutor e = executor();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ran = new AtomicLong();
        List<String> faults = new ArrayList<>();
        Thread reader = Thread.ofPlatform().start(() -> {
            long last = 0;
            while (!stop.get()) {
                long c = e.completedCount();
                long r = ran.get(); // read after: a completion is counted only after its task has run
                if (c < last || c > r) {
                    synchronized (faults) {
                        faults.add("completed " + c + " after " + last + ", with " + r + " run");
                    }
                }
                last = c;
            }
        });
        try {
            run(e, 70_000, ran);
            tick();
            assertEquals(7, e.sampleMask());
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < 8_000; i++) {
                if (i % 1_000 == 0) {
                    for (Future<?> f : futures) { // 1,000 at a time, as run() does
                        try {
                            f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
                        } catch (ExecutionException expected) {
                            // counted below
                        }
                    }
                }
                boolean fail = i % 2 == 0;
                futures.add(e.submit(() -> {
                    ran.incrementAndGet();
                    if (fail) {
                        throw new IllegalStateException("planned");
                    }
                }));
            }
            int failedFutures = 0;
            for (Future<?> f : futures) {
                try {
                    f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
                } catch (ExecutionException x) {
                    failedFutures++;
                }
            }
            assertEquals(4_000, failedFutures);
            await(() -> e.inFlight() == 0);
            PowerFlowExecutor.Stats st = e.stats();
            assertEquals(74_000, st.tasks().completed());
            assertEquals(4_000, st.tasks().failed());
            assertEquals(0, st.tasks().cancelled());
        } finally {
            stop.set(true);
            reader.join();
            terminate(e);
        }
        synchronized (faults) {
            assertTrue(faults.isEmpty(), faults.size() + " faults, first: " + (faults.isEmpty() ? "" : faults.get(0)));
        }
    }
}
