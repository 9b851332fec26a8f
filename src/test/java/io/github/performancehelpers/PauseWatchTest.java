package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The JVM's pause watch ({@link PauseWatch}) on a fake clock whose sleeps the test releases one
 * at a time, each with how much later than asked it ends; and the shared watch's thread while an
 * executor on the system ticker runs.
 */
class PauseWatchTest {

    private static final long MS = 1_000_000L;

    /** A clock and a sleep driven by the test: each sleep takes one lateness from {@link #steps}. */
    private static final class Driven {
        final AtomicLong now = new AtomicLong();
        final BlockingQueue<Long> steps = new LinkedBlockingQueue<>();
        final PauseWatch watch = new PauseWatch(now::get, this::sleep, "pause-watch-test");

        private void sleep(long nanos) {
            try {
                now.addAndGet(nanos + steps.take());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void aWakeUpLaterThanTenMillisecondsIsReportedToEverySubscriberWithItsLength() throws Exception {
        Driven d = new Driven();
        BlockingQueue<Long> first = new LinkedBlockingQueue<>();
        BlockingQueue<Long> second = new LinkedBlockingQueue<>();
        PauseWatch.Subscription a = d.watch.subscribe(first::add);
        PauseWatch.Subscription b = d.watch.subscribe(second::add);
        d.steps.add(0L);
        d.steps.add(5 * MS); // a late wake-up of a loaded machine, under the note's threshold
        d.steps.add(99 * MS);
        assertEquals(99 * MS, first.poll(30, TimeUnit.SECONDS));
        assertEquals(99 * MS, second.poll(30, TimeUnit.SECONDS));
        assertTrue(first.isEmpty() && second.isEmpty(), "the on-time and the 5-ms wake-ups are not pauses");
        a.close();
        b.close();
        d.steps.add(0L); // out of its sleep: it sees no one left
        awaitStopped(d.watch);
    }

    @Test
    void aSubscriberThatThrowsDoesNotStopTheWatchForTheOthers() throws Exception {
        Driven d = new Driven();
        BlockingQueue<Long> seen = new LinkedBlockingQueue<>();
        try (PauseWatch.Subscription failing = d.watch.subscribe(n -> {
            throw new IllegalStateException("subscriber failure");
        }); PauseWatch.Subscription ok = d.watch.subscribe(seen::add)) {
            d.steps.add(60 * MS);
            d.steps.add(70 * MS);
            assertEquals(60 * MS, seen.poll(30, TimeUnit.SECONDS));
            assertEquals(70 * MS, seen.poll(30, TimeUnit.SECONDS));
        }
        d.steps.add(0L);
        awaitStopped(d.watch);
    }

    @Test
    void theLastSubscriberOutStopsTheThreadAndTheNextStartsOne() throws Exception {
        Driven d = new Driven();
        assertFalse(d.watch.running());
        PauseWatch.Subscription s = d.watch.subscribe(n -> { });
        assertTrue(d.watch.running());
        s.close();
        s.close(); // idempotent
        d.steps.add(0L);
        awaitStopped(d.watch);
        BlockingQueue<Long> seen = new LinkedBlockingQueue<>();
        try (PauseWatch.Subscription again = d.watch.subscribe(seen::add)) {
            assertTrue(d.watch.running());
            d.steps.add(80 * MS);
            assertEquals(80 * MS, seen.poll(30, TimeUnit.SECONDS));
        }
        d.steps.add(0L);
        awaitStopped(d.watch);
        assertNull(seen.poll());
    }

    @Test
    void anExecutorOnTheSystemTickerKeepsTheSharedWatchRunning() {
        PowerFlowExecutor e = PowerFlowExecutor.builder()
                .name("pause-watch-check")
                .targetP99(Duration.ofMillis(50))
                .build();
        try {
            assertEquals(1, PowerFlowExecutorTest.liveThreadsNamed(PauseWatch.THREAD_NAME),
                    "one watch thread for the JVM while an executor runs");
        } finally {
            e.close();
        }
    }

    /** Waits (a generous bound: the watch's thread must get a CPU) until the watch's thread has ended. */
    private static void awaitStopped(PauseWatch watch) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (watch.running() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertFalse(watch.running(), "the watch's thread ended");
    }
}
