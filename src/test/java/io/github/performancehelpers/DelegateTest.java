package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The delegate seam: one kind per delegate, and what each kind does with slots and sizes. */
class DelegateTest {

    private static ThreadPoolExecutor pool(int size) {
        return new ThreadPoolExecutor(size, size, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>());
    }

    /** The default is virtual threads, a ThreadPoolExecutor a pool, anything else plain. */
    @Test
    void ofChoosesTheKind() throws Exception {
        assertInstanceOf(Delegate.VirtualThreads.class, Delegate.of(null, null, "d", true, 1, 10, 0.01));
        ThreadPoolExecutor tpe = pool(1);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            assertInstanceOf(Delegate.Pool.class, Delegate.of(tpe, null, "d", true, 1, 10, 0.01));
            assertInstanceOf(Delegate.Plain.class, Delegate.of(other, null, "d", true, 1, 10, 0.01));
        } finally {
            tpe.shutdownNow();
            other.shutdownNow();
        }
    }

    /** The default delegate's slots are its size; a resize moves them, and chains are on unless told. */
    @Test
    void virtualThreadsHaveOneSlotPerUnitOfSize() {
        Delegate d = Delegate.of(null, null, "d", true, 2, 10, 0.01);
        assertTrue(d.chains);
        assertEquals(2, d.poolSize());
        long first = d.claimSlot();
        assertTrue(first >= 0);
        assertFalse(d.full());
        long second = d.claimSlot();
        assertTrue(second >= 0);
        assertTrue(d.full());
        assertFalse(d.tryAcquireSlot());
        d.resize(3);
        assertEquals(3, d.poolSize());
        long third = d.claimSlot();
        assertTrue(third >= 0);
        d.resize(1);
        assertTrue(d.overLimit());
        d.releaseSlot(Delegate.stripe(first));
        d.releaseSlot(Delegate.stripe(second));
        assertFalse(d.overLimit());
        assertEquals(1, d.inFlight());
        assertTrue(d.threadPerTask);
        assertNotNull(d.recorders()); // each task claims one as it ends
        assertFalse(Delegate.of(null, null, "d", false, 1, 10, 0.01).chains);
    }

    /**
     * The default delegate keeps no registry of running tasks: its thread executor's
     * shutdownNow() interrupts them. A task handed off after that still runs, on a thread of its
     * own, and sees the interrupt a stopping executor's tasks see: it is neither refused nor lost.
     */
    @Test
    void aVirtualTaskHandedOffAfterShutdownNowStillRunsInterrupted() throws Exception {
        PowerFlowExecutor ex = PowerFlowExecutor.builder().name("late-hand-off").build();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        ex.execute(() -> {
            started.countDown();
            try {
                Thread.sleep(TimeUnit.MINUTES.toMillis(5));
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
        });
        assertTrue(started.await(30, TimeUnit.SECONDS));
        Delegate d = ex.delegate;
        // A hand-off that had taken its slot and in-flight count just before shutdownNow().
        long claim = d.claimSlot();
        assertTrue(claim >= 0);
        // (the slot is the in-flight count)
        ex.shutdownNow();
        assertTrue(interrupted.await(30, TimeUnit.SECONDS), "shutdownNow() interrupts a running task");
        AtomicBoolean sawInterrupt = new AtomicBoolean();
        CountDownLatch ran = new CountDownLatch(1);
        Job late = new Job(ex, () -> {
            sawInterrupt.set(Thread.currentThread().isInterrupted());
            ran.countDown();
        }, ex.ticker.read());
        late.holdsSlotOf(Delegate.stripe(claim));
        d.start(late);
        assertTrue(ran.await(30, TimeUnit.SECONDS), "the late task runs");
        assertTrue(sawInterrupt.get(), "and sees the stopping executor's interrupt");
        assertTrue(ex.awaitTermination(30, TimeUnit.SECONDS));
        assertEquals(0, ex.stats().tasks().running());
    }

    /**
     * Tasks on the default delegate leave their counts in the recorder they claim as they end;
     * every read-out adds them first, so an idle executor's counts are exact.
     */
    @Test
    void virtualTaskCountsAreExactOnceIdle() throws Exception {
        PowerFlowExecutor ex = PowerFlowExecutor.builder().name("exact-counts").build();
        try {
            int n = 1000; // more than one recorder's flush interval, and not a multiple of it
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                ex.execute(done::countDown);
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (ex.stats().tasks().running() > 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // a task's end is counted just after its body returns
            }
            // Every slot is back only after each task's records and counts are in its recorder.
            assertEquals(0, ex.stats().tasks().running());
            assertEquals(n, ex.completedCount());
            assertEquals(n, ex.stats().tasks().completed());
            assertEquals(n, ex.stats().tasks().recorded());
        } finally {
            ex.shutdownNow();
            assertTrue(ex.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /** A pool is resized in the order that never throws, growing and shrinking. */
    @Test
    void aPoolIsResizedBothWays() {
        ThreadPoolExecutor tpe = pool(2);
        try {
            Delegate d = Delegate.of(tpe, null, "d", true, 2, 10, 0.01);
            d.resize(5);
            assertEquals(5, tpe.getCorePoolSize());
            assertEquals(5, tpe.getMaximumPoolSize());
            d.resize(1);
            assertEquals(1, tpe.getCorePoolSize());
            assertEquals(1, tpe.getMaximumPoolSize());
            assertEquals(1, d.poolSize());
            assertNotNull(d.recorders());
        } finally {
            tpe.shutdownNow();
        }
    }

    /** Without chains (a global limiter) a pool keeps POOL_IN_FLIGHT_FACTOR tasks in flight per thread. */
    @Test
    void aPoolWithoutChainsHasTwoSlotsPerThread() {
        ThreadPoolExecutor tpe = pool(2);
        try {
            Delegate d = Delegate.of(tpe, null, "d", false, 2, 10, 0.01);
            assertFalse(d.chains);
            assertNull(d.recorders());
            assertEquals(2, d.poolSize());
            for (int i = 0; i < 2 * Delegate.Pool.POOL_IN_FLIGHT_FACTOR; i++) {
                assertTrue(d.tryAcquireSlot());
            }
            assertFalse(d.tryAcquireSlot());
        } finally {
            tpe.shutdownNow();
        }
    }

    /** Another executor is neither sized nor bounded, and never chains. */
    @Test
    void aPlainDelegateIsNotSized() {
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            Delegate d = Delegate.of(other, null, "d", true, 7, 10, 0.01);
            assertEquals(-1, d.poolSize());
            assertFalse(d.chains);
            assertFalse(d.full());
            for (int i = 0; i < 100; i++) {
                assertTrue(d.tryAcquireSlot());
            }
            d.resize(3);
            assertEquals(-1, d.poolSize());
        } finally {
            other.shutdownNow();
        }
    }

    /** The default sizer's ceiling: a pool's maximum size, capped; otherwise the cap. */
    @Test
    void theDefaultCeilingFollowsAPoolsMaximum() {
        ThreadPoolExecutor tpe = pool(3);
        try {
            assertEquals(3, Delegate.defaultMaxConcurrency(tpe, 10));
            assertEquals(2, Delegate.defaultMaxConcurrency(tpe, 2));
            assertEquals(10, Delegate.defaultMaxConcurrency(null, 10));
        } finally {
            tpe.shutdownNow();
        }
    }

    /**
     * A slot claim on a pool's gate (one stripe) carries the acquisition's ticket (consecutive,
     * refusals taking none); the slots in use are the tasks in flight. A delegate that is not
     * sized counts its tasks in flight the same way, with ticket 0.
     */
    @Test
    void aClaimCarriesItsTicket() {
        ThreadPoolExecutor tpe = pool(3);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            Delegate d = Delegate.of(tpe, null, "d", true, 3, 10, 0.01);
            claimTwo(d, 1);
            d.releaseSlot(0);
            assertEquals(1, d.inFlight());
            assertEquals(2, Delegate.ticket(d.claimSlot()));
            assertEquals(3, Delegate.ticket(d.claimSlot()));
            assertEquals(-1, d.claimSlot(), "all three slots taken");
            assertEquals(3, d.inFlight());
            d.releaseSlot(0);
            assertEquals(4, Delegate.ticket(d.claimSlot()), "a refusal takes no ticket");
            for (int i = 0; i < 3; i++) {
                d.releaseSlot(0);
            }
            assertEquals(0, d.inFlight());

            Delegate plain = Delegate.of(other, null, "d", true, 1, 10, 0.01);
            claimTwo(plain, 0);
            plain.releaseSlot(0);
            assertEquals(1, plain.inFlight());
            plain.releaseSlot(0);
            assertEquals(0, plain.inFlight());
        } finally {
            tpe.shutdownNow();
            other.shutdownNow();
        }
    }

    /** Claims two slots of an idle delegate: tickets 0 and {@code secondTicket}, one and two in flight. */
    private static void claimTwo(Delegate d, long secondTicket) {
        long first = d.claimSlot();
        assertEquals(1, d.inFlight());
        long second = d.claimSlot();
        assertEquals(2, d.inFlight());
        assertEquals(0, Delegate.ticket(first));
        assertEquals(secondTicket, Delegate.ticket(second));
    }

    /**
     * The ticket wraps at 2^31 while the slots in use stay exact: the counters of acquisitions
     * and releases set to 2^31 - 1 each, as after that many tasks.
     */
    @Test
    void theTicketWrapsWithoutTouchingTheCount() throws Exception {
        ConcurrencyLimit limit = new ConcurrencyLimit(4);
        java.lang.reflect.Field f = ConcurrencyLimit.class.getDeclaredField("words");
        f.setAccessible(true);
        java.util.concurrent.atomic.AtomicLongArray words = (java.util.concurrent.atomic.AtomicLongArray) f.get(limit);
        for (int i = 0; i < words.length(); i++) {
            words.set(i, (1L << 31) - 1); // acquisitions, releases and the releases' copy alike
        }
        long claim = limit.tryAcquireTicket();
        assertEquals((1L << 31) - 1, ConcurrencyLimit.ticket(claim));
        assertEquals(1, limit.inUse());
        assertEquals(0, ConcurrencyLimit.ticket(limit.tryAcquireTicket()), "wrapped");
        assertEquals(2, limit.inUse());
        limit.release(ConcurrencyLimit.stripe(claim));
        assertEquals(1, limit.inUse());
    }
}
