package io.github.performancehelpers.internal;

/**
 * Which windows a pause of the process excuses from a control rule: a window in which a pause of
 * at least {@code minPauseMs} ended, more than {@code gap} windows after the last excused one, and
 * the window after it (the calls queued behind the pause end there). Pauses that come more often
 * may be the load's own doing (a collector driven by its allocation), and are read. The
 * knee-aware law and the executor's cap on the tasks in flight apply the same rule, each with its
 * own state.
 *
 * <p><b>Internal:</b> this package is not exported by the module {@code io.github.performancehelpers};
 * on the class path it is reachable but not API, and may change or disappear in any release.
 *
 * <p><b>Thread safety.</b> Not thread-safe: one window at a time, from one thread (or under one lock).
 */
public final class PauseExcuse {

    private final int gap;
    private int since;
    /** The next window is excused: the one after a pause. */
    private boolean shadow;

    /** @param gap the windows after an excused one during which no pause excuses another */
    public PauseExcuse(int gap) {
        this.gap = gap;
        this.since = gap;
    }

    /**
     * Takes one window.
     *
     * @param pauseMs    the longest pause that ended in it, ms
     * @param minPauseMs the shortest pause that excuses a window, ms
     * @return 0 if the window is read; 1 if a pause excuses it; 2 if it is the window after one
     */
    public int step(double pauseMs, double minPauseMs) {
        since++;
        if (shadow) {
            shadow = false;
            return 2;
        }
        if (pauseMs >= minPauseMs && since > gap) {
            since = 0;
            shadow = true;
            return 1;
        }
        return 0;
    }

    /** Forgets the last pause: the next one excuses its window. */
    public void reset() {
        since = gap;
        shadow = false;
    }
}
