package io.github.performancehelpers.demo;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Exact latency bookkeeping for one contender of the demo: every completed task's end-to-end time
 * (submit to completion) and downstream-call time, kept per window (two independent window
 * channels: the chart samples every tick, the console prints every second) and for the whole run, so
 * that the demo's percentiles are exact rather than a sketch's estimate. A few thousand samples a
 * second is cheap to keep and sort. Thread-safe (a lock, never {@code synchronized}: tasks record
 * from virtual threads).
 */
final class LatencyRecorder {

    /** One window's read-out. Latencies in milliseconds; NaN when the window had no sample. */
    record Window(long completed, double e2eP99, double callP99) {
    }

    /** A phase's read-out (the whole run, or the part after the capacity step). */
    record Totals(long completed, double e2eP50, double e2eP99, double e2eMax, double callP50, double callP99) {
    }

    private final ReentrantLock lock = new ReentrantLock();
    /** Window channel of the chart's samples. */
    static final int CHART = 0;
    /** Window channel of the printed lines. */
    static final int PRINT = 1;

    private final Samples[] windowE2e = {new Samples(), new Samples()};
    private final Samples[] windowCall = {new Samples(), new Samples()};
    private final Samples runE2e = new Samples();
    private final Samples runCall = new Samples();
    private final Samples afterE2e = new Samples();
    private final Samples afterCall = new Samples();
    private boolean afterStep;

    /**
     * Records one completed task.
     *
     * @param e2eNanos  from submit to completion
     * @param callNanos the downstream call alone (slot wait plus service)
     */
    void record(long e2eNanos, long callNanos) {
        lock.lock();
        try {
            for (int ch = CHART; ch <= PRINT; ch++) {
                windowE2e[ch].add(e2eNanos);
                windowCall[ch].add(callNanos);
            }
            runE2e.add(e2eNanos);
            runCall.add(callNanos);
            if (afterStep) {
                afterE2e.add(e2eNanos);
                afterCall.add(callNanos);
            }
        } finally {
            lock.unlock();
        }
    }

    /** From now on, samples also count towards {@link #afterStep()}. */
    void markStep() {
        lock.lock();
        try {
            afterStep = true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns the channel's window since its previous drain and starts a new one.
     *
     * @param channel {@link #CHART} or {@link #PRINT}
     * @return the window's read-out
     */
    Window drainWindow(int channel) {
        lock.lock();
        try {
            Samples e2e = windowE2e[channel];
            Samples call = windowCall[channel];
            Window w = new Window(e2e.size, e2e.quantileMillis(0.99), call.quantileMillis(0.99));
            e2e.clear();
            call.clear();
            return w;
        } finally {
            lock.unlock();
        }
    }

    Totals run() {
        lock.lock();
        try {
            return totals(runE2e, runCall);
        } finally {
            lock.unlock();
        }
    }

    Totals afterStep() {
        lock.lock();
        try {
            return totals(afterE2e, afterCall);
        } finally {
            lock.unlock();
        }
    }

    private static Totals totals(Samples e2e, Samples call) {
        return new Totals(e2e.size, e2e.quantileMillis(0.5), e2e.quantileMillis(0.99), e2e.quantileMillis(1.0),
                call.quantileMillis(0.5), call.quantileMillis(0.99));
    }

    /** A growable array of nanosecond samples. Guarded by the recorder's lock. */
    private static final class Samples {
        private long[] values = new long[1024];
        private int size;

        void add(long v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        void clear() {
            size = 0;
        }

        /** The nearest-rank quantile, in milliseconds; NaN when empty. Sorts in place (order is not kept). */
        double quantileMillis(double q) {
            if (size == 0) {
                return Double.NaN;
            }
            Arrays.sort(values, 0, size);
            int rank = (int) Math.ceil(q * size);
            return values[Math.max(0, Math.min(size, rank) - 1)] / 1e6;
        }
    }
}
