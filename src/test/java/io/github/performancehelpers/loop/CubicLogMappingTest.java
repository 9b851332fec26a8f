package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bit-level bucket index of {@link PowerHistogram}: it is a function of the value's exponent
 * and a cubic in its mantissa, yet every bucket spans at most a factor gamma, which is what the
 * relative-accuracy guarantee rests on.
 */
class CubicLogMappingTest {

    /** Relative slack for floating-point rounding of bucket bounds (far below any accuracy tested). */
    private static final double ROUNDING = 1e-12;

    /** No bucket spans more than a factor gamma = (1 + a) / (1 - a), from 1e-9 ms to 1e12 ms. */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01, 0.05, 0.2})
    void everyBucketSpansAtMostAFactorGamma(double accuracy) {
        CubicLogMapping mapping = new CubicLogMapping(accuracy);
        long from = (long) mapping.index(1e-9);
        long to = (long) mapping.index(1e12);
        double widest = 0;
        for (long i = from; i <= to; i++) {
            widest = Math.max(widest, mapping.upperBound(i) / mapping.upperBound(i - 1));
        }
        assertTrue(widest <= mapping.gamma() * (1 + ROUNDING), "widest bucket ratio " + widest + " > gamma " + mapping.gamma());
        // ...and the bound is nearly tight (within 1% of gamma - 1): the adjustment costs no more than it must.
        assertTrue(widest - 1 >= 0.99 * (mapping.gamma() - 1), "widest " + widest + " is far below gamma");
    }

    /** index(x) = i exactly when upperBound(i - 1) < x <= upperBound(i), over 10^6 log-uniform values and at octave edges. */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01, 0.05})
    void indexAgreesWithTheBucketBounds(double accuracy) {
        CubicLogMapping mapping = new CubicLogMapping(accuracy);
        Random random = new Random(7);
        for (int k = 0; k < 1_000_000; k++) {
            double x = Math.pow(10, -9 + 21 * random.nextDouble());
            assertInBucket(mapping, x);
        }
        for (int e = -30; e <= 40; e++) {
            double p = Math.scalb(1.0, e);
            assertInBucket(mapping, p);
            assertInBucket(mapping, Math.nextUp(p));
            assertInBucket(mapping, Math.nextDown(p));
        }
    }

    private static void assertInBucket(CubicLogMapping mapping, double x) {
        long i = (long) mapping.index(x);
        double lower = mapping.upperBound(i - 1);
        double upper = mapping.upperBound(i);
        assertTrue(x > lower * (1 - ROUNDING) && x <= upper * (1 + ROUNDING),
                x + " in bucket " + i + " = (" + lower + ", " + upper + "]");
    }

    /**
     * Bucket i is [upperBound(i - 1), upperBound(i)): just below a bound (by 1e-12 relative) is
     * bucket i, just above is bucket i + 1, across every bucket and octave boundary from 1 µs to
     * 1000 s. (Within a few ulps of a bound, floating-point rounding may put a value on either
     * side, a relative difference of 1e-15 that no accuracy figure can see.)
     */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01})
    void valuesEitherSideOfABoundAreInAdjacentBuckets(double accuracy) {
        CubicLogMapping mapping = new CubicLogMapping(accuracy);
        for (long i = (long) mapping.index(1e-3); i < (long) mapping.index(1e6); i++) {
            double bound = mapping.upperBound(i);
            assertEquals(i, (long) mapping.index(bound * (1 - ROUNDING)), "just below the upper bound of bucket " + i);
            assertEquals(i + 1, (long) mapping.index(bound * (1 + ROUNDING)), "just above the upper bound of bucket " + i);
        }
    }

    /** The representative 2LU/(L+U) of a bucket is within the relative accuracy of both of its ends. */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01, 0.05})
    void representativeIsWithinTheAccuracyOfTheWholeBucket(double accuracy) {
        CubicLogMapping mapping = new CubicLogMapping(accuracy);
        for (long i = (long) mapping.index(1e-6); i <= (long) mapping.index(1e7); i++) {
            double lower = mapping.upperBound(i - 1);
            double upper = mapping.upperBound(i);
            double r = mapping.representative(i);
            assertTrue((r - lower) / lower <= accuracy * (1 + ROUNDING), "bucket " + i + " lower end");
            assertTrue((upper - r) / upper <= accuracy * (1 + ROUNDING), "bucket " + i + " upper end");
        }
    }

    /** The cubic costs about 1% more buckets than an exact logarithm: 1 / ((10/7) ln 2) = 1.0099 per octave. */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01, 0.05})
    void bucketsPerOctaveAreOnePercentAboveTheExactLogarithm(double accuracy) {
        CubicLogMapping mapping = new CubicLogMapping(accuracy);
        double perOctave = (mapping.index(Math.scalb(1.0, 20)) - mapping.index(1.0)) / 20.0;
        double exact = Math.log(2) / Math.log(mapping.gamma());
        assertEquals(1 / (10.0 / 7.0 * Math.log(2)), perOctave / exact, 0.05 / exact);
    }
}
