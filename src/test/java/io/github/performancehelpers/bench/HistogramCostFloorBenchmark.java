package io.github.performancehelpers.bench;

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

/**
 * The parts a {@code PowerHistogram.record} is made of, measured alone on one thread, to explain
 * {@link HistogramBenchmark}'s figures: the bucket index (one {@code log}, one {@code ceil}), one
 * uncontended atomic increment, the four atomic read-modify-writes of a record (phaser enter,
 * bucket increment, sum CAS, phaser exit), and a plain non-atomic bucket increment (what a
 * single-threaded histogram pays).
 *
 * <p>Run: {@code mvn -q test-compile exec:exec@bench -Dbench.args="HistogramCostFloorBenchmark -f 1 -wi 2 -w 1 -i 5 -r 1"}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HistogramCostFloorBenchmark {

    private final double[] millis = new double[4096];
    private final double multiplier = 1 / Math.log(1.01 / 0.99);
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
