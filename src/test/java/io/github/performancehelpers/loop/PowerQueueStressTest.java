package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Many producers and consumers on more threads than the machine has cores: no element is lost or
 * delivered twice, and each producer's elements arrive in the order it offered them.
 */
@Tag("stress")
class PowerQueueStressTest {

    /** Bound on a whole stress run; a lost wake-up or a lost element shows up as a hang. */
    private static final Duration JOIN = Duration.ofSeconds(120);

    private static long encode(int producer, int seq) {
        return ((long) producer << 32) | seq;
    }

    /** Runs the bodies on new platform or virtual threads, started together, and joins them. */
    private static void runAll(List<Thread.Builder> builders, List<ThrowingRunnable> bodies)
            throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < bodies.size(); i++) {
            ThrowingRunnable body = bodies.get(i);
            threads.add(builders.get(i).start(() -> {
                try {
                    start.await();
                    body.run();
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        start.countDown();
        for (Thread t : threads) {
            if (!t.join(JOIN)) {
                StringBuilder sb = new StringBuilder("thread did not finish: " + t + "\n");
                for (Thread u : threads) {
                    sb.append(u).append(' ').append(u.getState()).append('\n');
                    for (StackTraceElement el : u.getStackTrace()) {
                        sb.append("    at ").append(el).append('\n');
                    }
                }
                throw new AssertionError(sb.toString());
            }
        }
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("a worker failed");
            failures.forEach(e::addSuppressed);
            throw e;
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Checks per-producer order as one consumer sees it, and marks the element delivered. */
    private static void deliver(long v, long[] lastSeen, AtomicIntegerArray delivered, int perProducer) {
        int p = (int) (v >>> 32);
        int seq = (int) v;
        if (seq <= lastSeen[p]) {
            throw new AssertionError("producer " + p + ": " + seq + " after " + lastSeen[p]);
        }
        lastSeen[p] = seq;
        int n = delivered.incrementAndGet(p * perProducer + seq);
        if (n != 1) {
            throw new AssertionError("delivered twice: producer " + p + " seq " + seq);
        }
    }

    private static void assertAllDeliveredOnce(AtomicIntegerArray delivered) {
        for (int i = 0; i < delivered.length(); i++) {
            if (delivered.get(i) != 1) {
                throw new AssertionError("element " + i + " delivered " + delivered.get(i) + " times");
            }
        }
    }

    /** 4 producers x 250k, 4 polling consumers: every element exactly once, per-producer FIFO. */
    @Test
    void pollingConsumersGetEveryElementOnceInProducerOrder() throws InterruptedException {
        final int producers = 4;
        final int consumers = 4;
        final int perProducer = 250_000;
        final long total = (long) producers * perProducer;
        PowerQueue<Long> q = new PowerQueue<>(1000);
        AtomicIntegerArray delivered = new AtomicIntegerArray(producers * perProducer);
        AtomicLong consumed = new AtomicLong();
        LongAdder refused = new LongAdder();
        List<Thread.Builder> builders = new ArrayList<>();
        List<ThrowingRunnable> bodies = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            final int id = p;
            builders.add(Thread.ofPlatform().name("producer-" + p));
            bodies.add(() -> {
                for (int i = 0; i < perProducer; i++) {
                    Long v = encode(id, i);
                    while (!q.offer(v)) {
                        refused.increment();
                        Thread.yield();
                    }
                }
            });
        }
        for (int c = 0; c < consumers; c++) {
            builders.add(Thread.ofPlatform().name("consumer-" + c));
            bodies.add(() -> {
                long[] lastSeen = new long[producers];
                java.util.Arrays.fill(lastSeen, -1);
                while (consumed.get() < total) {
                    Long v = q.poll();
                    if (v == null) {
                        Thread.yield();
                        continue;
                    }
                    deliver(v, lastSeen, delivered, perProducer);
                    consumed.incrementAndGet();
                }
            });
        }
        runAll(builders, bodies);
        assertEquals(total, consumed.get());
        assertAllDeliveredOnce(delivered);
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        assertEquals(refused.sum(), q.dropped(), "every refused offer is counted once");
    }

    /**
     * 4 producers x 50k into a small queue, 4 consumers blocked in take() or poll(timeout) on
     * platform and virtual threads: no wake-up is lost, every element arrives once, in order.
     */
    @Test
    void blockingConsumersGetEveryElementOnceInProducerOrder() throws InterruptedException {
        final int producers = 4;
        final int consumers = 4;
        final int perProducer = 50_000;
        final Long poison = -1L;
        PowerQueue<Long> q = new PowerQueue<>(16);
        AtomicIntegerArray delivered = new AtomicIntegerArray(producers * perProducer);
        List<Thread.Builder> builders = new ArrayList<>();
        List<ThrowingRunnable> bodies = new ArrayList<>();
        CountDownLatch producersDone = new CountDownLatch(producers);
        for (int p = 0; p < producers; p++) {
            final int id = p;
            builders.add(p % 2 == 0 ? Thread.ofPlatform() : Thread.ofVirtual());
            bodies.add(() -> {
                for (int i = 0; i < perProducer; i++) {
                    Long v = encode(id, i);
                    while (!q.offer(v)) {
                        // Park, not Thread.yield(): a virtual thread spinning on yield() keeps its
                        // carrier and starves the virtual consumers that would empty the queue.
                        LockSupport.parkNanos(10_000);
                    }
                }
                producersDone.countDown();
            });
        }
        for (int c = 0; c < consumers; c++) {
            final boolean timed = c >= 2;
            builders.add(c % 2 == 0 ? Thread.ofPlatform() : Thread.ofVirtual());
            bodies.add(() -> {
                long[] lastSeen = new long[producers];
                java.util.Arrays.fill(lastSeen, -1);
                while (true) {
                    Long v = timed ? q.poll(10, TimeUnit.MILLISECONDS) : q.take();
                    if (v == null) {
                        continue;
                    }
                    if (v.equals(poison)) {
                        return;
                    }
                    deliver(v, lastSeen, delivered, perProducer);
                }
            });
        }
        // One poison pill per consumer, offered once every producer is done.
        builders.add(Thread.ofPlatform());
        bodies.add(() -> {
            producersDone.await();
            for (int c = 0; c < consumers; c++) {
                while (!q.offer(poison)) {
                    Thread.yield();
                }
            }
        });
        runAll(builders, bodies);
        assertAllDeliveredOnce(delivered);
        assertTrue(q.isEmpty());
    }

    /**
     * A remover cancels elements while producers and consumers run: every element is either
     * consumed or removed, exactly once, and size() ends at 0.
     */
    @Test
    void concurrentRemoveNeverLosesOrDuplicates() throws InterruptedException {
        // On two loaded cores one round can pass without the remover ever winning a race (it
        // proves nothing then), so rounds repeat until it has won at least once.
        long removedTotal = 0;
        for (int round = 0; round < 5 && removedTotal == 0; round++) {
            removedTotal += removeRaceRound();
        }
        assertTrue(removedTotal > 0, "the remover never won a race in 5 rounds; the test proved nothing");
    }

    /** One round of the remove race; returns how many elements the remover won. */
    private long removeRaceRound() throws InterruptedException {
        final int producers = 2;
        final int perProducer = 100_000;
        final long total = (long) producers * perProducer;
        PowerQueue<Long> q = new PowerQueue<>(64);
        AtomicIntegerArray delivered = new AtomicIntegerArray(producers * perProducer);
        AtomicLongArray lastOffered = new AtomicLongArray(producers);
        AtomicLong accounted = new AtomicLong();
        LongAdder removed = new LongAdder();
        List<Thread.Builder> builders = new ArrayList<>();
        List<ThrowingRunnable> bodies = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            final int id = p;
            builders.add(Thread.ofPlatform());
            bodies.add(() -> {
                for (int i = 0; i < perProducer; i++) {
                    Long v = encode(id, i);
                    while (!q.offer(v)) {
                        Thread.yield();
                    }
                    lastOffered.set(id, v);
                }
            });
        }
        for (int c = 0; c < 2; c++) {
            builders.add(Thread.ofPlatform());
            bodies.add(() -> {
                long[] lastSeen = new long[producers];
                java.util.Arrays.fill(lastSeen, -1);
                while (accounted.get() < total) {
                    Long v = q.poll();
                    if (v == null) {
                        Thread.yield();
                        continue;
                    }
                    deliver(v, lastSeen, delivered, perProducer);
                    accounted.incrementAndGet();
                }
            });
        }
        builders.add(Thread.ofPlatform());
        bodies.add(() -> {
            int p = 0;
            while (accounted.get() < total) {
                long v = lastOffered.get(p);
                p = (p + 1) % producers;
                if (q.remove(v)) {
                    int n = delivered.incrementAndGet((int) (v >>> 32) * perProducer + (int) v);
                    if (n != 1) {
                        throw new AssertionError("removed an element also delivered: " + v);
                    }
                    removed.increment();
                    accounted.incrementAndGet();
                } else {
                    Thread.yield();
                }
            }
        });
        runAll(builders, bodies);
        assertAllDeliveredOnce(delivered);
        assertEquals(0, q.size());
        assertNull(q.poll());
        assertFalse(q.remove(0L));
        return removed.sum();
    }
}
