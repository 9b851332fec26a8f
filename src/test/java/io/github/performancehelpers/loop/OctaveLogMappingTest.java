package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bit-level bucket index of {@link PowerHistogram}: n buckets per octave made of whole cells
 * (the top k bits of the mantissa), bucket j of an octave starting at cell
 * c_j = ceil(2^k (2^(j/n) - 1)), found with one table load; every bucket spans at most a factor
 * gamma, which is what the relative-accuracy guarantee rests on, and the table agrees with the
 * bounds to the last bit.
 */
class OctaveLogMappingTest {

    /** Relative slack for floating-point rounding (far below any accuracy tested). */
    private static final double ROUNDING = 1e-12;

    /** No bucket spans more than a factor gamma = (1 + a) / (1 - a), from 1e-9 ms to 1e12 ms. */
    @ParameterizedTest
    @ValueSource(doubles = {0.0001, 0.001, 0.01, 0.05, 0.2, 0.5, 0.9})
    void everyBucketSpansAtMostAFactorGamma(double accuracy) {
        OctaveLogMapping mapping = new OctaveLogMapping(accuracy);
        long from = mapping.index(1e-9);
        long to = mapping.index(1e12);
        double widest = 0;
        for (long i = from; i <= to; i++) {
            widest = Math.max(widest, mapping.upperBound(i) / mapping.upperBound(i - 1));
        }
        assertTrue(widest <= mapping.gamma() * (1 + ROUNDING), "widest bucket ratio " + widest + " > gamma " + mapping.gamma());
    }

    /**
     * n is at least the exact logarithm's ln 2 / ln gamma and at most 6% and one bucket above it
     * (36 at 1%, against 34.66): rounding the bounds to cells costs a few buckets, no more.
     */
    @ParameterizedTest
    @ValueSource(doubles = {0.0001, 0.001, 0.005, 0.01, 0.02})
    void bucketsPerOctaveAreAFewPercentAboveTheExactLogarithm(double accuracy) {
        OctaveLogMapping mapping = new OctaveLogMapping(accuracy);
        double exact = Math.log(2) / Math.log(mapping.gamma());
        long perOctave = (mapping.index(Math.scalb(1.0, 20)) - mapping.index(1.0)) / 20;
        assertEquals(mapping.bucketsPerOctave(), perOctave);
        assertTrue(perOctave >= exact && perOctave <= 1.06 * exact + 1, perOctave + " buckets per octave against " + exact);
    }

    /** The layout the Javadoc and toJson document at 1%: 36 buckets per octave over 1,024 cells. */
    @Test
    void defaultAccuracyHas36BucketsPerOctaveOver1024Cells() {
        OctaveLogMapping mapping = new OctaveLogMapping(0.01);
        assertEquals(36, mapping.bucketsPerOctave());
        assertEquals(10, mapping.cellBits());
        assertEquals(1024, mapping.cells().length);
    }

    /**
     * index(x) = e n + j + 1, with j the largest bucket of the octave whose first cell
     * c_j = ceil(2^k (2^(j/n) - 1)) is at most the value's cell floor(2^k m), computed here
     * from the documented formula, over 10^6 log-uniform values and every cell boundary of
     * four octaves.
     */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01, 0.05, 0.3})
    void indexIsTheDocumentedFormula(double accuracy) {
        OctaveLogMapping mapping = new OctaveLogMapping(accuracy);
        int n = mapping.bucketsPerOctave();
        int k = mapping.cellBits();
        long[] first = new long[n + 1];
        for (int j = 0; j < n; j++) {
            first[j] = (long) Math.ceil(Math.scalb(1.0, k) * (Math.pow(2.0, (double) j / n) - 1.0));
        }
        first[n] = 1L << k;
        Random random = new Random(7);
        for (int t = 0; t < 1_000_000; t++) {
            double x = Math.pow(10, -9 + 21 * random.nextDouble());
            assertEquals(documentedIndex(x, n, k, first), mapping.index(x), "index of " + x);
        }
        for (int e = -2; e < 2; e++) {
            for (long c = 0; c < (1L << k); c++) {
                double x = Math.scalb(1.0 + Math.scalb((double) c, -k), e); // the first value of cell c
                assertEquals(documentedIndex(x, n, k, first), mapping.index(x), "cell " + c + " of octave " + e);
                assertEquals(documentedIndex(Math.nextDown(x), n, k, first), mapping.index(Math.nextDown(x)),
                        "the double below cell " + c + " of octave " + e);
            }
        }
    }

    private static long documentedIndex(double x, int n, int k, long[] first) {
        int e = Math.getExponent(x);
        double m = Math.scalb(x, -e) - 1.0; // exact
        long cell = (long) Math.floor(Math.scalb(m, k));
        int j = n - 1;
        while (first[j] > cell) {
            j--;
        }
        return (long) e * n + j + 1;
    }

    /**
     * At every bucket bound of the octaves from 2^-40 to 2^40, the bound itself is in the upper
     * bucket and the double just below it in the lower one: the table and the bounds agree to
     * the last bit (the bounds are sums of powers of two, exact in double).
     */
    @ParameterizedTest
    @ValueSource(doubles = {0.0001, 0.001, 0.01, 0.05, 0.2, 0.5})
    void theBoundItselfIsInTheUpperBucketAndTheDoubleBelowInTheLower(double accuracy) {
        OctaveLogMapping mapping = new OctaveLogMapping(accuracy);
        int n = mapping.bucketsPerOctave();
        for (long i = -40L * n; i < 40L * n; i++) {
            double bound = mapping.upperBound(i);
            assertEquals(i + 1, mapping.index(bound), "the upper bound of bucket " + i + ", " + bound);
            assertEquals(i, mapping.index(Math.nextDown(bound)), "just below the upper bound of bucket " + i);
        }
    }

    /** Octave edges: 2^e is the first value of bucket e * n + 1, and the double below it the last of bucket e * n. */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01, 0.3})
    void powersOfTwoStartABucket(double accuracy) {
        OctaveLogMapping mapping = new OctaveLogMapping(accuracy);
        long n = mapping.bucketsPerOctave();
        for (int e = -1000; e <= 1000; e++) {
            double p = Math.scalb(1.0, e);
            assertEquals(e * n + 1, mapping.index(p), "2^" + e);
            assertEquals(e * n, mapping.index(Math.nextDown(p)), "just below 2^" + e);
            assertEquals(p, mapping.upperBound(e * n), 0.0, "upper bound of bucket " + e * n);
        }
    }

    /** The representative 2LU/(L+U) of a bucket is within the relative accuracy of both of its ends. */
    @ParameterizedTest
    @ValueSource(doubles = {0.001, 0.01, 0.05, 0.5})
    void representativeIsWithinTheAccuracyOfTheWholeBucket(double accuracy) {
        OctaveLogMapping mapping = new OctaveLogMapping(accuracy);
        for (long i = mapping.index(1e-6); i <= mapping.index(1e7); i++) {
            double lower = mapping.upperBound(i - 1);
            double upper = mapping.upperBound(i);
            double r = mapping.representative(i);
            assertTrue((r - lower) / lower <= accuracy * (1 + ROUNDING), "bucket " + i + " lower end");
            assertTrue((upper - r) / upper <= accuracy * (1 + ROUNDING), "bucket " + i + " upper end");
        }
    }

    /** The table has 2^k cells, the smallest power of two of at least 16 n_0 / ln 2 (about 23 per bucket). */
    @ParameterizedTest
    @ValueSource(doubles = {0.00001, 0.001, 0.01, 0.05, 0.2})
    void theTableHasAboutTwentyThreeCellsPerBucket(double accuracy) {
        OctaveLogMapping mapping = new OctaveLogMapping(accuracy);
        double n0 = OctaveLogMapping.bucketsPerOctave(accuracy);
        int cells = mapping.cells().length;
        assertEquals(1 << mapping.cellBits(), cells);
        assertTrue(cells >= 16 * n0 / Math.log(2) && cells < 32 * n0 / Math.log(2), cells + " cells for n_0 = " + n0);
    }
}
