package io.github.performancehelpers;

import java.util.concurrent.atomic.LongAdder;

/**
 * Whether the load sets the latency, measured without moving the rate: the concurrency at which
 * each task started (the tasks in flight when it was handed to the delegate, itself included),
 * summed over all of a window's tasks and over those whose run time exceeded the law's target.
 * {@link #takeZ()} says how many standard errors the slow tasks' mean concurrency lies above the
 * mean of all of them.
 *
 * <p>Why: a downstream that queues (slots, a fixed-rate server) is slow when many calls are in
 * flight, so the calls over the target started at a concurrency above the average; a tail the
 * load does not set (a fixed share of slow calls, a timeout) strikes calls at whatever concurrency
 * they started, and their mean is the average's within its sampling error. Arrivals vary the
 * concurrency by themselves, so the test needs no cut of the rate, and therefore refuses nothing
 * (see {@code KneeAwareLaw}, "Unreachable target").
 *
 * <p><b>Thread safety.</b> {@link #add} and {@link #addAll} may be called from any thread;
 * {@link #takeZ()} from one thread at a time (the tick). A sum taken while tasks end may hold some
 * of them and not others; each task lands in one window.
 */
final class StartLoad {

    /** Fewer slow tasks than this in a window give no verdict: their mean is too loose. */
    static final int MIN_SLOW = 10;

    private final LongAdder count = new LongAdder();
    private final LongAdder sum = new LongAdder();
    private final LongAdder sumOfSquares = new LongAdder();
    private final LongAdder slowCount = new LongAdder();
    private final LongAdder slowSum = new LongAdder();

    /** Adds one task that started at {@code concurrency} ({@code > 0}); {@code slow} if it ran over the target. */
    void add(int concurrency, boolean slow) {
        count.increment();
        sum.add(concurrency);
        sumOfSquares.add((long) concurrency * concurrency);
        if (slow) {
            slowCount.increment();
            slowSum.add(concurrency);
        }
    }

    /** Adds the sums a {@link Batch} gathered, and empties it. */
    void addAll(Batch b) {
        if (b.count == 0) {
            return;
        }
        count.add(b.count);
        sum.add(b.sum);
        sumOfSquares.add(b.sumOfSquares);
        if (b.slowCount != 0) {
            slowCount.add(b.slowCount);
            slowSum.add(b.slowSum);
        }
        b.clear();
    }

    /**
     * The window's verdict, and a new window: {@code (mean of the slow tasks' concurrency − mean of
     * all) / (standard deviation of all / √slow)}; NaN when fewer than {@link #MIN_SLOW} tasks ran
     * over the target, or the concurrency never varied (nothing to tell the two apart).
     */
    double takeZ() {
        long n = count.sumThenReset();
        long s = sum.sumThenReset();
        long ss = sumOfSquares.sumThenReset();
        long k = slowCount.sumThenReset();
        long ks = slowSum.sumThenReset();
        return z(n, s, ss, k, ks);
    }

    /** The statistic of {@link #takeZ()} from the sums. */
    static double z(long n, long sum, long sumOfSquares, long slow, long slowSum) {
        if (slow < MIN_SLOW || n <= slow) {
            return Double.NaN;
        }
        double mean = (double) sum / n;
        double variance = Math.max(0, (double) sumOfSquares / n - mean * mean);
        if (!(variance > 0)) {
            return Double.NaN;
        }
        return ((double) slowSum / slow - mean) / Math.sqrt(variance / slow);
    }

    /** One writer's sums, added to the shared ones in batches (a claimed recorder's). Not thread-safe. */
    static final class Batch {
        int count;
        long sum;
        long sumOfSquares;
        int slowCount;
        long slowSum;

        /** As {@link StartLoad#add}, for the one writer. */
        void add(int concurrency, boolean slow) {
            count++;
            sum += concurrency;
            sumOfSquares += (long) concurrency * concurrency;
            if (slow) {
                slowCount++;
                slowSum += concurrency;
            }
        }

        private void clear() {
            count = 0;
            sum = 0;
            sumOfSquares = 0;
            slowCount = 0;
            slowSum = 0;
        }
    }
}
