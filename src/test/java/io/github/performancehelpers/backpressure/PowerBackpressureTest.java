package io.github.performancehelpers.backpressure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.QueueFullException;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/** Acquisition, release, accounting, cancellation, reset, close and iteration of {@link PowerBackpressure}. */
class PowerBackpressureTest {

    private final ManualScheduler scheduler = new ManualScheduler();
    private final FakeTicker ticker = new FakeTicker();

    private PowerBackpressure.Builder builder() {
        return PowerBackpressure.builder().scheduler(scheduler).ticker(ticker);
    }

    /** The accounting identity that holds at every instant. */
    static void assertAccounted(PowerBackpressure bp) {
        PowerBackpressure.Stats s = bp.stats();
        assertEquals(s.minted() - s.retired(), (long) s.active() + s.available(),
                "active + available must equal minted - retired: " + s);
    }

    /** Waits (bounded) until the condition holds; used only to reach a state, never as an assertion of timing. */
    static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not reached in 30 s");
            }
            Thread.sleep(1);
        }
    }

    // ---- seed examples -----------------------------------------------------------------

    /** Seed "Disposal": try-with-resources over the controller and the permit; close() runs at the end. */
    @Test
    void seedDisposalExampleWorksWithTryWithResources() {
        PowerBackpressure outer;
        try (PowerBackpressure bp = builder().capacity(64).queueCapacity(100).build()) {
            outer = bp;
            try (Permit release = bp.acquire().join()) {
                assertEquals(63, bp.available());
                assertFalse(release.isReleased());
            }
            assertEquals(64, bp.available());
        }
        assertTrue(outer.isClosed());
        assertTrue(outer.acquire().isCompletedExceptionally());
    }

    /** Seed "Example": capacity 8 in front of a pool; concurrent publishTask calls never hold more than 8 permits. */
    @Test
    void seedExamplePublishTaskNeverHoldsMoreThanCapacity() throws Exception {
        PowerBackpressure bp = builder().capacity(8).queueCapacity(100).lowWaterMark(2)
                .refillAmount(2).refillInterval(Duration.ofMillis(100)).build();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        ExecutorService producers = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                done.add(producers.submit(() -> {
                    for (int i = 0; i < 200; i++) {
                        Permit release = bp.acquire().get();
                        try {
                            int now = inside.incrementAndGet();
                            maxInside.accumulateAndGet(now, Math::max);
                            Thread.onSpinWait();
                            inside.decrementAndGet();
                        } finally {
                            release.release();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            producers.shutdownNow();
            assertTrue(producers.awaitTermination(30, TimeUnit.SECONDS));
        }
        assertTrue(maxInside.get() <= 8, "held at once: " + maxInside.get());
        assertEquals(8, bp.available());
        assertEquals(0, bp.active());
        assertEquals(3200, bp.stats().acquired());
        bp.close();
    }

    /** Seed "Try-acquire fallback": tryAcquire returns a permit or empty at once, and the fallback path runs when empty. */
    @Test
    void seedTryAcquireFallback() {
        PowerBackpressure bp = builder().capacity(1).build();
        List<String> persisted = new ArrayList<>();
        Optional<Permit> first = bp.tryAcquire();
        assertTrue(first.isPresent());
        Optional<Permit> second = bp.tryAcquire();
        if (second.isEmpty()) {
            persisted.add("task-2");
        }
        assertEquals(List.of("task-2"), persisted);
        first.get().release();
        assertTrue(bp.tryAcquire().isPresent());
    }

    /** Seed "Real-world usage": stats().pressure is held permits over capacity, in [0, 1]. */
    @Test
    void pressureIsHeldPermitsOverCapacityInZeroToOne() {
        PowerBackpressure bp = builder().capacity(8).queueCapacity(32).build();
        assertEquals(0.0, bp.stats().pressure());
        List<Permit> held = new ArrayList<>();
        held.add(bp.acquire().join());
        held.add(bp.acquire().join());
        assertEquals(0.25, bp.stats().pressure());
        for (int i = 0; i < 6; i++) {
            held.add(bp.acquire().join());
        }
        assertEquals(1.0, bp.stats().pressure());
        bp.release(1); // a ninth permit reaches a waiter or the pool; hand one out beyond capacity
        held.add(bp.tryAcquire().orElseThrow());
        assertEquals(9, bp.active());
        assertEquals(1.0, bp.stats().pressure(), "pressure is clamped to 1 when active exceeds capacity");
        held.forEach(Permit::release);
        assertEquals(0.0, bp.stats().pressure());
    }

    /** Seed "Async iteration": a for-each loop over the controller yields permits and stops when it is closed. */
    @Test
    void seedIterationYieldsPermitsAndStopsOnClose() throws Exception {
        PowerBackpressure bp = builder().capacity(2).build();
        AtomicInteger work = new AtomicInteger();
        Thread producer = Thread.ofPlatform().start(() -> {
            for (Permit release : bp) {
                try {
                    work.incrementAndGet();
                } finally {
                    release.release();
                }
                if (work.get() == 100) {
                    bp.close();
                }
            }
        });
        producer.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(producer.isAlive());
        assertEquals(100, work.get());
        assertEquals(0, bp.active());
    }

    // ---- acquire / release ---------------------------------------------------------------

    /** acquire() with a permit available completes at once and takes it from the pool. */
    @Test
    void acquireWithAPermitAvailableCompletesAtOnce() {
        PowerBackpressure bp = builder().capacity(2).build();
        CompletableFuture<Permit> f = bp.acquire();
        assertTrue(f.isDone());
        assertEquals(1, bp.available());
        assertEquals(1, bp.active());
        f.join().release();
        assertEquals(2, bp.available());
        assertEquals(0, bp.active());
    }

    /** acquire() with none available waits in FIFO order and is served by releases. */
    @Test
    void waitersAreServedInFifoOrder() {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.acquire().join();
        CompletableFuture<Permit> a = bp.acquire();
        CompletableFuture<Permit> b = bp.acquire();
        assertFalse(a.isDone());
        assertEquals(2, bp.pending());
        held.release();
        assertTrue(a.isDone());
        assertFalse(b.isDone());
        a.join().release();
        assertTrue(b.isDone());
        assertEquals(0, bp.pending());
    }

    /** A release that hands its permit to a waiter is a transfer: active is unchanged and the pool stays empty. */
    @Test
    void releaseToAWaiterIsATransfer() {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.acquire().join();
        CompletableFuture<Permit> waiter = bp.acquire();
        assertEquals(1, bp.active());
        held.release();
        assertEquals(1, bp.active());
        assertEquals(0, bp.available());
        assertEquals(1, bp.stats().transfers());
        assertTrue(waiter.isDone());
        assertAccounted(bp);
    }

    /** tryAcquire never barges past a queued producer. */
    @Test
    void tryAcquireDoesNotBargePastAWaiter() {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.tryAcquire().orElseThrow();
        CompletableFuture<Permit> waiter = bp.acquire();
        held.release();
        assertTrue(bp.tryAcquire().isEmpty());
        assertTrue(waiter.isDone());
    }

    /** Releasing a permit twice (release, close, release) releases it once. */
    @Test
    void releasingTwiceReleasesOnce() {
        PowerBackpressure bp = builder().capacity(2).build();
        Permit p = bp.tryAcquire().orElseThrow();
        Permit q = bp.tryAcquire().orElseThrow();
        p.release();
        p.release();
        p.close();
        assertTrue(p.isReleased());
        assertFalse(q.isReleased());
        assertEquals(1, bp.available());
        assertEquals(1, bp.active());
        assertAccounted(bp);
    }

    /** Concurrent releases of one permit release it once. */
    @Test
    void concurrentReleasesOfOnePermitReleaseOnce() throws Exception {
        PowerBackpressure bp = builder().capacity(1000).build();
        List<Permit> permits = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            permits.add(bp.tryAcquire().orElseThrow());
        }
        Thread[] ts = new Thread[4];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = Thread.ofPlatform().start(() -> permits.forEach(Permit::release));
        }
        for (Thread t : ts) {
            t.join();
        }
        assertEquals(1000, bp.available());
        assertEquals(0, bp.active());
    }

    /** release(count) serves waiters first, then fills the pool up to capacity and discards the rest. */
    @Test
    void releaseCountServesWaitersThenFillsThePoolUpToCapacity() {
        PowerBackpressure bp = builder().capacity(4).initialTokens(0).lowWaterMark(0).build();
        CompletableFuture<Permit> a = bp.acquire();
        CompletableFuture<Permit> b = bp.acquire();
        bp.release(10);
        assertTrue(a.isDone() && b.isDone());
        assertEquals(4, bp.available());
        assertEquals(2, bp.active());
        assertEquals(6, bp.stats().minted(), "2 handed, 4 into the pool, 4 discarded");
        assertAccounted(bp);
    }

    /** release(count) below 1 is rejected, naming the parameter. */
    @Test
    void releaseCountBelowOneIsRejected() {
        PowerBackpressure bp = builder().build();
        var e = assertThrows(IllegalArgumentException.class, () -> bp.release(0));
        assertEquals("count must be >= 1: 0", e.getMessage());
        assertEquals(100, bp.available());
    }

    // ---- queue bounds ------------------------------------------------------------------

    /** A full waiting queue refuses acquire() at once with QueueFullException (ERR_QUEUE_FULL). */
    @Test
    void fullQueueRefusesAtOnceWithQueueFull() {
        PowerBackpressure bp = builder().capacity(1).queueCapacity(2).build();
        bp.acquire().join();
        bp.acquire();
        assertFalse(bp.isFull());
        bp.acquire();
        assertTrue(bp.isFull());
        CompletableFuture<Permit> refused = bp.acquire();
        assertTrue(refused.isCompletedExceptionally());
        var e = assertThrows(CompletionException.class, refused::join);
        assertInstanceOf(QueueFullException.class, e.getCause());
        assertInstanceOf(RejectedExecutionException.class, e.getCause());
        assertEquals("waiting queue is full: pending=2, queueCapacity=2", e.getCause().getMessage());
        assertEquals(2, bp.pending());
        assertEquals(1, bp.stats().rejected());
    }

    /** Waiters at or above highWaterMark make acquire() refuse at once instead of queueing. */
    @Test
    void highWaterMarkRefusesAtOnce() {
        PowerBackpressure bp = builder().capacity(1).queueCapacity(100).highWaterMark(2).build();
        bp.acquire().join();
        bp.acquire();
        bp.acquire();
        assertTrue(bp.isFull());
        var e = assertThrows(CompletionException.class, () -> bp.acquire().join());
        assertInstanceOf(QueueFullException.class, e.getCause());
        assertEquals("waiting producers at highWaterMark: pending=2, highWaterMark=2", e.getCause().getMessage());
        assertEquals(2, bp.pending());
    }

    /** The default highWaterMark is disabled: producers queue up to queueCapacity (default 1000). */
    @Test
    void defaultHighWaterMarkIsDisabled() {
        PowerBackpressure bp = builder().capacity(1).build();
        bp.acquire().join();
        for (int i = 0; i < 1000; i++) {
            assertFalse(bp.acquire().isDone());
        }
        var e = assertThrows(CompletionException.class, () -> bp.acquire().join());
        assertEquals("waiting queue is full: pending=1000, queueCapacity=1000", e.getCause().getMessage());
    }

    /** highWaterMark does not refuse when a permit is available: it limits waiting, not admission. */
    @Test
    void highWaterMarkDoesNotRefuseAnImmediateAdmission() {
        PowerBackpressure bp = builder().capacity(2).highWaterMark(1).build();
        Permit p = bp.acquire().join();
        assertNotNull(bp.acquire().join());
        p.release();
    }

    /** queueCapacity 0 means an acquire that cannot be served at once is refused. */
    @Test
    void queueCapacityZeroRefusesEveryWait() {
        PowerBackpressure bp = builder().capacity(1).queueCapacity(0).build();
        assertTrue(bp.isFull());
        bp.acquire().join();
        assertTrue(bp.acquire().isCompletedExceptionally());
    }

    // ---- cancellation --------------------------------------------------------------------

    /** Cancelling a waiting future frees its queue slot and no permit goes to it. */
    @Test
    void cancellingAWaiterFreesItsSlotAndLeaksNothing() {
        PowerBackpressure bp = builder().capacity(1).queueCapacity(1).build();
        Permit held = bp.acquire().join();
        CompletableFuture<Permit> waiting = bp.acquire();
        assertTrue(bp.isFull());
        assertTrue(bp.acquire().isCompletedExceptionally());
        assertTrue(waiting.cancel(true));
        assertEquals(0, bp.pending());
        assertFalse(bp.isFull());
        CompletableFuture<Permit> next = bp.acquire();
        assertFalse(next.isDone());
        held.release();
        assertTrue(next.isDone());
        next.join().release();
        assertEquals(1, bp.available());
        assertEquals(0, bp.active());
        assertAccounted(bp);
    }

    /** Completing a waiting future by other means (orTimeout, completeExceptionally) also frees the slot. */
    @Test
    void anyForeignCompletionOfAWaiterFreesTheSlot() {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.acquire().join();
        CompletableFuture<Permit> a = bp.acquire();
        CompletableFuture<Permit> b = bp.acquire();
        a.completeExceptionally(new IllegalStateException("gave up"));
        assertEquals(1, bp.pending());
        held.release();
        assertTrue(b.isDone());
        assertEquals(1, bp.active());
        assertAccounted(bp);
    }

    /** A permit handed to a future that is cancelled before delivery comes back to the pool. */
    @Test
    void permitHandedToAFutureBeingCancelledComesBack() {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.acquire().join();
        CompletableFuture<Permit> waiting = bp.acquire();
        bp.beforeDelivery = f -> f.cancel(false); // the race, made deterministic
        held.release();
        assertTrue(waiting.isCancelled());
        assertEquals(1, bp.available());
        assertEquals(0, bp.active());
        assertEquals(0, bp.pending());
        assertAccounted(bp);
    }

    /** That permit goes to the next waiter instead, if there is one (a transfer). */
    @Test
    void permitHandedToAFutureBeingCancelledGoesToTheNextWaiter() {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.acquire().join();
        CompletableFuture<Permit> first = bp.acquire();
        CompletableFuture<Permit> second = bp.acquire();
        bp.beforeDelivery = f -> {
            if (f == first) {
                f.cancel(false);
            }
        };
        held.release();
        assertTrue(first.isCancelled());
        assertTrue(second.isDone() && !second.isCompletedExceptionally());
        assertEquals(1, bp.active());
        assertEquals(0, bp.available());
        assertAccounted(bp);
    }

    // ---- blocking acquire ----------------------------------------------------------------

    /** The blocking acquire returns at once when a permit is available, even with a zero timeout. */
    @Test
    void blockingAcquireReturnsAtOnceWhenAvailable() throws Exception {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit p = bp.acquire(0, TimeUnit.SECONDS);
        assertEquals(1, bp.active());
        p.release();
    }

    /** The blocking acquire times out with TimeoutException and leaves the queue. */
    @Test
    void blockingAcquireTimesOutAndLeavesTheQueue() {
        PowerBackpressure bp = builder().capacity(1).build();
        bp.tryAcquire().orElseThrow();
        assertThrows(TimeoutException.class, () -> bp.acquire(10, TimeUnit.MILLISECONDS));
        assertEquals(0, bp.pending());
        assertThrows(TimeoutException.class, () -> bp.acquire(0, TimeUnit.MILLISECONDS));
        assertEquals(0, bp.pending());
        assertAccounted(bp);
    }

    /** The blocking acquire is served by a release from another thread. */
    @Test
    void blockingAcquireIsServedByARelease() throws Exception {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.tryAcquire().orElseThrow();
        AtomicReference<Permit> got = new AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                got.set(bp.acquire(30, TimeUnit.SECONDS));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        await(() -> bp.pending() == 1);
        held.release();
        t.join();
        assertNotNull(got.get());
        assertEquals(1, bp.active());
    }

    /** An interrupted thread gets InterruptedException before waiting, and keeps no permit. */
    @Test
    void blockingAcquireWhenAlreadyInterruptedThrows() {
        PowerBackpressure bp = builder().capacity(1).build();
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> bp.acquire(1, TimeUnit.SECONDS));
        assertFalse(Thread.interrupted());
        assertEquals(1, bp.available());
    }

    /** Interrupting a thread blocked in acquire throws InterruptedException, frees the slot and leaks no permit. */
    @Test
    void blockingAcquireInterruptedWhileWaiting() throws Exception {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.tryAcquire().orElseThrow();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                bp.acquire(30, TimeUnit.SECONDS);
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        await(() -> bp.pending() == 1);
        t.interrupt();
        t.join();
        assertInstanceOf(InterruptedException.class, thrown.get());
        assertEquals(0, bp.pending());
        held.release();
        assertEquals(1, bp.available());
        assertEquals(0, bp.active());
    }

    /** The blocking acquire throws QueueFullException itself when the queue is full. */
    @Test
    void blockingAcquireThrowsQueueFull() {
        PowerBackpressure bp = builder().capacity(1).queueCapacity(0).build();
        bp.tryAcquire().orElseThrow();
        assertThrows(QueueFullException.class, () -> bp.acquire(1, TimeUnit.SECONDS));
    }

    /** unit null is an NPE naming it. */
    @Test
    void blockingAcquireNullUnit() {
        PowerBackpressure bp = builder().build();
        assertEquals("unit", assertThrows(NullPointerException.class, () -> bp.acquire(1, null)).getMessage());
    }

    // ---- reset -------------------------------------------------------------------------

    /** reset() fails waiting futures (they never hang) with RejectedExecutionException. */
    @Test
    void resetFailsWaiters() {
        PowerBackpressure bp = builder().capacity(1).build();
        bp.acquire().join();
        CompletableFuture<Permit> waiting = bp.acquire();
        bp.reset();
        assertTrue(waiting.isCompletedExceptionally());
        var e = assertThrows(ExecutionException.class, waiting::get);
        assertInstanceOf(RejectedExecutionException.class, e.getCause());
        assertEquals(0, bp.pending());
    }

    /** reset() restores available up to capacity less the permits still held, which stay counted. */
    @Test
    void resetRestoresAvailableLessHeld() {
        PowerBackpressure bp = builder().capacity(8).lowWaterMark(0).build();
        List<Permit> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(bp.tryAcquire().orElseThrow());
        }
        bp.release(1); // available 6
        bp.reset();
        assertEquals(5, bp.available());
        assertEquals(3, bp.active());
        held.forEach(Permit::release);
        assertEquals(8, bp.available());
        assertEquals(0, bp.active());
        assertAccounted(bp);
    }

    /** reset() with more held than capacity (after minting) leaves available at 0, never negative. */
    @Test
    void resetWithMoreHeldThanCapacityLeavesZeroAvailable() {
        PowerBackpressure bp = builder().capacity(2).lowWaterMark(0).build();
        bp.tryAcquire().orElseThrow();
        bp.tryAcquire().orElseThrow();
        bp.release(1);
        bp.tryAcquire().orElseThrow();
        assertEquals(3, bp.active());
        bp.reset();
        assertEquals(0, bp.available());
        assertEquals(3, bp.active());
        assertAccounted(bp);
    }

    /** After reset() the controller works as before. */
    @Test
    void resetDoesNotCloseTheController() {
        PowerBackpressure bp = builder().capacity(1).build();
        bp.reset();
        assertFalse(bp.isClosed());
        assertTrue(bp.acquire().isDone());
    }

    // ---- close -------------------------------------------------------------------------

    /** close() fails waiting futures and refuses new acquires; tryAcquire returns empty. */
    @Test
    void closeFailsWaitersAndRefusesNewAcquires() {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.acquire().join();
        CompletableFuture<Permit> waiting = bp.acquire();
        bp.close();
        var e = assertThrows(CompletionException.class, waiting::join);
        assertInstanceOf(RejectedExecutionException.class, e.getCause());
        assertEquals(0, bp.pending());
        var refused = assertThrows(CompletionException.class, () -> bp.acquire().join());
        assertInstanceOf(RejectedExecutionException.class, refused.getCause());
        assertFalse(refused.getCause() instanceof QueueFullException);
        assertThrows(RejectedExecutionException.class, () -> bp.acquire(1, TimeUnit.SECONDS));
        held.release();
        assertTrue(bp.tryAcquire().isEmpty(), "closed: even with a permit in the pool");
        assertEquals(1, bp.available());
        assertEquals(0, bp.active());
    }

    /** close() is idempotent. */
    @Test
    void closeIsIdempotent() {
        PowerBackpressure bp = builder().build();
        bp.close();
        bp.close();
        assertTrue(bp.isClosed());
        assertTrue(bp.stats().closed());
    }

    // ---- iteration -----------------------------------------------------------------------

    /** The iterator of a closed controller is empty, and next() then throws NoSuchElementException. */
    @Test
    void iteratorOfAClosedControllerIsEmpty() {
        PowerBackpressure bp = builder().build();
        bp.close();
        Iterator<Permit> it = bp.iterator();
        assertFalse(it.hasNext());
        assertThrows(NoSuchElementException.class, it::next);
    }

    /** hasNext() blocked waiting for a permit returns false when the controller is closed. */
    @Test
    void blockedHasNextEndsOnClose() throws Exception {
        PowerBackpressure bp = builder().capacity(1).build();
        bp.tryAcquire().orElseThrow();
        AtomicReference<Boolean> result = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> result.set(bp.iterator().hasNext()));
        await(() -> bp.pending() == 1);
        bp.close();
        t.join();
        assertEquals(Boolean.FALSE, result.get());
    }

    /** hasNext() waiting through a reset() queues again rather than ending. */
    @Test
    void blockedHasNextSurvivesReset() throws Exception {
        PowerBackpressure bp = builder().capacity(1).lowWaterMark(0).build();
        Permit held = bp.tryAcquire().orElseThrow();
        AtomicReference<Permit> got = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            Iterator<Permit> it = bp.iterator();
            if (it.hasNext()) {
                got.set(it.next());
            }
        });
        await(() -> bp.pending() == 1);
        long before = bp.stats().acquired();
        bp.reset(); // fails the waiter; available = 1 - 1 held = 0, so the iterator queues again
        await(() -> bp.pending() == 1);
        assertEquals(before, bp.stats().acquired());
        held.release();
        t.join();
        assertNotNull(got.get());
        assertNotSame(held, got.get());
    }

    /** An interrupt while hasNext() waits ends the iteration with the interrupt status set and no permit kept. */
    @Test
    void interruptedHasNextEndsIteration() throws Exception {
        PowerBackpressure bp = builder().capacity(1).build();
        Permit held = bp.tryAcquire().orElseThrow();
        AtomicReference<Boolean> result = new AtomicReference<>();
        AtomicReference<Boolean> interrupted = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            result.set(bp.iterator().hasNext());
            interrupted.set(Thread.currentThread().isInterrupted());
        });
        await(() -> bp.pending() == 1);
        t.interrupt();
        t.join();
        assertEquals(Boolean.FALSE, result.get());
        assertEquals(Boolean.TRUE, interrupted.get());
        assertEquals(0, bp.pending());
        held.release();
        assertEquals(1, bp.available());
    }

    /** hasNext() is idempotent: it holds one permit until next() hands it over. */
    @Test
    void hasNextHoldsOnePermitUntilNext() {
        PowerBackpressure bp = builder().capacity(3).build();
        Iterator<Permit> it = bp.iterator();
        assertTrue(it.hasNext());
        assertTrue(it.hasNext());
        assertEquals(1, bp.active());
        Permit p = it.next();
        assertFalse(p.isReleased());
        assertEquals(1, bp.active());
        p.release();
    }
}
