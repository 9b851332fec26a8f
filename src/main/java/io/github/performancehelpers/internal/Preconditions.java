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
