package io.github.performancehelpers.loop;

import java.util.Arrays;

/**
 * The bucket index of {@link PowerHistogram}: logarithmic buckets, a whole number {@code n} of
 * them per octave, found from the bits of the double with one table lookup (no floating-point
 * arithmetic, no comparison), as HdrHistogram finds its sub-buckets.
 *
 * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number of
 * threads.
 *
 * <h2>The buckets</h2>
 * A positive double is {@code x = 2^e * (1 + m)}: {@code e} is its biased exponent field minus
 * 1023 and the mantissa's 52 bits are {@code m * 2^52}. Each octave {@code [2^e, 2^(e+1))} is cut
 * into {@code 2^k} equal <em>cells</em> by the top {@code k} bits of the mantissa,
 * {@code c = floor(2^k m)}, and its {@code n} buckets are runs of whole cells: bucket {@code j}
 * of the octave ({@code 0 <= j < n}) holds the cells {@code c_j <= c < c_(j+1)}, with
 * <pre>{@code c_j = ceil(2^k * (2^(j/n) - 1))}</pre>
 * ({@code c_0 = 0}, {@code c_n = 2^k}): the bounds of the exact logarithmic buckets
 * {@code 2^(j/n)}, each rounded up to a cell boundary. Bucket {@code i = e*n + j + 1} is therefore
 * {@code [2^e (1 + c_j / 2^k), 2^e (1 + c_(j+1) / 2^k))}. The index is one load from a table of
 * {@code 2^k} ints (the {@code j} of each cell) plus {@code e * n}.
 *
 * <h2>Why the accuracy still holds exactly</h2>
 * With {@code gamma = (1 + a) / (1 - a)} for the relative accuracy {@code a}, {@code k} is the
 * smallest with {@code 2^k >= 16 n_0 / ln 2} for {@code n_0 = ceil(ln 2 / ln gamma)} (cells about
 * 1/20 of a bucket), and {@code n} the smallest number {@code >= n_0} for which every bucket's
 * bounds {@code L < U} satisfy {@code U / L <= gamma}, checked bucket by bucket when the table is
 * built (in exact integer terms: {@code (2^k + c_(j+1)) (1 - a) <= (2^k + c_j) (1 + a)}, up to the
 * rounding of two products of doubles). Rounding the bounds to cells costs a few buckets per
 * octave more than the exact logarithm's {@code ln 2 / ln gamma}: 36 instead of 34.66 at
 * {@code a = 0.01} (4% more; 1,024 cells), 365 instead of 346.6 at {@code a = 0.001} (5%; 8,192
 * cells). The representative {@code 2LU / (L + U)} of a bucket is then within relative distance
 * {@code (U - L) / (U + L) <= a} of each of its values; the bounds are sums of powers of two,
 * exact in double.
 */
final class OctaveLogMapping {

    /**
     * The most buckets per octave ({@code n_0}; relative accuracy about {@code 5.3e-6}): it keeps
     * the cell table at most 2<sup>21</sup> ints (8 MiB).
     */
    static final int MAX_BUCKETS_PER_OCTAVE = 1 << 16;

    private static final int MANTISSA_BITS = 52;
    private static final int EXPONENT_BIAS = 1023;

    private final double relativeAccuracy;
    private final double gamma;
    /** {@code n}: buckets per octave. */
    private final int bucketsPerOctave;
    /** {@code k}: the number of mantissa bits that pick a cell. */
    private final int cellBits;
    /** The first cell of each bucket of an octave: {@code c_0 = 0 < c_1 < ... < c_n = 2^k}. */
    private final int[] firstCell;
    /** {@code 52 - k}: a value's cell is {@code (bits >>> cellShift) & (cells.length - 1)}. */
    private final int cellShift;
    /** Per cell {@code c}, the bucket {@code j} of the octave that holds it. */
    private final int[] cells;

    OctaveLogMapping(double relativeAccuracy) {
        double perOctave = bucketsPerOctave(relativeAccuracy);
        if (!(perOctave <= MAX_BUCKETS_PER_OCTAVE)) {
            throw new IllegalArgumentException("relativeAccuracy " + relativeAccuracy + " needs "
                    + (long) perOctave + " buckets per octave, more than " + MAX_BUCKETS_PER_OCTAVE);
        }
        this.relativeAccuracy = relativeAccuracy;
        this.gamma = (1.0 + relativeAccuracy) / (1.0 - relativeAccuracy);
        int n0 = (int) perOctave;
        int k = 64 - Long.numberOfLeadingZeros((long) Math.ceil(16 * n0 / Math.log(2.0)) - 1);
        this.cellBits = k;
        this.cellShift = MANTISSA_BITS - k;
        int n = n0;
        int[] first;
        while ((first = firstCells(n, k, relativeAccuracy)) == null) {
            n++;
        }
        this.bucketsPerOctave = n;
        this.firstCell = first;
        this.cells = new int[1 << k];
        for (int j = 0; j < n; j++) {
            Arrays.fill(cells, first[j], first[j + 1], j);
        }
    }

    /**
     * The number {@code n_0 = ceil(ln 2 / ln gamma)} of exact logarithmic buckets per octave for a
     * relative accuracy, as a double so that a caller can check it before building the table.
     */
    static double bucketsPerOctave(double relativeAccuracy) {
        // ln(gamma) = log1p(a) - log1p(-a): exact to the last bit even for tiny a.
        double lnGamma = Math.log1p(relativeAccuracy) - Math.log1p(-relativeAccuracy);
        return Math.max(1.0, Math.ceil(Math.log(2.0) / lnGamma));
    }

    /**
     * The first cells {@code c_0 .. c_n} of {@code n} buckets per octave over {@code 2^k} cells,
     * or null if a bucket would span more than a factor gamma or hold no cell.
     */
    private static int[] firstCells(int n, int k, double a) {
        long cellsPerOctave = 1L << k;
        int[] first = new int[n + 1];
        for (int j = 1; j < n; j++) {
            first[j] = (int) Math.ceil(cellsPerOctave * (Math.pow(2.0, (double) j / n) - 1.0));
        }
        first[n] = (int) cellsPerOctave;
        for (int j = 0; j < n; j++) {
            double lower = cellsPerOctave + first[j];
            double upper = cellsPerOctave + first[j + 1];
            if (!(first[j] < first[j + 1]) || upper * (1.0 - a) > lower * (1.0 + a)) {
                return null;
            }
        }
        return first;
    }

    double relativeAccuracy() {
        return relativeAccuracy;
    }

    double gamma() {
        return gamma;
    }

    /** {@code n}, the number of buckets per octave. */
    int bucketsPerOctave() {
        return bucketsPerOctave;
    }

    /** {@code k}, the number of mantissa bits that pick a cell. */
    int cellBits() {
        return cellBits;
    }

    /** The cell table (shared, not copied: callers must not write it). */
    int[] cells() {
        return cells;
    }

    /** The shift that brings a value's cell bits to the bottom, {@code 52 - k}. */
    int cellShift() {
        return cellShift;
    }

    /**
     * The bucket index {@code e * n + j + 1} of a positive finite {@code x}. Subnormal values get
     * an index below that of every normal value, which is all a caller with a trackable range
     * above them needs.
     *
     * @param x a positive finite value
     * @return its bucket index
     */
    long index(double x) {
        long bits = Double.doubleToRawLongBits(x);
        long e = (bits >>> MANTISSA_BITS) - EXPONENT_BIAS; // x > 0: the sign bit is 0
        int[] table = cells;
        return e * bucketsPerOctave + table[(int) (bits >>> cellShift) & (table.length - 1)] + 1;
    }

    /**
     * The upper bound of bucket {@code i}, the lower bound of bucket {@code i + 1}:
     * {@code 2^e (1 + c_j / 2^k)} for {@code i = e * n + j}. Bucket {@code i} holds the values in
     * {@code [upperBound(i - 1), upperBound(i))}.
     *
     * @param i a bucket index
     * @return its upper bound (0 or infinite for indices far outside the double range)
     */
    double upperBound(long i) {
        long e = Math.floorDiv(i, bucketsPerOctave);
        int j = Math.floorMod(i, bucketsPerOctave);
        if (e > 2000) {
            return Double.POSITIVE_INFINITY;
        }
        if (e < -2000) {
            return 0.0;
        }
        return Math.scalb(1.0 + Math.scalb((double) firstCell[j], -cellBits), (int) e);
    }

    /**
     * The value bucket {@code i} is read back as: {@code 2LU / (L + U)} for its bounds
     * {@code [L, U)}, which is within relative distance {@code (U - L) / (U + L) <= a} of every
     * value in the bucket, since {@code U / L <= gamma}.
     *
     * @param i a bucket index
     * @return its representative value
     */
    double representative(long i) {
        double lower = upperBound(i - 1);
        double upper = upperBound(i);
        return 2.0 * lower * (upper / (lower + upper));
    }

    /** Heap bytes of the two tables, for a 64-bit JVM. */
    long tableBytes() {
        return 16L + 4L * cells.length + 16L + 4L * firstCell.length;
    }
}
