package io.github.performancehelpers.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/** Options, defaults and validation of {@link PowerBackpressure.Builder} and {@link PowerBackpressure.Adaptive}. */
class PowerBackpressureBuilderTest {

    private static PowerBackpressure.Builder manual(ManualScheduler s) {
        return PowerBackpressure.builder().scheduler(s).ticker(new FakeTicker());
    }

    private static void assertMessage(IllegalArgumentException e, String option, String value) {
        assertTrue(e.getMessage().startsWith(option), e.getMessage());
        assertTrue(e.getMessage().endsWith(value), e.getMessage());
    }

    /** The seed's defaults: capacity 100, queueCapacity 1000, refillAmount 10, initialTokens = capacity, adaptive off. */
    @Test
    void defaultsAreTheSeeds() {
        try (PowerBackpressure bp = manual(new ManualScheduler()).build()) {
            assertEquals(100, bp.capacity());
            assertEquals(1000, bp.queueCapacity());
            assertEquals(100, bp.available());
            assertEquals(10, bp.refillAmount());
            assertEquals(0, bp.pending());
            assertFalse(bp.isFull());
        }
    }

    /** The default lowWaterMark is ceil(capacity * 0.25): the tick starts when available drops below it. */
    @ParameterizedTest
    @CsvSource({"100, 25", "8, 2", "64, 16", "1, 1", "3, 1", "5, 2"})
    void defaultLowWaterMarkIsCeilOfAQuarterOfCapacity(int capacity, int expectedLwm) {
        ManualScheduler s = new ManualScheduler();
        try (PowerBackpressure bp = manual(s).capacity(capacity).build()) {
            for (int i = 0; i < capacity - expectedLwm; i++) {
                bp.tryAcquire().orElseThrow();
            }
            assertEquals(0, s.live().size(), "available == lowWaterMark is not high pressure");
            bp.tryAcquire().orElseThrow();
            assertEquals(1, s.live().size(), "available < lowWaterMark schedules the tick");
        }
    }

    /** The default refillAmount is max(1, ceil(capacity * 0.1)). */
    @ParameterizedTest
    @CsvSource({"100, 10", "8, 1", "64, 7", "1, 1", "11, 2", "2147483647, 214748365"})
    void defaultRefillAmountIsCeilOfATenthOfCapacityAtLeastOne(int capacity, int expected) {
        try (PowerBackpressure bp = manual(new ManualScheduler()).capacity(capacity)
                .initialTokens(capacity < 1000 ? capacity : 1000).build()) {
            assertEquals(expected, bp.refillAmount());
        }
    }

    /** The default refill interval is 200 ms, and a configured one is what the tick is scheduled with. */
    @Test
    void refillIntervalDefaultsTo200MsAndIsUsedForTheTick() {
        ManualScheduler s = new ManualScheduler();
        try (PowerBackpressure bp = manual(s).initialTokens(0).build()) {
            assertEquals(TimeUnit.MILLISECONDS.toNanos(200), s.live().get(0).periodNanos);
            assertEquals(TimeUnit.MILLISECONDS.toNanos(200), s.live().get(0).initialDelayNanos);
            assertEquals(0, bp.available());
        }
        ManualScheduler s2 = new ManualScheduler();
        try (PowerBackpressure bp = manual(s2).initialTokens(0).refillInterval(Duration.ofMillis(100)).build()) {
            assertEquals(TimeUnit.MILLISECONDS.toNanos(100), s2.live().get(0).periodNanos);
            assertEquals(0, bp.available());
        }
    }

    /** initialTokens sets the starting pool; 0 is allowed and starts the refill at once. */
    @Test
    void initialTokensSetsTheStartingPool() {
        ManualScheduler s = new ManualScheduler();
        try (PowerBackpressure bp = manual(s).capacity(8).initialTokens(3).build()) {
            assertEquals(3, bp.available());
            assertEquals(0, s.live().size());
        }
    }

    /** capacity must be at least 1. */
    @ParameterizedTest
    @CsvSource({"0", "-1", "-2147483648"})
    void capacityBelowOneIsRejected(int value) {
        var e = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().capacity(value));
        assertMessage(e, "capacity", ": " + value);
    }

    /** queueCapacity must not be negative; zero is allowed (never wait). */
    @Test
    void queueCapacityNegativeIsRejectedZeroAllowed() {
        var e = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().queueCapacity(-1));
        assertMessage(e, "queueCapacity", ": -1");
        try (PowerBackpressure bp = manual(new ManualScheduler()).queueCapacity(0).build()) {
            assertEquals(0, bp.queueCapacity());
        }
    }

    /** highWaterMark must be at least 1. */
    @ParameterizedTest
    @CsvSource({"0", "-5"})
    void highWaterMarkBelowOneIsRejected(int value) {
        var e = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().highWaterMark(value));
        assertMessage(e, "highWaterMark", ": " + value);
    }

    /** lowWaterMark must lie in [0, capacity]. */
    @Test
    void lowWaterMarkOutsideZeroToCapacityIsRejected() {
        var neg = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().lowWaterMark(-1));
        assertMessage(neg, "lowWaterMark", ": -1");
        var above = assertThrows(IllegalArgumentException.class,
                () -> PowerBackpressure.builder().capacity(8).lowWaterMark(9).build());
        assertMessage(above, "lowWaterMark", ": 9");
        try (PowerBackpressure bp = manual(new ManualScheduler()).capacity(8).lowWaterMark(8).build()) {
            assertEquals(8, bp.available());
        }
    }

    /** A capacity lowered below an explicit lowWaterMark is caught at build(), not silently accepted. */
    @Test
    void lowWaterMarkIsCheckedAgainstTheFinalCapacity() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> PowerBackpressure.builder().lowWaterMark(10).capacity(4).build());
        assertMessage(e, "lowWaterMark", ": 10");
    }

    /** refillAmount must be at least 1. */
    @ParameterizedTest
    @CsvSource({"0", "-1"})
    void refillAmountBelowOneIsRejected(int value) {
        var e = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().refillAmount(value));
        assertMessage(e, "refillAmount", ": " + value);
    }

    /** refillInterval must be positive and expressible in nanoseconds; null is an NPE naming it. */
    @Test
    void refillIntervalZeroNegativeHugeOrNullIsRejected() {
        var zero = assertThrows(IllegalArgumentException.class,
                () -> PowerBackpressure.builder().refillInterval(Duration.ZERO));
        assertMessage(zero, "refillInterval", ": PT0S");
        var neg = assertThrows(IllegalArgumentException.class,
                () -> PowerBackpressure.builder().refillInterval(Duration.ofMillis(-1)));
        assertMessage(neg, "refillInterval", ": PT-0.001S");
        var huge = assertThrows(IllegalArgumentException.class,
                () -> PowerBackpressure.builder().refillInterval(Duration.ofSeconds(Long.MAX_VALUE)));
        assertTrue(huge.getMessage().startsWith("refillInterval"));
        var npe = assertThrows(NullPointerException.class, () -> PowerBackpressure.builder().refillInterval(null));
        assertEquals("refillInterval", npe.getMessage());
    }

    /** initialTokens must lie in [0, capacity]. */
    @Test
    void initialTokensOutsideZeroToCapacityIsRejected() {
        var neg = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().initialTokens(-1));
        assertMessage(neg, "initialTokens", ": -1");
        var above = assertThrows(IllegalArgumentException.class,
                () -> PowerBackpressure.builder().capacity(8).initialTokens(9).build());
        assertMessage(above, "initialTokens", ": 9");
    }

    /** Null scheduler, ticker and adaptive are NPEs naming the parameter. */
    @Test
    void nullsAreRejectedNamingTheParameter() {
        assertEquals("scheduler", assertThrows(NullPointerException.class,
                () -> PowerBackpressure.builder().scheduler(null)).getMessage());
        assertEquals("ticker", assertThrows(NullPointerException.class,
                () -> PowerBackpressure.builder().ticker(null)).getMessage());
        assertEquals("adaptive", assertThrows(NullPointerException.class,
                () -> PowerBackpressure.builder().adaptive((PowerBackpressure.Adaptive) null)).getMessage());
    }

    /** A rejected setter leaves the builder as it was: nothing is half-applied. */
    @Test
    void aRejectedValueLeavesThePreviousOne() {
        PowerBackpressure.Builder b = manual(new ManualScheduler()).capacity(8);
        assertThrows(IllegalArgumentException.class, () -> b.capacity(0));
        try (PowerBackpressure bp = b.build()) {
            assertEquals(8, bp.capacity());
        }
    }

    /** adaptive(true) takes the defaults: additiveIncrease 1, beta 0.5, min 1, max unbounded. */
    @Test
    void adaptiveDefaults() {
        PowerBackpressure.Adaptive d = PowerBackpressure.Adaptive.defaults();
        assertEquals(1.0, d.additiveIncrease());
        assertEquals(0.5, d.beta());
        assertEquals(1.0, d.min());
        assertEquals(Double.POSITIVE_INFINITY, d.max());
    }

    /** beta is clamped into [0.1, 0.99], as the seed says, rather than rejected. */
    @ParameterizedTest
    @CsvSource({"0.05, 0.1", "0, 0.1", "-3, 0.1", "1.5, 0.99", "1, 0.99", "0.5, 0.5", "0.1, 0.1", "0.99, 0.99"})
    void betaIsClamped(double given, double expected) {
        assertEquals(expected, PowerBackpressure.Adaptive.defaults().withBeta(given).beta());
    }

    /** A non-finite beta cannot be clamped meaningfully and is rejected. */
    @Test
    void betaNaNOrInfiniteIsRejected() {
        for (double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
            var e = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.Adaptive.defaults().withBeta(bad));
            assertMessage(e, "adaptive.beta", ": " + bad);
        }
    }

    /** additiveIncrease must be finite and positive. */
    @Test
    void additiveIncreaseInvalidIsRejected() {
        for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            var e = assertThrows(IllegalArgumentException.class,
                    () -> PowerBackpressure.Adaptive.defaults().withAdditiveIncrease(bad));
            assertMessage(e, "adaptive.additiveIncrease", ": " + bad);
        }
    }

    /** min must be finite and at least 1 (a refill always mints a permit). */
    @Test
    void minInvalidIsRejected() {
        for (double bad : new double[] {0.5, 0, Double.NaN, Double.POSITIVE_INFINITY}) {
            var e = assertThrows(IllegalArgumentException.class,
                    () -> new PowerBackpressure.Adaptive(1, 0.5, bad, Double.POSITIVE_INFINITY));
            assertMessage(e, "adaptive.min", ": " + bad);
        }
    }

    /** max below min (or NaN) is rejected. */
    @Test
    void maxBelowMinIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new PowerBackpressure.Adaptive(1, 0.5, 4, 3));
        assertMessage(e, "adaptive.max", ": 3.0");
        assertThrows(IllegalArgumentException.class, () -> new PowerBackpressure.Adaptive(1, 0.5, 1, Double.NaN));
    }

    /** With adaptive on, the base refillAmount must lie within the window's [min, max]. */
    @Test
    void refillAmountOutsideTheAdaptiveRangeIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().capacity(100)
                .adaptive(new PowerBackpressure.Adaptive(1, 0.5, 1, 4)).build());
        assertMessage(e, "refillAmount", ": 10");
        var e2 = assertThrows(IllegalArgumentException.class, () -> PowerBackpressure.builder().refillAmount(2)
                .adaptive(PowerBackpressure.Adaptive.defaults().withMin(3)).build());
        assertMessage(e2, "refillAmount", ": 2");
    }
}
