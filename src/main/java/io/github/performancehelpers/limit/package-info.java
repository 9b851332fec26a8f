/**
 * Rate limiters: {@link io.github.performancehelpers.limit.RateLimiter}, the shape they share
 * ({@code tryConsume}, {@code available}, {@code hasCapacity}), answered with a
 * {@link io.github.performancehelpers.limit.Take} (an admission, or the exact wait until one);
 * {@link io.github.performancehelpers.limit.PowerGCRA}, a lock-free GCRA in one process;
 * {@link io.github.performancehelpers.limit.PowerRateLimit}, several limits at once (all admit or
 * none is charged); and {@link io.github.performancehelpers.limit.RedisGCRA}, one rate across a
 * fleet, through the caller's Redis client ({@link io.github.performancehelpers.limit.RedisScriptExecutor}).
 *
 * <p>The executor's loop paces its admissions with a {@code PowerGCRA}; each limiter is also
 * usable alone, in front of any code.
 *
 * @since 0.1.0
 */
package io.github.performancehelpers.limit;
