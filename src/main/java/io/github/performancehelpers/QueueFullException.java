package io.github.performancehelpers;

import java.io.Serial;
import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown when work is refused because a bounded waiting queue is full, or has reached its
 * high-water mark: the Java form of the original library's {@code ERR_QUEUE_FULL}.
 *
 * <p>It is a {@link RejectedExecutionException}, so code that already handles an executor's
 * rejection handles this one too.
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
