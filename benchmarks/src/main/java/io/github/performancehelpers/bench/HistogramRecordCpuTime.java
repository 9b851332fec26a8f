package io.github.performancehelpers.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Random;
import org.HdrHistogram.Histogram;
import io.github.performancehelpers.loop.PowerHistogram;

/**
 * A cross-check of {@link HistogramBenchmark}'s one-thread record rows on a loaded machine:
 * the same loop, timed in <em>thread CPU time</em> (so time the thread spends descheduled by
 * other processes is not counted, which wall-clock JMH figures include), rounds interleaved
 * between the contenders, minimum and median of the rounds reported. Not a JMH benchmark: a
 * sanity check of ratios, not a replacement.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool -Dtool.main=io.github.performancehelpers.bench.HistogramRecordCpuTime}
 */
public final class HistogramRecordCpuTime {

    private static final int MASK = 4095;
    private static final int OPS = 20_000_000;
    private static final int ROUNDS = 15;
    private static final int WARMUP_ROUNDS = 5;

    private HistogramRecordCpuTime() {
    }

    /**
     * Runs the comparison and prints one line per contender.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        double[] millis = new double[MASK + 1];
        long[] nanos = new long[MASK + 1];
        Random random = new Random(42);
        for (int i = 0; i <= MASK; i++) {
            millis[i] = Math.exp(Math.log(20) + random.nextGaussian());
            nanos[i] = Math.max(1, Math.round(millis[i] * 1e6));
        }
        Histogram hdr = new Histogram(1, 3_600_000_000_000L, 2);
        PowerHistogram single = PowerHistogram.builder().singleWriter(true).build();
        PowerHistogram shared = PowerHistogram.builder().build();
        String[] names = {"HdrHistogram Histogram.recordValue", "PowerHistogram singleWriter record",
            "PowerHistogram (default) record"};
        // One loop per contender (no shared, megamorphic call site in the loop).
        Runnable[] bodies = {
            () -> {
                for (int i = 0; i < OPS; i++) {
                    hdr.recordValue(nanos[i & MASK]);
                }
            },
            () -> {
                for (int i = 0; i < OPS; i++) {
                    single.record(millis[i & MASK]);
                }
            },
            () -> {
                for (int i = 0; i < OPS; i++) {
                    shared.record(millis[i & MASK]);
                }
            },
        };
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[][] results = new double[bodies.length][ROUNDS];
        for (int round = -WARMUP_ROUNDS; round < ROUNDS; round++) {
            for (int b = 0; b < bodies.length; b++) {
                long start = threads.getCurrentThreadCpuTime();
                bodies[b].run();
                long cpu = threads.getCurrentThreadCpuTime() - start;
                if (round >= 0) {
                    results[b][round] = (double) cpu / OPS;
                }
            }
        }
        for (int b = 0; b < bodies.length; b++) {
            double[] r = results[b].clone();
            Arrays.sort(r);
            System.out.printf("%-40s min %6.2f  median %6.2f ns/op (CPU time, %d rounds of %d)%n",
                    names[b], r[0], r[r.length / 2], ROUNDS, OPS);
        }
    }

}
