package io.github.performancehelpers.internal;

/**
 * Which windows a pause of the process excuses from a control rule: a window in which a pause of
 * at least {@link #SHARE} of the target (and {@link #FLOOR_MS}) ended, more than {@link #GAP}
 * windows after the last excused one, and the window after it (the calls queued behind the pause
 * end there). Every call in flight during a pause ends that much later, whatever the rate or the
 * calls in flight, so the window says nothing about the downstream. The knee-aware law and the
 * executor's cap on the tasks in flight apply this one rule, each with its own state.
 *
 * <p><b>Internal:</b> this package is not exported by the module {@code io.github.performancehelpers};
 * on the class path it is reachable but not API, and may change or disappear in any release.
 *
 * <p><b>Thread safety.</b> Not thread-safe: one window at a time, from one thread (or under one lock).
 */
public final class PauseExcuse {

    /**
     * A pause of at least this share of the target excuses its window: the cap's run-time share
     * is half the target, so such a pause alone puts the calls in flight during it over their
     * budget.
     */
    public static final double SHARE = 0.5;
    /**
     * The shortest pause that excuses a window, ms: a thread kept off a CPU for a scheduler
     * period or two (tens of milliseconds) is the ordinary noise of a loaded machine, which is
     * read like any other latency.
     */
    public static final double FLOOR_MS = 50;
    /**
     * After an excused window, the windows during which another pause excuses none: pauses that
     * come this often may be the load's own doing (a CPU-bound downstream on the same machine,
     * allocation that drives the collector), and are read.
     */
    public static final int GAP = 10;

    private final double minPauseMs;
    private int since = GAP;
    /** The next window is excused: the one after a pause. */
    private boolean shadow;

    /** @param targetMs the target the pauses are weighed against, ms */
    public PauseExcuse(double targetMs) {
        this.minPauseMs = Math.max(SHARE * targetMs, FLOOR_MS);
    }

    /**
     * Takes one window.
     *
     * @param pauseMs the longest pause that ended in it, ms
     * @return 0 if the window is read; 1 if a pause excuses it; 2 if it is the window after one
     */
    public int step(double pauseMs) {
        since++;
        if (shadow) {
            shadow = false;
            return 2;
        }
        if (pauseMs >= minPauseMs && since > GAP) {
            since = 0;
            shadow = true;
            return 1;
        }
        return 0;
    }

    /** Forgets the last pause: the next one excuses its window. */
    public void reset() {
        since = GAP;
        shadow = false;
    }
}
