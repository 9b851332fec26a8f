package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link PowerHistogram} in single-writer mode ({@code singleWriter(true)}): the same accuracy
 * and interval semantics as the default mode for one recording thread, exact totals across
 * intervals while readers swap concurrently, a sum that never runs ahead of the counts, min and
 * max within the relative accuracy, and a record that allocates nothing.
 */
class PowerHistogramSingleWriterTest {

    private static final double[] QUANTILES = {
        0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0
    };
    private static final double ROUNDING = 1e-9;

    private static PowerHistogram singleWriter() {
        return PowerHistogram.builder().singleWriter(true).build();
    }

    // ------------------------------------------------------------------ single-threaded contract

    /**
     * Every quantile from p0 to p100, min and max included, is within the relative accuracy of
     * the exact sample quantile (lower rank floor(q * (n - 1))); count and sum are exact.
     */
    @ParameterizedTest(name = "{0} at relativeAccuracy {1}")
    @MethodSource("io.github.performancehelpers.loop.PowerHistogramTest#distributionsAndAccuracies")
    void everyQuantileIsWithinTheRelativeAccuracy(String name, double accuracy) {
        PowerHistogram h = PowerHistogram.builder().relativeAccuracy(accuracy).singleWriter(true).build();
        DoubleSupplier source = PowerHistogramTest.distribution(name, new Random(42));
        double[] samples = new double[100_000];
        double sum = 0;
        for (int i = 0; i < samples.length; i++) {
            samples[i] = source.getAsDouble();
            h.record(samples[i]);
            sum += samples[i];
        }
        Arrays.sort(samples);
        PowerHistogram.Snapshot s = h.snapshot();
        assertEquals(samples.length, s.count());
        assertEquals(sum, s.sum(), Math.abs(sum) * 1e-12, "the sum, up to the rounding of the additions' order");
        for (double q : QUANTILES) {
            assertWithin(accuracy, samples[(int) Math.floor(q * (samples.length - 1))], s.quantile(q), name + " q=" + q);
        }
        assertWithin(accuracy, samples[0], s.min(), "min");
        assertWithin(accuracy, samples[samples.length - 1], s.max(), "max");
    }

    private static void assertWithin(double accuracy, double exact, double estimate, String what) {
        if (exact == 0.0) {
            assertEquals(0.0, estimate, what + ": zero reads back exactly");
        } else {
            double error = Math.abs(estimate - exact) / exact;
            assertTrue(error <= accuracy + ROUNDING, what + ": exact " + exact + ", estimate " + estimate);
        }
    }

    /** A constant sample reads back exactly, min and max included: the estimates are clamped to the lifetime extremes. */
    @Test
    void constantSampleReadsBackExactly() {
        PowerHistogram h = singleWriter();
        for (int i = 0; i < 1000; i++) {
            h.record(30.0);
        }
        for (double q : QUANTILES) {
            assertEquals(30.0, h.quantile(q), 0.0);
        }
        assertEquals(30.0, h.min(), 0.0);
        assertEquals(30.0, h.max(), 0.0);
    }

    /**
     * An interval's min and max are estimates from its own buckets: after an interval with 1 ms
     * and 900 ms, the next interval's extremes are those of its own 10-20 ms samples (within 1%),
     * not the lifetime extremes.
     */
    @Test
    void minAndMaxAreThoseOfTheIntervalWithinTheAccuracy() {
        PowerHistogram h = singleWriter();
        h.record(1.0);
        h.record(900.0);
        PowerHistogram.Snapshot first = h.snapshotAndReset();
        assertEquals(1.0, first.min(), 1.0 * 0.01);
        assertEquals(900.0, first.max(), 900.0 * 0.01);
        h.record(10.0);
        h.record(15.0);
        h.record(20.0);
        PowerHistogram.Snapshot second = h.snapshotAndReset();
        assertEquals(10.0, second.min(), 10.0 * 0.01);
        assertEquals(20.0, second.max(), 20.0 * 0.01);
        assertEquals(45.0, second.sum(), 0.0);
        assertEquals(3L, second.count());
    }

    /** Zero (and -0.0, read back as +0.0) is exact in single-writer mode too, as the minimum of an interval. */
    @Test
    void zeroIsExactMinimum() {
        PowerHistogram h = singleWriter();
        h.record(-0.0);
        h.record(0.0);
        h.record(5.0);
        assertEquals(0, Double.compare(0.0, h.min()), "+0.0");
        assertEquals(0, Double.compare(0.0, h.quantile(0.5)), "+0.0");
        assertEquals(0, Double.compare(5.0, h.sum()));
        // The max is an estimate here (the representative of its bucket, clamped to the
        // lifetime max): only zero, and a constant sample, read back exactly.
        assertEquals(5.0, h.max(), 5.0 * 0.01);
    }

    /** snapshotAndReset ends the interval, snapshot leaves it, reset discards it; an empty interval answers NaN. */
    @Test
    void intervalsBehaveAsInTheDefaultMode() {
        PowerHistogram h = singleWriter();
        assertTrue(Double.isNaN(h.quantile(0.5)));
        h.record(100.0);
        h.record(200.0);
        assertEquals(2L, h.snapshot().count());
        assertEquals(2L, h.snapshot().count(), "snapshot() does not reset");
        PowerHistogram.Snapshot ended = h.snapshotAndReset();
        assertEquals(2L, ended.count());
        assertEquals(300.0, ended.sum(), 0.0);
        assertEquals(0L, h.count());
        assertEquals(0.0, h.sum(), 0.0);
        assertTrue(Double.isNaN(h.max()));
        h.record(3.0);
        h.reset();
        assertEquals(0L, h.count());
        h.record(4.0);
        assertEquals(1L, h.count());
        assertEquals(4.0, h.sum(), 0.0);
        assertEquals(4.0, h.quantile(0.99), 4.0 * 0.01, "an estimate: the lifetime extremes (3 and 200) do not pin it");
    }

    /** merge(snapshot) adds the samples (the writer's operation), and snapshots of both modes merge with each other. */
    @Test
    void mergeAddsTheSamples() {
        PowerHistogram h = singleWriter();
        for (int v = 1; v <= 100; v++) {
            h.record(v);
        }
        PowerHistogram other = PowerHistogram.builder().build();
        for (int v = 101; v <= 200; v++) {
            other.record(v);
        }
        h.merge(other.snapshot());
        assertEquals(200L, h.count());
        assertEquals(20100.0, h.sum(), 0.0);
        assertEquals(100.0, h.quantile(0.5), 100.0 * 0.01);
        assertEquals(1.0, h.min(), 1.0 * 0.01);
        assertEquals(200.0, h.max(), 200.0 * 0.01);
        PowerHistogram.Snapshot both = h.snapshot().merge(other.snapshot());
        assertEquals(300L, both.count());
    }

    /** The state for 1 µs to 1 h at 1% still fits in 32 KiB in single-writer mode (cumulative counts + baseline). */
    @Test
    void oneMicrosecondToOneHourAtOnePercentFitsIn32KiB() {
        PowerHistogram h = PowerHistogram.builder().singleWriter(true)
                .trackableRange(Duration.ofNanos(1000), Duration.ofHours(1)).build();
        assertTrue(h.footprintBytes() <= 32 * 1024, h.footprintBytes() + " bytes");
    }

    // ------------------------------------------------------------------ one writer, concurrent readers

    /**
     * The concurrency test for single-writer mode: one writer records 2·10^6 integer
     * samples while a reader swaps intervals continuously; the interval counts sum to the total
     * and the interval sums to the exact total.
     */
    @Test
    void everySampleLandsInExactlyOneInterval() throws InterruptedException {
        int samples = 2_000_000;
        PowerHistogram h = singleWriter();
        AtomicBoolean done = new AtomicBoolean();
        Thread writer = startWriter(() -> {
            for (int i = 0; i < samples; i++) {
                h.record((i % 1000) + 1); // integers 1..1000: every partial double sum is exact
            }
        }, done);
        long count = 0;
        double sum = 0;
        int intervals = 0;
        while (!done.get()) {
            PowerHistogram.Snapshot s = h.snapshotAndReset();
            count += s.count();
            sum += s.sum();
            intervals++;
            if (s.count() > 0) {
                assertTrue(s.min() >= 1 * 0.99 && s.max() <= 1000 * 1.01, s.toJson());
            }
        }
        writer.join();
        PowerHistogram.Snapshot last = h.snapshotAndReset();
        count += last.count();
        sum += last.sum();
        assertEquals(samples, count);
        assertEquals(2000.0 * 500_500.0, sum, 0.0, "sum of 2000 x (1 + ... + 1000)");
        assertTrue(intervals > 1, "the reader swapped while the writer wrote: " + intervals + " intervals");
        assertEquals(0L, h.count());
    }

    /**
     * The documented per-interval consistency: an interval's sum only holds samples its counts
     * hold. With a constant 3 ms, after every interval the running total of sums is at most 3 ×
     * the running total of counts (a sample's value may trail its count into the next interval,
     * never lead it), and the two agree at the end.
     */
    @Test
    void sumNeverRunsAheadOfTheCounts() throws InterruptedException {
        int samples = 2_000_000;
        PowerHistogram h = singleWriter();
        AtomicBoolean done = new AtomicBoolean();
        Thread writer = startWriter(() -> {
            for (int i = 0; i < samples; i++) {
                h.record(3.0);
            }
        }, done);
        long count = 0;
        double sum = 0;
        while (!done.get()) {
            PowerHistogram.Snapshot s = h.snapshotAndReset();
            count += s.count();
            sum += s.sum();
            assertTrue(sum <= 3.0 * count, "sums " + sum + " ahead of counts " + count + ": " + s.toJson());
        }
        writer.join();
        PowerHistogram.Snapshot last = h.snapshotAndReset();
        count += last.count();
        sum += last.sum();
        assertEquals(samples, count);
        assertEquals(3.0 * samples, sum, 0.0);
    }

    /**
     * Two readers swap concurrently with the writer (readers serialize among themselves): the
     * intervals both of them took still add up to the total.
     */
    @Test
    void twoReadersAndOneWriterLoseNothing() throws InterruptedException {
        int samples = 1_000_000;
        PowerHistogram h = singleWriter();
        AtomicBoolean done = new AtomicBoolean();
        long[] counts = new long[2];
        double[] sums = new double[2];
        Thread writer = startWriter(() -> {
            for (int i = 0; i < samples; i++) {
                h.record((i & 7) + 1);
            }
        }, done);
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            int reader = r;
            Thread t = new Thread(() -> {
                while (!done.get()) {
                    PowerHistogram.Snapshot s = h.snapshotAndReset();
                    counts[reader] += s.count();
                    sums[reader] += s.sum();
                }
            }, "reader-" + r);
            t.start();
            readers.add(t);
        }
        writer.join();
        for (Thread t : readers) {
            t.join();
        }
        PowerHistogram.Snapshot last = h.snapshotAndReset();
        assertEquals(samples, counts[0] + counts[1] + last.count());
        assertEquals(samples / 8 * 36.0, sums[0] + sums[1] + last.sum(), 0.0);
    }

    /** snapshot() during recording never goes backwards and ends at the total. */
    @Test
    void snapshotUnderConcurrentRecordingIsMonotone() throws InterruptedException {
        int samples = 1_000_000;
        PowerHistogram h = singleWriter();
        AtomicBoolean done = new AtomicBoolean();
        Thread writer = startWriter(() -> {
            for (int i = 0; i < samples; i++) {
                h.record(2.0);
            }
        }, done);
        long previous = 0;
        while (!done.get()) {
            long now = h.snapshot().count();
            assertTrue(now >= previous, now + " < " + previous);
            previous = now;
        }
        writer.join();
        assertEquals(samples, h.count());
        assertEquals(2.0 * samples, h.sum(), 0.0);
    }

    /**
     * The writer role may move between threads given a happens-before between them (here
     * Thread.join then start): four successive writer threads, a reader swapping throughout,
     * and the totals are exact.
     */
    @Test
    void writerRoleMovesBetweenThreadsWithHappensBefore() throws InterruptedException {
        int perWriter = 300_000;
        PowerHistogram h = singleWriter();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread chain = new Thread(() -> {
            try {
                for (int w = 0; w < 4; w++) {
                    int value = w + 1;
                    Thread t = new Thread(() -> {
                        for (int i = 0; i < perWriter; i++) {
                            h.record(value);
                        }
                    }, "writer-" + w);
                    t.start();
                    t.join(); // happens-before the next writer's start
                }
            } catch (Throwable e) {
                failure.set(e);
            } finally {
                done.set(true);
            }
        });
        chain.start();
        long count = 0;
        double sum = 0;
        while (!done.get()) {
            PowerHistogram.Snapshot s = h.snapshotAndReset();
            count += s.count();
            sum += s.sum();
        }
        chain.join();
        assertNull(failure.get());
        PowerHistogram.Snapshot last = h.snapshotAndReset();
        assertEquals(4L * perWriter, count + last.count());
        assertEquals(perWriter * (1.0 + 2 + 3 + 4), sum + last.sum(), 0.0);
    }

    private static Thread startWriter(Runnable body, AtomicBoolean done) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } finally {
                done.set(true);
            }
        }, "writer");
        t.start();
        return t;
    }

    /**
     * Recording in single-writer mode (all three forms) allocates nothing, measured with
     * {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes} after warm-up (reached
     * reflectively: tests compile inside the library's module, which reads only java.base).
     */
    @Test
    void recordingAllocatesNothing() throws ReflectiveOperationException {
        PowerHistogram h = singleWriter();
        long allocated = PowerHistogramConcurrencyTest.allocatedByRecording(h, 0);
        assertTrue(allocated < 1024, allocated + " bytes allocated by 3 x 10^5 records");
        assertEquals(1_200_000L, h.count());
    }
}
