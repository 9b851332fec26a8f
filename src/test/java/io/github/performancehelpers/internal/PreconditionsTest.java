package io.github.performancehelpers.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class PreconditionsTest {

    /** A finite positive value passes through unchanged. */
    @Test
    void finitePositivePassesThrough() {
        assertEquals(2.5, Preconditions.requireFinitePositive("rate", 2.5));
        assertEquals(Double.MIN_VALUE, Preconditions.requireFinitePositive("rate", Double.MIN_VALUE));
    }

    /** NaN, infinities, zero and negatives are refused with a message naming option and value. */
    @Test
    void finitePositiveRefusesEveryOtherValueNamingOptionAndValue() {
        assertEquals("rate must be finite and > 0: NaN", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requireFinitePositive("rate", Double.NaN)).getMessage());
        assertEquals("rate must be finite and > 0: Infinity", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requireFinitePositive("rate", Double.POSITIVE_INFINITY)).getMessage());
        assertEquals("rate must be finite and > 0: 0.0", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requireFinitePositive("rate", 0.0)).getMessage());
        assertEquals("rate must be finite and > 0: -1.0", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requireFinitePositive("rate", -1.0)).getMessage());
    }

    /** Zero is allowed by the non-negative check; negatives and non-finite values are not. */
    @Test
    void finiteNonNegativeAllowsZeroOnly() {
        assertEquals(0.0, Preconditions.requireFiniteNonNegative("burst", 0.0));
        assertEquals("burst must be finite and >= 0: -0.5", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requireFiniteNonNegative("burst", -0.5)).getMessage());
        assertEquals("burst must be finite and >= 0: -Infinity", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requireFiniteNonNegative("burst", Double.NEGATIVE_INFINITY)).getMessage());
    }

    /** A positive duration passes; null names the parameter; zero and negative name option and value. */
    @Test
    void positiveDurationChecksNullZeroAndNegative() {
        Duration d = Duration.ofMillis(5);
        assertSame(d, Preconditions.requirePositive("per", d));
        assertEquals("per", assertThrows(NullPointerException.class,
                () -> Preconditions.requirePositive("per", null)).getMessage());
        assertEquals("per must be > 0: PT0S", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requirePositive("per", Duration.ZERO)).getMessage());
        assertEquals("per must be > 0: PT-1S", assertThrows(IllegalArgumentException.class,
                () -> Preconditions.requirePositive("per", Duration.ofSeconds(-1))).getMessage());
    }
}
