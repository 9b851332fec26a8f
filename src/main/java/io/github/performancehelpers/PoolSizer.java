package io.github.performancehelpers;

import java.time.Duration;
import io.github.performancehelpers.internal.Preconditions;
import io.github.performancehelpers.loop.FlowOptions;

/**
 * Maps a {@link PowerFlowExecutor}'s rate to the size of its delegate: the pool size of a
 * {@link java.util.concurrent.ThreadPoolExecutor}, or the concurrency bound of the default
 * virtual-thread delegate. Called once at construction (in {@code build()}, on its caller's
 * thread) with the starting rate, and then on the executor's callback thread
 * ({@code name-callbacks}, not the observation thread) each time the loop moves the rate.
 *
 * <p>A result below 1 is treated as 1 (a pool of zero would stop the executor). A sizer that
 * throws is reported and counted, and the size stays as it was. A sizer that blocks delays the
 * resize and the later callbacks, not the observations; termination waits for it at most
 * {@link PowerFlowExecutor#MAX_CALLBACK_WAIT} (see
 * {@link PowerFlowExecutor.Builder#onRateChange(io.github.performancehelpers.loop.RateChangeListener)}).
 *
 * <p><b>Thread safety.</b> Implementations must be thread-safe if they are shared between
 * executors; one executor calls its sizer from one thread at a time.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface PoolSizer {

    /**
     * The headroom {@link #littlesLaw(Duration, int, int)} multiplies Little's law by: 2.
     */
    double LITTLES_LAW_HEADROOM = 2.0;

    /**
     * Returns the pool size for a rate.
     *
     * @param rate the rate in force, operations per second, finite and {@code > 0}
     * @return the pool size (or concurrency bound); values below 1 are treated as 1
     */
    int poolSize(double rate);

    /**
     * Returns the sizer derived from Little's law, {@code L = λ × W}: the number of tasks in
     * service at once is the arrival rate times the time each spends in service. With
     * {@code λ = rate} and {@code W = targetLatency} (the latency the loop holds the p99 at, hence
     * an upper bound on the typical service time), the size is
     *
     * <pre>{@code size = clamp(ceil(2 × rate × targetLatency[s]), min, max)}</pre>
     *
     * <p>The headroom factor {@link #LITTLES_LAW_HEADROOM} (2) absorbs bursts of arrivals and
     * tasks that run up to twice the target without making the pool, rather than the rate, the
     * binding limit; beyond that, the pool bounds concurrency as a bulkhead would.
     *
     * @param targetLatency the latency target, positive, at most {@link FlowOptions#MAX_DURATION}
     * @param min           the smallest size, {@code >= 1}
     * @param max           the largest size, {@code >= min}
     * @return the sizer
     * @throws NullPointerException     if {@code targetLatency} is null
     * @throws IllegalArgumentException if {@code targetLatency} is not positive or over
     *                                  {@code MAX_DURATION}, {@code min < 1} or {@code max < min}
     */
    static PoolSizer littlesLaw(Duration targetLatency, int min, int max) {
        Preconditions.requireDurationIn("targetLatency", targetLatency, Duration.ofNanos(1),
                FlowOptions.MAX_DURATION);
        if (min < 1) {
            throw new IllegalArgumentException("min must be >= 1: " + min);
        }
        if (max < min) {
            throw new IllegalArgumentException("max must be >= min: max=" + max + ", min=" + min);
        }
        double seconds = Preconditions.millis(targetLatency) / 1e3;
        return rate -> {
            double size = Math.ceil(LITTLES_LAW_HEADROOM * rate * seconds);
            if (!(size >= min)) { // also NaN
                return min;
            }
            return size >= max ? max : (int) size;
        };
    }
}
