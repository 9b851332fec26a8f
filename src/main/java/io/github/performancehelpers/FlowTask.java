package io.github.performancehelpers;

import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;

/**
 * The {@code Future} a {@link PowerFlowExecutor}'s {@code submit}, {@code invokeAll} and
 * {@code invokeAny} return: a {@link FutureTask} the executor can also complete with a
 * {@link ShedException} when it sheds the task from its queue ({@link #shed}).
 *
 * <p><b>Thread safety.</b> As {@link FutureTask}.
 */
final class FlowTask<V> extends FutureTask<V> {

    FlowTask(Callable<V> callable) {
        super(callable);
    }

    FlowTask(Runnable runnable, V result) {
        super(runnable, result);
    }

    /**
     * Completes this task with {@code e} as the cause of its {@code ExecutionException}, unless
     * it is already done (cancelled by its owner, say).
     *
     * @param e the reason
     * @return whether this call completed it (false if it was already done)
     */
    boolean shed(ShedException e) {
        setException(e);
        return state() == State.FAILED && exceptionNow() == e;
    }
}
