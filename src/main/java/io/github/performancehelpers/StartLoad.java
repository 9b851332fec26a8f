package io.github.performancehelpers;

import java.util.concurrent.atomic.LongAdder;

/**
 * Whether the load sets the latency, measured without moving the rate: the concurrency at which
 * each task started (the tasks in flight when it was handed to the delegate, itself included),
 * summed over all of a window's tasks and over those whose run time exceeded the law's target.
 * {@link #take()} says how many standard errors the slow tasks' mean concurrency lies above the
 * mean of all of them, and how many the run time of the tasks that started at the highest
 * concurrency (a standard deviation above the mean or more) lies above the mean of all.
 *
 * <p>Why: a downstream that queues (slots, a fixed-rate server) is slow when many calls are in
 * flight, so the calls over the target started at a concurrency above the average; a tail the
 * load does not set (a fixed share of slow calls, a timeout) strikes calls at whatever concurrency
 * they started, and their mean is the average's within its sampling error. Arrivals vary the
 * concurrency by themselves, so the test needs no cut of the rate, and therefore refuses nothing
 * (see {@code KneeAwareLaw}, "Unreachable target"). Likewise below a target: calls that find
 * every slot of a downstream busy wait, and they are the ones that started with the most in
 * flight, so the run time of those tasks lies above the mean wherever the downstream queues, and
 * at it where it does not: a capacity that grew shows so at the old knee, where the p99 of a
 * downstream whose latency rises only at its knee reads as before ({@code KneeAwareLaw},
 * "Recovery"). The high tasks' mean, not a correlation over all: the service time's own spread
 * dilutes a correlation, while the high tasks are the ones that wait.
 *
 * <p><b>Thread safety.</b> {@link #add} and {@link #addAll} may be called from any thread;
 * {@link #take()} from one thread at a time (the tick). A sum taken while tasks end may hold some
 * of them and not others; each task lands in one window.
 */
final class StartLoad {

    /** Fewer slow tasks than this in a window give no verdict: their mean is too loose. */
    static final int MIN_SLOW = 10;
    /** Run times count up to this, µs (10 s), so that the sums of squares cannot overflow. */
    static final long MAX_RUN_MICROS = 10_000_000;

    private final LongAdder count = new LongAdder();
    private final LongAdder sum = new LongAdder();
    private final LongAdder sumOfSquares = new LongAdder();
    private final LongAdder slowCount = new LongAdder();
    private final LongAdder slowSum = new LongAdder();
    private final LongAdder runSum = new LongAdder();
    private final LongAdder runSumOfSquares = new LongAdder();
    private final LongAdder highCount = new LongAdder();
    private final LongAdder highRunSum = new LongAdder();
    /**
     * A task that starts at this concurrency or more is a high one: the previous window's mean
     * plus one standard deviation, rounded up; none before a window with a varying concurrency.
     */
    private volatile int high = Integer.MAX_VALUE;

    /**
     * A window's two statistics.
     *
     * @param slowZ           how many standard errors the slow tasks' mean concurrency lies above all tasks'
     * @param runZ            how many standard errors the high tasks' mean run time lies above all tasks'
     * @param count           the tasks measured
     * @param meanConcurrency their mean concurrency at start; NaN when none
     * @param meanRunMs       their mean run time, milliseconds (each counted up to 10 s); NaN when none
     * @param sums            the sums they were computed from, which {@link #plus} adds
     */
    record Verdict(double slowZ, double runZ, long count, double meanConcurrency, double meanRunMs, Sums sums) {

        /**
         * {@return the verdict of this window and {@code other} taken as one} Each keeps the high
         * tasks its own window counted (a mean plus a standard deviation of the window before it).
         */
        Verdict plus(Verdict other) {
            return sums.plus(other.sums).verdict();
        }
    }

    /**
     * A window's sums: {@code n} tasks, the sum and sum of squares of the concurrency at which they
     * started, the {@code slow} ones (over the target) and their concurrencies' sum, the sum and
     * sum of squares of the run times (µs), the {@code high} ones and their run times' sum.
     */
    record Sums(long n, long sum, long sumOfSquares, long slow, long slowSum, long runSum, long runSumOfSquares,
            long high, long highRunSum) {

        Sums plus(Sums o) {
            return new Sums(n + o.n, sum + o.sum, sumOfSquares + o.sumOfSquares, slow + o.slow,
                    slowSum + o.slowSum, runSum + o.runSum, runSumOfSquares + o.runSumOfSquares, high + o.high,
                    highRunSum + o.highRunSum);
        }

        /** {@return the statistics of these sums (see {@link StartLoad#take()})} */
        Verdict verdict() {
            return new Verdict(meanZ(n, sum, sumOfSquares, slow, slowSum), meanZ(n, runSum, runSumOfSquares, high,
                    highRunSum), n, n > 0 ? (double) sum / n : Double.NaN, n > 0 ? runSum / 1e3 / n : Double.NaN,
                    this);
        }
    }

    /** The run time the correlation counts, µs, from nanoseconds. */
    static long runMicros(long runNanos) {
        return Math.min(MAX_RUN_MICROS, runNanos / 1_000);
    }

    /** Whether a task that starts at {@code concurrency} is a high one (see {@link #take()}). */
    boolean isHigh(int concurrency) {
        return concurrency >= high;
    }

    /**
     * Adds one task that started at {@code concurrency} ({@code > 0}) and ran {@code runNanos};
     * {@code slow} if it ran over the target.
     */
    void add(int concurrency, long runNanos, boolean slow) {
        long r = runMicros(runNanos);
        count.increment();
        sum.add(concurrency);
        sumOfSquares.add((long) concurrency * concurrency);
        runSum.add(r);
        runSumOfSquares.add(r * r);
        if (isHigh(concurrency)) {
            highCount.increment();
            highRunSum.add(r);
        }
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
        runSum.add(b.runSum);
        runSumOfSquares.add(b.runSumOfSquares);
        if (b.highCount != 0) {
            highCount.add(b.highCount);
            highRunSum.add(b.highRunSum);
        }
        if (b.slowCount != 0) {
            slowCount.add(b.slowCount);
            slowSum.add(b.slowSum);
        }
        b.clear();
    }

    /**
     * The window's verdict (the {@link #meanZ} of its slow tasks' concurrency and of its high
     * tasks' run time), and a new window, whose high tasks start at this window's mean
     * concurrency plus one standard deviation or more.
     */
    Verdict take() {
        long n = count.sumThenReset();
        long s = sum.sumThenReset();
        long ss = sumOfSquares.sumThenReset();
        long k = slowCount.sumThenReset();
        long ks = slowSum.sumThenReset();
        long r = runSum.sumThenReset();
        long rr = runSumOfSquares.sumThenReset();
        long h = highCount.sumThenReset();
        long hr = highRunSum.sumThenReset();
        if (n > 0) {
            double sd = Math.sqrt(variance(n, s, ss));
            high = sd > 0 ? (int) Math.min(Integer.MAX_VALUE, Math.ceil((double) s / n + sd))
                    : Integer.MAX_VALUE;
        }
        return new Sums(n, s, ss, k, ks, r, rr, h, hr).verdict();
    }

    /**
     * How many standard errors the mean of a subset of {@code k} values (summing to
     * {@code subsetSum}) lies above the mean of all {@code n} (summing to {@code sum}, squares to
     * {@code sumOfSquares}); NaN for fewer than {@link #MIN_SLOW} in the subset, a subset of all,
     * or values that never varied.
     */
    static double meanZ(long n, long sum, long sumOfSquares, long k, long subsetSum) {
        if (k < MIN_SLOW || n <= k) {
            return Double.NaN;
        }
        double variance = variance(n, sum, sumOfSquares);
        if (!(variance > 0)) {
            return Double.NaN;
        }
        return ((double) subsetSum / k - (double) sum / n) / Math.sqrt(variance / k);
    }

    /** The variance of {@code n > 0} values from their sum and sum of squares, not below 0. */
    private static double variance(long n, long sum, long sumOfSquares) {
        double mean = (double) sum / n;
        return Math.max(0, (double) sumOfSquares / n - mean * mean);
    }

    /** One writer's sums, added to the shared ones in batches (a claimed recorder's). Not thread-safe. */
    static final class Batch {
        int count;
        long sum;
        long sumOfSquares;
        int slowCount;
        long slowSum;
        long runSum;
        long runSumOfSquares;
        int highCount;
        long highRunSum;

        /** As {@link StartLoad#add}, for the one writer; {@code high} as {@link StartLoad#isHigh}. */
        void add(int concurrency, long runNanos, boolean slow, boolean high) {
            long r = runMicros(runNanos);
            count++;
            sum += concurrency;
            sumOfSquares += (long) concurrency * concurrency;
            runSum += r;
            runSumOfSquares += r * r;
            if (high) {
                highCount++;
                highRunSum += r;
            }
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
            runSum = 0;
            runSumOfSquares = 0;
            highCount = 0;
            highRunSum = 0;
        }
    }
}
