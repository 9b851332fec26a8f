// Over 800 lines (about 1,080) because the public nested types Snapshot and Builder live here
// (their names are API, about 380 lines), and about half the file is Javadoc stating the accuracy
// and concurrency contract. The index mapping (OctaveLogMapping), the counts of one interval
// (HistogramInterval) and the writers' phaser (WriterReaderPhaser) are already their own files.
package io.github.performancehelpers.loop;

import java.time.Duration;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import io.github.performancehelpers.internal.Preconditions;

/**
 * A latency histogram with a guaranteed relative error on every quantile, built for a control
 * loop that reads the quantile of an interval and then starts a new one.
 *
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads: by
 * default any number of threads may record at once, and readers never hold up a writer. In
 * {@linkplain Builder#singleWriter(boolean) single-writer mode} at most one thread may record at
 * a time, while any number read. See "Intervals" and "Single-writer mode" below.
 *
 * <h2>Units</h2>
 * All values are milliseconds, as {@code double}: {@link #record(double)} takes milliseconds,
 * {@link #recordNanos(long)} and {@link #record(Duration)} convert to milliseconds, and every
 * figure read back ({@link #quantile(double)}, {@link #min()}, {@link #max()}, {@link #sum()},
 * {@link #mean()}) is in milliseconds.
 *
 * <h2>Accuracy</h2>
 * Values are counted in logarithmic buckets, as DDSketch does: with relative accuracy {@code a}
 * and {@code gamma = (1 + a) / (1 - a)}, a value {@code x > 0} goes to a bucket
 * {@code [L, U)} with {@code U / L <= gamma}, and the bucket is read back as
 * {@code 2LU / (L + U)}. Every value of the bucket is within a relative distance
 * {@code (U - L) / (U + L) <= a} of that representative, so every quantile is within relative
 * error {@code a} of the exact quantile of the recorded samples (up to floating-point rounding,
 * far below {@code 1e-9} relative), for values inside the
 * {@linkplain Builder#trackableRange(Duration, Duration) trackable range}. The buckets repeat
 * from octave to octave, a whole number {@code n} of them per octave (36 at the default accuracy
 * of 1%, 4% more than buckets of exactly {@code U / L = gamma} would need), each a run of the
 * octave's {@code 2^k} equal cells (1,024 at 1%) whose ratio {@code U / L} is checked to be at
 * most {@code gamma} when the histogram is built; the bounds and the index formula are at
 * {@link Snapshot#toJson()}. The index is not computed with {@link Math#log(double)} nor any
 * floating-point arithmetic, but from the IEEE-754 bits of the value, as HdrHistogram does: the
 * binary exponent times {@code n}, plus the bucket of the cell, read from a table indexed by the
 * top {@code k} bits of the mantissa. Zero is a valid value and has its own exact bucket. A quantile
 * is also clamped to {@link #min()} and {@link #max()}, which can only bring it closer to the
 * exact answer, and the quantiles of the first and last rank are {@link #min()} and
 * {@link #max()} (exact, except in {@linkplain Builder#singleWriter(boolean) single-writer
 * mode}, where they are estimates within the relative accuracy).
 *
 * <h2>Quantile rank</h2>
 * {@link #quantile(double) quantile(q)} of {@code n} samples is the <em>lower</em> quantile:
 * the value at 0-based rank {@code floor(q * (n - 1))} of the samples sorted ascending. So
 * {@code quantile(0)} is the minimum, {@code quantile(1)} the maximum, and {@code quantile(0.5)}
 * of an even number of samples is the lower of the two middle ones (no interpolation).
 *
 * <h2>Empty</h2>
 * An empty histogram answers {@link #quantile(double)}, {@link #min()}, {@link #max()} and
 * {@link #mean()} with {@link Double#NaN}, {@link #count()} with {@code 0} and {@link #sum()}
 * with {@code 0.0}.
 *
 * <h2>Intervals</h2>
 * Recording and reading are separate roles, as in HdrHistogram's {@code Recorder}. By default any
 * number of threads may record at once: a record is a few atomic operations on preallocated
 * arrays, <b>never waits</b> (not even for a reader) and <b>allocates nothing</b>. Readers
 * ({@link #snapshot()}, {@link #snapshotAndReset()}, {@link #reset()} and the read accessors) are
 * serialized among themselves by a lock and never hold up a writer.
 *
 * <p>The histogram holds the current <em>interval</em>: the samples recorded since it was built
 * or last reset. {@link #snapshotAndReset()} ends the interval and starts the next in one step,
 * and every sample lands in exactly one interval: none is lost and none is counted twice,
 * however the calls interleave. That is the read a feedback loop needs: the loop must judge the
 * latency of the traffic admitted at its current rate, not a lifetime figure that still contains
 * the traffic that justified an earlier cut. Each read accessor ({@link #quantile(double)},
 * {@link #count()}, ...) reads a consistent image of the current interval on its own; to read
 * several figures of the same instant, take one {@link #snapshot()} and read them there. In the
 * default mode an interval is exact: each sample's bucket count, sum and extremes land in the
 * same interval.
 *
 * <h2>Single-writer mode</h2>
 * {@link Builder#singleWriter(boolean) singleWriter(true)} makes recording about as cheap as a
 * plain single-threaded histogram, for the case where one thread does all the recording (a
 * dispatcher, an event loop, a per-thread histogram merged on read), with the same contract as
 * HdrHistogram's {@code SingleWriterRecorder}: <b>at most one thread records at a time</b>
 * ({@code record}, {@code recordNanos} and {@link #merge(Snapshot)} are recording operations),
 * and when recording moves to another thread, everything the previous recording thread did must
 * <em>happen-before</em> the next one's first record (a lock, a {@code join}, a handoff through
 * a concurrent queue). Breaking that contract loses samples silently. Any number of threads may
 * read, snapshot and reset concurrently with the writer, as in the default mode.
 *
 * <p>The writer then only ever increases cumulative counters (one per bucket, and the
 * cumulative sum and extremes) with plain reads and plain or release stores (plain stores on x86):
 * no atomic read-modify-write, no fence that waits for the store buffer, no wait on a reader, no
 * allocation. A reader computes an interval as the difference between the cumulative counters
 * now and the baseline it saved at the previous {@link #snapshotAndReset()} or {@link #reset()}.
 * What that guarantees, and what it gives up against the default mode:
 * <ul>
 *   <li><b>Every sample's bucket count lands in exactly one interval, and so does its value in
 *       the sum</b>: the interval counts of all intervals add up exactly to the number of
 *       samples recorded, and the interval sums to their sum (exactly when the running sums are
 *       exactly representable, e.g. integer milliseconds below 2<sup>53</sup>; otherwise up to
 *       the rounding of a difference of two cumulative doubles).</li>
 *   <li>But a sample recorded <em>while</em> a reader takes its snapshot may have its count in
 *       that interval and its value in the next interval's sum (never the other way round: the
 *       reader reads the sum before the counts, and the writer publishes the count before the
 *       sum, so an interval's sum only holds samples its counts hold). So within one interval
 *       {@code sum()} may lack the last few samples the counts include, and an interval can even
 *       have a count of 0 and a small positive sum. And the samples in an interval are all those
 *       recorded before the read, plus some of those recorded during it, not necessarily in
 *       recording order.</li>
 *   <li>{@link #min()} and {@link #max()} of an interval (and so {@code quantile(0)} and
 *       {@code quantile(1)}) are <b>estimates within the relative accuracy</b>, not exact: the
 *       representative value of the interval's lowest (highest) non-empty bucket, clamped to
 *       the exact lowest (highest) value ever recorded, which bounds every interval's samples
 *       (so a constant sample still reads back exactly, and zero is exact). Like the
 *       quantiles, they are within the relative accuracy only for values inside the trackable
 *       range.</li>
 *   <li>The cumulative sum grows for the histogram's lifetime, so an interval sum carries an
 *       absolute rounding error of about 10<sup>-16</sup> times the lifetime sum (about
 *       10<sup>-4</sup> ms after 10<sup>12</sup> ms of recorded latency).</li>
 *   <li>{@link #merge(Snapshot)} is a recording operation (writer thread only), and a
 *       concurrent {@link #snapshotAndReset()} may split a merged snapshot's buckets between two
 *       intervals (each bucket's count still lands in exactly one).</li>
 * </ul>
 * A {@link #snapshot()} that does not reset costs no write and no put-back in this mode.
 *
 * <h2>Trackable range and memory</h2>
 * The buckets are preallocated for a fixed range of values, by default 1 ns to
 * 10<sup>7</sup> ms (about 2.8 hours). A positive value below the range is counted in its lowest
 * bucket and a value above it in its highest, so the relative-accuracy guarantee holds only
 * inside the range; {@link #min()}, {@link #max()}, {@link #sum()} and {@link #count()} stay
 * exact for every value (in single-writer mode: {@link #count()} and {@link #sum()}). The state
 * is two arrays (the active and the inactive interval; in single-writer mode the cumulative
 * counters and the reader's baseline) of about {@code 2 + n * log2(highest / lowest)} longs,
 * plus the index table ({@code 2^k} ints, about {@code 23 n}: 4 KiB at 1%) and a few small
 * objects: at the default accuracy of 1% the whole state is about 28.9 KiB for the default range
 * (1,557 longs per interval) and about 22.5 KiB for 1 µs to 1 hour (1,145 longs). Memory grows
 * as {@code 1 / relativeAccuracy}: 0.1% over the default range takes about 280 KiB.
 *
 * @since 0.1.0
 */
public final class PowerHistogram {

    /*
     * Implementation notes.
     *
     * Length. This file is about 1,000 lines because the public nested types that must stay
     * nested (Builder and Snapshot) take about 370 of them. The two recording modes' state
     * lives in its own files: HistogramInterval (one interval, many writers) and
     * SingleWriterCounters (single-writer mode).
     *
     * Interval swaps use a writer/reader phaser in the manner of HdrHistogram's
     * WriterReaderPhaser: a writer marks its entry and exit with one atomic increment each; the
     * reader swaps the active and inactive state, then waits until every writer that entered
     * before the swap has left, so the state it reads is quiescent.
     *
     * Layout. Each interval is one long[]: slot 0 counts zeros, slot 1 + (i - minIndex) counts
     * bucket i for i in [minIndex, maxIndex]; plus the interval's sum, min and max as the raw
     * bits of doubles, updated by CAS. The count is not a separate field: it is the sum of the
     * slots, computed by the reader. A record is therefore: the bucket index (outside the
     * critical section), then phaser enter, one getAndAdd on the slot, one CAS on the sum, a
     * plain volatile read each of min and max (a CAS only when the value is a new extreme),
     * phaser exit. No allocation, no loop that waits on another thread (the CAS loops retry
     * only because another writer made progress).
     *
     * Sum, min and max are CAS loops on the raw bits of a double rather than DoubleAdder or
     * DoubleAccumulator: those stripe into Cells allocated lazily on first contention (and grow
     * them), so a record would not be allocation-free, and a striped value cannot be swapped with
     * the interval's counts in one step anyway.
     *
     * Readers hold readerLock. snapshotAndReset: clear the inactive interval (quiescent since
     * the previous flip), publish it as active, flip the phaser, and read the old one, now
     * quiescent. snapshot: the same, then add the old interval back into the active one as a
     * single write, so the current interval loses nothing.
     *
     * Single-writer mode (SingleWriterCounters). No phaser, no intervals: one array of cumulative
     * bucket counts, the cumulative sum, and the lifetime min and max (as raw bits: a value
     * >= +0.0 compares as its bits do, so the writer's checks are integer comparisons), written
     * by the one writer in this order: min/max (plain, and only on a new extreme), the bucket
     * (release store), the sum (release store). A reader reads in the opposite order with
     * acquire loads: the sum, then the buckets, then min/max. So a sum the reader sees includes
     * only samples whose bucket increments it sees, and a bucket increment it sees comes with the
     * min/max update of that sample (release/acquire), so the lifetime extremes read last bound
     * every sample the read counts. On x86 a release store is a plain store (the ordering is the
     * compiler's). The sum is one field: striping it by bucket, so that consecutive records
     * would not wait on each other's addition, measured slower (more instructions for the stripe
     * and its bounds check than the addition's latency costs; benchmarks/histogram.md).
     *
     * The reader keeps the baseline (the cumulative counts and
     * sum at the last reset) and reports differences. Monotonic counters make that exact: each
     * increment of a bucket is counted in the one interval whose read first saw it.
     *
     * The bucket index is OctaveLogMapping's: the exponent bits times the buckets per octave,
     * plus one load from a table indexed by the top mantissa bits, and one unsigned range check
     * that also sends zero, negative, NaN, infinite and out-of-range values to the slow path
     * (recordMillis). Neither Math.log (several times the cost) nor a polynomial in the
     * mantissa (the previous index, about twice the record's cost of HdrHistogram's) is on the
     * record path; benchmarks/histogram.md has the measurements.
     */

    /** Default lowest trackable value: 1 ns, in milliseconds. */
    static final double DEFAULT_LOWEST_MILLIS = 1e-6;
    /** Default highest trackable value: 10^7 ms (about 2.8 hours). */
    static final double DEFAULT_HIGHEST_MILLIS = 1e7;
    /** Upper bound on the number of buckets of one interval (32 MiB per interval). */
    static final int MAX_BUCKETS = 1 << 22;
    /** Bucket indices stay well inside int range. */
    private static final long MAX_INDEX = 1 << 30;

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

    private final double relativeAccuracy;
    private final OctaveLogMapping mapping;
    private final int minIndex;
    private final int maxIndex;
    private final int slotCount;
    /*
     * The record path's copy of the mapping's table and constants (see slotOf), held here so
     * that a record reads them without going through the mapping object.
     */
    /** The mapping's cell table. */
    private final int[] cells;
    /** The mapping's cell shift. */
    private final int cellShift;
    /** Buckets per octave. */
    private final long bucketsPerOctave;
    /**
     * {@code 2 - minIndex - 1023 * bucketsPerOctave}: the slot of a value is its biased
     * exponent times {@code bucketsPerOctave}, plus its cell's bucket, plus this.
     */
    private final long slotBase;
    /** {@code slotCount - 1}: a candidate slot {@code s} is in range if {@code s - 1 <u slotLimit}. */
    private final long slotLimit;

    /** The single-writer state, or null in the default (multi-writer) mode. */
    private final SingleWriterCounters cumulative;
    /** Multi-writer mode only (unused in single-writer mode). */
    private final WriterReaderPhaser phaser;
    /** Serializes readers. Writers never take it. */
    private final ReentrantLock readerLock = new ReentrantLock();
    /**
     * The interval writers record into (multi-writer mode). Guarded by {@code readerLock} for
     * writes; writers read it without the lock.
     */
    private volatile HistogramInterval active;
    /** The interval swapped out last; quiescent. Guarded by {@code readerLock}. */
    private HistogramInterval inactive;

    private PowerHistogram(Builder builder, OctaveLogMapping mapping, int minIndex, int maxIndex) {
        this.relativeAccuracy = builder.relativeAccuracy;
        this.mapping = mapping;
        this.minIndex = minIndex;
        this.maxIndex = maxIndex;
        this.slotCount = 1 + (maxIndex - minIndex + 1);
        this.cells = mapping.cells();
        this.cellShift = mapping.cellShift();
        this.bucketsPerOctave = mapping.bucketsPerOctave();
        this.slotBase = 2L - minIndex - 1023L * bucketsPerOctave;
        this.slotLimit = slotCount - 1;
        if (builder.singleWriter) {
            this.cumulative = new SingleWriterCounters(slotCount);
            this.phaser = null;
        } else {
            this.cumulative = null;
            this.phaser = new WriterReaderPhaser();
            this.active = new HistogramInterval(slotCount);
            this.inactive = new HistogramInterval(slotCount);
        }
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
     * Builds a {@link PowerHistogram}.
     *
     * <p><b>Thread safety.</b> Not safe for concurrent use: confine a builder to one thread at a
     * time. The histogram it builds is safe for concurrent use.
     */
    public static final class Builder {

        private double relativeAccuracy = 0.01;
        private double lowestMillis = DEFAULT_LOWEST_MILLIS;
        private double highestMillis = DEFAULT_HIGHEST_MILLIS;
        private boolean singleWriter;

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
            if (!(relativeAccuracy > 0.0 && relativeAccuracy < 1.0)) {
                throw new IllegalArgumentException(
                        "relativeAccuracy must be in (0, 1): " + relativeAccuracy);
            }
            this.relativeAccuracy = relativeAccuracy;
            return this;
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
            Objects.requireNonNull(lowest, "lowest");
            Objects.requireNonNull(highest, "highest");
            Preconditions.requirePositive("lowest", lowest);
            if (highest.compareTo(lowest) <= 0) {
                throw new IllegalArgumentException(
                        "highest must be > lowest: highest=" + highest + ", lowest=" + lowest);
            }
            this.lowestMillis = toMillis(lowest);
            this.highestMillis = toMillis(highest);
            return this;
        }

        /**
         * Chooses single-writer mode: recording becomes a few plain memory accesses (no atomic
         * operation, no fence), at the price of a contract on the caller and a looser
         * per-interval consistency, both described in the class documentation under
         * "Single-writer mode". The contract, as HdrHistogram's {@code SingleWriterRecorder}'s:
         * at most one thread calls the recording methods ({@code record}, {@code recordNanos},
         * {@link PowerHistogram#merge(Snapshot)}) at a time, with a happens-before relation
         * between the last record of one recording thread and the first of the next; any
         * thread may read, snapshot and reset at any time. Totals stay exact: every sample's
         * count and value land in exactly one interval.
         *
         * @param singleWriter {@code true} for single-writer mode; default {@code false} (any
         *                     number of concurrent writers)
         * @return this builder
         */
        public Builder singleWriter(boolean singleWriter) {
            this.singleWriter = singleWriter;
            return this;
        }

        /**
         * Builds the histogram, preallocating its buckets.
         *
         * @return a new, empty histogram
         * @throws IllegalArgumentException if the accuracy needs more than 2<sup>16</sup>
         *                                  buckets per octave (a relative accuracy below about
         *                                  {@code 5.3e-6}), or the accuracy and range together
         *                                  more than 2<sup>22</sup> buckets
         */
        public PowerHistogram build() {
            double perOctave = OctaveLogMapping.bucketsPerOctave(relativeAccuracy);
            if (!(perOctave <= OctaveLogMapping.MAX_BUCKETS_PER_OCTAVE)) {
                throw new IllegalArgumentException("relativeAccuracy " + relativeAccuracy
                        + " needs " + (long) perOctave + " buckets per octave, more than "
                        + OctaveLogMapping.MAX_BUCKETS_PER_OCTAVE + "; use a larger relativeAccuracy");
            }
            OctaveLogMapping mapping = new OctaveLogMapping(relativeAccuracy);
            long lowestIndex = mapping.index(lowestMillis);
            long highestIndex = mapping.index(highestMillis);
            long buckets = highestIndex - lowestIndex + 2;
            long largestIndex = Math.max(Math.abs(lowestIndex), Math.abs(highestIndex));
            if (buckets > MAX_BUCKETS || largestIndex >= MAX_INDEX) {
                throw new IllegalArgumentException("relativeAccuracy " + relativeAccuracy
                        + " over the trackable range [" + lowestMillis + " ms, " + highestMillis
                        + " ms] needs about " + buckets + " buckets, more than "
                        + MAX_BUCKETS + "; use a larger relativeAccuracy or a narrower range");
            }
            return new PowerHistogram(this, mapping, (int) lowestIndex, (int) highestIndex);
        }
    }

    private static double toMillis(Duration d) {
        return d.getSeconds() * 1e3 + d.getNano() / 1e6;
    }

    // ------------------------------------------------------------------------------ writers

    /**
     * Records one value, in milliseconds. Never waits and allocates nothing.
     *
     * @param millis the value in milliseconds; finite and {@code >= 0} ({@code -0.0} counts as
     *               {@code 0})
     * @throws IllegalArgumentException if {@code millis} is negative, NaN or infinite; nothing is
     *                                  recorded then
     */
    public void record(double millis) {
        recordMillis(millis, 1L); // validates millis, off the fast path (see recordMillis)
    }

    /**
     * Records one value given in nanoseconds (converted to milliseconds). Never waits and
     * allocates nothing.
     *
     * @param nanos the value in nanoseconds, {@code >= 0}
     * @throws IllegalArgumentException if {@code nanos} is negative; nothing is recorded then
     */
    public void recordNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("nanos must be >= 0: " + nanos);
        }
        recordMillis(nanos / 1e6, 1L);
    }

    /**
     * Records {@code count} samples of one value given in nanoseconds, as {@code count} calls of
     * {@link #recordNanos(long)} would, in one write: the record of a sampled recorder, whose one
     * timed sample stands for {@code count} events (HdrHistogram's {@code recordValueWithCount}).
     * Never waits and allocates nothing.
     *
     * @param nanos the value in nanoseconds, {@code >= 0}
     * @param count the samples it stands for, {@code >= 1}
     * @throws IllegalArgumentException if {@code nanos} is negative or {@code count < 1}; nothing
     *                                  is recorded then
     */
    public void recordNanos(long nanos, long count) {
        if (nanos < 0) {
            throw new IllegalArgumentException("nanos must be >= 0: " + nanos);
        }
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1: " + count);
        }
        recordMillis(nanos / 1e6, count);
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
        if (latency.isNegative()) {
            throw new IllegalArgumentException("latency must not be negative: " + latency);
        }
        recordMillis(toMillis(latency), 1L);
    }

    /**
     * Records a value in milliseconds, validating it on the slow path only. The fast path is
     * the mapping's index computed on the raw bits (shifts, a multiply and one table load, see
     * {@link OctaveLogMapping}) and one unsigned range check: zero, {@code -0.0} and every
     * negative value (sign bit set), NaN, the infinities and every value outside the trackable
     * range give a candidate slot outside {@code [1, slotCount)} (their biased exponent is 0,
     * above 2047 or 2047; the range's is within about 1000 to 1100), so they go to
     * {@link #recordUnusual(double, long)}. The candidate is a long: the exponent times up to
     * 2<sup>20</sup> buckets per octave overflows an int.
     */
    private void recordMillis(double millis, long count) {
        long bits = Double.doubleToRawLongBits(millis);
        int[] table = cells;
        long slot = (bits >>> 52) * bucketsPerOctave
                + table[(int) (bits >>> cellShift) & (table.length - 1)] + slotBase;
        if (Long.compareUnsigned(slot - 1, slotLimit) < 0) {
            recordSlot((int) slot, bits, millis, count);
        } else {
            recordUnusual(millis, count);
        }
    }

    /**
     * The slow path of {@link #recordMillis(double, long)}: validation, zero (and {@code -0.0}, made
     * {@code +0.0} so that the extremes are), and values outside the range, clamped into it.
     */
    private void recordUnusual(double millis, long count) {
        Preconditions.requireFiniteNonNegative("millis", millis);
        double value = millis + 0.0; // -0.0 + 0.0 == +0.0
        int slot = 0;
        if (value != 0.0) {
            long index = mapping.index(value);
            slot = 1 + (int) (Math.min(Math.max(index, minIndex), maxIndex) - minIndex);
        }
        recordSlot(slot, Double.doubleToRawLongBits(value), value, count);
    }

    /**
     * Records {@code count} samples of a finite value {@code >= +0.0} (not {@code -0.0}), with raw
     * bits {@code bits}, in its slot.
     */
    private void recordSlot(int slot, long bits, double millis, long count) {
        SingleWriterCounters c = cumulative;
        if (c != null) {
            c.record(slot, bits, millis, count);
        } else {
            recordShared(slot, millis, count);
        }
    }

    /** Records {@code count} samples of a finite value {@code >= +0.0} in the default (multi-writer) mode. */
    private void recordShared(int slot, double millis, long count) {
        long epoch = phaser.writerEnter();
        try {
            HistogramInterval interval = active;
            SLOTS.getAndAdd(interval.slots, slot, count);
            interval.addSum(count == 1L ? millis : millis * count);
            interval.updateMin(millis);
            interval.updateMax(millis);
        } finally {
            phaser.writerExit(epoch);
        }
    }

    /** The slot of bucket {@code index}, clamped to this histogram's range. */
    int slotOfIndex(int index) {
        return 1 + Math.min(Math.max(index, minIndex), maxIndex) - minIndex;
    }

    /**
     * Adds all samples of a snapshot to the current interval, as one write: a concurrent
     * {@link #snapshotAndReset()} sees either all of them or none (in single-writer mode this is
     * a recording operation, for the writer thread only, and a concurrent
     * {@link #snapshotAndReset()} may see some of its buckets in one interval and the rest in
     * the next). Counts of values outside this histogram's trackable range are clamped into it,
     * as a {@link #record(double)} would. Never waits and allocates nothing.
     *
     * @param other the snapshot to add
     * @throws NullPointerException     if {@code other} is null
     * @throws IllegalArgumentException if {@code other} has a different relative accuracy
     */
    public void merge(Snapshot other) {
        Objects.requireNonNull(other, "other");
        checkSameAccuracy(relativeAccuracy, other.relativeAccuracy);
        if (other.count == 0) {
            return;
        }
        SingleWriterCounters c = cumulative;
        if (c != null) {
            c.add(this, other);
            return;
        }
        long epoch = phaser.writerEnter();
        try {
            addInto(active, other);
        } finally {
            phaser.writerExit(epoch);
        }
    }

    /** Adds a non-empty snapshot to an interval with atomic operations. */
    private void addInto(HistogramInterval interval, Snapshot s) {
        if (s.zeroCount != 0) {
            SLOTS.getAndAdd(interval.slots, 0, s.zeroCount);
        }
        long[] counts = s.counts;
        for (int j = 0; j < counts.length; j++) {
            if (counts[j] != 0) {
                SLOTS.getAndAdd(interval.slots, slotOfIndex(s.offset + j), counts[j]);
            }
        }
        interval.addSum(s.sum);
        interval.updateMin(s.min);
        interval.updateMax(s.max);
    }

    private static void checkSameAccuracy(double mine, double theirs) {
        if (Double.compare(mine, theirs) != 0) {
            throw new IllegalArgumentException("relativeAccuracy must be the same to merge: "
                    + theirs + " into " + mine);
        }
    }

    // ------------------------------------------------------------------------------ readers

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
        checkQuantile(q);
        return snapshot().quantile(q);
    }

    /**
     * Returns the number of samples in the current interval.
     *
     * @return the count, {@code >= 0}
     */
    public long count() {
        return snapshot().count();
    }

    /**
     * Returns the exact smallest sample of the current interval (in single-writer mode, an
     * estimate within the relative accuracy; see the class documentation).
     *
     * @return the minimum in milliseconds, or {@link Double#NaN} if the interval is empty
     */
    public double min() {
        return snapshot().min();
    }

    /**
     * Returns the exact largest sample of the current interval (in single-writer mode, an
     * estimate within the relative accuracy; see the class documentation).
     *
     * @return the maximum in milliseconds, or {@link Double#NaN} if the interval is empty
     */
    public double max() {
        return snapshot().max();
    }

    /**
     * Returns the sum of the samples of the current interval (a {@code double} sum, so exact as
     * long as every partial sum is representable, e.g. integers below 2<sup>53</sup>).
     *
     * @return the sum in milliseconds; {@code 0.0} if the interval is empty
     */
    public double sum() {
        return snapshot().sum();
    }

    /**
     * Returns the mean of the samples of the current interval, {@code sum() / count()}.
     *
     * @return the mean in milliseconds, or {@link Double#NaN} if the interval is empty
     */
    public double mean() {
        return snapshot().mean();
    }

    /**
     * Returns the relative accuracy this histogram was built with.
     *
     * @return the relative accuracy, in {@code (0, 1)}
     */
    public double relativeAccuracy() {
        return relativeAccuracy;
    }

    /**
     * Returns an immutable copy of the current interval, which goes on unchanged: samples
     * recorded concurrently are either in the snapshot and in the interval, or only in the
     * interval.
     *
     * @return a snapshot of the current interval
     */
    public Snapshot snapshot() {
        readerLock.lock();
        try {
            SingleWriterCounters c = cumulative;
            if (c != null) {
                return c.read(this, false);
            }
            HistogramInterval ended = swap();
            Snapshot s = Snapshot.ofInterval(this, ended);
            if (s.count != 0) {
                // Put the samples back, as one write, so the current interval loses nothing.
                long epoch = phaser.writerEnter();
                try {
                    addInto(active, s);
                } finally {
                    phaser.writerExit(epoch);
                }
            }
            return s;
        } finally {
            readerLock.unlock();
        }
    }

    /**
     * Ends the current interval and starts a new, empty one in one step, returning the interval
     * that ended. Every sample recorded by any thread lands in exactly one interval. Writers do
     * not wait; in the default mode this method waits (briefly, spinning then yielding) for
     * writers that are in the middle of a record to finish it; in single-writer mode it never
     * waits (see the class documentation for what an interval holds in that mode).
     *
     * @return a snapshot of the interval that ended
     */
    public Snapshot snapshotAndReset() {
        readerLock.lock();
        try {
            SingleWriterCounters c = cumulative;
            if (c != null) {
                return c.read(this, true);
            }
            return Snapshot.ofInterval(this, swap());
        } finally {
            readerLock.unlock();
        }
    }

    /**
     * Discards the current interval and starts a new, empty one, as
     * {@link #snapshotAndReset()} does without building the snapshot.
     */
    public void reset() {
        readerLock.lock();
        try {
            SingleWriterCounters c = cumulative;
            if (c != null) {
                c.rebase();
                return;
            }
            swap().clear();
        } finally {
            readerLock.unlock();
        }
    }

    /**
     * Returns the current interval as JSON, in the shape documented at {@link Snapshot#toJson()}.
     *
     * @return a JSON object
     */
    public String toJson() {
        return snapshot().toJson();
    }

    /**
     * Returns {@link #toJson()}.
     *
     * @return the current interval as JSON
     */
    @Override
    public String toString() {
        return toJson();
    }

    /**
     * Swaps the intervals and waits for the old active one to be quiescent. Caller holds
     * readerLock.
     *
     * @return the interval that was active, now quiescent and inactive
     */
    private HistogramInterval swap() {
        HistogramInterval next = inactive;
        next.clear(); // quiescent since the previous flip; plain writes, published by `active`
        HistogramInterval ended = active;
        active = next;
        phaser.flipPhase();
        inactive = ended;
        return ended;
    }

    /**
     * Estimates the heap bytes of this histogram's state, for a 64-bit JVM with compressed
     * references: the two interval arrays and objects, plus an upper bound for the fixed-size
     * objects (this object, the phaser, the reader lock).
     */
    long footprintBytes() {
        long array = 16L + 8L * slotCount;
        long fixed = 128 /* this */ + 40 /* mapping */ + mapping.tableBytes()
                + 16 + 48 /* ReentrantLock + its Sync */;
        if (cumulative != null) {
            return 2 * array + SingleWriterCounters.OBJECT_BYTES + fixed;
        }
        return 2 * (HistogramInterval.OBJECT_BYTES + array) + 48 /* phaser */ + fixed;
    }

    /** Number of buckets of one interval, the zero bucket included. */
    int slotCount() {
        return slotCount;
    }

    /** The bucket mapping (for tests). */
    OctaveLogMapping mapping() {
        return mapping;
    }

    private static void checkQuantile(double q) {
        if (!(q >= 0.0 && q <= 1.0)) {
            throw new IllegalArgumentException("q must be in [0, 1]: " + q);
        }
    }

    private static String json(double v) {
        return Double.isNaN(v) ? "null" : Double.toString(v);
    }

    /**
     * An immutable image of one interval of a {@link PowerHistogram}: its bucket counts, exact
     * count, sum, and min and max (exact, except for a histogram in single-writer mode, where
     * they are estimates within the relative accuracy). Snapshots of the same relative accuracy
     * merge into a new snapshot whose quantiles are those of the union of the samples, within
     * the same relative accuracy. Empty-value conventions and the quantile rank are those of
     * {@link PowerHistogram}.
     *
     * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number
     * of threads.
     */
    public static final class Snapshot {

        private static final long[] NO_COUNTS = new long[0];

        private final double relativeAccuracy;
        private final OctaveLogMapping mapping;
        final long zeroCount;
        /** Bucket index of {@code counts[0]}. */
        final int offset;
        /** Counts of buckets {@code offset ..}, trimmed to the first and last non-empty one. */
        final long[] counts;
        private final long count;
        final double sum;
        /** Minimum; +infinity when empty. */
        final double min;
        /** Maximum; -infinity when empty. */
        final double max;

        /** Copies a quiescent interval. */
        private static Snapshot ofInterval(PowerHistogram h, HistogramInterval interval) {
            return ofSlots(h, interval.slots, Double.longBitsToDouble(interval.sumBits),
                    Double.longBitsToDouble(interval.minBits),
                    Double.longBitsToDouble(interval.maxBits), false);
        }

        /**
         * Copies slot counts (slot 0: zeros; slot 1 + k: bucket minIndex + k).
         *
         * @param min               the exact minimum or, if {@code estimateExtremes}, a lower
         *                          bound of every sample
         * @param max               the exact maximum or, if {@code estimateExtremes}, an upper
         *                          bound of every sample
         * @param estimateExtremes  whether to estimate min and max from the lowest and highest
         *                          non-empty bucket (clamped into {@code [min, max]})
         */
        static Snapshot ofSlots(PowerHistogram h, long[] slots, double sum, double min,
                double max, boolean estimateExtremes) {
            int first = 1;
            while (first < slots.length && slots[first] == 0) {
                first++;
            }
            int last = slots.length - 1;
            while (last >= first && slots[last] == 0) {
                last--;
            }
            long zeroCount = slots[0];
            int offset = h.minIndex + first - 1;
            long[] counts = first <= last ? Arrays.copyOfRange(slots, first, last + 1) : NO_COUNTS;
            long n = zeroCount;
            for (long c : counts) {
                n += c;
            }
            if (estimateExtremes) {
                if (n == 0) {
                    min = Double.POSITIVE_INFINITY;
                    max = Double.NEGATIVE_INFINITY;
                } else {
                    double low = zeroCount != 0 ? 0.0 : h.mapping.representative(offset);
                    double high = counts.length == 0 ? 0.0
                            : h.mapping.representative(offset + counts.length - 1);
                    double lowerBound = min;
                    double upperBound = max;
                    min = Math.min(Math.max(low, lowerBound), upperBound);
                    max = Math.min(Math.max(high, lowerBound), upperBound);
                }
            }
            return new Snapshot(h.relativeAccuracy, h.mapping, zeroCount, offset, counts, n, sum,
                    min, max);
        }

        private Snapshot(double relativeAccuracy, OctaveLogMapping mapping, long zeroCount,
                int offset, long[] counts, long count, double sum, double min, double max) {
            this.relativeAccuracy = relativeAccuracy;
            this.mapping = mapping;
            this.zeroCount = zeroCount;
            this.offset = offset;
            this.counts = counts;
            this.count = count;
            this.sum = sum;
            this.min = min;
            this.max = max;
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
            checkQuantile(q);
            if (count == 0) {
                return Double.NaN;
            }
            long rank = (long) Math.floor(q * (count - 1));
            if (rank == 0) {
                return min; // exact, even outside the trackable range (default mode)
            }
            if (rank == count - 1) {
                return max;
            }
            long seen = zeroCount;
            if (rank < seen) {
                return 0.0;
            }
            for (int j = 0; j < counts.length; j++) {
                seen += counts[j];
                if (rank < seen) {
                    double representative = mapping.representative(offset + j);
                    return Math.min(Math.max(representative, min), max);
                }
            }
            return max; // unreachable: the counts sum to count
        }

        /**
         * Returns the number of samples.
         *
         * @return the count, {@code >= 0}
         */
        public long count() {
            return count;
        }

        /**
         * Returns the exact smallest sample (an estimate within the relative accuracy if the
         * snapshot comes from a histogram in single-writer mode).
         *
         * @return the minimum in milliseconds, or {@link Double#NaN} if empty
         */
        public double min() {
            return count == 0 ? Double.NaN : min;
        }

        /**
         * Returns the exact largest sample (an estimate within the relative accuracy if the
         * snapshot comes from a histogram in single-writer mode).
         *
         * @return the maximum in milliseconds, or {@link Double#NaN} if empty
         */
        public double max() {
            return count == 0 ? Double.NaN : max;
        }

        /**
         * Returns the sum of the samples.
         *
         * @return the sum in milliseconds; {@code 0.0} if empty
         */
        public double sum() {
            return sum;
        }

        /**
         * Returns the mean of the samples, {@code sum() / count()}.
         *
         * @return the mean in milliseconds, or {@link Double#NaN} if empty
         */
        public double mean() {
            return count == 0 ? Double.NaN : sum / count;
        }

        /**
         * Returns the relative accuracy of the histogram this snapshot was taken from.
         *
         * @return the relative accuracy, in {@code (0, 1)}
         */
        public double relativeAccuracy() {
            return relativeAccuracy;
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
            checkSameAccuracy(relativeAccuracy, other.relativeAccuracy);
            long[] merged;
            int mergedOffset;
            if (counts.length == 0) {
                merged = other.counts;
                mergedOffset = other.offset;
            } else if (other.counts.length == 0) {
                merged = counts;
                mergedOffset = offset;
            } else {
                mergedOffset = Math.min(offset, other.offset);
                int end = Math.max(offset + counts.length, other.offset + other.counts.length);
                merged = new long[end - mergedOffset];
                for (int j = 0; j < counts.length; j++) {
                    merged[offset - mergedOffset + j] += counts[j];
                }
                for (int j = 0; j < other.counts.length; j++) {
                    merged[other.offset - mergedOffset + j] += other.counts[j];
                }
            }
            return new Snapshot(relativeAccuracy, mapping, zeroCount + other.zeroCount,
                    mergedOffset, merged, count + other.count, sum + other.sum,
                    Math.min(min, other.min), Math.max(max, other.max));
        }

        /**
         * Returns this snapshot as one JSON object, on one line. Shape, for the samples 0, 2, 3
         * and 12 ms (line breaks added; NaN figures of an empty snapshot are written as
         * {@code null}, as JSON has no NaN):
         *
         * <pre>{@code
         * {"relativeAccuracy":0.01,"count":4,"min":0.0,"max":12.0,"sum":17.0,"mean":4.25,
         *  "quantiles":{"0.5":2.019342359767892,"0.9":3.027060231854839,
         *               "0.99":3.027060231854839,"0.999":3.027060231854839},
         *  "zeroCount":1,"bins":[[37,1],[58,1],[130,1]]}
         * }</pre>
         *
         * {@code quantiles} holds the p50, p90, p99 and p999 as {@link #quantile(double)} gives
         * them. {@code zeroCount} is the number of samples equal to zero. {@code bins} lists
         * the non-empty buckets in ascending order as {@code [index, count]} pairs. With
         * {@code gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy)},
         * {@code n_0 = ceil(ln 2 / ln gamma)}, {@code k} the smallest integer with
         * {@code 2^k >= 16 n_0 / ln 2}, and {@code n} the smallest integer {@code >= n_0} for
         * which every bucket below spans at most a factor {@code gamma} ({@code n = 36},
         * {@code k = 10} at the default 0.01), an octave's buckets start at the mantissas
         * {@code c_j / 2^k} for {@code c_j = ceil(2^k (2^(j/n) - 1))}, {@code 0 <= j < n}.
         * The index of a value {@code x = 2^e * (1 + m)} ({@code e} its binary exponent,
         * {@code m} in {@code [0, 1)} its mantissa, as {@link Math#getExponent(double)} and the
         * IEEE-754 bits give them) is {@code i = e * n + j + 1} for the largest {@code j} with
         * {@code c_j <= floor(2^k m)}, and bucket {@code i} is
         * {@code [2^e (1 + c_j / 2^k), 2^e (1 + c_(j+1) / 2^k))} (with {@code c_n = 2^k}). So
         * the buckets, the zero count and the min, max and sum are enough to rebuild the
         * snapshot. (Pre-release builds of 0.1.0 used other layouts, {@code Math.log} and then a
         * cubic in the mantissa; their indices differ by a few percent and must not be mixed
         * with these.)
         *
         * @return a JSON object
         */
        public String toJson() {
            StringBuilder b = new StringBuilder(128 + 16 * counts.length);
            b.append("{\"relativeAccuracy\":").append(relativeAccuracy)
                    .append(",\"count\":").append(count)
                    .append(",\"min\":").append(json(min()))
                    .append(",\"max\":").append(json(max()))
                    .append(",\"sum\":").append(json(sum))
                    .append(",\"mean\":").append(json(mean()))
                    .append(",\"quantiles\":{\"0.5\":").append(json(quantile(0.5)))
                    .append(",\"0.9\":").append(json(quantile(0.9)))
                    .append(",\"0.99\":").append(json(quantile(0.99)))
                    .append(",\"0.999\":").append(json(quantile(0.999)))
                    .append("},\"zeroCount\":").append(zeroCount)
                    .append(",\"bins\":[");
            boolean firstBin = true;
            for (int j = 0; j < counts.length; j++) {
                if (counts[j] != 0) {
                    b.append(firstBin ? "[" : ",[").append(offset + j).append(',')
                            .append(counts[j]).append(']');
                    firstBin = false;
                }
            }
            return b.append("]}").toString();
        }

        /**
         * Returns {@link #toJson()}.
         *
         * @return this snapshot as JSON
         */
        @Override
        public String toString() {
            return toJson();
        }
    }
}
