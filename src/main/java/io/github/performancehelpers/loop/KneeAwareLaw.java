package io.github.performancehelpers.loop;

import java.util.ArrayDeque;

/**
 * The state and arithmetic of {@link PowerFlowController.ControlLaw#KNEE_AWARE}; the law itself is
 * documented there. Package-private: the constants are the law's definition, measured on
 * {@code ClosedLoopSimulation} (see {@code benchmarks/closedloop.md}), not options.
 *
 * <p>SINGLE-THREADED: the controller steps it under its loop lock.
 */
final class KneeAwareLaw {

    /** How many one-observation windows the smoothed reading merges (more while it is sparse). */
    static final int WINDOWS = 3;
    /** Relative increase per observation at full headroom, below the knee. */
    static final double FAST_INCREASE = 0.30;
    /** Relative increase per observation at full headroom, near the knee. */
    static final double SLOW_INCREASE = 0.02;
    /** The headroom is full this far (as a share of the target) under the target. */
    static final double HEADROOM_BAND = 0.25;
    /** The knee, as a share of the measured capacity; the slow zone is [KNEE × C, C / KNEE]. */
    static final double KNEE = 0.85;
    /** A window is saturated when its completions fall below this share of the rate in force. */
    static final double SATURATION = 0.90;
    /** An unsaturated reading this far over the target bounds the capacity by the rate. */
    static final double BOUND_OVER = 1.50;
    /** The deepest cut of one observation. */
    static final double MAX_CUT = 0.50;
    /**
     * At a rate where three windows hold fewer than this many samples above the quantile on
     * average ({@code 3 / (1 − q)} samples in all: 300 for the p99), a reading over the target
     * decides a cut only once the merged windows hold that many, or {@link #MAX_WINDOWS} of them.
     * With fewer it is the largest sample or next to it, and one slow call puts it over the
     * target. Not applied for {@code q = 1}, whose reading is always the largest sample.
     */
    static final double TAIL_SAMPLES = 3;
    /** The most windows a sparse reading merges while it gathers samples. */
    static final int MAX_WINDOWS = 30;
    /**
     * Trimming: the windows of one trim block. Once the slow climb near the knee reads over the
     * target, the rate moves only once per block, on the block's reading.
     */
    static final int TRIM_WINDOWS = 10;
    /**
     * The samples a trim block needs above the quantile on average: {@code 10 / (1 − q)} in all
     * (1,000 for the p99). A block at a lower rate runs on, to {@link #MAX_TRIM_WINDOWS}.
     */
    static final double TRIM_TAIL_SAMPLES = 10;
    /** The most windows of one trim block. */
    static final int MAX_TRIM_WINDOWS = 60;
    /**
     * Trimming aims the block's reading at this share of the target: a longer span's p99 at a
     * steady rate scatters more above its middle than below, near a knee.
     */
    static final double TRIM_AIM = 0.95;
    /**
     * The p99's elasticity to the rate that trimming assumes near the knee: a step is
     * {@code (aim / reading)^(1 / 6)}. On the bench's downstream 2 % more rate gives 10-20 % more
     * p99.
     */
    static final double TRIM_ELASTICITY = 6;
    /** The largest trim step up, as a share of the rate. */
    static final double TRIM_UP = 0.03;
    /** The largest trim step down, as a share of the rate. */
    static final double TRIM_DOWN = 0.15;
    /**
     * A loaded window at least this long, seconds, that completed more per second than the
     * capacity estimate raises the estimate to its completions per second. A shorter window's
     * count is mostly the calls in flight at its edges.
     */
    static final double RAISE_SECONDS = 0.5;
    /**
     * After this many trim blocks in a row that stepped up, trimming ends and the climb resumes
     * (it trims again where it next reads over the target). Near the floor of the service time's
     * own p99 a block's reading hardly moves with the rate, and a capacity estimate taken low
     * (after a stall or a spike) put trimming there: from 105/s at 3 % a block, the climb took
     * minutes on the machine.
     */
    static final int MAX_TRIM_UPS = 6;
    /** A trim block reading under this share of the target ends trimming: the climb resumes. */
    static final double TRIM_EXIT = 0.75;
    /**
     * Trimming ends, and the law's cuts apply, on a reading over the target from a saturated
     * window, or on a reading more than this many times the target (not from too few samples): the
     * downstream changed, not the noise.
     */
    static final double TRIM_LEAVE = 2.0;

    /**
     * A pause of the process (the executor's dispatcher woke this much later than it asked to)
     * of at least this share of the target, and at least {@link #STALL_FLOOR_MS}, excuses its
     * window and the next: every call in flight during the pause ends that much later, whatever
     * the rate, so the reading says nothing about the downstream.
     */
    static final double STALL = 0.5;
    /**
     * The shortest pause that excuses a window, ms: a thread kept off a CPU for a scheduler
     * period or two (tens of milliseconds) is the ordinary noise of a loaded machine, which the
     * law reads like any other latency.
     */
    static final double STALL_FLOOR_MS = 50;
    /**
     * After an excused window, the windows during which another pause excuses none: pauses that
     * come this often may be the load's own doing (a CPU-bound downstream on the same machine,
     * allocation that drives the collector), and the law reads them.
     */
    static final int STALL_GAP = 10;

    private final double target;
    private final double quantile;
    private final double min;
    private final double max;
    /** The samples a reading over the target needs to decide: {@code TAIL_SAMPLES / (1 − q)}. */
    private final long enough;
    /** The samples a trim block needs: {@code TRIM_TAIL_SAMPLES / (1 − q)}. */
    private final long trimEnough;

    private final ArrayDeque<PowerHistogram.Snapshot> recent = new ArrayDeque<>();
    private double smoothed = Double.NaN;
    private double capacity = Double.POSITIVE_INFINITY;
    /** The last step was an increase: the next reading over the target is the climb's. */
    private boolean climbing;
    /** Trimming: the rate moves once per block (see {@link #TRIM_WINDOWS}). */
    private boolean trimming;
    /** The windows of the trim block so far; null at its start. */
    private PowerHistogram.Snapshot block;
    private int blockWindows;
    /** Trim blocks in a row that stepped up. */
    private int ups;
    /** Windows since the last one a pause excused. */
    private int sinceStall = STALL_GAP;
    /** The next window is excused too: the one after a pause ends the calls queued behind it. */
    private boolean stallShadow;
    /**
     * Pauses that excused a window, since construction ({@link #reset} keeps it, as the
     * controller's other counters). Written under the controller's loop lock, read by its stats.
     */
    private volatile long pausesExcused;
    /** The last step's window was excused (by a pause or as the window after one). */
    private boolean lastExcused;

    KneeAwareLaw(double target, double quantile, double min, double max) {
        this.target = target;
        this.quantile = quantile;
        this.min = min;
        this.max = max;
        this.enough = samplesFor(TAIL_SAMPLES, quantile);
        this.trimEnough = samplesFor(TRIM_TAIL_SAMPLES, quantile);
    }

    /**
     * The samples that hold {@code tail} above the quantile on average, {@code tail / (1 − q)};
     * 0 for {@code q = 1}, whose reading is the largest sample however many there are.
     */
    private static long samplesFor(double tail, double quantile) {
        return quantile < 1 ? (long) Math.ceil(tail / (1 - quantile) - 1e-9) : 0;
    }

    /**
     * Takes one non-empty window and returns the new rate.
     *
     * @param window  the window's samples
     * @param rate    the rate in force during the window, per second
     * @param seconds the window's length, seconds, {@code > 0}
     * @param demand  the items offered during the window (accepted into the queue, handed off
     *                directly, or refused because the queue was full)
     * @param stallMs the longest pause of the process that ended during the window, ms (0 when
     *                none was seen)
     * @return the new rate, in [min, max]
     */
    double step(PowerHistogram.Snapshot window, double rate, double seconds, long demand, double stallMs) {
        lastExcused = excused(stallMs);
        if (lastExcused) {
            // A pause of the process: the calls in flight ended late whatever the rate. Hold, and
            // keep the window out of every reading, the capacity and the trim block.
            return clamp(rate);
        }
        recent.addLast(window);
        long held = 0;
        for (PowerHistogram.Snapshot s : recent) {
            held += s.count();
        }
        // Sparse: three windows at this rate hold too few samples for the quantile. The reading
        // then keeps windows until they do.
        boolean sparse = rate * seconds * WINDOWS < enough;
        while (recent.size() > WINDOWS
                && (!sparse || recent.size() > MAX_WINDOWS || held - recent.peekFirst().count() >= enough)) {
            held -= recent.removeFirst().count();
        }
        PowerHistogram.Snapshot merged = null;
        for (PowerHistogram.Snapshot s : recent) {
            merged = merged == null ? s : merged.merge(s);
        }
        double previous = smoothed;
        double m = PowerFlowController.observedQuantile(merged, quantile);
        smoothed = m;
        double throughput = window.count() / seconds;
        // Loaded: work was offered at the rate or above, so the rate, not the demand, set how much
        // was admitted. Only a loaded window says anything about the downstream's capacity.
        boolean loaded = demand / seconds >= SATURATION * rate;
        boolean saturated = loaded && throughput < SATURATION * rate;
        if (loaded && seconds >= RAISE_SECONDS && throughput > capacity) {
            // The downstream completed more than the estimate: it can. A saturated window during a
            // pause of the machine measured the pause, not the downstream; the backlog it left
            // drains in the next window, above the estimate.
            capacity = throughput;
        }
        // Too few samples for the quantile to decide a cut (see the hold below).
        boolean tooFew = sparse && held < enough && recent.size() < MAX_WINDOWS;
        boolean wasClimbing = climbing;
        climbing = false;
        if (trimming) {
            if (m <= target || !(saturated || (m > TRIM_LEAVE * target && !tooFew))) {
                return trim(window, rate);
            }
            trimming = false; // the downstream changed: the law's cut below
        } else if (wasClimbing && m > target && m <= TRIM_LEAVE * target && !saturated && !sparse
                && nearKnee(rate)) {
            // The slow climb near a measured knee reached the target: from here, trim. One
            // reading of three seconds is too noisy to cut on (a slow second of the downstream or
            // of the machine puts it over); cutting on each and climbing back left a settled minute
            // under or over the target three times in ten.
            trimming = true;
            newBlock();
            recent.clear();
            ups = 0;
            return clamp(rate * trimFactor(m));
        }
        double next;
        if (m > target && tooFew && !saturated) {
            // Too few samples for the quantile: one slow call (the service time's tail, a pause of
            // the machine) reads over the target, at a rate far under any knee. Cutting and
            // bounding the capacity on it kept the rate at a fifth of the capacity for minutes
            // after a stall. Hold, and keep the windows to gather more; a saturated window acts.
            next = rate;
        } else if (m > target) {
            if (saturated) {
                // Saturated: the downstream completed less than was admitted. That is its capacity.
                capacity = throughput;
                next = Math.max(MAX_CUT * rate, Math.min(rate * target / m, KNEE * throughput));
            } else if (m < previous) {
                // Over the target but falling, at a rate the downstream keeps up with: a backlog
                // draining. Cutting again would cut for work admitted before the last cut.
                next = rate;
            } else {
                next = rate * Math.max(MAX_CUT, target / m);
                // The downstream kept up, yet the reading went far over the target: the knee is
                // below this rate, whatever a saturated window measured before (one that
                // straddled a drop in capacity measures part of the old one). Not on a reading
                // just over: that is as likely noise, and with a target close to the service
                // time's own p99 bounding on it ratchets the rate down.
                if (loaded && m > BOUND_OVER * target) {
                    capacity = Math.min(capacity, rate);
                }
            }
            // The windows read so far describe a rate no longer in force.
            recent.clear();
        } else {
            double headroom = Math.min(1.0, (target - m) / (HEADROOM_BAND * target));
            if (rate > capacity) {
                // At or under the target above the capacity estimate: the downstream does more
                // now. Move the estimate up with the rate, so that the climb stays slow there.
                capacity = rate;
            }
            climbing = true;
            if (nearKnee(rate)) {
                next = rate * (1 + SLOW_INCREASE * headroom);
            } else {
                next = rate * (1 + FAST_INCREASE * headroom);
                if (rate < KNEE * capacity) {
                    next = Math.min(next, KNEE * capacity);
                }
            }
        }
        return clamp(next);
    }

    /**
     * Whether a pause excuses this window: one of at least {@link #STALL} × the target (and
     * {@link #STALL_FLOOR_MS}) ended in it, more than {@link #STALL_GAP} windows after the last
     * excused one, or it is the window after such a pause.
     */
    private boolean excused(double stallMs) {
        sinceStall++;
        if (stallShadow) {
            stallShadow = false;
            return true;
        }
        if (stallMs >= Math.max(STALL * target, STALL_FLOOR_MS) && sinceStall > STALL_GAP) {
            sinceStall = 0;
            stallShadow = true;
            pausesExcused = pausesExcused + 1; // one writer: the loop lock
            return true;
        }
        return false;
    }

    /** One window of trimming: the rate holds until the block is whole, then moves once. */
    private double trim(PowerHistogram.Snapshot window, double rate) {
        block = block == null ? window : block.merge(window);
        blockWindows++;
        boolean whole = blockWindows >= MAX_TRIM_WINDOWS
                || (blockWindows >= TRIM_WINDOWS && block.count() >= trimEnough);
        if (!whole) {
            return clamp(rate);
        }
        double reading = PowerFlowController.observedQuantile(block, quantile);
        double f = trimFactor(reading);
        double next = clamp(rate * f);
        ups = f > 1 ? ups + 1 : 0;
        newBlock();
        if (reading < TRIM_EXIT * target || ups >= MAX_TRIM_UPS) {
            // Far under the target (the downstream does more now), or climbing block by block
            // for a minute (trimming began far under the knee): the climb resumes, and trims
            // again where it next reads over the target.
            trimming = false;
            climbing = true;
        }
        if (reading <= target && next > capacity) {
            capacity = next; // under the target above the estimate: the downstream does more
        }
        return next;
    }

    /** Whether {@code rate} is near the knee: within {@code [KNEE × C, C / KNEE]}. */
    private boolean nearKnee(double rate) {
        return rate >= KNEE * capacity && rate <= capacity / KNEE;
    }

    /** Starts a trim block with no windows. */
    private void newBlock() {
        block = null;
        blockWindows = 0;
    }

    /** The trim step for a reading: {@code (aim / reading)^(1 / elasticity)}, bounded. */
    private double trimFactor(double reading) {
        double f = Math.pow(TRIM_AIM * target / reading, 1 / TRIM_ELASTICITY);
        return Math.max(1 - TRIM_DOWN, Math.min(1 + TRIM_UP, f));
    }

    private double clamp(double rate) {
        return Math.min(max, Math.max(min, rate));
    }

    /** The smoothed reading of the last step, ms; NaN before the first. */
    double smoothed() {
        return smoothed;
    }

    /**
     * The capacity estimate, per second: measured by the last saturated window, bounded by the
     * rate of a window more than {@link #BOUND_OVER} × the target over that the downstream kept
     * up with, raised to a rate at or under the target above it (or a trim block's rate) and to
     * the completions per second of a window that completed more; +Infinity before any of these.
     */
    double capacity() {
        return capacity;
    }

    /** Pauses of the process that excused a window, since construction. */
    long pausesExcused() {
        return pausesExcused;
    }

    /** Whether the last step's window was excused: by a pause, or as the window after one. */
    boolean lastExcused() {
        return lastExcused;
    }

    /** Whether the law is trimming: the rate moves once per block of windows. */
    boolean trimming() {
        return trimming;
    }

    void reset() {
        sinceStall = STALL_GAP;
        stallShadow = false;
        lastExcused = false;
        climbing = false;
        trimming = false;
        newBlock();
        ups = 0;
        recent.clear();
        smoothed = Double.NaN;
        capacity = Double.POSITIVE_INFINITY;
    }
}
