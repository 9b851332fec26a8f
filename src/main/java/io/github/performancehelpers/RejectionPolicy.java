package io.github.performancehelpers;

/**
 * What a {@link PowerFlowExecutor} does with a task its bounded queue refuses because it is full
 * (or, with shedding on, because the queue's oldest task has waited past the wait budget, or the
 * task would wait past it behind those queued: see
 * "Shedding and the rate" in {@link PowerFlowExecutor}).
 * Every refusal is counted in {@link PowerFlowExecutor.Stats#rejected()} (and, by the queue, in
 * {@link PowerFlowExecutor.Stats#dropped()}), whatever the policy does with the task.
 *
 * <p>A task refused because the executor is shut down always gets a
 * {@link java.util.concurrent.RejectedExecutionException}, whatever the policy.
 *
 * <p>No policy leaves a {@link java.util.concurrent.Future} that can never complete: a policy
 * that drops a task cancels it if it is a {@code Future}, and {@link #BLOCK} either accepts the
 * task or throws. That is why this is a closed set rather than an interface.
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
    DISCARD,

    /**
     * Make the thread that called {@code execute}/{@code submit} wait for room, as a producer
     * waits on {@code BlockingQueue.put}: a full queue blocks it until a task is taken from the
     * queue, up to {@link PowerFlowExecutor.Builder#blockTimeout(java.time.Duration) blockTimeout}
     * (default 1 minute, real time), and then throws {@link QueueFullException}. With shedding on,
     * a door closed because the queue's oldest task has waited past the wait budget (or the task
     * would wait past it behind those queued) blocks it
     * the same way, until the door opens, and then throws a {@link ShedException}. So a producer
     * written for {@code Executors.newFixedThreadPool} (whose queue never refuses), or an
     * {@code invokeAll} of more tasks than the queue holds, is slowed to the executor's pace
     * instead of failing.
     *
     * <p><b>Latency.</b> A task keeps the time its {@code submit} was called: the wait for room
     * counts in its queue wait and its end-to-end latency ({@link PowerFlowExecutor.Stats#endToEndP99()}),
     * and with shedding on it counts toward its wait budget. A {@code submit} task accepted after
     * waiting that has already waited past the budget is shed when it is taken (its
     * {@code Future} fails with a {@link ShedException}); a {@code Runnable} given to
     * {@code execute} is never shed once accepted.
     *
     * <p>The wait is interruptible: an interrupted submitter gets a
     * {@link java.util.concurrent.RejectedExecutionException} whose cause is the
     * {@link InterruptedException}, with its interrupt status kept; a shutdown refuses the waiting
     * submitters with a {@code RejectedExecutionException}. A submitter that finds room does not
     * wait, even when interrupted. A task of this executor that submits to it under this policy
     * may wait for the slot it holds itself: with every slot so held, those submitters wait until
     * their timeout. {@link PowerFlowExecutor.Stats#dropped()} counts every offer the queue
     * refused, a waiting submitter's final one included; {@code rejected} counts the submitters
     * refused.
     */
    BLOCK
}
