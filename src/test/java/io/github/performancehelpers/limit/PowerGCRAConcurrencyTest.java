package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * Under contention PowerGCRA never admits more than {@code burst + 1 + elapsed / emissionInterval}
 * operations. More threads than the machine's two cores; bounded iteration counts.
 */
@Tag("stress")
class PowerGCRAConcurrencyTest {

    private static final int THREADS = 8;

    /**
     * Runs {@code body} on {@code threads} threads started together; joins them all; rethrows a
     * failure. Shared with {@link PowerRateLimitTest}.
     */
    static void runThreads(int threads, ThrowingRunnable body) throws InterruptedException {
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> list = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    body.run();
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            list.add(t);
            t.start();
        }
        for (Thread t : list) {
            t.join();
        }
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("worker failed");
            failures.forEach(e::addSuppressed);
            throw e;
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** On a frozen clock, 8 threads together admit exactly burst + 1 single operations. */
    @Test
    void frozenClockAdmitsExactlyBurstPlusOne() throws Exception {
        FakeTicker clock = new FakeTicker();
        PowerGCRA l = PowerGCRA.builder().rate(1000).burst(99).ticker(clock).build();
        AtomicLong admitted = new AtomicLong();
        runThreads(THREADS, () -> {
            for (int i = 0; i < 20_000; i++) {
                if (l.tryConsume()) {
                    admitted.incrementAndGet();
                }
            }
        });
        assertEquals(100, admitted.get());
        assertEquals(0, l.available());
    }

    /** 8 threads drive a fake clock forward while consuming batches: admitted <= burst + 1 + elapsed / interval. */
    @Test
    void movingFakeClockNeverOverAdmits() throws Exception {
        FakeTicker clock = new FakeTicker(-12_345L);
        long start = clock.read();
        long intervalNanos = 1_000_000L; // 1000/s, an exact interval so the bound is exact
        PowerGCRA l = PowerGCRA.builder().rate(1000).burst(5).ticker(clock).build();
        AtomicLong admitted = new AtomicLong();
        runThreads(THREADS, () -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int i = 0; i < 30_000; i++) {
                if (rnd.nextInt(8) == 0) {
                    clock.advanceNanos(rnd.nextLong(50_000));
                }
                long n = 1 + rnd.nextInt(3);
                switch (rnd.nextInt(4)) {
                    case 0 -> {
                        if (l.take(n).ok()) {
                            admitted.addAndGet(n);
                        }
                    }
                    case 1 -> {
                        long a = l.available();
                        assertTrue(a >= 0 && a <= 6, "available " + a);
                    }
                    default -> {
                        if (l.tryConsume(n)) {
                            admitted.addAndGet(n);
                        }
                    }
                }
            }
        });
        long elapsed = clock.read() - start;
        long bound = 5 + 1 + elapsed / intervalNanos;
        assertTrue(admitted.get() <= bound, "admitted " + admitted + " > bound " + bound);
        assertTrue(admitted.get() >= bound / 2, "suspiciously few admitted: " + admitted + " of " + bound);
    }

    /**
     * A clock that moves on every reading, so that every admission that lost a CAS is retried at a
     * reading already in the past (the retry path, which does not read the clock again): 8
     * threads, admitting and refusing near the limit, never exceed burst + 1 + elapsed / interval.
     */
    @Test
    void clockMovingOnEveryReadNeverOverAdmits() throws Exception {
        AtomicLong nanos = new AtomicLong(1_000L);
        long start = nanos.get();
        long intervalNanos = 1_000L; // 10^6/s, exact; each reading moves the clock 0.3 intervals
        PowerGCRA l = PowerGCRA.builder().rate(1_000_000).burst(3).ticker(() -> nanos.addAndGet(300L)).build();
        AtomicLong admitted = new AtomicLong();
        runThreads(THREADS, () -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int i = 0; i < 50_000; i++) {
                long n = 1 + rnd.nextInt(2);
                boolean ok = rnd.nextInt(4) == 0 ? l.take(n).ok() : l.tryConsume(n);
                if (ok) {
                    admitted.addAndGet(n);
                }
            }
        });
        long elapsed = nanos.get() - start;
        long bound = 3 + 1 + elapsed / intervalNanos;
        assertTrue(admitted.get() <= bound, "admitted " + admitted + " > bound " + bound);
        assertTrue(admitted.get() >= bound / 4, "suspiciously few admitted: " + admitted + " of " + bound);
    }

    /** On the real clock, 8 threads for ~300 ms at 100k/s never exceed burst + 1 + elapsed / interval. */
    @Test
    void realClockNeverOverAdmits() throws Exception {
        long intervalNanos = 10_000L; // 100_000/s, exact
        long start = System.nanoTime();
        PowerGCRA l = PowerGCRA.builder().rate(100_000).burst(10).build();
        AtomicLong admitted = new AtomicLong();
        long deadline = start + 300_000_000L;
        runThreads(THREADS, () -> {
            while (System.nanoTime() - deadline < 0) {
                if (l.tryConsume()) {
                    admitted.incrementAndGet();
                }
            }
        });
        long elapsed = System.nanoTime() - start;
        long bound = 10 + 1 + elapsed / intervalNanos;
        assertTrue(admitted.get() <= bound, "admitted " + admitted + " > bound " + bound);
        assertTrue(admitted.get() > 0);
    }

    /** Concurrent setRate calls (epoch switches) lose no admission and create none: frozen clock, exact count. */
    @Test
    void concurrentSetRateNeitherLosesNorCreatesCapacity() throws Exception {
        FakeTicker clock = new FakeTicker();
        PowerGCRA l = PowerGCRA.builder().rate(1000).burst(199).ticker(clock).build();
        AtomicLong admitted = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        Thread changer = new Thread(() -> {
            int i = 0;
            while (!done.get()) {
                l.setRate(i++ % 2 == 0 ? 3000 : 1000.0 / 7);
            }
        });
        changer.start();
        try {
            runThreads(THREADS, () -> {
                for (int i = 0; i < 5_000; i++) {
                    if (l.tryConsume()) {
                        admitted.incrementAndGet();
                    }
                    if (i % 64 == 0) {
                        l.setRate(2000);
                    }
                }
            });
        } finally {
            done.set(true);
            changer.join();
        }
        assertEquals(200, admitted.get());
        assertEquals(0, l.available());
    }
}
