package io.github.performancehelpers;

import java.io.Serial;
import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown when a {@link PowerFlowExecutor} gives up on a task because it could not start in time
 * to finish within the executor's {@code targetP99}: refused by {@code execute}/{@code submit}
 * (under {@link RejectionPolicy#ABORT}) when the queue's oldest task has already waited longer
 * than the wait budget or the task would wait longer behind those queued, or, for a task already
 * queued, the cause of the {@link java.util.concurrent.ExecutionException} its {@code Future}
 * completes with when it is shed from the queue. See "Shedding" in {@link PowerFlowExecutor}.
 *
 * <p>It is a {@link RejectedExecutionException}, so code that already handles an executor's
 * rejection handles this one too. It carries no stack trace: it is raised at overload rates, and
 * always by the executor.
 *
 * <p><b>Thread safety.</b> As any exception: its message is fixed by the constructor, and it may
 * be read from any thread once thrown.
 *
 * @since 0.1.0
 */
public class ShedException extends RejectedExecutionException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message how long the task (or the queue's oldest) waited, against what budget
     */
    public ShedException(String message) {
        super(message);
    }

    /**
     * Returns this exception without filling in a stack trace (see the class description).
     *
     * @return this exception
     */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
