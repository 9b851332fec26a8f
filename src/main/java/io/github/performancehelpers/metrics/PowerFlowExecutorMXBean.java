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
public interface PowerFlowExecutorMXBean extends FlowLoopAttributes {

    /**
     * The lifecycle state.
     *
     * @return {@code RUNNING}, {@code SHUTTING_DOWN} or {@code TERMINATED}
     */
    String getState();

    /**
     * The p99 of the time tasks waited before they started, in the current window.
     *
     * @return milliseconds; {@code NaN} when the window is empty
     */
    double getQueueWaitP99();

    /**
     * The delegate's size in force (the concurrency bound), or -1 for a delegate that is not sized.
     *
     * @return the pool size, or -1
     */
    int getPoolSize();

    /**
     * Tasks running on the delegate now.
     *
     * @return the count
     */
    int getRunning();

    /**
     * Whether the observation tick has not run for longer than {@code staleAfter}: the rate in force is stale.
     *
     * @return {@code true} while the loop is stalled
     */
    boolean isStale();

    /**
     * How many times the loop was found stale, since construction.
     *
     * @return the count
     */
    long getStaleEpisodes();

    /**
     * Tasks refused at {@code execute}/{@code submit} (queue full or shut down), since construction.
     *
     * @return the count
     */
    long getRejected();

    /**
     * Tasks that ran and returned normally, since construction.
     *
     * @return the count
     */
    long getCompleted();

    /**
     * Tasks that ran and threw, since construction.
     *
     * @return the count
     */
    long getFailed();

    /**
     * Tasks whose {@code Future} was cancelled, since construction.
     *
     * @return the count
     */
    long getCancelled();

    /**
     * Tasks shed from the queue because they had waited past the wait budget (their
     * {@code Future} failed with a {@code ShedException}), since construction.
     *
     * @return the count
     */
    long getShed();

    /**
     * The p99 of the tasks' time from submit to completion (the caller's latency) in the last
     * completed observation window.
     *
     * @return milliseconds; {@code NaN} before the first window with a completion
     */
    double getLastEndToEndP99();

    /**
     * Whether the control law found the target unreachable: cutting the rate did not lower the
     * run-time p99, so the executor serves the load instead of cutting.
     *
     * @return whether the target is unreachable
     */
    boolean isTargetUnreachable();

    /**
     * Internal and listener failures reported and survived, since construction.
     *
     * @return the count
     */
    long getCallbackFailures();
}
