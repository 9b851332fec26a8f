package io.github.performancehelpers.loop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * One interval of a {@link PowerHistogram} in its default (multi-writer) mode: the bucket counts
 * and the interval's sum, minimum and maximum. Writers update it with atomic operations only;
 * the histogram's reader swaps it out, waits for it to be quiescent (see
 * {@link WriterReaderPhaser}) and then reads or clears it with plain accesses.
 *
 * <p><b>Thread safety.</b> Any number of writers may update an interval at once with
 * {@link #addSum(double)}, {@link #updateMin(double)}, {@link #updateMax(double)} and atomic
 * increments of {@link #slots}; {@link #clear()} requires a quiescent interval.
 */
final class HistogramInterval {

    /** Object header, the array reference and three longs, rounded up to 8. */
    static final long OBJECT_BYTES = 48;

    private static final VarHandle SUM;
    private static final VarHandle MIN;
    private static final VarHandle MAX;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            SUM = l.findVarHandle(HistogramInterval.class, "sumBits", long.class);
            MIN = l.findVarHandle(HistogramInterval.class, "minBits", long.class);
            MAX = l.findVarHandle(HistogramInterval.class, "maxBits", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final long ZERO_BITS = Double.doubleToRawLongBits(0.0);
    private static final long PLUS_INF_BITS = Double.doubleToRawLongBits(Double.POSITIVE_INFINITY);
    private static final long MINUS_INF_BITS = Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY);

    /** Slot 0: zeros; slot 1 + (i - minIndex): bucket i. Updated with atomic getAndAdd (PowerHistogram's SLOTS). */
    final long[] slots;
    /** Raw bits of the sum; updated by CAS. */
    volatile long sumBits = ZERO_BITS;
    /** Raw bits of the minimum, +infinity when empty; lowered by CAS. */
    volatile long minBits = PLUS_INF_BITS;
    /** Raw bits of the maximum, -infinity when empty; raised by CAS. */
    volatile long maxBits = MINUS_INF_BITS;

    HistogramInterval(int slots) {
        this.slots = new long[slots];
    }

    void addSum(double x) {
        long current = sumBits;
        for (;;) {
            long next = Double.doubleToRawLongBits(Double.longBitsToDouble(current) + x);
            long witness = (long) SUM.compareAndExchange(this, current, next);
            if (witness == current) {
                return;
            }
            current = witness;
        }
    }

    void updateMin(double x) {
        long current = minBits;
        while (x < Double.longBitsToDouble(current)) {
            long witness = (long) MIN.compareAndExchange(this, current, Double.doubleToRawLongBits(x));
            if (witness == current) {
                return;
            }
            current = witness;
        }
    }

    void updateMax(double x) {
        long current = maxBits;
        while (x > Double.longBitsToDouble(current)) {
            long witness = (long) MAX.compareAndExchange(this, current, Double.doubleToRawLongBits(x));
            if (witness == current) {
                return;
            }
            current = witness;
        }
    }

    /** Empties a quiescent interval. */
    void clear() {
        Arrays.fill(slots, 0L);
        sumBits = ZERO_BITS;
        minBits = PLUS_INF_BITS;
        maxBits = MINUS_INF_BITS;
    }
}
