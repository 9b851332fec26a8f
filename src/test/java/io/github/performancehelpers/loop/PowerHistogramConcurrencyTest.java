package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Writers and readers of {@link PowerHistogram} at once: every sample lands in exactly one
 * interval, and recording allocates nothing. More writer threads than the machine's two cores.
 */
@Tag("stress")
class PowerHistogramConcurrencyTest {

    private static final int WRITERS = 4;

    /** Starts {@code WRITERS} threads that wait on {@code start}, run {@code body(w)}, and count down {@code done}. */
    private static List<Thread> startWriters(CountDownLatch start, AtomicInteger running, WriterBody body) {
        List<Thread> threads = new ArrayList<>();
        running.set(WRITERS);
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    body.run(writer);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    running.decrementAndGet();
                }
            }, "writer-" + w);
            t.start();
            threads.add(t);
        }
        return threads;
    }

    @FunctionalInterface
    private interface WriterBody {
        void run(int writer);
    }

    private static void joinAll(List<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join();
        }
    }

    /**
     * 4 writers record 10^6 integer samples each while a reader swaps intervals continuously: the
     * interval counts sum to 4·10^6 and the interval sums to the exact total.
     */
    @Test
    void everySampleLandsInExactlyOneInterval() throws InterruptedException {
        int perWriter = 1_000_000;
        PowerHistogram h = PowerHistogram.builder().build();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        List<Thread> writers = startWriters(start, running, w -> {
            for (int i = 0; i < perWriter; i++) {
                h.record((i % 1000) + 1); // integers 1..1000: every partial double sum is exact
            }
        });
        long count = 0;
        double sum = 0;
        int intervals = 0;
        start.countDown();
        while (running.get() > 0) {
            PowerHistogram.Snapshot s = h.snapshotAndReset();
            count += s.count();
            sum += s.sum();
            intervals++;
            if (s.count() > 0) {
                // The interval's own figures agree with each other: sum and extremes came with the counts.
                assertTrue(s.min() >= 1 && s.max() <= 1000, s.toJson());
                assertTrue(s.sum() >= s.count() * s.min() && s.sum() <= s.count() * s.max(), s.toJson());
            }
        }
        joinAll(writers);
        PowerHistogram.Snapshot last = h.snapshotAndReset();
        count += last.count();
        sum += last.sum();
        assertEquals((long) WRITERS * perWriter, count);
        assertEquals(WRITERS * 1000.0 * 500_500.0, sum, 0.0, "sum of 4 x 1000 x (1 + ... + 1000)");
        assertTrue(intervals > 1, "the reader swapped while writers wrote: " + intervals + " intervals");
        assertEquals(0L, h.count());
    }

    /**
     * With every writer recording the same value, each interval's sum is exactly value × count:
     * a sample's count and its sum never land in different intervals.
     */
    @Test
    void countAndSumOfASampleLandInTheSameInterval() throws InterruptedException {
        int perWriter = 250_000;
        PowerHistogram h = PowerHistogram.builder().build();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        List<Thread> writers = startWriters(start, running, w -> {
            for (int i = 0; i < perWriter; i++) {
                h.record(3.0);
            }
        });
        long count = 0;
        start.countDown();
        while (running.get() > 0) {
            PowerHistogram.Snapshot s = h.snapshotAndReset();
            assertEquals(3.0 * s.count(), s.sum(), 0.0, s.toJson());
            count += s.count();
        }
        joinAll(writers);
        count += h.snapshotAndReset().count();
        assertEquals((long) WRITERS * perWriter, count);
    }

    /** snapshot() during concurrent recording loses nothing: counts never go down and end at the total. */
    @Test
    void snapshotUnderConcurrentRecordingLosesNothing() throws InterruptedException {
        int perWriter = 250_000;
        PowerHistogram h = PowerHistogram.builder().build();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        List<Thread> writers = startWriters(start, running, w -> {
            for (int i = 0; i < perWriter; i++) {
                h.record(w + 1.0);
            }
        });
        long previous = 0;
        start.countDown();
        while (running.get() > 0) {
            long now = h.snapshot().count();
            assertTrue(now >= previous, now + " < " + previous);
            previous = now;
        }
        joinAll(writers);
        PowerHistogram.Snapshot s = h.snapshot();
        assertEquals((long) WRITERS * perWriter, s.count());
        assertEquals(perWriter * (1.0 + 2.0 + 3.0 + 4.0), s.sum(), 0.0);
        assertEquals(1.0, s.min(), 0.0);
        assertEquals(4.0, s.max(), 0.0);
    }

    /** A merge is one write: a concurrent snapshotAndReset sees all of a merged snapshot's samples or none. */
    @Test
    void mergeLandsInOneInterval() throws InterruptedException {
        PowerHistogram source = PowerHistogram.builder().build();
        for (int v = 1; v <= 100; v++) {
            source.record(v);
        }
        PowerHistogram.Snapshot batch = source.snapshot();
        int merges = 20_000;
        PowerHistogram h = PowerHistogram.builder().build();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        List<Thread> writers = startWriters(start, running, w -> {
            for (int i = 0; i < merges / WRITERS; i++) {
                h.merge(batch);
            }
        });
        long count = 0;
        start.countDown();
        while (running.get() > 0) {
            PowerHistogram.Snapshot s = h.snapshotAndReset();
            assertEquals(0L, s.count() % 100, "a partial merge was seen: " + s.count());
            assertEquals(s.count() / 100 * 5050.0, s.sum(), 0.0);
            count += s.count();
        }
        joinAll(writers);
        count += h.snapshotAndReset().count();
        assertEquals(100L * merges, count);
    }

    /**
     * Recording (all three forms) allocates nothing, measured with
     * {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes} on this thread after warm-up.
     * (Reached reflectively: tests compile inside the library's module, which reads only
     * java.base; they run on the class path, where java.management is readable.)
     */
    @Test
    void recordingAllocatesNothing() throws ReflectiveOperationException {
        PowerHistogram h = PowerHistogram.builder().build();
        long allocated = allocatedByRecording(h, 50_000);
        // Tolerance: the reflective call itself boxes its argument and result (well under 1 KiB).
        assertTrue(allocated < 1024, allocated + " bytes allocated by 3 x 10^5 records");
        assertEquals(300_000L, h.count() - 3 * 49_999L, "the measured records were recorded");
    }

    /**
     * The bytes this thread allocates while it records 3 x 10^5 values into {@code h} (in all
     * three forms), after 3 x 10^5 more to get the record paths compiled, resetting {@code h}
     * every {@code resetEvery} warm-up rounds if positive. Skips the test (an assumption) where
     * the JVM cannot count a thread's allocation.
     */
    static long allocatedByRecording(PowerHistogram h, int resetEvery) throws ReflectiveOperationException {
        Object threads = Class.forName("java.lang.management.ManagementFactory")
                .getMethod("getThreadMXBean").invoke(null);
        Class<?> sunThreads = Class.forName("com.sun.management.ThreadMXBean");
        org.junit.jupiter.api.Assumptions.assumeTrue(sunThreads.isInstance(threads),
                "allocation counting needs com.sun.management.ThreadMXBean");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                (Boolean) sunThreads.getMethod("isThreadAllocatedMemorySupported").invoke(threads));
        sunThreads.getMethod("setThreadAllocatedMemoryEnabled", boolean.class).invoke(threads, true);
        Method allocatedBytes = sunThreads.getMethod("getThreadAllocatedBytes", long.class);
        Duration latency = Duration.ofNanos(1_234_567);
        for (int i = 0; i < 300_000; i++) { // warm-up: get the record paths compiled
            recordAll(h, i, latency);
            if (resetEvery > 0 && i % resetEvery == 0) {
                h.reset();
            }
        }
        long id = Thread.currentThread().threadId();
        long before = (Long) allocatedBytes.invoke(threads, id);
        for (int i = 0; i < 100_000; i++) {
            recordAll(h, i, latency);
        }
        return (Long) allocatedBytes.invoke(threads, id) - before;
    }

    private static void recordAll(PowerHistogram h, int i, Duration latency) {
        h.record((i & 1023) * 0.37);
        h.recordNanos(i * 1_000L);
        h.record(latency);
    }
}
