package io.github.performancehelpers;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The slot gate: an exact bound however many stripes hold its permits. */
class ConcurrencyLimitTest {

    @Test
    void theStripesArePowersOfTwoAtTwiceTheProcessors() {
        assertEquals(2, ConcurrencyLimit.stripesFor(1));
        assertEquals(4, ConcurrencyLimit.stripesFor(2));
        assertEquals(8, ConcurrencyLimit.stripesFor(3));
        assertEquals(8, ConcurrencyLimit.stripesFor(4));
        assertEquals(16, ConcurrencyLimit.stripesFor(8));
        assertEquals(16, ConcurrencyLimit.stripesFor(64));
        for (int bad : new int[] {0, 3, 32}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ConcurrencyLimit(4, bad));
            assertTrue(e.getMessage().contains("stripes") && e.getMessage().contains(String.valueOf(bad)), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> new ConcurrencyLimit(0, 4));
    }

    /** A limit smaller than the stripes, and one that is not a multiple of them: exact either way. */
    @Test
    void aFullStripeSpillsToTheOthersAndTheLimitIsExact() {
        for (int limit : new int[] {1, 3, 5, 13}) {
            ConcurrencyLimit c = new ConcurrencyLimit(limit, 4);
            List<Long> claims = new ArrayList<>();
            for (int i = 0; i < limit; i++) {
                long claim = c.tryAcquireTicket();
                assertTrue(claim >= 0, "permit " + (i + 1) + " of " + limit);
                claims.add(claim);
                assertEquals(i + 1, c.inUse());
            }
            assertEquals(-1, c.tryAcquireTicket(), "limit " + limit + " reached");
            c.release(ConcurrencyLimit.stripe(claims.remove(0)));
            assertEquals(limit - 1, c.inUse());
            long again = c.tryAcquireTicket();
            assertTrue(again >= 0, "the freed permit is found, whichever stripe held it");
            claims.add(again);
            for (long claim : claims) {
                c.release(ConcurrencyLimit.stripe(claim));
            }
            assertEquals(0, c.inUse());
        }
    }

    /** One thread far from the limit stays on its stripe: its tickets are consecutive. */
    @Test
    void oneThreadsTicketsAreConsecutive() {
        ConcurrencyLimit c = new ConcurrencyLimit(1000, 4);
        long first = c.tryAcquireTicket();
        for (int i = 1; i < 100; i++) {
            long claim = c.tryAcquireTicket();
            assertEquals(ConcurrencyLimit.stripe(first), ConcurrencyLimit.stripe(claim));
            assertEquals(i, ConcurrencyLimit.ticket(claim));
            c.release(ConcurrencyLimit.stripe(claim));
        }
        assertEquals(1, c.inUse());
    }

    /** A lowered limit holds off new permits until enough are back; a raised one gives at once. */
    @Test
    void aLoweredLimitTakesEffectAsPermitsComeBack() {
        ConcurrencyLimit c = new ConcurrencyLimit(8, 4);
        List<Long> claims = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            claims.add(c.tryAcquireTicket());
        }
        c.setLimit(4);
        for (int i = 0; i < 4; i++) {
            c.release(ConcurrencyLimit.stripe(claims.remove(0)));
            assertFalse(c.tryAcquire(), (8 - i - 1) + " in use, limit 4");
        }
        c.release(ConcurrencyLimit.stripe(claims.remove(0)));
        assertEquals(3, c.inUse());
        assertTrue(c.tryAcquire());
        assertFalse(c.tryAcquire());
        c.setLimit(6);
        assertTrue(c.tryAcquire());
        assertTrue(c.tryAcquire());
        assertFalse(c.tryAcquire());
    }

    /** A waiter is woken by a release to any stripe. */
    @Test
    void aWaiterIsWokenByAReleaseOnAnotherStripe() throws Exception {
        ConcurrencyLimit c = new ConcurrencyLimit(1, 4);
        long held = c.tryAcquireTicket();
        CountDownLatch got = new CountDownLatch(1);
        AtomicInteger stripe = new AtomicInteger(-1);
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                stripe.set(c.acquire());
                got.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertFalse(got.await(50, TimeUnit.MILLISECONDS), "no permit while one is held");
        c.release(ConcurrencyLimit.stripe(held));
        assertTrue(got.await(30, TimeUnit.SECONDS), "the release wakes the waiter");
        waiter.join();
        assertEquals(1, c.inUse());
        c.release(stripe.get());
        assertEquals(0, c.inUse());
    }

    /**
     * Eight threads on four stripes take and give back permits as fast as they can: never more
     * than the limit are held at once, and every permit is given back.
     */
    @Test
    void contendedAcquisitionsNeverExceedTheLimit() throws Exception {
        int limit = 3;
        ConcurrencyLimit c = new ConcurrencyLimit(limit, 4);
        AtomicInteger held = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicLong acquired = new AtomicLong();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                while (System.nanoTime() - deadline < 0) {
                    long claim = c.tryAcquireTicket();
                    if (claim < 0) {
                        continue;
                    }
                    acquired.incrementAndGet();
                    most.accumulateAndGet(held.incrementAndGet(), Math::max);
                    if (ThreadLocalRandom.current().nextInt(4) == 0) {
                        Thread.yield(); // hold it a while sometimes, so that others find the stripes full
                    }
                    held.decrementAndGet();
                    c.release(ConcurrencyLimit.stripe(claim));
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertBoundHeld(c, limit, acquired, most);
    }

    /**
     * The acquirer checks a copy of the releases and reads them afresh only when the copy says
     * full: a permit given back after the copy was taken is still found, and none beyond it.
     */
    @Test
    void aPermitGivenBackAfterTheStripeWasSeenFullIsFound() {
        ConcurrencyLimit c = new ConcurrencyLimit(2, 1);
        for (int round = 0; round < 3; round++) {
            long a = c.tryAcquireTicket();
            long b = c.tryAcquireTicket();
            assertTrue(a >= 0 && b >= 0, "round " + round + ": two permits free");
            assertEquals(-1, c.tryAcquireTicket(), "round " + round + ": full");
            c.release(ConcurrencyLimit.stripe(a));
            long again = c.tryAcquireTicket();
            assertTrue(again >= 0, "round " + round + ": the permit given back is found");
            assertEquals(-1, c.tryAcquireTicket(), "round " + round + ": and no other");
            assertEquals(2, c.inUse());
            c.release(ConcurrencyLimit.stripe(b));
            c.release(ConcurrencyLimit.stripe(again));
            assertEquals(0, c.inUse());
        }
        assertEquals(9, ConcurrencyLimit.ticket(c.tryAcquireTicket()), "three rounds of three acquisitions before it");
    }

    /**
     * As the executor uses it: four threads take permits and hand them to four others, which give
     * them back; never more than the limit held at once, every permit comes back, and the tickets
     * of each stripe are the acquisitions before them (each one once).
     */
    @Test
    void permitsGivenBackByOtherThreadsNeverExceedTheLimit() throws Exception {
        int limit = 6;
        ConcurrencyLimit c = new ConcurrencyLimit(limit, 4);
        AtomicInteger held = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicLong acquired = new AtomicLong();
        java.util.concurrent.BlockingQueue<Long> handOff = new java.util.concurrent.LinkedBlockingQueue<>();
        java.util.Set<Long> claims = java.util.concurrent.ConcurrentHashMap.newKeySet();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        List<Thread> takers = new ArrayList<>();
        List<Thread> givers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            takers.add(Thread.ofPlatform().start(() -> {
                while (System.nanoTime() - deadline < 0) {
                    long claim = c.tryAcquireTicket();
                    if (claim < 0) {
                        Thread.onSpinWait();
                        continue;
                    }
                    acquired.incrementAndGet();
                    assertTrue(claims.add(claim), "each ticket of a stripe once: " + claim);
                    most.accumulateAndGet(held.incrementAndGet(), Math::max);
                    handOff.add(claim);
                }
            }));
            givers.add(Thread.ofPlatform().start(() -> {
                try {
                    for (;;) {
                        long claim = handOff.take();
                        if (claim < 0) {
                            return;
                        }
                        held.decrementAndGet();
                        c.release(ConcurrencyLimit.stripe(claim));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        for (Thread t : takers) {
            t.join();
        }
        for (int t = 0; t < givers.size(); t++) {
            handOff.add(-1L);
        }
        for (Thread t : givers) {
            t.join();
        }
        assertBoundHeld(c, limit, acquired, most);
        assertEquals(acquired.get(), claims.size());
    }

    /** The threads ran, never held more than {@code limit} at once, and gave every permit back. */
    private static void assertBoundHeld(ConcurrencyLimit c, int limit, AtomicLong acquired, AtomicInteger most) {
        assertTrue(acquired.get() > 1000, "the threads ran: " + acquired.get());
        assertTrue(most.get() <= limit, "at most " + limit + " held at once, saw " + most.get());
        assertEquals(0, c.inUse());
    }
}
