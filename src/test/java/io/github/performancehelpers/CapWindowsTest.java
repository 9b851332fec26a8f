package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.performancehelpers.loop.PowerHistogram;
import org.junit.jupiter.api.Test;

/**
 * The windows the cap on the tasks in flight reads ({@link CapWindows}): a window with fewer than
 * {@link InFlightCap#MIN_SAMPLES} timed tasks is merged into the next, at a 600-ms target.
 */
class CapWindowsTest {

    private static final double TARGET_MS = 600;

    /** A histogram snapshot of {@code n} samples of {@code ms}, and {@code slow} of {@code slowMs}. */
    private static PowerHistogram.Snapshot samples(int n, double ms, int slow, double slowMs) {
        PowerHistogram h = PowerHistogram.builder().build();
        for (int i = 0; i < n; i++) {
            h.record(ms);
        }
        for (int i = 0; i < slow; i++) {
            h.record(slowMs);
        }
        return h.snapshot();
    }

    /** A start-load verdict of {@code n} tasks that started with {@code inFlight} in flight and ran {@code runMs}. */
    private static StartLoad.Verdict load(int n, int inFlight, long runMs) {
        StartLoad l = new StartLoad();
        for (int i = 0; i < n; i++) {
            l.add(inFlight, runMs * 1_000_000, false);
        }
        return l.take();
    }

    /**
     * Two windows of 30 calls (the field trial's {@code batch} at its capacity): the first is
     * gathered, the second hands on both as one of 60, whose mean concurrency is weighted by the
     * calls (4 and 12: 8), whose p99 is read from both histograms, and which was late because a
     * task was refused in the first, though the merged end-to-end p99 is under the target.
     */
    @Test
    void twoSparseWindowsAreReadAsOne() {
        CapWindows g = new CapWindows(TARGET_MS, 0.99);
        assertNull(g.add(1.0, samples(30, 150, 0, 0), samples(30, 100, 0, 0), load(30, 4, 100), true, false, 0));
        assertEquals(1, g.gathering());
        InFlightCap.Window w = g.add(1.5, samples(30, 300, 0, 0), samples(28, 200, 2, 900), load(30, 12, 200),
                false, false, 20);
        assertNotNull(w);
        assertEquals(0, g.gathering());
        assertEquals(2.5, w.seconds(), 1e-9);
        assertEquals(60, w.completed());
        assertEquals(60, w.timed());
        assertEquals(8, w.meanConcurrency(), 1e-9);
        assertEquals(150, w.meanRunMs(), 1e-9);
        assertEquals(900, w.runP99Ms(), 900 * 0.02, "the slow calls of the second window are the merged p99");
        assertTrue(w.late(), "refused in the first window");
        assertEquals(20, w.pauseMs(), 1e-9);
        assertFalse(w.unreachable());
    }

    /** A window with enough timed tasks is handed on at once, on time when nothing was refused and its p99 is under the target. */
    @Test
    void aFullWindowIsHandedOnAlone() {
        CapWindows g = new CapWindows(TARGET_MS, 0.99);
        InFlightCap.Window w = g.add(1.0, samples(50, 500, 0, 0), samples(50, 200, 0, 0), load(50, 4, 200), false,
                false, 0);
        assertNotNull(w);
        assertEquals(50, w.timed());
        assertFalse(w.late());
        // The next starts afresh: two of 50 over the target, alone.
        InFlightCap.Window next = g.add(1.0, samples(48, 500, 2, 700), samples(50, 200, 0, 0), load(50, 4, 200),
                false, false, 0);
        assertEquals(50, next.timed());
        assertTrue(next.late(), "its end-to-end p99, 700 ms, is over the target");
    }

    /** At one call a second, thirty windows are gathered and handed on still sparse (the cap then reads nothing from them). */
    @Test
    void gatheringStopsAtThirtyWindows() {
        CapWindows g = new CapWindows(TARGET_MS, 0.99);
        for (int i = 1; i < CapWindows.MAX_WINDOWS; i++) {
            assertNull(g.add(1.0, samples(1, 100, 0, 0), samples(1, 100, 0, 0), load(1, 1, 100), false, false, 0));
        }
        InFlightCap.Window w = g.add(1.0, samples(1, 100, 0, 0), samples(1, 100, 0, 0), load(1, 1, 100), false,
                false, 0);
        assertEquals(CapWindows.MAX_WINDOWS, w.timed());
        assertEquals(CapWindows.MAX_WINDOWS, w.seconds(), 1e-9);
    }

    /** A window in which the law finds the target unreachable is handed on at once, with what was gathered: the cap opens on it. */
    @Test
    void anUnreachableTargetIsHandedOnAtOnce() {
        CapWindows g = new CapWindows(TARGET_MS, 0.99);
        assertNull(g.add(1.0, samples(10, 100, 0, 0), samples(10, 100, 0, 0), load(10, 2, 100), false, false, 0));
        InFlightCap.Window w = g.add(1.0, samples(10, 100, 0, 0), samples(10, 100, 0, 0), load(10, 2, 100), false,
                true, 0);
        assertTrue(w.unreachable());
        assertEquals(20, w.timed());
        InFlightCap cap = new InFlightCap(TARGET_MS);
        assertEquals(InFlightCap.OPEN, cap.step(w));
    }
}
