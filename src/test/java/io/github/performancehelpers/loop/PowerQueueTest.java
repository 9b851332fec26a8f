package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The single-threaded and blocking contract of {@link PowerQueue}. */
class PowerQueueTest {

    /** Generous bound for a thread to reach a state or finish; never a measured duration. */
    private static final long WAIT_SECONDS = 30;

    /** Spins until {@code t} is parked (WAITING or TIMED_WAITING), or fails after a long bound. */
    private static void awaitParked(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            Thread.State s = t.getState();
            if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) {
                return;
            }
            assertTrue(t.isAlive(), "thread ended instead of waiting");
            assertTrue(System.nanoTime() < deadline, "thread never parked: " + s);
            Thread.sleep(1);
        }
    }

    // ---------------------------------------------------------------- construction

    /** A capacity below 1 is refused, naming the option and the value. */
    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void capacityBelowOneIsRejected(int capacity) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new PowerQueue<>(capacity));
        assertEquals("capacity must be >= 1: " + capacity, e.getMessage());
    }

    /** A new queue is empty, has the given capacity and has dropped nothing. */
    @Test
    void newQueueIsEmpty() {
        PowerQueue<String> q = new PowerQueue<>(7);
        assertEquals(7, q.capacity());
        assertEquals(0, q.size());
        assertTrue(q.isEmpty());
        assertEquals(0L, q.dropped());
        assertNull(q.poll());
        assertNull(q.peek());
    }

    /** offer(null) throws a NullPointerException naming the parameter, and changes nothing. */
    @Test
    void offerNullIsRejected() {
        PowerQueue<String> q = new PowerQueue<>(1);
        NullPointerException e = assertThrows(NullPointerException.class, () -> q.offer(null));
        assertEquals("e", e.getMessage());
        assertEquals(0, q.size());
        assertEquals(0L, q.dropped());
    }

    // ---------------------------------------------------------------- FIFO and capacity

    /** Elements come out in the order they went in. */
    @Test
    void pollIsFifo() {
        PowerQueue<Integer> q = new PowerQueue<>(4);
        for (int i = 0; i < 4; i++) {
            assertTrue(q.offer(i));
        }
        assertEquals(4, q.size());
        for (int i = 0; i < 4; i++) {
            assertEquals(i, q.poll());
        }
        assertNull(q.poll());
    }

    /** FIFO holds across many laps of the ring, for a power-of-two and a non-power-of-two capacity. */
    @ParameterizedTest
    @ValueSource(ints = {1, 3, 8, 100})
    void fifoHoldsAcrossManyLaps(int capacity) {
        PowerQueue<Integer> q = new PowerQueue<>(capacity);
        int next = 0;
        int expected = 0;
        for (int lap = 0; lap < 50; lap++) {
            int batch = 1 + lap % capacity;
            for (int i = 0; i < batch; i++) {
                assertTrue(q.offer(next++));
            }
            assertEquals(batch, q.size());
            for (int i = 0; i < batch; i++) {
                assertEquals(expected++, q.poll());
            }
        }
    }

    /** A full queue refuses the offer, counts it in dropped(), and does not retain the element. */
    @Test
    void offerToFullQueueReturnsFalseAndCountsADrop() {
        PowerQueue<String> q = new PowerQueue<>(2);
        assertTrue(q.offer("a"));
        assertTrue(q.offer("b"));
        assertFalse(q.offer("c"));
        assertFalse(q.offer("d"));
        assertEquals(2L, q.dropped());
        assertEquals(2, q.size());
        assertEquals("a", q.poll());
        assertTrue(q.offer("e"));
        assertEquals("b", q.poll());
        assertEquals("e", q.poll());
        assertNull(q.poll());
        assertEquals(2L, q.dropped());
    }

    /** peek() returns the head without removing it. */
    @Test
    void peekDoesNotRemove() {
        PowerQueue<String> q = new PowerQueue<>(3);
        q.offer("a");
        q.offer("b");
        assertEquals("a", q.peek());
        assertEquals("a", q.peek());
        assertEquals(2, q.size());
        assertEquals("a", q.poll());
        assertEquals("b", q.peek());
    }

    /** clear() empties the queue, frees its capacity, and keeps the dropped count. */
    @Test
    void clearEmptiesButKeepsDropped() {
        PowerQueue<Integer> q = new PowerQueue<>(2);
        q.offer(1);
        q.offer(2);
        q.offer(3);
        q.clear();
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        assertEquals(1L, q.dropped());
        assertTrue(q.offer(4));
        assertTrue(q.offer(5));
        assertEquals(4, q.poll());
    }

    /** drainTo() moves every element, in order, and returns the count. */
    @Test
    void drainToMovesAllInOrder() {
        PowerQueue<Integer> q = new PowerQueue<>(5);
        for (int i = 0; i < 5; i++) {
            q.offer(i);
        }
        List<Object> out = new ArrayList<>(List.of("x"));
        assertEquals(5, q.drainTo(out));
        assertEquals(List.of("x", 0, 1, 2, 3, 4), out);
        assertTrue(q.isEmpty());
        assertEquals(0, q.drainTo(out));
    }

    /** drainTo(null) throws a NullPointerException naming the parameter and removes nothing. */
    @Test
    void drainToNullIsRejected() {
        PowerQueue<Integer> q = new PowerQueue<>(2);
        q.offer(1);
        NullPointerException e = assertThrows(NullPointerException.class, () -> q.drainTo(null));
        assertEquals("c", e.getMessage());
        assertEquals(1, q.size());
    }

    // ---------------------------------------------------------------- remove(Object)

    /** remove(o) removes exactly one equal element from the middle; the rest keep their order. */
    @Test
    void removeTakesOneInstanceOutOfTheMiddle() {
        PowerQueue<String> q = new PowerQueue<>(5);
        for (String s : List.of("a", "b", "c", "b", "d")) {
            q.offer(s);
        }
        assertTrue(q.remove(new String("b")));
        assertEquals(4, q.size());
        List<String> out = new ArrayList<>();
        q.drainTo(out);
        assertEquals(List.of("a", "c", "b", "d"), out);
    }

    /** remove of an absent element or of null returns false and changes nothing. */
    @Test
    void removeAbsentReturnsFalse() {
        PowerQueue<String> q = new PowerQueue<>(3);
        q.offer("a");
        assertFalse(q.remove("z"));
        assertFalse(q.remove(null));
        assertEquals(1, q.size());
        assertEquals("a", q.peek());
    }

    /** A removed head is invisible to peek() and poll(). */
    @Test
    void removedHeadIsSkippedByPeekAndPoll() {
        PowerQueue<String> q = new PowerQueue<>(3);
        q.offer("a");
        q.offer("b");
        assertTrue(q.remove("a"));
        assertEquals("b", q.peek());
        assertEquals(1, q.size());
        assertEquals("b", q.poll());
        assertNull(q.poll());
        assertTrue(q.isEmpty());
    }

    /** The removed element's slot is reclaimed once consumers pass it: full capacity is usable again. */
    @Test
    void removedSlotIsReclaimedOnceConsumersPassIt() {
        PowerQueue<Integer> q = new PowerQueue<>(3);
        q.offer(1);
        q.offer(2);
        q.offer(3);
        assertTrue(q.remove(2));
        assertEquals(1, q.poll());
        assertEquals(3, q.poll());
        assertNull(q.poll());
        for (int i = 10; i < 13; i++) {
            assertTrue(q.offer(i));
        }
        assertEquals(3, q.size());
        assertFalse(q.offer(99));
    }

    /** Removing every element leaves an empty queue whose poll() returns null. */
    @Test
    void removingEverythingLeavesAnEmptyQueue() {
        PowerQueue<Integer> q = new PowerQueue<>(4);
        for (int i = 0; i < 4; i++) {
            q.offer(i);
        }
        for (int i = 3; i >= 0; i--) {
            assertTrue(q.remove(i));
        }
        assertEquals(0, q.size());
        assertNull(q.peek());
        assertNull(q.poll());
        assertTrue(q.offer(7));
        assertEquals(7, q.poll());
    }

    // ---------------------------------------------------------------- blocking consumers

    /** take() returns at once when an element is present. */
    @Test
    void takeReturnsAPresentElement() throws InterruptedException {
        PowerQueue<String> q = new PowerQueue<>(2);
        q.offer("a");
        assertEquals("a", q.take());
    }

    /** take() on a virtual thread blocks while empty and returns the element a producer offers. */
    @Test
    void takeBlocksUntilAnOffer() throws Exception {
        PowerQueue<String> q = new PowerQueue<>(2);
        AtomicReference<String> got = new AtomicReference<>();
        Thread consumer = Thread.ofVirtual().start(() -> {
            try {
                got.set(q.take());
            } catch (InterruptedException e) {
                got.set("interrupted");
            }
        });
        awaitParked(consumer);
        assertNull(got.get());
        assertTrue(q.offer("x"));
        assertTrue(consumer.join(java.time.Duration.ofSeconds(WAIT_SECONDS)));
        assertEquals("x", got.get());
        assertTrue(q.isEmpty());
    }

    /**
     * awaitNotEmpty() (the executor's dispatcher waits here before it takes a slot) blocks while
     * empty, returns once a producer offers, and leaves the element in the queue.
     */
    @Test
    void awaitNotEmptyBlocksUntilAnOfferAndRemovesNothing() throws Exception {
        PowerQueue<String> q = new PowerQueue<>(2);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                q.awaitNotEmpty();
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        awaitParked(waiter);
        assertFalse(outcome.isDone());
        assertTrue(q.offer("x"));
        assertNull(outcome.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(1, q.size());
        assertEquals("x", q.poll());
    }

    /** awaitNotEmpty() is interruptible while it waits. */
    @Test
    void awaitNotEmptyIsInterruptible() throws Exception {
        PowerQueue<String> q = new PowerQueue<>(2);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                q.awaitNotEmpty();
                outcome.complete(new AssertionError("returned on an empty queue"));
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        awaitParked(waiter);
        waiter.interrupt();
        assertTrue(outcome.get(WAIT_SECONDS, TimeUnit.SECONDS) instanceof InterruptedException);
    }

    /** Interrupting a consumer blocked in take() throws InterruptedException; nothing is lost. */
    @Test
    void takeIsInterruptibleAndLosesNothing() throws Exception {
        PowerQueue<String> q = new PowerQueue<>(2);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread consumer = Thread.ofVirtual().start(() -> {
            try {
                outcome.complete(new AssertionError("took " + q.take()));
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        awaitParked(consumer);
        consumer.interrupt();
        assertTrue(outcome.get(WAIT_SECONDS, TimeUnit.SECONDS) instanceof InterruptedException);
        assertTrue(q.offer("kept"));
        assertEquals("kept", q.poll());
    }

    /** take() with the interrupt status already set throws and leaves the element in the queue. */
    @Test
    void takeWhenAlreadyInterruptedThrowsAndKeepsTheElement() {
        PowerQueue<String> q = new PowerQueue<>(2);
        q.offer("a");
        Thread.currentThread().interrupt();
        try {
            assertThrows(InterruptedException.class, q::take);
        } finally {
            Thread.interrupted();
        }
        assertEquals("a", q.poll());
    }

    /** poll(timeout) on an empty queue returns null once the timeout has passed. */
    @Test
    void timedPollReturnsNullWhenNothingArrives() throws InterruptedException {
        PowerQueue<String> q = new PowerQueue<>(2);
        assertNull(q.poll(20, TimeUnit.MILLISECONDS));
        assertNull(q.poll(0, TimeUnit.MILLISECONDS));
        assertNull(q.poll(-1, TimeUnit.MILLISECONDS));
    }

    /** poll(timeout) returns an element offered while it waits. */
    @Test
    void timedPollReturnsAnElementOfferedWhileWaiting() throws Exception {
        PowerQueue<String> q = new PowerQueue<>(2);
        CompletableFuture<String> got = new CompletableFuture<>();
        Thread consumer = Thread.ofVirtual().start(() -> {
            try {
                got.complete(q.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            } catch (Throwable t) {
                got.completeExceptionally(t);
            }
        });
        awaitParked(consumer);
        q.offer("y");
        assertEquals("y", got.get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    /** Interrupting a consumer in poll(timeout) throws InterruptedException. */
    @Test
    void timedPollIsInterruptible() throws Exception {
        PowerQueue<String> q = new PowerQueue<>(2);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread consumer = Thread.ofVirtual().start(() -> {
            try {
                outcome.complete(new AssertionError("polled " + q.poll(1, TimeUnit.HOURS)));
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        awaitParked(consumer);
        consumer.interrupt();
        assertTrue(outcome.get(WAIT_SECONDS, TimeUnit.SECONDS) instanceof InterruptedException);
    }

    /** poll(timeout, null) throws a NullPointerException naming the parameter. */
    @Test
    void timedPollRejectsNullUnit() {
        PowerQueue<String> q = new PowerQueue<>(2);
        NullPointerException e = assertThrows(NullPointerException.class, () -> q.poll(1, null));
        assertEquals("unit", e.getMessage());
    }

    /** Several parked consumers are each woken by one offer: no wake-up is lost. */
    @Test
    void everyParkedConsumerIsWokenByItsOwnOffer()
            throws InterruptedException, ExecutionException, TimeoutException {
        PowerQueue<Integer> q = new PowerQueue<>(8);
        List<CompletableFuture<Integer>> results = new ArrayList<>();
        List<Thread> consumers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            CompletableFuture<Integer> f = new CompletableFuture<>();
            results.add(f);
            consumers.add(Thread.ofVirtual().start(() -> {
                try {
                    f.complete(q.take());
                } catch (Throwable t) {
                    f.completeExceptionally(t);
                }
            }));
        }
        for (Thread t : consumers) {
            awaitParked(t);
        }
        for (int i = 0; i < 4; i++) {
            assertTrue(q.offer(i));
        }
        int sum = 0;
        for (CompletableFuture<Integer> f : results) {
            sum += f.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        assertEquals(0 + 1 + 2 + 3, sum);
        assertTrue(q.isEmpty());
    }

    /** toString() reports the counters. */
    @Test
    void toStringReportsCounters() {
        PowerQueue<String> q = new PowerQueue<>(1);
        q.offer("a");
        q.offer("b");
        assertEquals("PowerQueue[size=1, capacity=1, dropped=1]", q.toString());
    }

    /** offered() counts successful offers only: refusals, polls, removals and clear() leave it alone. */
    @Test
    void offeredCountsSuccessfulOffersOnly() {
        PowerQueue<String> q = new PowerQueue<>(2);
        assertTrue(q.offer("a"));
        assertTrue(q.offer("b"));
        assertFalse(q.offer("c")); // full: dropped, not offered
        assertEquals(2L, q.offered());
        assertEquals("a", q.poll());
        assertTrue(q.remove("b"));
        assertTrue(q.offer("d"));
        q.clear();
        assertEquals(3L, q.offered());
        assertEquals(1L, q.dropped());
    }
}
