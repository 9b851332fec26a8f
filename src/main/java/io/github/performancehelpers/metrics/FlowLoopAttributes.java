package io.github.performancehelpers.metrics;

/**
 * The JMX attributes that {@link PowerFlowControllerMXBean} and {@link PowerFlowExecutorMXBean}
 * share: the closed loop's name, rates, latency, queue and counters. Not registered by itself;
 * each MXBean interface extends it, and JMX introspection includes the inherited getters as
 * attributes of that MXBean.
 *
 * <p>Each attribute's name is the name of the same figure in {@code stats()}: {@code P99} is the
 * current, partial window ({@code stats().p99()}, the seed's {@code p99}), {@code LastObservedP99}
 * the last completed one ({@code lastObservedP99()}, the metric
 * {@code power.flow.last.observed.p99}). Each carries a {@link Description} and, where it has one,
 * its {@link Units}, which the MBean returns as the attribute's description.
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
    @Description("The instance's name: the name key of this MBean's ObjectName, the name tag of its metrics")
    String getName();

    /**
     * The rate in force.
     *
     * @return operations per second
     */
    @Description("The rate in force: operations (task starts) the limiter admits per second")
    @Units(Units.PER_SECOND)
    double getRate();

    /**
     * The floor of the adaptive rate.
     *
     * @return operations per second
     */
    @Description("The floor of the adaptive rate")
    @Units(Units.PER_SECOND)
    double getMinRate();

    /**
     * The ceiling of the adaptive rate.
     *
     * @return operations per second; {@code Infinity} when unbounded
     */
    @Description("The ceiling of the adaptive rate; Infinity when unbounded")
    @Units(Units.PER_SECOND)
    double getMaxRate();

    /**
     * The latency setpoint.
     *
     * @return milliseconds
     */
    @Description("The latency setpoint (targetP99)")
    @Units(Units.MILLISECONDS)
    double getTargetP99();

    /**
     * The driving quantile (the p99 by default) of the current, partial window: the samples since
     * the last observation, as {@code stats().p99()}.
     *
     * @return milliseconds; {@code NaN} when the window is empty
     */
    @Description("The driving quantile (p99 by default) of the run times in the current, partial window (the"
            + " samples since the last observation), as stats().p99(); NaN when the window is empty")
    @Units(Units.MILLISECONDS)
    double getP99();

    /**
     * The driving quantile (the p99 by default) that the last observation fed the control law: the
     * last completed window, as {@code lastObservedP99()} and the metric
     * {@code power.flow.last.observed.p99}.
     *
     * @return milliseconds; {@code NaN} before the first observation
     */
    @Description("The driving quantile (p99 by default) of the run times in the last completed window, the one"
            + " the control law acted on, as stats().lastObservedP99(); NaN before the first observation")
    @Units(Units.MILLISECONDS)
    double getLastObservedP99();

    /**
     * The number of queued items.
     *
     * @return the queue depth
     */
    @Description("Items (tasks) waiting in the bounded queue")
    int getDepth();

    /**
     * The bound on the queue.
     *
     * @return the queue capacity
     */
    @Description("The bound on the queue: how many items it holds at most")
    int getQueueCapacity();

    /**
     * Whether the servo's output is pinned at {@code minRate} or {@code maxRate}.
     *
     * @return {@code true} when saturated
     */
    @Description("Whether the loop's output is pinned at minRate or maxRate")
    boolean isSaturated();

    /**
     * Items accepted into the queue, since construction.
     *
     * @return the count
     */
    @Description("Items (tasks) accepted: queued, or handed off at once, since construction")
    long getSubmitted();

    /**
     * Items admitted by the rate limiter, since construction.
     *
     * @return the count
     */
    @Description("Items (tasks) admitted by the rate limiter, since construction")
    long getAdmitted();

    /**
     * Offers refused because the queue was full, since construction. The number to alert on.
     *
     * @return the count
     */
    @Description("Offers the full queue refused, since construction: the number to alert on")
    long getDropped();

    /**
     * Observations that stepped the servo, since construction. The second number to alert on: it stops growing when the loop is no longer fed.
     *
     * @return the count
     */
    @Description("Observations that stepped the control law, since construction: alert when it stops growing")
    long getObservations();

    /**
     * Pauses of the process that excused a window from the knee-aware law (which held the rate
     * through them), since construction; 0 under the PI law.
     *
     * @return the count
     */
    @Description("Pauses of the process that excused a window from the knee-aware law (which held the rate),"
            + " since construction; 0 under the PI law")
    long getPausesExcused();
}
