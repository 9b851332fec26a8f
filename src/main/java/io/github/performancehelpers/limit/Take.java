package io.github.performancehelpers.limit;

import java.time.Duration;

/**
 * The answer of a rate limiter's {@code take(n)}: admitted, or the exact wait before the same
 * request would be admitted. Decided in one atomic step, so {@code ok} and {@code retryAfterNanos}
 * describe the same instant.
 *
 * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number of
 * threads.
 *
 * @param ok              {@code true} if the request was admitted (and its cost consumed)
 * @param retryAfterNanos {@code 0} when {@code ok}; otherwise the nanoseconds after which the same
 *                        request would be admitted, assuming nothing else consumes meanwhile
 * @since 0.1.0
 */
public record Take(boolean ok, long retryAfterNanos) {

    /** The shared "admitted" answer. */
    private static final Take ADMITTED = new Take(true, 0L);

    /**
     * Validates the components.
     *
     * @param ok              whether the request was admitted
     * @param retryAfterNanos the wait in nanoseconds; must be 0 when {@code ok}, and {@code > 0}
     *                        otherwise
     * @throws IllegalArgumentException if the wait contradicts {@code ok}
     */
    public Take {
        if (ok ? retryAfterNanos != 0 : retryAfterNanos <= 0) {
            throw new IllegalArgumentException(
                    "retryAfterNanos must be 0 when ok and > 0 otherwise: ok=" + ok
                            + ", retryAfterNanos=" + retryAfterNanos);
        }
    }

    /**
     * Returns the "admitted" answer.
     *
     * @return a {@code Take} with {@code ok == true} and no wait
     */
    public static Take admitted() {
        return ADMITTED;
    }

    /**
     * Returns a refusal carrying the wait after which the request would be admitted.
     *
     * @param retryAfterNanos the wait in nanoseconds, {@code > 0}
     * @return a refusal
     * @throws IllegalArgumentException if {@code retryAfterNanos <= 0}
     */
    public static Take refused(long retryAfterNanos) {
        return new Take(false, retryAfterNanos);
    }

    /**
     * Returns the wait as a {@link Duration}.
     *
     * @return {@link Duration#ZERO} when {@code ok}, otherwise the wait
     */
    public Duration retryAfter() {
        return Duration.ofNanos(retryAfterNanos);
    }
}
