package io.github.performancehelpers;

import java.time.Duration;
import java.util.Objects;

/**
 * A latency histogram with a guaranteed relative error on every quantile, built for a control
 * loop that reads the quantile of an interval and then starts a new one.
 *
 * <h2>Units</h2>
 * All values are milliseconds, as {@code double}: {@link #record(double)} takes milliseconds,
 * {@link #recordNanos(long)} and {@link #record(Duration)} convert to milliseconds, and every
 * figure read back ({@link #quantile(double)}, {@link #min()}, {@link #max()}, {@link #sum()},
 * {@link #mean()}) is in milliseconds.
 *
 * <h2>Accuracy</h2>
 * Values are counted in logarithmic buckets, as DDSketch does: with relative accuracy {@code a}
 * and {@code gamma = (1 + a) / (1 - a)}, a value {@code x > 0} goes to bucket
 * {@code i = ceil(log_gamma(x))}, which holds the values in {@code (gamma^(i-1), gamma^i]}, and
 * the bucket is read back as {@code 2 * gamma^i / (gamma + 1)}. Every value of the bucket is
 * within a relative distance {@code a} of that representative, so every quantile is within
 * relative error {@code a} of the exact quantile of the recorded samples (up to floating-point
 * rounding, far below {@code 1e-9} relative), for values inside the
 * {@linkplain Builder#trackableRange(Duration, Duration) trackable range}. Zero is a valid value
 * and has its own exact bucket. A quantile is also clamped to the exact {@link #min()} and
 * {@link #max()}, which can only bring it closer to the exact answer.
 *
 * <h2>Quantile rank</h2>
 * {@link #quantile(double) quantile(q)} of {@code n} samples is the <em>lower</em> quantile:
 * the value at 0-based rank {@code floor(q * (n - 1))} of the samples sorted ascending. So
 * {@code quantile(0)} is the minimum, {@code quantile(1)} the maximum, and {@code quantile(0.5)}
 * of an even number of samples is the lower of the two middle ones (no interpolation).
 *
 * <h2>Empty</h2>
 * An empty histogram answers {@link #quantile(double)}, {@link #min()}, {@link #max()} and
 * {@link #mean()} with {@link Double#NaN} (the JavaScript original's {@code undefined}),
 * {@link #count()} with {@code 0} and {@link #sum()} with {@code 0.0}.
 *
 * <h2>Intervals and thread-safety</h2>
 * The histogram is thread-safe, and recording and reading are separate roles, as in
 * HdrHistogram's {@code Recorder}. Any number of threads may record at once: a record is a few
 * atomic operations on preallocated arrays, <b>never waits</b> (not even for a reader) and
 * <b>allocates nothing</b>. Readers ({@link #snapshot()}, {@link #snapshotAndReset()},
 * {@link #reset()} and the read accessors) are serialized among themselves by a lock and never
 * hold up a writer.
 *
 * <p>The histogram holds the current <em>interval</em>: the samples recorded since it was built
 * or last reset. {@link #snapshotAndReset()} ends the interval and starts the next in one step,
 * and every sample lands in exactly one interval: none is lost and none is counted twice,
 * however the calls interleave. That is the read a feedback loop needs: the loop must judge the
 * latency of the traffic admitted at its current rate, not a lifetime figure that still contains
 * the traffic that justified an earlier cut. Each read accessor ({@link #quantile(double)},
 * {@link #count()}, ...) reads a consistent image of the current interval on its own; to read
 * several figures of the same instant, take one {@link #snapshot()} and read them there.
 *
 * <h2>Trackable range and memory</h2>
 * The buckets are preallocated for a fixed range of values, by default 1 ns to
 * 10<sup>7</sup> ms (about 2.8 hours). A positive value below the range is counted in its lowest
 * bucket and a value above it in its highest, so the relative-accuracy guarantee holds only
 * inside the range; {@link #min()}, {@link #max()}, {@link #sum()} and {@link #count()} stay
 * exact for every value. The state is two arrays (the active and the inactive interval) of
 * {@code 1 + ceil(ln(highest / lowest) / ln(gamma))} longs: at the default accuracy of 1% that
 * is about 23.4 KiB for the default range, and about 17.3 KiB for 1 µs to 1 hour.
 */
public final class PowerHistogram {

    /*
     * Implementation notes.
     *
     * Interval swaps use a writer/reader phaser in the manner of HdrHistogram's
     * WriterReaderPhaser: a writer marks its entry and exit with one atomic increment each; the
     * reader swaps the active and inactive state, then waits until every writer that entered
     * before the swap has left, so the state it reads is quiescent.
     */

    private PowerHistogram(Builder builder) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns a new builder, with relative accuracy {@code 0.01} and the default trackable range.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Builds a {@link PowerHistogram}. Not thread-safe; the histogram it builds is.
     */
    public static final class Builder {

        private Builder() {
        }

        /**
         * Sets the relative accuracy: every quantile is within this relative error of the exact
         * sample quantile. A smaller value means more buckets (more memory, same record cost).
         *
         * @param relativeAccuracy the relative accuracy, in {@code (0, 1)}; default {@code 0.01}
         * @return this builder
         * @throws IllegalArgumentException if {@code relativeAccuracy} is not in {@code (0, 1)}
         */
        public Builder relativeAccuracy(double relativeAccuracy) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Sets the range of values the buckets cover with the relative-accuracy guarantee. A
         * positive value below {@code lowest} is counted in the lowest bucket, a value above
         * {@code highest} in the highest one. Memory grows with {@code ln(highest / lowest)}.
         *
         * @param lowest  the lowest trackable value, {@code > 0}; default 1 ns
         * @param highest the highest trackable value, {@code > lowest}; default
         *                10<sup>7</sup> ms
         * @return this builder
         * @throws NullPointerException     if either argument is null
         * @throws IllegalArgumentException if {@code lowest} is not positive or {@code highest}
         *                                  is not greater than {@code lowest}
         */
        public Builder trackableRange(Duration lowest, Duration highest) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Builds the histogram, preallocating its buckets.
         *
         * @return a new, empty histogram
         * @throws IllegalArgumentException if the accuracy and range together need more than
         *                                  2<sup>22</sup> buckets
         */
        public PowerHistogram build() {
            return new PowerHistogram(this);
        }
    }

    /**
     * Records one value, in milliseconds. Never waits and allocates nothing.
     *
     * @param millis the value in milliseconds; finite and {@code >= 0} ({@code -0.0} counts as
     *               {@code 0})
     * @throws IllegalArgumentException if {@code millis} is negative, NaN or infinite; nothing is
     *                                  recorded then
     */
    public void record(double millis) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Records one value given in nanoseconds (converted to milliseconds). Never waits and
     * allocates nothing.
     *
     * @param nanos the value in nanoseconds, {@code >= 0}
     * @throws IllegalArgumentException if {@code nanos} is negative; nothing is recorded then
     */
    public void recordNanos(long nanos) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Records one latency (converted to milliseconds). Never waits and allocates nothing.
     *
     * @param latency the latency, not negative
     * @throws NullPointerException     if {@code latency} is null
     * @throws IllegalArgumentException if {@code latency} is negative; nothing is recorded then
     */
    public void record(Duration latency) {
        Objects.requireNonNull(latency, "latency");
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the lower {@code q}-quantile of the current interval: an estimate, within the
     * relative accuracy, of the value at 0-based rank {@code floor(q * (count - 1))} of the
     * samples sorted ascending.
     *
     * @param q the quantile, in {@code [0, 1]} ({@code 0.99} is the p99)
     * @return the quantile in milliseconds, or {@link Double#NaN} if the interval is empty
     * @throws IllegalArgumentException if {@code q} is not in {@code [0, 1]} (or is NaN)
     */
    public double quantile(double q) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the number of samples in the current interval.
     *
     * @return the count, {@code >= 0}
     */
    public long count() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the exact smallest sample of the current interval.
     *
     * @return the minimum in milliseconds, or {@link Double#NaN} if the interval is empty
     */
    public double min() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the exact largest sample of the current interval.
     *
     * @return the maximum in milliseconds, or {@link Double#NaN} if the interval is empty
     */
    public double max() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the sum of the samples of the current interval (a {@code double} sum, so exact as
     * long as every partial sum is representable, e.g. integers below 2<sup>53</sup>).
     *
     * @return the sum in milliseconds; {@code 0.0} if the interval is empty
     */
    public double sum() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the mean of the samples of the current interval, {@code sum() / count()}.
     *
     * @return the mean in milliseconds, or {@link Double#NaN} if the interval is empty
     */
    public double mean() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the relative accuracy this histogram was built with.
     *
     * @return the relative accuracy, in {@code (0, 1)}
     */
    public double relativeAccuracy() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns an immutable copy of the current interval, which goes on unchanged: samples
     * recorded concurrently are either in the snapshot and in the interval, or only in the
     * interval.
     *
     * @return a snapshot of the current interval
     */
    public Snapshot snapshot() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Ends the current interval and starts a new, empty one in one step, returning the interval
     * that ended. Every sample recorded by any thread lands in exactly one interval. Writers do
     * not wait; this method waits (briefly, spinning then yielding) for writers that are in the
     * middle of a record to finish it.
     *
     * @return a snapshot of the interval that ended
     */
    public Snapshot snapshotAndReset() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Discards the current interval and starts a new, empty one, as
     * {@link #snapshotAndReset()} does without building the snapshot.
     */
    public void reset() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Adds all samples of a snapshot to the current interval, as one write: a concurrent
     * {@link #snapshotAndReset()} sees either all of them or none. Counts of values outside this
     * histogram's trackable range are clamped into it, as a {@link #record(double)} would.
     * Never waits and allocates nothing.
     *
     * @param other the snapshot to add
     * @throws NullPointerException     if {@code other} is null
     * @throws IllegalArgumentException if {@code other} has a different relative accuracy
     */
    public void merge(Snapshot other) {
        Objects.requireNonNull(other, "other");
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the current interval as JSON, in the shape documented at {@link Snapshot#toJson()}.
     *
     * @return a JSON object
     */
    public String toJson() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * An immutable image of one interval of a {@link PowerHistogram}: its bucket counts, exact
     * count, min, max and sum. Snapshots of the same relative accuracy merge into a new snapshot
     * whose quantiles are those of the union of the samples, within the same relative accuracy.
     * Thread-safe (immutable). Empty-value conventions and the quantile rank are those of
     * {@link PowerHistogram}.
     */
    public static final class Snapshot {

        private Snapshot() {
        }

        /**
         * Returns the lower {@code q}-quantile: an estimate, within the relative accuracy, of
         * the value at 0-based rank {@code floor(q * (count - 1))} of the samples sorted
         * ascending.
         *
         * @param q the quantile, in {@code [0, 1]}
         * @return the quantile in milliseconds, or {@link Double#NaN} if the snapshot is empty
         * @throws IllegalArgumentException if {@code q} is not in {@code [0, 1]} (or is NaN)
         */
        public double quantile(double q) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns the number of samples.
         *
         * @return the count, {@code >= 0}
         */
        public long count() {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns the exact smallest sample.
         *
         * @return the minimum in milliseconds, or {@link Double#NaN} if empty
         */
        public double min() {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns the exact largest sample.
         *
         * @return the maximum in milliseconds, or {@link Double#NaN} if empty
         */
        public double max() {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns the sum of the samples.
         *
         * @return the sum in milliseconds; {@code 0.0} if empty
         */
        public double sum() {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns the mean of the samples, {@code sum() / count()}.
         *
         * @return the mean in milliseconds, or {@link Double#NaN} if empty
         */
        public double mean() {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns the relative accuracy of the histogram this snapshot was taken from.
         *
         * @return the relative accuracy, in {@code (0, 1)}
         */
        public double relativeAccuracy() {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns a new snapshot holding the samples of both this one and {@code other}; neither
         * is changed.
         *
         * @param other the snapshot to merge with
         * @return the merged snapshot
         * @throws NullPointerException     if {@code other} is null
         * @throws IllegalArgumentException if {@code other} has a different relative accuracy
         */
        public Snapshot merge(Snapshot other) {
            Objects.requireNonNull(other, "other");
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Returns this snapshot as one JSON object. Shape (NaN figures of an empty snapshot are
         * written as {@code null}, as JSON has no NaN):
         *
         * <pre>{@code
         * {"relativeAccuracy":0.01,"count":4,"min":0.0,"max":12.0,"sum":17.0,"mean":4.25,
         *  "quantiles":{"0.5":2.0,"0.9":12.0,"0.99":12.0,"0.999":12.0},
         *  "zeroCount":1,"bins":[[35,1],[56,1],[126,1]]}
         * }</pre>
         *
         * {@code quantiles} holds the p50, p90, p99 and p999 as {@link #quantile(double)} gives
         * them. {@code zeroCount} is the number of samples equal to zero. {@code bins} lists
         * the non-empty buckets in ascending order as {@code [index, count]} pairs: bucket
         * {@code i} holds the values in {@code (gamma^(i-1), gamma^i]} with
         * {@code gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy)}, so the buckets,
         * the zero count and the exact min, max and sum are enough to rebuild the snapshot.
         *
         * @return a JSON object
         */
        public String toJson() {
            throw new UnsupportedOperationException("not yet implemented");
        }
    }
}
