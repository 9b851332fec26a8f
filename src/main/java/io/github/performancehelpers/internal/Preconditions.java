package io.github.performancehelpers.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * Argument checks with the library's message format: an {@link IllegalArgumentException} whose
 * message names the option and the value ({@code "rate must be finite and > 0: NaN"}), a
 * {@link NullPointerException} that names the parameter.
 *
 * <p><b>Internal:</b> this package is not exported by the module {@code io.github.performancehelpers};
 * on the class path it is reachable but not API, and may change or disappear in any release.
 *
 * <p><b>Thread safety.</b> Stateless; every method is safe to call from any thread.
 */
public final class Preconditions {

    private Preconditions() {
    }

    /**
     * Checks that {@code value} is finite and strictly positive.
     *
     * @param name the option's name, used in the message
     * @param value the value to check
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} is NaN, infinite, zero or negative
     */
    public static double requireFinitePositive(String name, double value) {
        if (!(Double.isFinite(value) && value > 0)) {
            throw new IllegalArgumentException(name + " must be finite and > 0: " + value);
        }
        return value;
    }

    /**
     * Checks that {@code value} is finite and not negative.
     *
     * @param name the option's name, used in the message
     * @param value the value to check
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} is NaN, infinite or negative
     */
    public static double requireFiniteNonNegative(String name, double value) {
        if (!(Double.isFinite(value) && value >= 0)) {
            throw new IllegalArgumentException(name + " must be finite and >= 0: " + value);
        }
        return value;
    }

    /**
     * Checks that {@code value} is not null and within {@code [min, max]}.
     *
     * @param name  the option's name, used in the messages
     * @param value the duration to check
     * @param min   the least value allowed, positive
     * @param max   the greatest value allowed
     * @return {@code value}
     * @throws NullPointerException     if {@code value} is null
     * @throws IllegalArgumentException if {@code value} is not positive ({@code "name must be
     *                                  positive: value"}), below {@code min} or above {@code max}
     */
    public static Duration requireDurationIn(String name, Duration value, Duration min, Duration max) {
        Objects.requireNonNull(value, name);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive: " + value);
        }
        if (value.compareTo(min) < 0) {
            throw new IllegalArgumentException(name + " must be >= " + min + ": " + value);
        }
        if (value.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " must be at most " + max + ": " + value);
        }
        return value;
    }

    /**
     * A duration in milliseconds, exactly as a double allows and without the overflow of
     * {@link Duration#toNanos()} (which throws past about 292 years).
     *
     * @param d the duration
     * @return milliseconds
     */
    public static double millis(Duration d) {
        long s = d.getSeconds();
        // Within about 292 years toNanos() is exact (and rounds as it always did); past it, seconds.
        return Math.abs(s) < 9_000_000_000L ? d.toNanos() / 1e6 : s * 1e3 + d.getNano() / 1e6;
    }

    /**
     * Checks that {@code value} is not null and strictly positive.
     *
     * @param name the option's name, used in both messages
     * @param value the duration to check
     * @return {@code value}
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalArgumentException if {@code value} is zero or negative
     */
    public static Duration requirePositive(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be > 0: " + value);
        }
        return value;
    }
}
