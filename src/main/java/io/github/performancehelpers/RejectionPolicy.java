package io.github.performancehelpers;

/**
 * What a {@link PowerFlowExecutor} does with a task its bounded queue refuses because it is full.
 * Every refusal is counted in {@link PowerFlowExecutor.Stats#rejected()} (and, by the queue, in
 * {@link PowerFlowExecutor.Stats#dropped()}), whatever the policy does with the task.
 *
 * <p>A task refused because the executor is shut down always gets a
 * {@link java.util.concurrent.RejectedExecutionException}, whatever the policy.
 *
 * <p>No policy leaves a {@link java.util.concurrent.Future} that can never complete: a policy
 * that drops a task cancels it if it is a {@code Future}. That is why this is a closed set rather
 * than an interface.
 *
 * <p><b>Thread safety.</b> Immutable, as every enum constant.
 *
 * @since 0.1.0
 */
public enum RejectionPolicy {

    /**
     * Throw {@link QueueFullException} (a {@link java.util.concurrent.RejectedExecutionException})
     * from {@code execute}/{@code submit}, as {@code ThreadPoolExecutor.AbortPolicy} does. The
     * default.
     */
    ABORT,

    /**
     * Run the task in the thread that called {@code execute}/{@code submit}, as
     * {@code ThreadPoolExecutor.CallerRunsPolicy} does: a simple feedback that slows producers
     * down. The task bypasses the rate limiter and is not timed, so it counts in neither the
     * latency window nor {@code completed}/{@code failed}.
     */
    CALLER_RUNS,

    /**
     * Drop the task silently; if it is a {@link java.util.concurrent.Future} (every task given to
     * {@code submit} is), cancel it first, so that whoever holds the {@code Future} sees a
     * {@link java.util.concurrent.CancellationException} instead of waiting forever.
     */
    DISCARD
}
