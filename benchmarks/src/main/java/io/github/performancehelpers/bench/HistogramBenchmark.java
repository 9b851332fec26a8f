package io.github.performancehelpers.bench;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketches;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
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
 * {@link PowerHistogram#record(double)} against HdrHistogram and DDSketch (sketches-java), one
 * thread and two, plus the cost of a p99 query. Average time per operation, in nanoseconds.
 *
 * <p>PowerHistogram is measured in its default mode (any number of writers) and, on one thread,
 * in single-writer mode ({@code singleWriter(true)}).
 *
 * <p>Peers, all at about 1% accuracy:
 * <ul>
 *   <li>HdrHistogram {@code Histogram} (2 significant digits, 1 ns..1 h, values in ns): the
 *       single-threaded baseline, 1 thread only (it is not thread-safe).</li>
 *   <li>HdrHistogram {@code Recorder(1, 1 h in ns, 2)}: the concurrent interval recorder (an
 *       {@code AtomicHistogram} behind a {@code WriterReaderPhaser}), PowerHistogram's closest
 *       analogue, 1 and 2 threads.</li>
 *   <li>DDSketch {@code DDSketches.logarithmicUnboundedDense(0.01)} (the same log mapping as
 *       PowerHistogram) and {@code unboundedDense(0.01)} (interpolated mapping, no log call). Not
 *       thread-safe: with 2 threads it is measured shared behind a {@code ReentrantLock}, and as
 *       one unshared sketch per thread (no contention at all; a lower bound).</li>
 * </ul>
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="HistogramBenchmark -f 1 -wi 3 -w 1 -i 5 -r 1"}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HistogramBenchmark {

    private static final int MASK = 4095;
    private static final long HOUR_NANOS = 3_600_000_000_000L;

    /** Lognormal latencies (median 20 ms), in milliseconds and in nanoseconds. */
    final double[] millis = new double[MASK + 1];
    final long[] nanos = new long[MASK + 1];

    PowerHistogram power;
    PowerHistogram powerSingleWriter;
    Histogram hdr;
    Recorder hdrRecorder;
    DDSketch ddLog;
    DDSketch ddFast;
    final ReentrantLock ddLock = new ReentrantLock();

    /**
     * Filled structures for the quantile benchmarks: 10^5 samples each. A separate state, set up
     * only in the forks of the benchmarks that use it: filling them records 10^5 values through
     * the default mode's path, and a record benchmark that inherits that profile measures the
     * JIT's recompilation as much as the record (the single-writer row then varied from 5.7 to
     * 9.1 ns from fork to fork).
     */
    @State(Scope.Benchmark)
    public static class Filled {
        PowerHistogram powerFilled;
        PowerHistogram.Snapshot powerFilledSnapshot;
        Histogram hdrFilled;
        DDSketch ddLogFilled;

        /** Records the same 10^5 lognormal samples into each. */
        @Setup
        public void setup() {
            Random random = new Random(43);
            powerFilled = PowerHistogram.builder().relativeAccuracy(0.01).build();
            hdrFilled = new Histogram(1, HOUR_NANOS, 2);
            ddLogFilled = DDSketches.logarithmicUnboundedDense(0.01);
            for (int i = 0; i < 100_000; i++) {
                double v = Math.exp(Math.log(20) + random.nextGaussian());
                powerFilled.record(v);
                hdrFilled.recordValue(Math.max(1, Math.round(v * 1e6)));
                ddLogFilled.accept(v);
            }
            powerFilledSnapshot = powerFilled.snapshot();
        }
    }

    /** Per-thread cursor into the value arrays, and a per-thread unshared sketch. */
    @State(Scope.Thread)
    public static class Cursor {
        int i;
        DDSketch ddOwn = DDSketches.logarithmicUnboundedDense(0.01);

        int next() {
            return i++ & MASK;
        }
    }

    /** Builds the structures and the sample values. */
    @Setup
    public void setup() {
        Random random = new Random(42);
        for (int i = 0; i <= MASK; i++) {
            millis[i] = Math.exp(Math.log(20) + random.nextGaussian());
            nanos[i] = Math.max(1, Math.round(millis[i] * 1e6));
        }
        power = PowerHistogram.builder().relativeAccuracy(0.01).build();
        powerSingleWriter = PowerHistogram.builder().relativeAccuracy(0.01).singleWriter(true).build();
        hdr = new Histogram(1, HOUR_NANOS, 2);
        hdrRecorder = new Recorder(1, HOUR_NANOS, 2);
        ddLog = DDSketches.logarithmicUnboundedDense(0.01);
        ddFast = DDSketches.unboundedDense(0.01);

    }

    // ------------------------------------------------------------ record, 1 thread

    /** PowerHistogram.record, 1 thread. */
    @Benchmark
    @Threads(1)
    public void record_1t_power(Cursor c) {
        power.record(millis[c.next()]);
    }

    /** PowerHistogram.record in single-writer mode (no atomic operation), 1 thread. */
    @Benchmark
    @Threads(1)
    public void record_1t_powerSingleWriter(Cursor c) {
        powerSingleWriter.record(millis[c.next()]);
    }

    /** HdrHistogram Histogram.recordValue (single-threaded), 1 thread. */
    @Benchmark
    @Threads(1)
    public void record_1t_hdrHistogram(Cursor c) {
        hdr.recordValue(nanos[c.next()]);
    }

    /** HdrHistogram Recorder.recordValue, 1 thread. */
    @Benchmark
    @Threads(1)
    public void record_1t_hdrRecorder(Cursor c) {
        hdrRecorder.recordValue(nanos[c.next()]);
    }

    /** DDSketch (logarithmic mapping).accept, 1 thread. */
    @Benchmark
    @Threads(1)
    public void record_1t_ddsketchLog(Cursor c) {
        ddLog.accept(millis[c.next()]);
    }

    /** DDSketch (default interpolated mapping).accept, 1 thread. */
    @Benchmark
    @Threads(1)
    public void record_1t_ddsketchFast(Cursor c) {
        ddFast.accept(millis[c.next()]);
    }

    // ------------------------------------------------------------ record, 2 threads

    /** PowerHistogram.record, 2 threads sharing one histogram. */
    @Benchmark
    @Threads(2)
    public void record_2t_power(Cursor c) {
        power.record(millis[c.next()]);
    }

    /** HdrHistogram Recorder.recordValue, 2 threads sharing one recorder. */
    @Benchmark
    @Threads(2)
    public void record_2t_hdrRecorder(Cursor c) {
        hdrRecorder.recordValue(nanos[c.next()]);
    }

    /** DDSketch (logarithmic) shared by 2 threads behind a ReentrantLock. */
    @Benchmark
    @Threads(2)
    public void record_2t_ddsketchLocked(Cursor c) {
        double v = millis[c.next()];
        ddLock.lock();
        try {
            ddLog.accept(v);
        } finally {
            ddLock.unlock();
        }
    }

    /** DDSketch (logarithmic), one unshared sketch per thread (merge on read; no contention). */
    @Benchmark
    @Threads(2)
    public void record_2t_ddsketchPerThread(Cursor c) {
        c.ddOwn.accept(millis[c.next()]);
    }

    // ------------------------------------------------------------ p99 of 10^5 samples

    /** PowerHistogram.quantile(0.99): a consistent snapshot of the live histogram, then the walk. */
    @Benchmark
    @Threads(1)
    public double quantile_power(Filled f) {
        return f.powerFilled.quantile(0.99);
    }

    /** Snapshot.quantile(0.99): the walk over an already-taken snapshot. */
    @Benchmark
    @Threads(1)
    public double quantile_powerSnapshot(Filled f) {
        return f.powerFilledSnapshot.quantile(0.99);
    }

    /** HdrHistogram getValueAtPercentile(99). */
    @Benchmark
    @Threads(1)
    public long quantile_hdrHistogram(Filled f) {
        return f.hdrFilled.getValueAtPercentile(99.0);
    }

    /** DDSketch getValueAtQuantile(0.99). */
    @Benchmark
    @Threads(1)
    public double quantile_ddsketchLog(Filled f) {
        return f.ddLogFilled.getValueAtQuantile(0.99);
    }
}
