package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The contract of {@link PowerServo}, with the flow controller seed's numbers. */
class PowerServoTest {

    private static final double NAN = Double.NaN;
    private static final double INF = Double.POSITIVE_INFINITY;

    /** The seed's cold-start configuration: 30 ms target, rate clamped to [5, 210], dt 1 s. */
    private static PowerServo seedServo() {
        return PowerServo.builder().kp(0.05).ki(0.001).setpoint(30).min(5).max(210).dt(1000)
                .build();
    }

    /** The seed's plant: latency in ms at a given rate, 5 ms + (rate / cap) * 90 ms. */
    private static double plantLatency(double rate, double cap) {
        return 5.0 + rate / cap * 90.0;
    }

    // ---------------------------------------------------------------- validation

    static Stream<Arguments> badOptions() {
        return Stream.of(
                bad("kp", NAN, b -> b.kp(NAN)), bad("kp", INF, b -> b.kp(INF)),
                bad("kp", -INF, b -> b.kp(-INF)), bad("kp", -0.1, b -> b.kp(-0.1)),
                bad("ki", NAN, b -> b.ki(NAN)), bad("ki", INF, b -> b.ki(INF)),
                bad("ki", -INF, b -> b.ki(-INF)), bad("ki", -0.1, b -> b.ki(-0.1)),
                bad("kd", NAN, b -> b.kd(NAN)), bad("kd", INF, b -> b.kd(INF)),
                bad("kd", -INF, b -> b.kd(-INF)), bad("kd", -0.1, b -> b.kd(-0.1)),
                bad("derivativeFilter", NAN, b -> b.derivativeFilter(NAN)),
                bad("derivativeFilter", -0.1, b -> b.derivativeFilter(-0.1)),
                bad("derivativeFilter", 1.0, b -> b.derivativeFilter(1.0)),
                bad("derivativeFilter", INF, b -> b.derivativeFilter(INF)),
                bad("setpoint", NAN, b -> b.setpoint(NAN)),
                bad("setpoint", INF, b -> b.setpoint(INF)),
                bad("setpoint", -INF, b -> b.setpoint(-INF)),
                bad("min", NAN, b -> b.min(NAN)), bad("min", INF, b -> b.min(INF)),
                bad("max", NAN, b -> b.max(NAN)), bad("max", -INF, b -> b.max(-INF)),
                bad("dt", NAN, b -> b.dt(NAN)), bad("dt", INF, b -> b.dt(INF)),
                bad("dt", 0.0, b -> b.dt(0)), bad("dt", -1.0, b -> b.dt(-1)));
    }

    private static Arguments bad(String option, double value, Consumer<PowerServo.Builder> set) {
        return Arguments.of(option, value, set);
    }

    /** Every option refuses its bad values with an IllegalArgumentException naming option and value. */
    @ParameterizedTest(name = "{0} = {1}")
    @MethodSource("badOptions")
    void builderRejectsBadOptionNamingItAndTheValue(String option, double value,
            Consumer<PowerServo.Builder> set) {
        PowerServo.Builder b = PowerServo.builder();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> set.accept(b));
        assertTrue(e.getMessage().startsWith(option + " "), e.getMessage());
        assertTrue(e.getMessage().endsWith(String.valueOf(value)), e.getMessage());
    }

    /** build() refuses a clamp whose min is not below its max, naming both. */
    @ParameterizedTest
    @ValueSource(doubles = {10.0, 11.0})
    void buildRejectsMinNotBelowMax(double min) {
        PowerServo.Builder b = PowerServo.builder().min(min).max(10);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertEquals("min must be < max: min=" + min + ", max=10.0", e.getMessage());
    }

    /** The builder's defaults are the flow controller seed's: kp 0.05, ki 0.001, kd 0, no clamp, dt 1. */
    @Test
    void defaultsAreTheSeeds() {
        PowerServo s = PowerServo.builder().build();
        assertEquals(0.05, s.kp());
        assertEquals(0.001, s.ki());
        assertEquals(0.0, s.kd());
        assertEquals(0.0, s.derivativeFilter());
        assertEquals(0.0, s.setpoint());
        assertEquals(Double.NEGATIVE_INFINITY, s.min());
        assertEquals(Double.POSITIVE_INFINITY, s.max());
        assertEquals(1.0, s.dt());
        assertEquals(0.0, s.output());
        assertEquals(0L, s.steps());
    }

    /** A non-finite measurement is refused and leaves the servo exactly as it was. */
    @ParameterizedTest
    @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY})
    void stepRejectsNonFiniteMeasurementAndChangesNothing(double measurement) {
        PowerServo s = seedServo();
        s.step(1);
        String before = s.toString();
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> s.step(measurement, 1000));
        assertEquals("measurement must be finite: " + measurement, e.getMessage());
        assertEquals(before, s.toString());
    }

    /** A dt that is not finite and > 0 is refused and leaves the servo exactly as it was. */
    @ParameterizedTest
    @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, 0.0, -1.0})
    void stepRejectsBadDtAndChangesNothing(double dt) {
        PowerServo s = seedServo();
        s.step(1);
        String before = s.toString();
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> s.step(1, dt));
        assertEquals("dt must be finite and > 0: " + dt, e.getMessage());
        assertEquals(before, s.toString());
    }

    /** A step whose error times dt overflows the integral is refused and changes nothing. */
    @Test
    void stepRejectsIntegralOverflowAndChangesNothing() {
        PowerServo s = PowerServo.builder().build();
        s.step(0);
        String before = s.toString();
        assertThrows(IllegalArgumentException.class, () -> s.step(-1e300, 1e300));
        assertEquals(before, s.toString());
    }

    // ---------------------------------------------------------------- the seed's behaviour

    /** The seed's cold start: 5.0, 30.4, 59.5, 88.5, 117.5, 146.4, 175.4, 204.4, 210.0. */
    @Test
    void coldStartClimbsAsTheSeedMeasured() {
        PowerServo s = seedServo();
        double[] expected = {5.0, 30.4, 59.5, 88.5, 117.5, 146.4, 175.4, 204.4, 210.0};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], s.step(1), 0.1, "step " + (i + 1));
        }
        assertTrue(s.saturated());
        assertEquals(9L, s.steps());
        assertEquals(29.0, s.lastError());
    }

    /** The integral lags one step: the first step after construction is kp * error alone. */
    @Test
    void firstStepIsProportionalOnly() {
        PowerServo s = PowerServo.builder().kp(0.05).ki(0.001).setpoint(30).dt(1000).build();
        assertEquals(0.05 * 29, s.step(1), 1e-12);
        assertEquals(29_000.0, s.integral(), 1e-9);
        assertEquals(0.05 * 29 + 0.001 * 29_000, s.step(1), 1e-12);
        assertFalse(s.saturated());
    }

    /** The first cold-start step is clamped at the floor and reported as saturated. */
    @Test
    void clampAtFloorIsReportedAsSaturated() {
        PowerServo s = seedServo();
        assertEquals(5.0, s.step(1));
        assertTrue(s.saturated());
        assertEquals(29_000.0, s.integral(), 1e-9, "driving up from the floor is integrated");
    }

    /** An output exactly on a bound is not saturated: the clamp did not bind. */
    @Test
    void outputExactlyOnABoundIsNotSaturated() {
        PowerServo s = PowerServo.builder().kp(1).ki(0).setpoint(10).min(0).max(10).build();
        assertEquals(10.0, s.step(0));
        assertFalse(s.saturated());
    }

    /** P-only (ki 0) on the seed's plant (cap 150, 30 ms target) settles at the floor, 5.0/s. */
    @Test
    void proportionalOnlySettlesAtTheFloor() {
        PowerServo s = PowerServo.builder().kp(0.05).ki(0).setpoint(30).min(5).max(210).dt(1000)
                .build();
        double rate = 100;
        for (int i = 0; i < 60; i++) {
            rate = s.step(plantLatency(rate, 150));
        }
        assertEquals(5.0, rate);
        assertTrue(s.saturated());
    }

    /** With the default PI gains the same plant settles at its equilibrium, 41.7/s (seed's table). */
    @Test
    void proportionalIntegralReachesThePlantsEquilibrium() {
        PowerServo s = seedServo();
        double rate = 5;
        for (int i = 0; i < 60; i++) {
            rate = s.step(plantLatency(rate, 150));
        }
        assertEquals(25.0 / 0.6, rate, 0.05);
        assertFalse(s.saturated());
    }

    /** kd without filtering: the term is -kd * d(measurement)/dt, and zero on the first step. */
    @Test
    void derivativeActsOnTheMeasurementUnfiltered() {
        PowerServo s = PowerServo.builder().kp(0).ki(0).kd(2).dt(0.5).build();
        assertEquals(0.0, s.step(10), "no previous measurement: no derivative kick");
        assertEquals(-12.0, s.step(13), 1e-12); // -2 * 3 / 0.5
        assertEquals(0.0, s.step(13), 1e-12);
        assertEquals(8.0, s.step(11, 0.5), 1e-12); // -2 * -2 / 0.5
    }

    /** kd through the first-order filter: filtered = f * previous + (1 - f) * raw. */
    @Test
    void derivativeFilterSmoothsTheTerm() {
        PowerServo s = PowerServo.builder().kp(0).ki(0).kd(2).derivativeFilter(0.5).dt(0.5)
                .build();
        assertEquals(0.0, s.step(10));
        assertEquals(-6.0, s.step(13), 1e-12);  // 0.5 * 0 + 0.5 * -12
        assertEquals(-3.0, s.step(13), 1e-12);  // 0.5 * -6 + 0.5 * 0
        assertEquals(-1.5, s.step(13), 1e-12);
        assertEquals(3.25, s.step(11), 1e-12);  // 0.5 * -1.5 + 0.5 * 8
    }

    /** step(measurement) uses the builder's dt. */
    @Test
    void stepWithoutDtUsesTheDefault() {
        PowerServo a = seedServo();
        PowerServo b = seedServo();
        for (int i = 0; i < 5; i++) {
            assertEquals(b.step(7, 1000), a.step(7));
        }
        assertEquals(b.integral(), a.integral());
    }

    // ---------------------------------------------------------------- anti-windup

    /** Pinned at max for 1000 steps, the servo leaves max within 4 steps once the error turns negative. */
    @Test
    void leavesTheCeilingWithinAFewStepsAfterALongSaturation() {
        PowerServo s = seedServo();
        for (int i = 0; i < 1000; i++) {
            s.step(1);
        }
        assertEquals(210.0, s.output());
        assertTrue(s.saturated());
        assertTrue(s.integral() <= 210.0 / 0.001 + 29_000, "integral did not wind up: " + s.integral());
        int steps = 0;
        while (s.step(40) == 210.0) { // 10 ms over target
            steps++;
            assertTrue(steps < 4, "still pinned after " + steps + " steps");
        }
        assertTrue(s.output() < 210.0);
    }

    /** Pinned at min by overload, the servo leaves the floor on the second step of recovery. */
    @Test
    void leavesTheFloorWithinAFewStepsAfterALongSaturation() {
        PowerServo s = seedServo();
        for (int i = 0; i < 1000; i++) {
            assertEquals(5.0, s.step(100)); // 70 ms over target: overload
        }
        assertEquals(0.0, s.integral(), "driving down into the floor is not integrated");
        assertEquals(5.0, s.step(1));
        assertEquals(30.45, s.step(1), 1e-9);
    }

    // ---------------------------------------------------------------- reset

    /** reset() restores the cold start: the same climb happens again. */
    @Test
    void resetRestoresTheColdStart() {
        PowerServo s = seedServo();
        for (int i = 0; i < 20; i++) {
            s.step(1 + i);
        }
        s.reset();
        assertEquals(0L, s.steps());
        assertEquals(0.0, s.integral());
        assertEquals(0.0, s.lastError());
        assertFalse(s.saturated());
        assertEquals(5.0, s.output(), "0 clamped into [5, 210]");
        assertEquals(5.0, s.step(1), 0.1);
        assertEquals(30.4, s.step(1), 0.1);
    }

    /** reset() also clears the derivative's memory: no kick from the pre-reset measurement. */
    @Test
    void resetClearsTheDerivativeState() {
        PowerServo s = PowerServo.builder().kp(0).ki(0).kd(1).derivativeFilter(0.5).build();
        s.step(0);
        s.step(100);
        s.reset();
        assertEquals(0.0, s.step(50));
    }
}
