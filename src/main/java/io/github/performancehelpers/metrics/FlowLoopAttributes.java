package io.github.performancehelpers.metrics;

/**
 * The JMX attributes that {@link PowerFlowControllerMXBean} and {@link PowerFlowExecutorMXBean}
 * share: the closed loop's name, rates, latency, queue and counters. Not registered by itself;
 * each MXBean interface extends it, and JMX introspection includes the inherited getters as
 * attributes of that MXBean.
 *
 * <p><b>Thread safety.</b> Every getter is safe to call from any number of threads at once and
 * never blocks.
 *
 * @since 0.1.0
 */
public interface FlowLoopAttributes {

    /**
     * The instance's name (the {@code name} key of its ObjectName).
     *
     * @return the name
     */
    String getName();

    /**
     * The rate in force.
     *
     * @return operations per second
     */
    double getRate();

    /**
     * The floor of the adaptive rate.
     *
     * @return operations per second
     */
    double getMinRate();

    /**
     * The ceiling of the adaptive rate.
     *
     * @return operations per second; {@code Infinity} when unbounded
     */
    double getMaxRate();

    /**
     * The latency setpoint.
     *
     * @return milliseconds
     */
    double getTargetP99();

    /**
     * The driving quantile (the p99 by default) that the last observation fed the servo: the last completed window.
     *
     * @return milliseconds; {@code NaN} before the first observation
     */
    double getP99();

    /**
     * The driving quantile of the current, partial window (the samples since the last observation).
     *
     * @return milliseconds; {@code NaN} when the window is empty
     */
    double getWindowP99();

    /**
     * The number of queued items.
     *
     * @return the queue depth
     */
    int getDepth();

    /**
     * The bound on the queue.
     *
     * @return the queue capacity
     */
    int getQueueCapacity();

    /**
     * Whether the servo's output is pinned at {@code minRate} or {@code maxRate}.
     *
     * @return {@code true} when saturated
     */
    boolean isSaturated();

    /**
     * Items accepted into the queue, since construction.
     *
     * @return the count
     */
    long getSubmitted();

    /**
     * Items admitted by the rate limiter, since construction.
     *
     * @return the count
     */
    long getAdmitted();

    /**
     * Offers refused because the queue was full, since construction. The number to alert on.
     *
     * @return the count
     */
    long getDropped();

    /**
     * Observations that stepped the servo, since construction. The second number to alert on: it stops growing when the loop is no longer fed.
     *
     * @return the count
     */
    long getObservations();

    /**
     * Pauses of the process that excused a window from the knee-aware law (which held the rate
     * through them), since construction; 0 under the PI law.
     *
     * @return the count
     */
    long getPausesExcused();
}
