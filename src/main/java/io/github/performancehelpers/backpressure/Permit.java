package io.github.performancehelpers.backpressure;

/**
 * One permit handed out by a {@link PowerBackpressure}, which the holder gives back with
 * {@link #release()} when its work is done.
 *
 * <p>A permit is released exactly once. {@link #release()} and {@link #close()} are the same
 * operation and are idempotent: the first call returns the permit to its controller, every later
 * call does nothing. That makes a permit safe to use in try-with-resources even when the body also
 * releases it early:
 *
 * <pre>{@code
 * try (Permit permit = backpressure.acquire(1, TimeUnit.SECONDS)) {
 *     publish(task);
 * }
 * }</pre>
 *
 * <p><b>Thread safety.</b> Permits are safe for concurrent use by any number of threads: any
 * thread may release a permit, and concurrent calls still release it once.
 *
 * @since 0.1.0
 */
public interface Permit extends AutoCloseable {

    /**
     * Returns this permit to the controller that issued it, if it has not been returned already.
     * If a producer is waiting, the permit goes straight to it (a transfer); otherwise it goes
     * back to the pool. Returning a permit after the controller was closed is accepted and keeps
     * the controller's accounting exact.
     */
    void release();

    /**
     * Same as {@link #release()}; present so that a permit works in try-with-resources. Never
     * throws.
     */
    @Override
    void close();

    /**
     * Returns whether this permit has been released.
     *
     * @return {@code true} once {@link #release()} or {@link #close()} has been called
     */
    boolean isReleased();
}
