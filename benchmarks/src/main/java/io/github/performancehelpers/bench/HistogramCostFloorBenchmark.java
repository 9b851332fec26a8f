package io.github.performancehelpers.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import io.github.performancehelpers.loop.PowerHistogram;

/**
 * The parts a {@code PowerHistogram.record} is made of, measured alone on one thread, to explain
 * {@link HistogramBenchmark}'s figures: the bucket index (one {@code log}, one {@code ceil}), one
 * uncontended atomic increment, the four atomic read-modify-writes of a record (phaser enter,
 * bucket increment, sum CAS, phaser exit), and a plain non-atomic bucket increment (what a
 * single-threaded histogram pays).
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="HistogramCostFloorBenchmark -f 1 -wi 2 -w 1 -i 5 -r 1"}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HistogramCostFloorBenchmark {

    private final double[] millis = new double[4096];
    private final double multiplier = 1 / Math.log(1.01 / 0.99);
    private final double cubicMultiplier = 1 / (50 * Math.log(1.01 / 0.99));
    private double sum;
    private final AtomicLong counter = new AtomicLong();
    private final AtomicLongArray buckets = new AtomicLongArray(2048);
    private final long[] plain = new long[2048];
    private int i;

    /** Lognormal sample values, median about 20 ms. */
    @Setup
    public void setup() {
        Random r = new Random(1);
        for (int j = 0; j < millis.length; j++) {
            millis[j] = Math.exp(3 + r.nextGaussian());
        }
    }

    /** ceil(log(x) / log(gamma)): the bucket index alone. */
    @Benchmark
    public int bucketIndex() {
        return (int) Math.ceil(Math.log(millis[i++ & 4095]) * multiplier);
    }

    /**
     * The bit-level index PowerHistogram used before its table index (OctaveLogMapping): exponent +
     * cubic in the mantissa, then ceil; kept as a point of comparison.
     */
    @Benchmark
    public int bucketIndexCubic() {
        double x = millis[i++ & 4095];
        long bits = Double.doubleToRawLongBits(x);
        int e = (int) (bits >>> 52) - 1023;
        double m = Double.longBitsToDouble((bits & 0x000f_ffff_ffff_ffffL) | 0x3ff0_0000_0000_0000L) - 1.0;
        return (int) Math.ceil((35 * e + m * (50.0 + m * (6.0 * m - 21.0))) * cubicMultiplier);
    }

    /** Cubic index plus a plain increment: the floor of a single-writer record without sum or release. */
    @Benchmark
    public void plainRecordCubic() {
        plain[bucketIndexCubic() & 2047]++;
    }

    /** Cubic index, a plain increment and a running double sum: the single-writer record's work, minus validation and release. */
    @Benchmark
    public void plainRecordCubicWithSum() {
        double x = millis[i & 4095];
        plain[bucketIndexCubic() & 2047]++;
        sum += x;
    }

    // ---- the single-writer record, rebuilt step by step (same code shape as PowerHistogram's)

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle DOUBLES = MethodHandles.arrayElementVarHandle(double[].class);
    private final long[] slots = new long[1515];
    private final double[] stripes = new double[8];
    private double min = Double.POSITIVE_INFINITY;
    private double max = Double.NEGATIVE_INFINITY;
    private final int minIndex = -1386;
    private final int maxIndex = 126;

    private int slotOf(double x) {
        if (!(Double.isFinite(x) && x >= 0)) {
            throw new IllegalArgumentException("millis: " + x);
        }
        if (x == 0.0) {
            return 0;
        }
        long bits = Double.doubleToRawLongBits(x);
        int e = (int) (bits >>> 52) - 1023;
        double m = Double.longBitsToDouble((bits & 0x000f_ffff_ffff_ffffL) | 0x3ff0_0000_0000_0000L) - 1.0;
        double y = ((35 * e + 50.0 * m) + (6.0 * m - 21.0) * (m * m)) * cubicMultiplier;
        int slot = (int) (y + 2 - minIndex);
        return slot < 1 ? 1 : Math.min(slot, 1 + maxIndex - minIndex);
    }

    /** Validation, cubic index, clamp, plain slot increment. */
    @Benchmark
    public void sw1IndexAndSlot() {
        int slot = slotOf(millis[i++ & 4095]);
        slots[slot]++;
    }

    /** ... plus the min/max checks (loads and compares; stores only on a new extreme). */
    @Benchmark
    public void sw2PlusMinMax() {
        double x = millis[i++ & 4095];
        int slot = slotOf(x);
        if (x < min) {
            min = x;
        }
        if (x > max) {
            max = x;
        }
        slots[slot]++;
    }

    /** ... plus one running double sum (a load-add-store chain from record to record). */
    @Benchmark
    public void sw3PlusOneSum() {
        double x = millis[i++ & 4095];
        int slot = slotOf(x);
        if (x < min) {
            min = x;
        }
        if (x > max) {
            max = x;
        }
        slots[slot]++;
        sum += x;
    }

    /** ... with the sum striped by bucket (8 stripes) instead. */
    @Benchmark
    public void sw4PlusStripedSum() {
        double x = millis[i++ & 4095];
        int slot = slotOf(x);
        if (x < min) {
            min = x;
        }
        if (x > max) {
            max = x;
        }
        slots[slot]++;
        stripes[slot & 7] += x;
    }

    /** ... with release stores for the slot and the stripe, as PowerHistogram's single-writer mode. */
    @Benchmark
    public void sw5ReleaseStores() {
        double x = millis[i++ & 4095];
        int slot = slotOf(x);
        if (x < min) {
            min = x;
        }
        if (x > max) {
            max = x;
        }
        long[] s = slots;
        LONGS.setRelease(s, slot, s[slot] + 1L);
        double[] st = stripes;
        int k = slot & 7;
        DOUBLES.setRelease(st, k, st[k] + x);
    }

    /** ... with a plain slot store and a release stripe store (the release orders the slot store before it). */
    @Benchmark
    public void sw7PlainSlotReleaseSum() {
        double x = millis[i++ & 4095];
        int slot = slotOf(x);
        if (x < min) {
            min = x;
        }
        if (x > max) {
            max = x;
        }
        long[] s = slots;
        s[slot]++;
        double[] st = stripes;
        int k = slot & 7;
        DOUBLES.setRelease(st, k, st[k] + x);
    }

    /** One uncontended atomic increment. */
    @Benchmark
    public long oneAtomic() {
        return counter.getAndIncrement();
    }

    /** Four uncontended atomic read-modify-writes, as in one record. */
    @Benchmark
    public void fourAtomics() {
        counter.getAndIncrement();
        buckets.getAndIncrement(i++ & 1023);
        counter.getAndIncrement();
        counter.getAndIncrement();
    }

    /** Bucket index plus a plain (non-atomic) increment: a single-threaded histogram's record. */
    @Benchmark
    public void plainRecord() {
        plain[(int) Math.ceil(Math.log(millis[i++ & 4095]) * multiplier) & 2047]++;
    }
}
