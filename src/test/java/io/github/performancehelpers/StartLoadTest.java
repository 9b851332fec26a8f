package io.github.performancehelpers;

import static io.github.performancehelpers.PowerFlowExecutorTest.LONG_DELAY_MS;
import static io.github.performancehelpers.PowerFlowExecutorTest.await;
import static io.github.performancehelpers.PowerFlowExecutorTest.awaitQuietly;
import static io.github.performancehelpers.PowerFlowExecutorTest.terminate;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;
import org.junit.jupiter.api.Test;

/**
 * The start-load test: whether the tasks over the target started at a higher concurrency than the
 * rest. The statistic from its sums, and an executor on a {@link FakeTicker} that finds a tail the
 * load does not set unreachable without refusing a task, and cuts when the slow tasks are the ones
 * that started at the highest concurrency.
 */
class StartLoadTest {

    private static final long MS = 1_000_000;

    /**
     * slowZ = (mean of the slow − mean of all) / (sd of all / √slow), from the sums: 40 tasks at
     * 1, 40 at 3 (mean 2, sd 1); the 20 slow ones all at 3: (3 − 2) / (1 / √20).
     */
    @Test
    void theSlowStatisticIsTheSlowMeansDistanceInStandardErrors() {
        StartLoad load = new StartLoad();
        for (int i = 0; i < 40; i++) {
            load.add(1, 10 * MS, false);
            load.add(3, (i < 20 ? 20 : 10) * MS, i < 20);
        }
        StartLoad.Verdict v = load.take();
        assertEquals(Math.sqrt(20), v.slowZ(), 1e-9);
        assertTrue(Double.isNaN(load.take().slowZ()), "a new window holds nothing");
    }

    /** No verdict from fewer than ten slow tasks, or from a concurrency that never varied. */
    @Test
    void tooFewSlowTasksOrAConstantConcurrencyGiveNoVerdict() {
        assertTrue(Double.isNaN(StartLoad.meanZ(100, 200, 500, StartLoad.MIN_SLOW - 1, 30)));
        assertFalse(Double.isNaN(StartLoad.meanZ(100, 200, 500, StartLoad.MIN_SLOW, 30)));
        assertTrue(Double.isNaN(StartLoad.meanZ(100, 400, 1600, 20, 80)), "every task at 4");
    }

    /**
     * runZ compares the run time of the tasks that started at the previous window's mean
     * concurrency plus one standard deviation or more with the mean of all: concurrency 1 to 10
     * (mean 5.5, sd 2.87: high from 9), run time 10 ms, or 20 ms from concurrency 9 (as a
     * downstream of eight slots); the same run times paired so that they cancel give 0; the first
     * window has no high tasks yet, and a constant concurrency defines none.
     */
    @Test
    void theRunStatisticIsTheHighTasksRunTimeInStandardErrors() {
        StartLoad queued = new StartLoad();
        StartLoad flat = new StartLoad();
        for (int window = 0; window < 2; window++) {
            for (int i = 0; i < 100; i++) {
                int c = 1 + i % 10;
                queued.add(c, (c >= 9 ? 20 : 10) * MS, false);
                flat.add(c, (i % 20 < 10 ? 10 : 20) * MS, false); // at each concurrency half 10, half 20 ms
            }
            StartLoad.Verdict q = queued.take();
            StartLoad.Verdict f = flat.take();
            if (window == 0) {
                assertTrue(Double.isNaN(q.runZ()), "no threshold in the first window");
                continue;
            }
            // all: mean 12 ms, sd 4 ms; the 20 high ones: 20 ms, so (20 − 12) / (4 / √20)
            assertEquals(8 / (4 / Math.sqrt(20)), q.runZ(), 1e-6);
            assertEquals(0, f.runZ(), 1e-9);
        }
        StartLoad constant = new StartLoad();
        for (int window = 0; window < 2; window++) {
            for (int i = 0; i < 100; i++) {
                constant.add(4, (1 + i % 2) * MS, false);
            }
            assertTrue(Double.isNaN(constant.take().runZ()));
        }
    }

    /** A run time past 10 s counts as 10 s, so that the sums cannot overflow. */
    @Test
    void runTimesAreCappedForTheSums() {
        assertEquals(StartLoad.MAX_RUN_MICROS, StartLoad.runMicros(Long.MAX_VALUE));
        assertEquals(1_500, StartLoad.runMicros(1_500_999));
    }

    /** A batch adds its sums to the shared ones and is emptied. */
    @Test
    void aBatchAddsItsSumsOnce() {
        StartLoad load = new StartLoad();
        StartLoad.Batch b = new StartLoad.Batch();
        for (int i = 0; i < 40; i++) {
            b.add(1, 10 * MS, false, false);
            b.add(3, 20 * MS, i < 20, false);
        }
        load.addAll(b);
        load.addAll(b); // emptied: adds nothing
        assertEquals(Math.sqrt(20), load.take().slowZ(), 1e-9);
    }

    private final FakeTicker t = new FakeTicker();
    private final ManualScheduler s = new ManualScheduler();

    /** Default (knee-aware, open rate) executor of target 60 ms on the default delegate. */
    private PowerFlowExecutor executor() {
        return PowerFlowExecutor.builder().targetP99(60).ticker(t).scheduler(s).build();
    }

    /**
     * Runs {@code k} tasks at once (started at concurrency 1 to {@code k}), the ticker moved
     * {@code ms} while all of them run, then lets them end and waits until none is in flight.
     */
    private void group(PowerFlowExecutor e, int k, long ms) throws Exception {
        CountDownLatch started = new CountDownLatch(k);
        CountDownLatch release = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            futures.add(e.submit(() -> {
                started.countDown();
                awaitQuietly(release);
            }));
        }
        assertTrue(started.await(LONG_DELAY_MS, TimeUnit.MILLISECONDS));
        t.advanceMillis(ms);
        release.countDown();
        for (Future<?> f : futures) {
            f.get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        }
        await(() -> e.inFlight() == 0);
    }

    /** Runs one task alone: started at concurrency 1, taking no ticker time. */
    private static void alone(PowerFlowExecutor e) throws Exception {
        e.submit(() -> { }).get(LONG_DELAY_MS, TimeUnit.MILLISECONDS);
        await(() -> e.inFlight() == 0);
    }

    /** Ends the window at one second of ticker time and lets the tick observe it. */
    private void observe(PowerFlowExecutor e, long elapsedMs) {
        t.advanceMillis(1000 - elapsedMs);
        s.runAll();
    }

    /**
     * Half the tasks take 80 ms against a target of 60, at whatever concurrency they start (groups
     * of eight, slow and fast alike): the first window over the target reports the target
     * unreachable and keeps the open rate. Nothing was cut, so nothing is refused or shed.
     */
    @Test
    void aTailAtAnyConcurrencyIsUnreachableWithoutACut() throws Exception {
        PowerFlowExecutor e = executor();
        for (int g = 0; g < 10; g++) {
            group(e, 8, 80);
            group(e, 8, 0);
        }
        observe(e, 800);
        PowerFlowExecutor.Stats st = e.stats();
        assertEquals(1, st.loop().observations());
        assertEquals(-1, st.inFlightLimit(), "no cap for calls that did not queue");
        assertTrue(st.loop().targetUnreachable());
        assertEquals(PowerFlowExecutor.OPEN_RATE, st.loop().rate());
        assertEquals(0, st.tasks().rejected());
        assertEquals(0, st.tasks().shed());
        terminate(e);
    }

    /**
     * The same 80-ms tasks, but each at the highest concurrency (groups of eight) while the fast
     * ones run alone: the slow calls are the load's (they queued), and the cap on the tasks in
     * flight acts on the window (to max(2.75 / 2, 2.75 × 30 / 80), 2), so the law holds its rate
     * for it and does not find the target unreachable.
     */
    @Test
    void slowTasksAtTheHighestConcurrencyCapTheTasksInFlight() throws Exception {
        PowerFlowExecutor e = executor();
        for (int g = 0; g < 10; g++) {
            group(e, 8, 80);
            for (int i = 0; i < 8; i++) {
                alone(e);
            }
        }
        observe(e, 800);
        PowerFlowExecutor.Stats st = e.stats();
        assertFalse(st.loop().targetUnreachable());
        assertEquals(2, st.inFlightLimit());
        assertEquals(0, st.loop().observations(), "the law held its rate for the window the cap acted on");
        assertEquals(PowerFlowExecutor.OPEN_RATE, st.loop().rate());
        terminate(e);
    }
}
