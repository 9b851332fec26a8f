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
 * ({@link #record(int, long, double)}, {@link #add(PowerHistogram, PowerHistogram.Snapshot)}), with a
 * happens-before edge between successive writers; the reader's methods ({@link #read},
 * {@link #rebase()}) require the histogram's {@code readerLock} and may run concurrently with
 * the writer.
 */
final class SingleWriterCounters {

    /** Object header, two array references, three longs (or doubles) and the baseline sum. */
    static final long OBJECT_BYTES = 56;

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle SUM;
    private static final VarHandle MIN;
    private static final VarHandle MAX;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            SUM = l.findVarHandle(SingleWriterCounters.class, "sum", double.class);
            MIN = l.findVarHandle(SingleWriterCounters.class, "minBits", long.class);
            MAX = l.findVarHandle(SingleWriterCounters.class, "maxBits", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Cumulative count per slot. Writer: plain read, setRelease. Readers: getAcquire. */
    final long[] slots;
    /** Cumulative sum. Writer: plain read, setRelease (after the slot). Readers: getAcquire. */
    private double sum;
    /**
     * Raw bits of the lowest value ever recorded ({@code +infinity} before the first): the
     * values are {@code >= +0.0}, whose bits order as the values do, so a {@code long}
     * comparison of the bits is the comparison of the values. Writer: plain (before the slot).
     * Readers: getAcquire.
     */
    private long minBits = Double.doubleToRawLongBits(Double.POSITIVE_INFINITY);
    /**
     * Raw bits of the highest value ever recorded; before the first, the bits of
     * {@code -infinity}, negative as a {@code long}, so below the bits of every value. Writer:
     * plain (before the slot). Readers: getAcquire.
     */
    private long maxBits = Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY);

    /** The cumulative counts at the last reset. Guarded by {@code PowerHistogram.readerLock}. */
    private final long[] baseline;
    /** The cumulative sum at the last reset. Guarded by {@code PowerHistogram.readerLock}. */
    private double baselineSum;

    SingleWriterCounters(int slots) {
        this.slots = new long[slots];
        this.baseline = new long[slots];
    }

    /**
     * The writer's record of {@code count} samples of {@code x >= +0.0} (not {@code -0.0}) with raw bits {@code bits}:
     * no atomic read-modify-write, no StoreLoad fence, no allocation. Plain stores for the
     * extremes (on a new extreme only; integer comparisons of the bits), then release stores of
     * the bucket and of the sum (plain stores on x86, and an ordering for the compiler).
     */
    void record(int slot, long bits, double x, long count) {
        if (bits < minBits) {
            minBits = bits;
        }
        if (bits > maxBits) {
            maxBits = bits;
        }
        long[] s = slots;
        SLOTS.setRelease(s, slot, s[slot] + count);
        SUM.setRelease(this, sum + (count == 1L ? x : x * count));
    }

    /** The writer's merge: extremes, then the buckets, then the sum, as a record. */
    void add(PowerHistogram h, PowerHistogram.Snapshot other) {
        long low = Double.doubleToRawLongBits(other.min + 0.0); // + 0.0: -0.0 becomes +0.0
        long high = Double.doubleToRawLongBits(other.max + 0.0);
        if (low < minBits) {
            minBits = low;
        }
        if (high > maxBits) {
            maxBits = high;
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
        SUM.setRelease(this, sum + other.sum);
    }

    /**
     * A reader's image of the interval since the baseline: sum first, then the slots, then
     * the extremes, all with acquire loads. Caller holds PowerHistogram.readerLock.
     */
    PowerHistogram.Snapshot read(PowerHistogram h, boolean resetBaseline) {
        double sumNow = (double) SUM.getAcquire(this);
        long[] b = baseline;
        long[] delta = new long[b.length];
        for (int i = 0; i < delta.length; i++) {
            long now = (long) SLOTS.getAcquire(slots, i);
            delta[i] = now - b[i];
            if (resetBaseline) {
                b[i] = now;
            }
        }
        double lowest = Double.longBitsToDouble((long) MIN.getAcquire(this));
        double highest = Double.longBitsToDouble((long) MAX.getAcquire(this));
        double intervalSum = sumNow - baselineSum;
        if (resetBaseline) {
            baselineSum = sumNow;
        }
        return PowerHistogram.Snapshot.ofSlots(h, delta, intervalSum, lowest, highest, true);
    }

    /** Moves the baseline to the current cumulative state. Caller holds PowerHistogram.readerLock. */
    void rebase() {
        double sumNow = (double) SUM.getAcquire(this);
        long[] b = baseline;
        for (int i = 0; i < b.length; i++) {
            b[i] = (long) SLOTS.getAcquire(slots, i);
        }
        baselineSum = sumNow;
    }
}
