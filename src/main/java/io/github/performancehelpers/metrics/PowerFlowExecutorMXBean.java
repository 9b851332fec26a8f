package io.github.performancehelpers.metrics;

import io.github.performancehelpers.PowerFlowExecutor;

/**
 * The JMX view of a {@link PowerFlowExecutor}, registered as
 * {@code io.github.performancehelpers:type=PowerFlowExecutor,name=<name>} when the executor is
 * built with {@link PowerFlowExecutor.Builder#jmx(boolean) jmx(true)}, and unregistered when it
 * terminates. Every attribute is an open type, so {@code jconsole} and any JMX client show it
 * without the library on their class path. Attributes are read live; reading them also runs the
 * staleness check ({@link #isStale()}).
 *
 * <p><b>Thread safety.</b> Every getter is safe to call from any number of threads at once and
 * never blocks.
 *
 * @since 0.1.0
 */
@Description("A PowerFlowExecutor (performance-helpers): an ExecutorService that starts its tasks at a rate the"
        + " closed loop moves to hold their p99 latency at targetP99, refusing or shedding what cannot finish in time."
        + " Read-only, read live.")
public interface PowerFlowExecutorMXBean extends FlowLoopAttributes {

    /**
     * The lifecycle state.
     *
     * @return {@code RUNNING}, {@code SHUTTING_DOWN} or {@code TERMINATED}
     */
    @Description("The lifecycle state: RUNNING, SHUTTING_DOWN or TERMINATED")
    String getState();

    /**
     * The p99 of the time tasks waited before they started, in the current, partial window, as
     * {@code stats().queueWaitP99()}.
     *
     * @return milliseconds; {@code NaN} when the window is empty
     */
    @Description("The p99 of the time tasks waited before they started (queue, rate limiter, slot) in the current,"
            + " partial window, as stats().queueWaitP99(); NaN when the window is empty")
    @Units(Units.MILLISECONDS)
    double getQueueWaitP99();

    /**
     * The delegate's size in force (the concurrency bound), or -1 for a delegate that is not sized.
     *
     * @return the pool size, or -1
     */
    @Description("The delegate's size in force (its concurrency bound); -1 for a delegate that is not sized")
    int getPoolSize();

    /**
     * The most tasks the executor keeps in flight on its delegate, from the run time, or -1 while
     * nothing is capped.
     *
     * @return the cap on the tasks in flight, or -1
     */
    @Description("The most tasks the executor keeps in flight on its delegate, set each window from the run time"
            + " where the downstream queues inside; -1 while nothing is capped")
    int getInFlightLimit();

    /**
     * Tasks running on the delegate now.
     *
     * @return the count
     */
    @Description("Tasks running on the delegate now")
    int getRunning();

    /**
     * Whether the observation tick has not run for longer than {@code staleAfter}: the rate in force is stale.
     *
     * @return {@code true} while the loop is stalled
     */
    @Description("Whether the observation tick has not run for longer than staleAfter: the rate in force is stale")
    boolean isStale();

    /**
     * How many times the loop was found stale, since construction.
     *
     * @return the count
     */
    @Description("Times the loop was found stale, since construction")
    long getStaleEpisodes();

    /**
     * Tasks refused at {@code execute}/{@code submit} (queue full or shut down), since construction.
     *
     * @return the count
     */
    @Description("Tasks refused at execute/submit (queue full, too late for the target, or shut down), since"
            + " construction")
    long getRejected();

    /**
     * Tasks that ran and returned normally, since construction.
     *
     * @return the count
     */
    @Description("Tasks that ran and returned normally, since construction")
    long getCompleted();

    /**
     * Tasks that ran and threw, since construction.
     *
     * @return the count
     */
    @Description("Tasks that ran and threw, since construction")
    long getFailed();

    /**
     * Tasks whose {@code Future} was cancelled, since construction.
     *
     * @return the count
     */
    @Description("Tasks whose Future was cancelled, since construction")
    long getCancelled();

    /**
     * Tasks shed from the queue because they had waited past the wait budget (their
     * {@code Future} failed with a {@code ShedException}), since construction.
     *
     * @return the count
     */
    @Description("Tasks shed from the queue because they had waited past the wait budget (their Future failed"
            + " with ShedException), since construction")
    long getShed();

    /**
     * The p99 of the tasks' time from submit to completion (the caller's latency) in the last
     * completed observation window.
     *
     * @return milliseconds; {@code NaN} before the first window with a completion
     */
    @Description("The p99 of the tasks' time from submit to completion (the caller's latency) in the last"
            + " completed window, as stats().lastEndToEndP99(); NaN before the first window with a completion")
    @Units(Units.MILLISECONDS)
    double getLastEndToEndP99();

    /**
     * Whether the control law found the target unreachable: cutting the rate did not lower the
     * run-time p99, so the executor serves the load instead of cutting.
     *
     * @return whether the target is unreachable
     */
    @Description("Whether the control law found the target unreachable: cutting the rate did not lower the"
            + " run-time p99, so the executor serves the load instead of cutting")
    boolean isTargetUnreachable();

    /**
     * Internal and listener failures reported and survived, since construction.
     *
     * @return the count
     */
    @Description("Internal and listener failures reported and survived, since construction")
    long getCallbackFailures();
}
