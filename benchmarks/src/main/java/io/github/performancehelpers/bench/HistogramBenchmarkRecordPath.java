package io.github.performancehelpers.bench;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import io.github.performancehelpers.loop.PowerHistogram;

/**
 * Where the single-writer {@link PowerHistogram#record(double)} spends its time against
 * HdrHistogram's {@code Histogram.recordValue}: the library's record, and stand-alone copies of
 * the single-writer record path (1% accuracy, 1 ns to 10<sup>7</sup> ms) that differ in one part
 * each, so that the rows compare index against index and body against body:
 * <ul>
 *   <li>the bucket index: the previous cubic in the mantissa ({@code floor((35e + 50m - 21m^2 +
 *       6m^3) / (50 ln gamma))}, a double computation), exact {@code 2^(1/n)} buckets found by a
 *       64-cell table plus one branch-free comparison, and the library's index (buckets made of
 *       whole cells of a 1,024-cell table: one load, no comparison);</li>
 *   <li>the record's body on the library's index: the previous body (extremes compared as
 *       doubles, the sum striped over 8 slots by bucket), and the library's (extremes compared as
 *       raw bits, one sum);</li>
 *   <li>the floor: the library's index and a plain increment, nothing else.</li>
 * </ul>
 * The copies use plain stores where the library uses release stores (free on x86). Average
 * time per operation, in nanoseconds; compare rows of the same run (see
 * {@code benchmarks/histogram.md}).
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="HistogramBenchmarkRecordPath -f 3 -wi 3 -w 1 -i 5 -r 1"}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Threads(1)
public class HistogramBenchmarkRecordPath {

    private static final int MASK = 4095;
    private static final double ACCURACY = 0.01;
    private static final double LOWEST = 1e-6;
    private static final double HIGHEST = 1e7;

    /** Lognormal latencies (median 20 ms), in milliseconds and in nanoseconds. */
    final double[] millis = new double[MASK + 1];
    final long[] nanos = new long[MASK + 1];
    int i;

    PowerHistogram power;
    Histogram hdr;
    final CubicIndexOldBody cubicOldBody = new CubicIndexOldBody();
    final CompareIndexNewBody compareNewBody = new CompareIndexNewBody();
    final CellIndexOldBody cellOldBody = new CellIndexOldBody();
    final CellIndexNewBody cellNewBody = new CellIndexNewBody();
    final CellIndexIncrementOnly cellIncrementOnly = new CellIndexIncrementOnly();

    /** Builds the histograms and the sample values (the same as HistogramBenchmark's). */
    @Setup
    public void setup() {
        Random random = new Random(42);
        for (int j = 0; j <= MASK; j++) {
            millis[j] = Math.exp(Math.log(20) + random.nextGaussian());
            nanos[j] = Math.max(1, Math.round(millis[j] * 1e6));
        }
        power = PowerHistogram.builder().relativeAccuracy(ACCURACY).singleWriter(true).build();
        hdr = new Histogram(1, 3_600_000_000_000L, 2);
    }

    /** HdrHistogram Histogram.recordValue (single-threaded), the peer. */
    @Benchmark
    public void hdrHistogram() {
        hdr.recordValue(nanos[i++ & MASK]);
    }

    /** The library: PowerHistogram.record in single-writer mode. */
    @Benchmark
    public void powerSingleWriter() {
        power.record(millis[i++ & MASK]);
    }

    /** The previous record: cubic index, extremes as doubles, striped sum. */
    @Benchmark
    public void cubicIndexOldBody() {
        cubicOldBody.record(millis[i++ & MASK]);
    }

    /** Exact 2^(1/n) buckets (64-cell table and a comparison), the library's body. */
    @Benchmark
    public void compareIndexNewBody() {
        compareNewBody.record(millis[i++ & MASK]);
    }

    /** The library's index, the previous body (extremes as doubles, striped sum). */
    @Benchmark
    public void cellIndexOldBody() {
        cellOldBody.record(millis[i++ & MASK]);
    }

    /** A copy of the library's record: cell index, extremes as bits, one sum. */
    @Benchmark
    public void cellIndexNewBody() {
        cellNewBody.record(millis[i++ & MASK]);
    }

    /** The floor: the library's index and the increment, no extremes, no sum. */
    @Benchmark
    public void cellIndexIncrementOnly() {
        cellIncrementOnly.record(millis[i++ & MASK]);
    }

    // ------------------------------------------------------------------ the copies

    /** The library's cell table at 1%: 36 buckets per octave over 2^10 cells. */
    static final class CellTable {
        static final int CELL_BITS = 10;
        static final int CELL_SHIFT = 52 - CELL_BITS;
        final int[] cells = new int[1 << CELL_BITS];
        final long perOctave;

        CellTable() {
            double a = ACCURACY;
            int n = (int) Math.ceil(Math.log(2) / (Math.log1p(a) - Math.log1p(-a)));
            long[] first;
            while ((first = firstCells(n)) == null) {
                n++;
            }
            perOctave = n;
            for (int j = 0; j < n; j++) {
                Arrays.fill(cells, (int) first[j], (int) first[j + 1], j);
            }
        }

        private static long[] firstCells(int n) {
            long k = 1L << CELL_BITS;
            long[] first = new long[n + 1];
            for (int j = 1; j < n; j++) {
                first[j] = (long) Math.ceil(k * (Math.pow(2.0, (double) j / n) - 1.0));
            }
            first[n] = k;
            for (int j = 0; j < n; j++) {
                if ((k + first[j + 1]) * (1 - ACCURACY) > (k + first[j]) * (1 + ACCURACY)) {
                    return null;
                }
            }
            return first;
        }

        long index(double x) {
            long bits = Double.doubleToRawLongBits(x);
            return ((bits >>> 52) - 1023) * perOctave + cells[(int) (bits >>> CELL_SHIFT) & (cells.length - 1)] + 1;
        }

        int slotCount() {
            return (int) (index(HIGHEST) - index(LOWEST) + 2);
        }
    }

    static final CellTable CELLS = new CellTable();

    /** The state every copy records into: slots, sums, extremes (as doubles and as bits). */
    abstract static class Counters {
        final long[] slots;
        final double[] sums = new double[8];
        double sum;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        long minBits = Double.doubleToRawLongBits(Double.POSITIVE_INFINITY);
        long maxBits = Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY);

        Counters(int slotCount) {
            slots = new long[slotCount];
        }

        /** Out of range or not positive: the slow path (here only zero and clamping). */
        static int unusual(double x, int slotCount) {
            if (!(x >= 0.0)) {
                throw new IllegalArgumentException("millis must be finite and >= 0: " + x);
            }
            return x == 0.0 ? 0 : (x < 1.0 ? 1 : slotCount - 1);
        }
    }

    /** The library's index (cell table), with the previous body. */
    static final class CellIndexOldBody extends Counters {
        final int[] cells = CELLS.cells;
        final long perOctave = CELLS.perOctave;
        final long slotBase = 2 - CELLS.index(LOWEST) - 1023 * perOctave;
        final long slotLimit = CELLS.slotCount() - 1;

        CellIndexOldBody() {
            super(CELLS.slotCount());
        }

        void record(double x) {
            long bits = Double.doubleToRawLongBits(x);
            int[] table = cells;
            long s = (bits >>> 52) * perOctave + table[(int) (bits >>> CellTable.CELL_SHIFT) & (table.length - 1)] + slotBase;
            int slot = Long.compareUnsigned(s - 1, slotLimit) < 0 ? (int) s : unusual(x, slots.length);
            if (x < min) {
                min = x;
            }
            if (x > max) {
                max = x;
            }
            slots[slot]++;
            int k = slot & 7;
            sums[k] += x;
        }
    }

    /** A copy of the library's record. */
    static final class CellIndexNewBody extends Counters {
        final int[] cells = CELLS.cells;
        final long perOctave = CELLS.perOctave;
        final long slotBase = 2 - CELLS.index(LOWEST) - 1023 * perOctave;
        final long slotLimit = CELLS.slotCount() - 1;

        CellIndexNewBody() {
            super(CELLS.slotCount());
        }

        void record(double x) {
            long bits = Double.doubleToRawLongBits(x);
            int[] table = cells;
            long s = (bits >>> 52) * perOctave + table[(int) (bits >>> CellTable.CELL_SHIFT) & (table.length - 1)] + slotBase;
            int slot = Long.compareUnsigned(s - 1, slotLimit) < 0 ? (int) s : unusual(x, slots.length);
            if (bits < minBits) {
                minBits = bits;
            }
            if (bits > maxBits) {
                maxBits = bits;
            }
            slots[slot]++;
            sum += x;
        }
    }

    /** The library's index and a plain increment only. */
    static final class CellIndexIncrementOnly extends Counters {
        final int[] cells = CELLS.cells;
        final long perOctave = CELLS.perOctave;
        final long slotBase = 2 - CELLS.index(LOWEST) - 1023 * perOctave;
        final long slotLimit = CELLS.slotCount() - 1;

        CellIndexIncrementOnly() {
            super(CELLS.slotCount());
        }

        void record(double x) {
            long bits = Double.doubleToRawLongBits(x);
            int[] table = cells;
            long s = (bits >>> 52) * perOctave + table[(int) (bits >>> CellTable.CELL_SHIFT) & (table.length - 1)] + slotBase;
            int slot = Long.compareUnsigned(s - 1, slotLimit) < 0 ? (int) s : unusual(x, slots.length);
            slots[slot]++;
        }
    }

    /**
     * Exact buckets [2^((i-1)/n), 2^(i/n)), n = 35, over a 64-cell table with at most one bound
     * per cell: the cell gives the bucket at its start and where the next one starts, and a
     * branch-free comparison of the remaining mantissa bits adds one. The library's body.
     */
    static final class CompareIndexNewBody extends Counters {
        static final int N = 35;
        static final int SHIFT = 52 - 6;
        static final long LOW_MASK = (1L << SHIFT) - 1;
        final long[] cells = new long[64];
        final long slotBase;
        final long slotLimit;

        CompareIndexNewBody() {
            super((int) (exactIndex(HIGHEST) - exactIndex(LOWEST) + 2));
            long[] bound = new long[N + 2];
            for (int j = 1; j < N; j++) {
                bound[j] = Double.doubleToRawLongBits(Math.pow(2.0, (double) j / N)) & ((1L << 52) - 1);
            }
            bound[N] = 1L << 52;
            bound[N + 1] = 1L << 52;
            int j = 0;
            for (int c = 0; c < 64; c++) {
                long start = (long) c << SHIFT;
                long end = start + (1L << SHIFT);
                while (bound[j + 1] <= start) {
                    j++;
                }
                cells[c] = ((long) j << SHIFT) | (Math.min(bound[j + 1], end) - start - 1);
            }
            long minIndex = exactIndex(LOWEST);
            slotBase = 2 - minIndex - 1023L * N;
            slotLimit = exactIndex(HIGHEST) - minIndex + 1;
        }

        private static long exactIndex(double x) {
            return (long) Math.floor(N * Math.log(x) / Math.log(2)) + 1;
        }

        void record(double x) {
            long bits = Double.doubleToRawLongBits(x);
            long[] table = cells;
            long t = table[(int) (bits >>> SHIFT) & (table.length - 1)];
            long s = (bits >>> 52) * N + (t >>> SHIFT) + (((t & LOW_MASK) - (bits & LOW_MASK)) >>> 63) + slotBase;
            int slot = Long.compareUnsigned(s - 1, slotLimit) < 0 ? (int) s : unusual(x, slots.length);
            if (bits < minBits) {
                minBits = bits;
            }
            if (bits > maxBits) {
                maxBits = bits;
            }
            slots[slot]++;
            sum += x;
        }
    }

    /** The previous record: the cubic index (a double computation), then the previous body. */
    static final class CubicIndexOldBody extends Counters {
        static final long MANTISSA_BITS = 0x000f_ffff_ffff_ffffL;
        static final long ONE_BITS = Double.doubleToRawLongBits(1.0);
        static final double MULTIPLIER = 1.0 / (50.0 * (Math.log1p(ACCURACY) - Math.log1p(-ACCURACY)));
        static final double LOWEST_INDEX = Math.floor(scaledLog(LOWEST, MULTIPLIER)) + 1;
        final double multiplier = MULTIPLIER;
        final double slotOffset = 2.0 - LOWEST_INDEX;
        final int slotCount = slots.length;

        CubicIndexOldBody() {
            super((int) (Math.floor(scaledLog(HIGHEST, MULTIPLIER)) + 1 - LOWEST_INDEX + 2));
        }

        private static double scaledLog(double x, double multiplier) {
            long bits = Double.doubleToRawLongBits(x);
            int e = (int) (bits >>> 52) - 1023;
            double m = Double.longBitsToDouble((bits & MANTISSA_BITS) | ONE_BITS) - 1.0;
            return ((35 * e + 50.0 * m) + (6.0 * m - 21.0) * (m * m)) * multiplier;
        }

        void record(double x) {
            if (!(Double.isFinite(x) && x >= 0)) {
                throw new IllegalArgumentException("millis must be finite and >= 0: " + x);
            }
            int slot = 0;
            if (x != 0.0) {
                int z = (int) (scaledLog(x, multiplier) + slotOffset);
                slot = z < 1 ? 1 : Math.min(z, slotCount - 1);
            }
            if (x < min) {
                min = x;
            }
            if (x > max) {
                max = x;
            }
            slots[slot]++;
            int k = slot & 7;
            sums[k] += x;
        }
    }
}
