package io.github.performancehelpers.limit;

/**
 * The shape every rate limiter in this library shares, so that limiters compose
 * ({@code PowerRateLimit} holds any number of them).
 *
 * <p>A request count {@code n} is a number of operations. Counts of zero or below are a no-op that
 * succeeds: refusing to admit nothing would be a refusal with no defect behind it.
 *
 * <p><b>Thread safety.</b> Implementations are safe for concurrent use by any number of threads.
 *
 * @since 0.1.0
 */
public interface RateLimiter {

    /**
     * Admits a batch of {@code n} operations if the limiter's current budget covers all of it,
     * consuming the budget; otherwise consumes nothing.
     *
     * @param n the number of operations; {@code n <= 0} is a no-op returning {@code true}
     * @return {@code true} if the batch was admitted
     */
    boolean tryConsume(long n);

    /**
     * Admits a single operation if the budget allows it. Equivalent to {@code tryConsume(1)}.
     *
     * @return {@code true} if the operation was admitted
     */
    default boolean tryConsume() {
        return tryConsume(1);
    }

    /**
     * Returns how many operations could be consumed at this instant, as a whole number.
     * {@code tryConsume(n)} succeeds at the same instant exactly when {@code available() >= n}.
     *
     * @return the operations available now, never negative
     */
    long available();

    /**
     * Returns whether a single operation would be admitted right now.
     *
     * @return {@code available() >= 1}
     */
    default boolean hasCapacity() {
        return available() >= 1;
    }
}
