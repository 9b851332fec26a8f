package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.DoubleSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The single-threaded contract of {@link PowerHistogram}: accuracy, validation, snapshots, JSON. */
class PowerHistogramTest {

    /** The quantiles every accuracy test checks, from p1 to p999, plus both ends. */
    private static final double[] QUANTILES = {
        0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0
    };

    /** Floating-point slack on top of the stated relative accuracy (log/pow rounding). */
    private static final double ROUNDING = 1e-9;

    private static final int SAMPLES = 100_000;

    // ------------------------------------------------------------------ accuracy

    static Stream<Arguments> distributionsAndAccuracies() {
        List<Arguments> out = new ArrayList<>();
        for (double accuracy : new double[] {0.001, 0.01, 0.05}) {
            for (String distribution : new String[] {"lognormal", "uniform", "bimodal", "constant", "withZeros"}) {
                out.add(Arguments.of(distribution, accuracy));
            }
        }
        return out.stream();
    }

    static DoubleSupplier distribution(String name, Random random) {
        return switch (name) {
            // Latency-like: median 20 ms, long right tail.
            case "lognormal" -> () -> Math.exp(Math.log(20) + 1.0 * random.nextGaussian());
            // Flat over three decades, 0.5 ms to 500 ms.
            case "uniform" -> () -> 0.5 + 499.5 * random.nextDouble();
            // A fast path around 2 ms and a slow path around 300 ms, 80/20.
            case "bimodal" -> () -> random.nextDouble() < 0.8
                    ? Math.exp(Math.log(2) + 0.2 * random.nextGaussian())
                    : Math.exp(Math.log(300) + 0.3 * random.nextGaussian());
            case "constant" -> () -> 42.0;
            // 10% exact zeros (e.g. cache hits timed at clock resolution), the rest lognormal.
            case "withZeros" -> () -> random.nextDouble() < 0.1 ? 0.0 : Math.exp(random.nextGaussian());
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** The exact lower quantile: the sample at 0-based rank floor(q * (n - 1)) of the sorted samples. */
    private static double exactQuantile(double[] sorted, double q) {
        return sorted[(int) Math.floor(q * (sorted.length - 1))];
    }

    /** Every quantile from p1 to p999 is within the relative accuracy of the exact sample quantile. */
    @ParameterizedTest(name = "{0} at relativeAccuracy {1}")
    @MethodSource("distributionsAndAccuracies")
    void everyQuantileIsWithinTheRelativeAccuracyOfTheExactSampleQuantile(String name, double accuracy) {
        PowerHistogram h = PowerHistogram.builder().relativeAccuracy(accuracy).build();
        DoubleSupplier source = distribution(name, new Random(42));
        double[] samples = new double[SAMPLES];
        for (int i = 0; i < SAMPLES; i++) {
            samples[i] = source.getAsDouble();
            h.record(samples[i]);
        }
        Arrays.sort(samples);
        PowerHistogram.Snapshot s = h.snapshot();
        assertEquals(SAMPLES, s.count());
        for (double q : QUANTILES) {
            double exact = exactQuantile(samples, q);
            double estimate = s.quantile(q);
            if (exact == 0.0) {
                assertEquals(0.0, estimate, name + " q=" + q + ": zero must read back exactly");
            } else {
                double error = Math.abs(estimate - exact) / exact;
                assertTrue(error <= accuracy + ROUNDING, name + " q=" + q + ": exact " + exact
                        + ", estimate " + estimate + ", relative error " + error + " > " + accuracy);
            }
        }
        assertEquals(samples[0], s.min(), 0.0, "min is exact");
        assertEquals(samples[SAMPLES - 1], s.max(), 0.0, "max is exact");
    }

    /** A constant sample reads back exactly at every quantile (clamped to the exact min and max). */
    @Test
    void constantSampleReadsBackExactly() {
        PowerHistogram h = PowerHistogram.builder().build();
        for (int i = 0; i < 1000; i++) {
            h.record(30.0);
        }
        for (double q : QUANTILES) {
            assertEquals(30.0, h.quantile(q), 0.0);
        }
    }

    /** The rank is floor(q * (n - 1)): the p50 of an even count is the lower middle sample. */
    @Test
    void quantileUsesTheLowerRank() {
        PowerHistogram h = PowerHistogram.builder().relativeAccuracy(0.001).build();
        h.record(10.0);
        h.record(1000.0);
        assertEquals(10.0, h.quantile(0.5), 10.0 * 0.001, "rank floor(0.5 * 1) = 0");
        assertEquals(10.0, h.quantile(0.999), 10.0 * 0.001, "rank floor(0.999 * 1) = 0");
        assertEquals(1000.0, h.quantile(1.0), 0.0, "rank 1 is the max, exact by clamping");
    }

    /** The seed's use: the p99 of 100 latencies 1..100 ms is the 99th (rank 98), 99 ms, within 1%. */
    @Test
    void p99OfOneToHundred() {
        PowerHistogram h = PowerHistogram.builder().build();
        for (int ms = 1; ms <= 100; ms++) {
            h.record(ms);
        }
        assertEquals(99.0, h.quantile(0.99), 99.0 * 0.01);
    }

    /**
     * The guarantee where it is tightest, at the bucket bounds: six values in every bucket from
     * 1 µs to 1000 s (its lower bound L itself, the double above it, the points L r^(1/4),
     * L r^(1/2), L r^(3/4) for the bucket ratio r, and the double below its upper bound), all in
     * one histogram; the quantile at each value's rank is within the relative accuracy of it, in
     * both modes. (A bucket wider than gamma, or a sub-index off by one in part of a table cell,
     * puts some of these values outside the accuracy.)
     */
    @ParameterizedTest(name = "relativeAccuracy {0}, singleWriter {1}")
    @MethodSource("accuraciesAndModes")
    void everyValueAtABucketBoundReadsBackWithinTheAccuracy(double accuracy, boolean singleWriter) {
        PowerHistogram h = PowerHistogram.builder().relativeAccuracy(accuracy).singleWriter(singleWriter).build();
        OctaveLogMapping mapping = h.mapping();
        List<Double> values = new ArrayList<>();
        for (long i = mapping.index(1e-3); i <= mapping.index(1e6); i++) {
            double lower = mapping.upperBound(i - 1);
            double upper = mapping.upperBound(i);
            double r = upper / lower;
            for (double v : new double[] {lower, Math.nextUp(lower), lower * Math.pow(r, 0.25),
                    lower * Math.sqrt(r), lower * Math.pow(r, 0.75), Math.nextDown(upper)}) {
                assertEquals(i, mapping.index(v), v + " is in bucket " + i);
                values.add(v);
                h.record(v);
            }
        }
        PowerHistogram.Snapshot s = h.snapshot();
        int n = values.size();
        assertEquals(n, s.count());
        for (int rank = 0; rank < n; rank++) {
            double exact = values.get(rank); // recorded in ascending order
            double estimate = s.quantile(Math.min(1.0, (rank + 0.5) / (n - 1)));
            double error = Math.abs(estimate - exact) / exact;
            assertTrue(error <= accuracy * (1 + 1e-12), "rank " + rank + ": exact " + exact
                    + ", estimate " + estimate + ", relative error " + error + " > " + accuracy);
        }
    }

    static Stream<Arguments> accuraciesAndModes() {
        List<Arguments> out = new ArrayList<>();
        for (double accuracy : new double[] {0.001, 0.01, 0.05, 0.2}) {
            out.add(Arguments.of(accuracy, false));
            out.add(Arguments.of(accuracy, true));
        }
        return out.stream();
    }

    /**
     * The seed's per-window read: after a window of slow (90 ms) latencies, the next window's p99
     * reflects only its own fast (10 ms) samples, where a cumulative read would still say 90 ms.
     */
    @Test
    void perWindowP99ForgetsThePreviousWindow() {
        PowerHistogram window = PowerHistogram.builder().build();
        PowerHistogram cumulative = PowerHistogram.builder().build();
        for (int i = 0; i < 100; i++) {
            window.record(90.0);
            cumulative.record(90.0);
        }
        assertEquals(90.0, window.snapshotAndReset().quantile(0.99), 90.0 * 0.01);
        for (int i = 0; i < 100; i++) {
            window.record(10.0);
            cumulative.record(10.0);
        }
        assertEquals(10.0, window.snapshotAndReset().quantile(0.99), 10.0 * 0.01);
        assertEquals(90.0, cumulative.quantile(0.99), 90.0 * 0.01, "the lifetime p99 is still the old traffic");
    }

    /** A smaller relative accuracy means more buckets (the seed's option description). */
    @Test
    void smallerAccuracyMeansMoreBuckets() {
        int fine = PowerHistogram.builder().relativeAccuracy(0.001).build().slotCount();
        int medium = PowerHistogram.builder().relativeAccuracy(0.01).build().slotCount();
        int coarse = PowerHistogram.builder().relativeAccuracy(0.05).build().slotCount();
        assertTrue(fine > medium && medium > coarse, fine + " > " + medium + " > " + coarse);
    }

    // ------------------------------------------------------------------ empty

    /** An empty histogram answers NaN for quantiles, min, max and mean, 0 for count and sum. */
    @Test
    void emptyHistogramAnswersNaN() {
        PowerHistogram h = PowerHistogram.builder().build();
        assertTrue(Double.isNaN(h.quantile(0.99)));
        assertTrue(Double.isNaN(h.min()));
        assertTrue(Double.isNaN(h.max()));
        assertTrue(Double.isNaN(h.mean()));
        assertEquals(0L, h.count());
        assertEquals(0.0, h.sum(), 0.0);
    }

    /** An empty snapshot answers as an empty histogram does. */
    @Test
    void emptySnapshotAnswersNaN() {
        PowerHistogram.Snapshot s = PowerHistogram.builder().build().snapshot();
        assertTrue(Double.isNaN(s.quantile(0.5)));
        assertTrue(Double.isNaN(s.min()));
        assertTrue(Double.isNaN(s.max()));
        assertTrue(Double.isNaN(s.mean()));
        assertEquals(0L, s.count());
        assertEquals(0.0, s.sum(), 0.0);
    }

    // ------------------------------------------------------------------ recording and units

    /** count, min, max, sum and mean are exact. */
    @Test
    void summaryFiguresAreExact() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.record(1.5);
        h.record(2.5);
        h.record(8.0);
        assertEquals(3L, h.count());
        assertEquals(1.5, h.min(), 0.0);
        assertEquals(8.0, h.max(), 0.0);
        assertEquals(12.0, h.sum(), 0.0);
        assertEquals(4.0, h.mean(), 0.0);
    }

    /** recordNanos converts nanoseconds to milliseconds. */
    @Test
    void recordNanosIsInMilliseconds() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.recordNanos(1_500_000L);
        assertEquals(1.5, h.max(), 0.0);
    }

    /** record(Duration) converts to milliseconds, sub-millisecond part included. */
    @Test
    void recordDurationIsInMilliseconds() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.record(Duration.ofSeconds(2, 250_000_000));
        h.record(Duration.ofNanos(500_000));
        assertEquals(2250.0, h.max(), 0.0);
        assertEquals(0.5, h.min(), 0.0);
    }

    /** Zero is a valid value, read back exactly; -0.0 counts as zero. */
    @Test
    void zeroIsAValidValue() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.record(0.0);
        h.record(-0.0);
        h.recordNanos(0);
        h.record(Duration.ZERO);
        assertEquals(4L, h.count());
        assertEquals(0, Double.compare(0.0, h.min()), "min is +0.0");
        assertEquals(0, Double.compare(0.0, h.quantile(1.0)));
    }

    /** Values outside the trackable range are clamped into its end buckets; count, min, max and sum stay exact. */
    @Test
    void valuesOutsideTheTrackableRangeKeepExactSummaries() {
        PowerHistogram h = PowerHistogram.builder()
                .trackableRange(Duration.ofNanos(1000), Duration.ofHours(1)).build();
        h.record(1e-6);           // 1 ns, below 1 µs
        h.record(1e9);            // ~11.6 days, above 1 h
        assertEquals(2L, h.count());
        assertEquals(1e-6, h.min(), 0.0);
        assertEquals(1e9, h.max(), 0.0);
        assertEquals(1e9 + 1e-6, h.sum(), 0.0);
        assertEquals(1e-6, h.quantile(0.0), 0.0, "clamped to the exact min");
        assertEquals(1e9, h.quantile(1.0), 0.0, "clamped to the exact max");
    }

    // ------------------------------------------------------------------ validation

    /** Negative, NaN and infinite values are rejected with a message naming the value, and nothing is recorded. */
    @ParameterizedTest
    @ValueSource(doubles = {-1.0, -Double.MIN_VALUE, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY})
    void invalidMillisAreRejectedAndNothingIsRecorded(double bad) {
        PowerHistogram h = PowerHistogram.builder().build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.record(bad));
        assertTrue(e.getMessage().contains("millis") && e.getMessage().contains(String.valueOf(bad)), e.getMessage());
        assertEquals(0L, h.count());
        assertEquals(0.0, h.sum(), 0.0);
    }

    /** Negative nanoseconds are rejected, and nothing is recorded. */
    @Test
    void negativeNanosAreRejected() {
        PowerHistogram h = PowerHistogram.builder().build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.recordNanos(-1));
        assertEquals("nanos must be >= 0: -1", e.getMessage());
        assertEquals(0L, h.count());
    }

    /** A negative Duration is rejected and a null one throws NullPointerException naming it; nothing is recorded. */
    @Test
    void negativeOrNullDurationIsRejected() {
        PowerHistogram h = PowerHistogram.builder().build();
        assertThrows(IllegalArgumentException.class, () -> h.record(Duration.ofMillis(-1)));
        NullPointerException npe = assertThrows(NullPointerException.class, () -> h.record((Duration) null));
        assertEquals("latency", npe.getMessage());
        assertEquals(0L, h.count());
    }

    /** A quantile outside [0, 1] or NaN is rejected, on the histogram and on a snapshot, even when empty. */
    @ParameterizedTest
    @ValueSource(doubles = {-0.01, 1.01, Double.NaN, Double.POSITIVE_INFINITY})
    void quantileOutsideZeroOneIsRejected(double q) {
        PowerHistogram h = PowerHistogram.builder().build();
        assertThrows(IllegalArgumentException.class, () -> h.quantile(q));
        h.record(1.0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.snapshot().quantile(q));
        assertEquals("q must be in [0, 1]: " + q, e.getMessage());
    }

    /** relativeAccuracy must be in (0, 1); the message names the option and the value. */
    @ParameterizedTest
    @ValueSource(doubles = {0.0, 1.0, -0.01, 1.5, Double.NaN, Double.POSITIVE_INFINITY})
    void relativeAccuracyOutsideZeroOneIsRejected(double bad) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PowerHistogram.builder().relativeAccuracy(bad));
        assertEquals("relativeAccuracy must be in (0, 1): " + bad, e.getMessage());
    }

    /** The default relative accuracy is 0.01. */
    @Test
    void defaultRelativeAccuracyIsOnePercent() {
        assertEquals(0.01, PowerHistogram.builder().build().relativeAccuracy(), 0.0);
    }

    /** The trackable range needs 0 < lowest < highest, and non-null ends. */
    @Test
    void trackableRangeIsValidated() {
        PowerHistogram.Builder b = PowerHistogram.builder();
        assertThrows(IllegalArgumentException.class, () -> b.trackableRange(Duration.ZERO, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> b.trackableRange(Duration.ofNanos(-1), Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> b.trackableRange(Duration.ofSeconds(1), Duration.ofSeconds(1)));
        assertEquals("lowest", assertThrows(NullPointerException.class,
                () -> b.trackableRange(null, Duration.ofSeconds(1))).getMessage());
        assertEquals("highest", assertThrows(NullPointerException.class,
                () -> b.trackableRange(Duration.ofSeconds(1), null)).getMessage());
    }

    /** An accuracy too fine for the range (more than 2^22 buckets) is refused at build(), naming relativeAccuracy. */
    @Test
    void tooManyBucketsIsRefusedAtBuild() {
        PowerHistogram.Builder b = PowerHistogram.builder().relativeAccuracy(7e-6)
                .trackableRange(Duration.ofNanos(1), Duration.ofSeconds(Long.MAX_VALUE));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().startsWith("relativeAccuracy 7.0E-6 over the trackable range"), e.getMessage());
        PowerHistogram.builder().relativeAccuracy(7e-6).trackableRange(Duration.ofMillis(1), Duration.ofSeconds(1)).build();
    }

    /**
     * An accuracy that needs more than 2^16 buckets per octave (below about 5.3e-6; its index
     * table would pass 8 MiB) is refused at build() even over a narrow range, naming
     * relativeAccuracy.
     */
    @Test
    void tooManyBucketsPerOctaveIsRefusedAtBuild() {
        PowerHistogram.Builder b = PowerHistogram.builder().relativeAccuracy(1e-7)
                .trackableRange(Duration.ofMillis(1), Duration.ofMillis(1).plusNanos(1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().startsWith("relativeAccuracy 1.0E-7"), e.getMessage());
    }

    /** A very fine accuracy over a very narrow range (few buckets in all, but far too many per octave) is refused at build(). */
    @Test
    void bucketIndexOverflowIsRefusedAtBuild() {
        PowerHistogram.Builder b = PowerHistogram.builder().relativeAccuracy(1e-13)
                .trackableRange(Duration.ofHours(1), Duration.ofHours(1).plusNanos(1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().startsWith("relativeAccuracy 1.0E-13"), e.getMessage());
    }

    // ------------------------------------------------------------------ snapshots, reset, merge

    /** A snapshot does not change when the histogram records more, and snapshot() leaves the histogram unchanged. */
    @Test
    void snapshotIsImmutableAndLeavesTheHistogramUnchanged() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.record(5.0);
        h.record(7.0);
        PowerHistogram.Snapshot s = h.snapshot();
        String before = s.toJson();
        h.record(1000.0);
        assertEquals(2L, s.count());
        assertEquals(7.0, s.max(), 0.0);
        assertEquals(before, s.toJson());
        assertEquals(3L, h.count(), "snapshot() did not reset the histogram");
        assertEquals(1012.0, h.sum(), 0.0);
        assertEquals(5.0, h.min(), 0.0);
    }

    /** snapshotAndReset returns the interval that ended and the next interval starts empty. */
    @Test
    void snapshotAndResetStartsANewInterval() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.record(100.0);
        h.record(200.0);
        PowerHistogram.Snapshot first = h.snapshotAndReset();
        assertEquals(2L, first.count());
        assertEquals(0L, h.count());
        assertTrue(Double.isNaN(h.quantile(0.99)), "the new window is empty");
        h.record(3.0);
        PowerHistogram.Snapshot second = h.snapshotAndReset();
        assertEquals(1L, second.count());
        assertEquals(3.0, second.max(), 0.0, "the old interval's 200 ms is not in the new one");
        assertEquals(2L, first.count(), "the first snapshot was not touched by the second swap");
    }

    /** reset() empties the histogram. */
    @Test
    void resetEmptiesTheHistogram() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.record(1.0);
        h.snapshot(); // leaves stale data in the inactive interval, which reset must not resurrect
        h.reset();
        assertEquals(0L, h.count());
        assertTrue(Double.isNaN(h.max()));
        h.record(2.0);
        assertEquals(1L, h.count());
        assertEquals(2.0, h.sum(), 0.0);
    }

    private static PowerHistogram filled(double accuracy, int from, int to) {
        PowerHistogram h = PowerHistogram.builder().relativeAccuracy(accuracy).build();
        for (int v = from; v <= to; v++) {
            h.record(v);
        }
        return h;
    }

    /** Merging two snapshots gives the quantiles of the union, and changes neither. */
    @Test
    void snapshotMergeIsTheUnion() {
        PowerHistogram.Snapshot a = filled(0.01, 1, 100).snapshot();
        PowerHistogram.Snapshot b = filled(0.01, 101, 200).snapshot();
        PowerHistogram.Snapshot m = a.merge(b);
        assertEquals(200L, m.count());
        assertEquals(1.0, m.min(), 0.0);
        assertEquals(200.0, m.max(), 0.0);
        assertEquals(20100.0, m.sum(), 0.0);
        assertEquals(100.0, m.quantile(0.5), 100.0 * 0.01, "rank floor(0.5 * 199) = 99 is the value 100");
        assertEquals(198.0, m.quantile(0.99), 198.0 * 0.01, "rank floor(0.99 * 199) = 197 is the value 198");
        assertEquals(100L, a.count());
        assertEquals(100L, b.count());
    }

    /** Merging with an empty snapshot changes nothing. */
    @Test
    void mergeWithEmptyIsIdentity() {
        PowerHistogram.Snapshot a = filled(0.01, 1, 10).snapshot();
        PowerHistogram.Snapshot empty = PowerHistogram.builder().build().snapshot();
        assertEquals(a.toJson(), a.merge(empty).toJson());
        assertEquals(a.toJson(), empty.merge(a).toJson());
    }

    /** merge(snapshot) adds another histogram's samples to the current interval. */
    @Test
    void histogramMergeAddsTheSamples() {
        PowerHistogram h = filled(0.01, 1, 100);
        h.merge(filled(0.01, 101, 200).snapshot());
        assertEquals(200L, h.count());
        assertEquals(20100.0, h.sum(), 0.0);
        assertEquals(1.0, h.min(), 0.0);
        assertEquals(200.0, h.max(), 0.0);
        assertEquals(100.0, h.quantile(0.5), 100.0 * 0.01);
    }

    /** Merging snapshots of different relative accuracy is refused, and nothing is merged. */
    @Test
    void mergeOfDifferentAccuracyIsRefused() {
        PowerHistogram h = filled(0.01, 1, 10);
        PowerHistogram.Snapshot other = filled(0.02, 1, 10).snapshot();
        assertThrows(IllegalArgumentException.class, () -> h.merge(other));
        assertThrows(IllegalArgumentException.class, () -> h.snapshot().merge(other));
        assertEquals(10L, h.count());
        assertEquals("other", assertThrows(NullPointerException.class, () -> h.merge(null)).getMessage());
    }

    // ------------------------------------------------------------------ JSON

    /** toJson has the documented shape: summaries, four quantiles, zero count and [index, count] bins. */
    @Test
    void toJsonHasTheDocumentedShape() {
        PowerHistogram h = PowerHistogram.builder().build();
        h.record(0.0);
        h.record(2.0);
        h.record(3.0);
        h.record(12.0);
        PowerHistogram.Snapshot s = h.snapshot();
        String expected = "{\"relativeAccuracy\":0.01,\"count\":4,\"min\":0.0,\"max\":12.0,\"sum\":17.0,"
                + "\"mean\":4.25,\"quantiles\":{\"0.5\":" + s.quantile(0.5) + ",\"0.9\":" + s.quantile(0.9)
                + ",\"0.99\":" + s.quantile(0.99) + ",\"0.999\":" + s.quantile(0.999)
                + "},\"zeroCount\":1,\"bins\":[[37,1],[58,1],[130,1]]}";
        assertEquals(expected, s.toJson());
        assertEquals(expected, h.toJson());
        assertEquals(2.0, s.quantile(0.5), 2.0 * 0.01, "rank floor(0.5 * 3) = 1 is the value 2");
        assertEquals(3.0, s.quantile(0.999), 3.0 * 0.01, "rank floor(0.999 * 3) = 2 is the value 3");
    }

    /**
     * Each bin index is the documented e n + j + 1 of the value (x = 2^e (1 + m)), with n = 36
     * buckets per octave at 1%, k = 10 cell bits, and j the largest bucket whose first cell
     * c_j = ceil(2^k (2^(j/n) - 1)) is at most floor(2^k m).
     */
    @Test
    void binIndexIsTheDocumentedIndex() {
        int n = 36;
        int k = 10;
        for (double v : new double[] {2.0, 3.0, 12.0, 0.37, 1234.5, 1e-5, 5e6}) {
            PowerHistogram h = PowerHistogram.builder().build();
            h.record(v);
            int e = Math.getExponent(v);
            double m = Math.scalb(v, -e) - 1.0;
            long cell = (long) Math.floor(Math.scalb(m, k));
            int j = n - 1;
            while (Math.ceil(Math.scalb(1.0, k) * (Math.pow(2.0, (double) j / n) - 1.0)) > cell) {
                j--;
            }
            long index = (long) e * n + j + 1;
            assertTrue(h.toJson().endsWith("\"bins\":[[" + index + ",1]]}"), v + ": " + h.toJson());
        }
    }

    /** An empty histogram's JSON writes its NaN figures as null. */
    @Test
    void emptyToJsonUsesNull() {
        assertEquals("{\"relativeAccuracy\":0.05,\"count\":0,\"min\":null,\"max\":null,\"sum\":0.0,\"mean\":null,"
                + "\"quantiles\":{\"0.5\":null,\"0.9\":null,\"0.99\":null,\"0.999\":null},\"zeroCount\":0,\"bins\":[]}",
                PowerHistogram.builder().relativeAccuracy(0.05).build().toJson());
    }

    // ------------------------------------------------------------------ memory

    /** State for values from 1 µs to 1 h at 1% accuracy fits in 32 KiB (computed from the arrays). */
    @Test
    void oneMicrosecondToOneHourAtOnePercentFitsIn32KiB() {
        PowerHistogram h = PowerHistogram.builder().relativeAccuracy(0.01)
                .trackableRange(Duration.ofNanos(1000), Duration.ofHours(1)).build();
        // 36 buckets per octave at 1% (the exact logarithm would need 34.66).
        double buckets = 36 * Math.log(3_600_000.0 / 0.001) / Math.log(2);
        assertTrue(Math.abs(h.slotCount() - (buckets + 1)) <= 2, "slots " + h.slotCount() + " vs " + (buckets + 1));
        assertTrue(h.footprintBytes() <= 32 * 1024, h.footprintBytes() + " bytes");
    }

    /** The default range (1 ns to 10^7 ms) at 1% also fits in 32 KiB. */
    @Test
    void defaultRangeAtOnePercentFitsIn32KiB() {
        PowerHistogram h = PowerHistogram.builder().build();
        assertTrue(h.footprintBytes() <= 32 * 1024, h.footprintBytes() + " bytes");
    }

    /**
     * A weighted record is as many single records, in both modes: the same count, sum, extremes
     * and quantiles; a count below 1 or a negative value is refused by name and records nothing.
     */
    @ParameterizedTest(name = "singleWriter {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void aWeightedRecordIsThatManyRecords(boolean singleWriter) {
        PowerHistogram weighted = PowerHistogram.builder().singleWriter(singleWriter).build();
        PowerHistogram single = PowerHistogram.builder().singleWriter(singleWriter).build();
        long[] values = {0L, 1_500L, 2_000_000L, 7_300_000L, 950_000_000L};
        long[] counts = {3L, 1L, 64L, 17L, 2L};
        for (int i = 0; i < values.length; i++) {
            weighted.recordNanos(values[i], counts[i]);
            for (long k = 0; k < counts[i]; k++) {
                single.recordNanos(values[i]);
            }
        }
        PowerHistogram.Snapshot w = weighted.snapshot();
        PowerHistogram.Snapshot s = single.snapshot();
        assertEquals(87, w.count());
        assertEquals(s.count(), w.count());
        assertEquals(s.sum(), w.sum(), s.sum() * 1e-12);
        assertEquals(s.min(), w.min());
        assertEquals(s.max(), w.max());
        for (double q : new double[] {0.0, 0.03, 0.04, 0.5, 0.8, 0.99, 1.0}) {
            assertEquals(s.quantile(q), w.quantile(q), "q " + q);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> weighted.recordNanos(5L, 0L));
        assertTrue(e.getMessage().contains("count"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> weighted.recordNanos(-1L, 4L));
        assertTrue(e.getMessage().contains("nanos"), e.getMessage());
        assertEquals(87, weighted.snapshot().count(), "nothing recorded by a refused call");
    }
}
