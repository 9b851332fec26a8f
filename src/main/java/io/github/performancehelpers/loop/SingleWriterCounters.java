package io.github.performancehelpers.loop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The state of a {@link PowerHistogram} in single-writer mode: cumulative counters that only the
 * one writer changes, and only ever increases, plus the reader's baseline; an interval is the
 * difference between the two. See the implementation notes of {@link PowerHistogram} for the
 * order of the writer's stores and the reader's loads.
 *
 * <p><b>Thread safety.</b> At most one thread at a time may call the writer's methods
 * ({@link #record(int, double)}, {@link #add(PowerHistogram, PowerHistogram.Snapshot)}), with a
 * happens-before edge between successive writers; the reader's methods ({@link #read},
 * {@link #rebase()}) require the histogram's {@code readerLock} and may run concurrently with
 * the writer.
 */
final class SingleWriterCounters {

    /**
     * Stripes of the cumulative sum, chosen by bucket: a single running sum makes every
     * record wait for the previous one's addition (load, add, store through memory); with
     * stripes, consecutive records in different buckets add into different stripes.
     */
    static final int SUM_STRIPES = 8;

    /** Object header, three array references and three doubles, plus the stripes array. */
    static final long OBJECT_BYTES = 48 + 16 + 8 * SUM_STRIPES;

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle SUMS = MethodHandles.arrayElementVarHandle(double[].class);
    private static final VarHandle MIN;
    private static final VarHandle MAX;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            MIN = l.findVarHandle(SingleWriterCounters.class, "min", double.class);
            MAX = l.findVarHandle(SingleWriterCounters.class, "max", double.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Cumulative count per slot. Writer: plain read, setRelease. Readers: getAcquire. */
    final long[] slots;
    /**
     * Cumulative sum, striped by {@code slot % SUM_STRIPES}. Writer: plain read, setRelease
     * (after the slot). Readers: getAcquire, and add the stripes up.
     */
    private final double[] sums = new double[SUM_STRIPES];
    /** Lowest value ever recorded. Writer: plain (before the slot). Readers: getAcquire. */
    private double min = Double.POSITIVE_INFINITY;
    /** Highest value ever recorded. Writer: plain (before the slot). Readers: getAcquire. */
    private double max = Double.NEGATIVE_INFINITY;

    /** The cumulative counts at the last reset. Guarded by {@code PowerHistogram.readerLock}. */
    private final long[] baseline;
    /** The cumulative sum at the last reset. Guarded by {@code PowerHistogram.readerLock}. */
    private double baselineSum;

    SingleWriterCounters(int slots) {
        this.slots = new long[slots];
        this.baseline = new long[slots];
    }

    /**
     * The writer's record: no atomic read-modify-write, no StoreLoad fence, no allocation.
     * Plain stores for the extremes (on a new extreme only), then release stores of the
     * bucket and of the sum stripe (plain stores on x86 and a compiler ordering).
     */
    void record(int slot, double x) {
        if (x < min) {
            min = x;
        }
        if (x > max) {
            max = x;
        }
        long[] s = slots;
        SLOTS.setRelease(s, slot, s[slot] + 1L);
        double[] stripes = sums;
        int k = slot & (SUM_STRIPES - 1);
        SUMS.setRelease(stripes, k, stripes[k] + x);
    }

    /** The cumulative sum: the stripes, each read with getAcquire, added up. */
    double sum() {
        double total = 0.0;
        for (int k = 0; k < SUM_STRIPES; k++) {
            total += (double) SUMS.getAcquire(sums, k);
        }
        return total;
    }

    /** The writer's merge: extremes, then the buckets, then the sum, as a record. */
    void add(PowerHistogram h, PowerHistogram.Snapshot other) {
        if (other.min < min) {
            min = other.min;
        }
        if (other.max > max) {
            max = other.max;
        }
        long[] s = slots;
        SLOTS.setRelease(s, 0, s[0] + other.zeroCount);
        long[] counts = other.counts;
        for (int j = 0; j < counts.length; j++) {
            if (counts[j] != 0) {
                int slot = h.slotOfIndex(other.offset + j);
                SLOTS.setRelease(s, slot, s[slot] + counts[j]);
            }
        }
        SUMS.setRelease(sums, 0, sums[0] + other.sum);
    }

    /**
     * A reader's image of the interval since the baseline: sum first, then the slots, then
     * the extremes, all with acquire loads. Caller holds PowerHistogram.readerLock.
     */
    PowerHistogram.Snapshot read(PowerHistogram h, boolean resetBaseline) {
        double sumNow = sum();
        long[] b = baseline;
        long[] delta = new long[b.length];
        for (int i = 0; i < delta.length; i++) {
            long now = (long) SLOTS.getAcquire(slots, i);
            delta[i] = now - b[i];
            if (resetBaseline) {
                b[i] = now;
            }
        }
        double lowest = (double) MIN.getAcquire(this);
        double highest = (double) MAX.getAcquire(this);
        double intervalSum = sumNow - baselineSum;
        if (resetBaseline) {
            baselineSum = sumNow;
        }
        return PowerHistogram.Snapshot.ofSlots(h, delta, intervalSum, lowest, highest, true);
    }

    /** Moves the baseline to the current cumulative state. Caller holds PowerHistogram.readerLock. */
    void rebase() {
        double sumNow = sum();
        long[] b = baseline;
        for (int i = 0; i < b.length; i++) {
            b[i] = (long) SLOTS.getAcquire(slots, i);
        }
        baselineSum = sumNow;
    }
}
