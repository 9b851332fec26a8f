package io.github.performancehelpers.loop;

/**
 * The bucket index of {@link PowerHistogram}: a logarithm approximated from the bits of the
 * double, with the bucket width adjusted so that every bucket still spans at most a factor
 * {@code gamma = (1 + a) / (1 - a)}, which is what the relative accuracy {@code a} needs.
 *
 * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number of
 * threads.
 *
 * <h2>The approximation</h2>
 * A positive double is {@code x = 2^e * (1 + m)} with an integer exponent {@code e} and a
 * mantissa {@code m} in {@code [0, 1)}, both read off its IEEE-754 bits with no arithmetic. Its
 * base-2 logarithm is {@code e + log2(1 + m)}; this mapping replaces {@code log2(1 + m)} by the
 * cubic {@code P(m) = (6m^3 - 21m^2 + 50m) / 35}, which is exact at both ends
 * ({@code P(0) = 0}, {@code P(1) = 1}), so {@code f(x) = e + P(m)} is continuous and strictly
 * increasing across octaves. (These are the coefficients DDSketch's cubically interpolated mapping
 * uses; they are the cubic that maximizes the smallest slope below, which is why they were
 * chosen, re-derived here.)
 *
 * <h2>Why the accuracy still holds exactly</h2>
 * As a function of {@code t = log2(x)}, {@code f} has slope
 * {@code s(m) = P'(m) * (1 + m) * ln 2 = (18m^3 - 24m^2 + 8m + 50) / 35 * ln 2}, whose minimum
 * on {@code [0, 1]} is {@code (10/7) ln 2 ~ 0.990} (reached at {@code m = 0} and
 * {@code m = 2/3}; the derivative {@code (54m^2 - 48m + 8) / 35} vanishes at {@code 2/9} and
 * {@code 2/3}) and its maximum {@code (52/35) ln 2}. The bucket index is
 * {@code i = floor(f(x) / w) + 1} with {@code w = (10/7) ln 2 * log2(gamma) = (10/7) ln(gamma)}: a
 * bucket spans {@code w} in {@code f}, hence at most {@code w / ((10/7) ln 2) = log2(gamma)} in
 * {@code t}, i.e. at most a factor {@code gamma} in value. Multiplying through by 35 gives the
 * form computed: {@code i = floor((35e + 50m - 21m^2 + 6m^3) / (50 ln gamma)) + 1}, whose polynomial
 * has small integer coefficients (exact in double). The price is about 1% more buckets than an
 * exact logarithm ({@code 1 / ((10/7) ln 2) ~ 1.0099}).
 *
 * <p>Floating-point rounding of the index computation moves a bucket boundary by a relative
 * amount of the order of 10<sup>-12</sup> at most, far below the accuracy figures.
 */
final class CubicLogMapping {

    private static final long MANTISSA_BITS = 0x000f_ffff_ffff_ffffL;
    private static final long ONE_BITS = Double.doubleToRawLongBits(1.0);

    private final double relativeAccuracy;
    private final double gamma;
    /** {@code 50 ln(gamma)}: one bucket, in units of {@code 35 f(x)}. */
    private final double bucketWidth;
    /** {@code 1 / bucketWidth}. */
    private final double multiplier;

    CubicLogMapping(double relativeAccuracy) {
        this.relativeAccuracy = relativeAccuracy;
        this.gamma = (1.0 + relativeAccuracy) / (1.0 - relativeAccuracy);
        // ln(gamma) = log1p(a) - log1p(-a): exact to the last bit even for tiny a.
        this.bucketWidth = 50.0 * (Math.log1p(relativeAccuracy) - Math.log1p(-relativeAccuracy));
        this.multiplier = 1.0 / bucketWidth;
    }

    double relativeAccuracy() {
        return relativeAccuracy;
    }

    double gamma() {
        return gamma;
    }

    /**
     * The scaled approximate logarithm {@code y = (35e + 50m - 21m^2 + 6m^3) / (50 ln gamma)} of
     * a positive finite {@code x}: bucket {@code i} holds the values with
     * {@code i - 1 <= y < i}. Subnormal values get a {@code y} below that of every normal
     * value, which is all a caller with a trackable range above them needs. Evaluated in
     * Estrin's form (the square of {@code m} alongside the linear term) for a shorter
     * dependency chain than Horner's.
     *
     * @param x a positive finite value
     * @return the scaled approximate logarithm
     */
    double scaledLog(double x) {
        long bits = Double.doubleToRawLongBits(x);
        int e = (int) (bits >>> 52) - 1023; // x > 0: the sign bit is 0
        double m = Double.longBitsToDouble((bits & MANTISSA_BITS) | ONE_BITS) - 1.0;
        // Integer coefficients, so 35e and the value at m -> 1 (35e + 35) are exact: the index
        // stays monotone across octave boundaries to the last bit.
        return ((35 * e + 50.0 * m) + (6.0 * m - 21.0) * (m * m)) * multiplier;
    }

    /**
     * The bucket index of a positive finite {@code x}, as a double (not clamped):
     * {@code floor(scaledLog(x)) + 1}.
     *
     * @param x a positive finite value
     * @return its bucket index
     */
    double index(double x) {
        return Math.floor(scaledLog(x)) + 1.0;
    }

    /**
     * The upper bound of bucket {@code i}: the {@code x} with {@code 35 f(x) = i * 50 ln gamma}.
     * Bucket {@code i} holds the values in {@code [upperBound(i - 1), upperBound(i))}.
     *
     * @param i a bucket index
     * @return its upper bound (may be 0 or infinite for indices far outside the double range)
     */
    double upperBound(long i) {
        double t = i * bucketWidth; // = 35 * f(upper bound)
        double e = Math.floor(t / 35.0);
        double r = t - 35.0 * e;    // = Q(m) = m(50 + m(6m - 21)), in [0, 35)
        if (r < 0.0) {              // rounding of t / 35
            e -= 1.0;
            r += 35.0;
        } else if (r >= 35.0) {
            e += 1.0;
            r -= 35.0;
        }
        // Q is increasing and concave on [0, 1] with Q(m) >= 35m, so Newton from m = r / 35
        // converges monotonically from the first step on.
        double m = r / 35.0;
        for (int k = 0; k < 12; k++) {
            double q = m * (50.0 + m * (6.0 * m - 21.0)) - r;
            double dq = 50.0 + m * (18.0 * m - 42.0);
            double next = m - q / dq;
            if (next == m) {
                break;
            }
            m = next;
        }
        m = Math.min(Math.max(m, 0.0), 1.0);
        if (e > 2000) {
            return Double.POSITIVE_INFINITY;
        }
        if (e < -2000) {
            return 0.0;
        }
        return Math.scalb(1.0 + m, (int) e);
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
}
