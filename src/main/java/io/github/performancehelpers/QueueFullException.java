package io.github.performancehelpers;

import java.io.Serial;
import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown when work is refused because a bounded waiting queue is full, or has reached its
 * high-water mark: {@link PowerFlowExecutor} throws it under {@link RejectionPolicy#ABORT}, with
 * the queue's capacity in the message.
 *
 * <p>It is a {@link RejectedExecutionException}, so code that already handles an executor's
 * rejection handles this one too.
 *
 * <p><b>Thread safety.</b> As any exception: its message is fixed by the constructor, and it may
 * be read from any thread once thrown.
 *
 * @since 0.1.0
 */
public class QueueFullException extends RejectedExecutionException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was full, with its bound
     */
    public QueueFullException(String message) {
        super(message);
    }
}
