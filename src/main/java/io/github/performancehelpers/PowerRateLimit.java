package io.github.performancehelpers;

import java.util.List;

/**
 * A composite rate limiter: admits a batch only if every component admits it, and then charges
 * every component; a refused batch charges none.
 *
 * <pre>{@code
 * // A global 200/s ceiling plus a stricter 10/s per-tenant ceiling.
 * PowerRateLimit limiter = PowerRateLimit.of(
 *         PowerGCRA.builder().rate(200).burst(50).build(),
 *         PowerGCRA.builder().rate(10).burst(9).build());
 * if (limiter.tryConsume()) doWork();
 * }</pre>
 *
 * <p>Thread-safe. See {@link #tryConsume(long)} for the exact all-or-none guarantee.
 */
public final class PowerRateLimit implements RateLimiter {

    private PowerRateLimit() {
    }

    /**
     * Creates a composite of the given components, in order.
     *
     * @param components the limiters; at least one
     * @return the composite
     * @throws NullPointerException     if the array or any component is null
     * @throws IllegalArgumentException if there is no component
     */
    public static PowerRateLimit of(RateLimiter... components) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Creates a composite of the given components, in order. The list is copied.
     *
     * @param components the limiters; at least one
     * @return the composite
     * @throws NullPointerException     if the list or any component is null
     * @throws IllegalArgumentException if there is no component
     */
    public static PowerRateLimit of(List<? extends RateLimiter> components) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Admits a batch of {@code n} if every component admits it, consuming from all of them, or
     * from none.
     *
     * @param n the number of operations; {@code n <= 0} is a no-op returning {@code true}
     * @return {@code true} if every component admitted the batch
     */
    @Override
    public boolean tryConsume(long n) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the minimum of the components' {@link RateLimiter#available()}.
     *
     * @return the operations every component could admit now
     */
    @Override
    public long available() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the components, in order.
     *
     * @return an unmodifiable list
     */
    public List<RateLimiter> components() {
        throw new UnsupportedOperationException("not yet implemented");
    }
}
