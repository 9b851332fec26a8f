package io.github.performancehelpers;

import io.github.performancehelpers.loop.PowerHistogram;
import io.github.performancehelpers.loop.RateLaw;

/**
 * Gathers the tick's windows into the ones the cap on the tasks in flight ({@link InFlightCap})
 * reads: a window with fewer than {@link InFlightCap#MIN_SAMPLES} timed tasks is merged into the
 * next, until the merged one holds that many, for at most {@link #MAX_WINDOWS} windows.
 *
 * <p>Why: a window's run-time p99 from a few dozen calls is its largest sample or next to it, so
 * the cap reads nothing from it; taken one by one, the windows of slow calls at a low rate (the
 * field trial's {@code batch}: 4 slots of 100-ms calls, 37 a second at capacity, 18 when halved)
 * never reach the cap, and up to the pool's size of calls queue inside the downstream, a run time
 * of a second against a 600-ms target. Merged, a reading comes every two or three seconds. The
 * knee-aware law gathers its sparse readings the same way ({@code KneeAwareLaw.MAX_WINDOWS}).
 *
 * <p>What merges: the lengths and completions add, as do the start-load sums
 * ({@link StartLoad.Verdict#plus}); the run-time and end-to-end histograms merge; callers were late
 * if a task was refused or shed in any of the windows or the merged end-to-end p99 is over the
 * target; the longest pause is kept. A window in which the law finds the target unreachable is
 * handed on at once, with what was gathered, for the cap opens on it whatever its count.
 *
 * <p><b>Thread safety.</b> Not thread-safe: the tick adds one window at a time.
 */
final class CapWindows {

    /**
     * The most windows merged into one (the knee-aware law's bound too): at under
     * {@code MIN_SAMPLES / MAX_WINDOWS} timed calls a second the cap reads nothing.
     */
    static final int MAX_WINDOWS = 30;

    private final double targetMs;
    private final double quantile;
    private int windows;
    private double seconds;
    private PowerHistogram.Snapshot endToEnd;
    private PowerHistogram.Snapshot run;
    private StartLoad.Verdict load;
    private boolean refused;
    private double pauseMs;

    /**
     * @param targetMs the executor's target, milliseconds
     * @param quantile the quantile the run time is read at (the controller's)
     */
    CapWindows(double targetMs, double quantile) {
        this.targetMs = targetMs;
        this.quantile = quantile;
    }

    /**
     * Adds one window and returns what the cap reads: the windows gathered so far as one, when
     * they hold enough timed tasks, span {@link #MAX_WINDOWS}, or the target is unreachable; null
     * while it gathers.
     *
     * @param seconds     the window's length, seconds
     * @param endToEnd    its end-to-end latencies, milliseconds
     * @param run         its run times, milliseconds
     * @param load        its start-load verdict
     * @param refused     whether a task was refused or shed in it
     * @param unreachable whether the law finds the target unreachable
     * @param pauseMs     the longest pause of the process noted in it, milliseconds
     * @return the window to step the cap on, or null
     */
    InFlightCap.Window add(double seconds, PowerHistogram.Snapshot endToEnd, PowerHistogram.Snapshot run,
            StartLoad.Verdict load, boolean refused, boolean unreachable, double pauseMs) {
        if (windows == 0) {
            this.seconds = seconds;
            this.endToEnd = endToEnd;
            this.run = run;
            this.load = load;
            this.refused = refused;
            this.pauseMs = pauseMs;
        } else {
            this.seconds += seconds;
            this.endToEnd = this.endToEnd.merge(endToEnd);
            this.run = this.run.merge(run);
            this.load = this.load.plus(load);
            this.refused |= refused;
            this.pauseMs = Math.max(this.pauseMs, pauseMs);
        }
        windows++;
        if (this.load.count() < InFlightCap.MIN_SAMPLES && windows < MAX_WINDOWS && !unreachable) {
            return null;
        }
        windows = 0;
        boolean late = late(this.refused, this.endToEnd, targetMs);
        StartLoad.Verdict l = this.load;
        InFlightCap.Window w = new InFlightCap.Window(this.seconds, this.endToEnd.count(), l.count(),
                l.meanConcurrency(), l.meanRunMs(), RateLaw.reading(this.run, quantile), late, unreachable,
                l.slowZ(), l.runZ(), this.pauseMs);
        this.endToEnd = null;
        this.run = null;
        this.load = null;
        return w;
    }

    /**
     * {@return whether a window's callers were late}: a task was refused or shed in it, or its
     * end-to-end p99 is over the target (a window in which none completed is not late). The cap
     * reads it, and the door's calm window is its negation with the cap open.
     *
     * @param refused  whether a task was refused or shed in the window
     * @param endToEnd its end-to-end latencies, milliseconds
     * @param targetMs the target, milliseconds
     */
    static boolean late(boolean refused, PowerHistogram.Snapshot endToEnd, double targetMs) {
        return refused || (endToEnd.count() > 0 && endToEnd.quantile(0.99) > targetMs);
    }

    /** {@return the start-load verdict of the windows gathered and not yet handed on, null when none} */
    StartLoad.Verdict gathered() {
        return windows == 0 ? null : load;
    }

    /** {@return how many windows are gathered and not yet handed on} */
    int gathering() {
        return windows;
    }
}
