package io.github.performancehelpers;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A concurrency bound whose limit can be changed while permits are held: the executor's slot gate
 * in front of its delegate. Lowering the limit below the number in use takes effect as permits are
 * released (nothing running is interrupted); raising it wakes the waiters at once.
 *
 * <p>The permits may be split into stripes, each with its share of the limit, so that threads
 * acquiring at once update different cache lines: a thread takes from the stripe its id picks
 * and, if that one is full, from the next ones; a permit goes back to the stripe it came from (the
 * claim names it), so each stripe is an exact bound of its own and the limit is exact in all.
 * With one stripe this is one atomic word.
 *
 * <p><b>Thread safety.</b> Every method may be called from any thread. {@link #release(int)}
 * takes the lock only when someone is waiting, so the common path is one atomic update on each
 * side.
 */
final class ConcurrencyLimit {

    /*
     * Implementation notes. A waiter increments `waiters` (a volatile guarded by `lock` for writes)
     * and then tries to acquire; a releaser updates its stripe and then reads `waiters`. Both sides
     * write a volatile and then read the other's, so either the releaser sees the waiter (and
     * signals, under the lock) or the waiter's try sees the released permit. The waiter holds the
     * lock from its try until await() releases it, so the signal cannot fall in between.
     *
     * A stripe's word holds its permits in use (low 32 bits) and its acquisitions so far (high 32
     * bits, wrapping), so that an acquisition learns its ticket (a sequence number the executor
     * samples by) from the CAS it makes anyway; a release subtracts 1, which never borrows from
     * the high half because the low half is at least 1 then.
     *
     * "Full" is exact, not a guess from one stripe: a try fails only after every stripe was at its
     * share, which sum to the limit. The stripes' words are 128 bytes apart (two lines and the
     * adjacent-line prefetch), so two acquiring threads on two stripes do not share a line.
     *
     * Lowering the limit can leave a stripe over its new share while another is under it, and the
     * one under it would grant permits the limit no longer has. So a lowered limit sets
     * `draining`, and until every stripe is at or under its share an acquisition takes the lock,
     * adds up the stripes and grants from one under its share only if the sum is under the limit:
     * exact, because acquisitions are serialized then and releases only lower the sum. (A thread
     * that read the old limit just before the change may still take one permit by it, as with
     * one word.)
     */

    private static final long TICKET = 1L << 32;
    private static final long IN_USE = TICKET - 1;
    /** The distance between two stripes' words, in longs: 128 bytes. */
    private static final int SPACING = 16;
    /** The most stripes {@link #stripesFor(int)} gives. */
    static final int MAX_STRIPES = 16;

    /** Stripe {@code i}'s word at index {@link #at}{@code (i)}: padded on both sides. */
    private final AtomicLongArray words;
    private final int stripes;
    private final int stripeBits;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition available = lock.newCondition();
    /** Threads inside acquire(). Guarded by {@code lock} (writes; volatile for the releaser's read). */
    private volatile int waiters;
    private volatile int limit;
    /**
     * Set when the limit is lowered on more than one stripe, until no stripe holds more than its
     * share: meanwhile acquisitions take the lock and check the sum (see tryAcquireDraining).
     */
    private volatile boolean draining;

    /** One stripe: a single atomic word. */
    ConcurrencyLimit(int limit) {
        this(limit, 1);
    }

    /**
     * @param limit   the permits, at least 1
     * @param stripes a power of two from 1 to {@link #MAX_STRIPES}
     */
    ConcurrencyLimit(int limit, int stripes) {
        if (stripes < 1 || stripes > MAX_STRIPES || Integer.bitCount(stripes) != 1) {
            throw new IllegalArgumentException("stripes must be a power of two from 1 to " + MAX_STRIPES + ": " + stripes);
        }
        this.limit = checkLimit(limit);
        this.stripes = stripes;
        this.stripeBits = Integer.numberOfTrailingZeros(stripes);
        this.words = new AtomicLongArray((stripes + 2) * SPACING);
    }

    /**
     * The stripes for threads acquiring from {@code processors} processors: the power of two at
     * or above twice their number, at most {@link #MAX_STRIPES}, so that the submitters running
     * at once rarely share one.
     */
    static int stripesFor(int processors) {
        int twice = 2 * Math.max(1, Math.min(processors, MAX_STRIPES / 2));
        return Integer.highestOneBit(twice - 1) << 1; // the power of two at or above
    }

    private static int checkLimit(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1: " + limit);
        }
        return limit;
    }

    /** The index of stripe {@code i}'s word in {@link #words}. */
    private static int at(int i) {
        return (i + 1) * SPACING;
    }

    /** The claim of an acquisition from stripe {@code i} whose word read {@code w} before it. */
    private static long claimOf(long w, int i) {
        return (w & ~IN_USE & Long.MAX_VALUE) | i;
    }

    /** Stripe {@code i}'s share of limit {@code lim}: the shares differ by at most one and sum to it. */
    private int share(int i, int lim) {
        return (lim >>> stripeBits) + (i < (lim & (stripes - 1)) ? 1 : 0);
    }

    /** The stripe the calling thread tries first (consecutive thread ids spread over the stripes). */
    private int home() {
        if (stripes == 1) {
            return 0;
        }
        return (int) ((Thread.currentThread().threadId() * 0x9E37_79B9_7F4A_7C15L) >>> (64 - stripeBits));
    }

    /** Takes a permit if fewer than {@code limit} are in use. */
    boolean tryAcquire() {
        return tryAcquireTicket() >= 0;
    }

    /**
     * Takes a permit if fewer than {@code limit} are in use.
     *
     * @return -1 if no permit was free; else a claim: the acquisition's ticket (the acquisitions
     *     of its stripe before it, modulo 2<sup>31</sup>, so that a stripe's consecutive
     *     acquisitions have consecutive tickets) in the high 32 bits, its stripe (for
     *     {@link #release(int)}) in the low 32 bits
     */
    long tryAcquireTicket() {
        int lim = limit;
        if (draining) {
            return tryAcquireDraining();
        }
        int first = home();
        for (int k = 0; k < stripes; k++) {
            int i = (first + k) & (stripes - 1);
            int share = share(i, lim);
            for (long w; (int) ((w = words.get(at(i))) & IN_USE) < share; ) {
                if (words.compareAndSet(at(i), w, w + TICKET + 1)) { // the ticket's carry leaves the word
                    return claimOf(w, i);
                }
            }
        }
        return -1L;
    }

    /** {@link #tryAcquireTicket()} while a lowered limit drains (see the implementation notes). */
    private long tryAcquireDraining() {
        lock.lock();
        try {
            int lim = limit;
            long sum = 0;
            boolean balanced = true;
            int under = -1;
            for (int i = 0; i < stripes; i++) {
                int inUse = (int) (words.get(at(i)) & IN_USE);
                int share = share(i, lim);
                sum += inUse;
                balanced &= inUse <= share;
                if (under < 0 && inUse < share) {
                    under = i;
                }
            }
            if (balanced) {
                draining = false; // each stripe's share bounds it again
            }
            if (sum >= lim || under < 0) {
                return -1L;
            }
            // Under its share, and acquisitions wait for the lock now: only releases race here
            // (and a try that read the old limit just before the change).
            return claimOf(words.getAndAdd(at(under), TICKET + 1), under);
        } finally {
            lock.unlock();
        }
    }

    /** A claim's ticket (see {@link #tryAcquireTicket()}). */
    static long ticket(long claim) {
        return claim >>> 32;
    }

    /** A claim's stripe, which {@link #release(int)} takes. */
    static int stripe(long claim) {
        return (int) claim;
    }

    /**
     * Blocks until a permit is available and takes it.
     *
     * @return the permit's stripe, for {@link #release(int)}
     */
    int acquire() throws InterruptedException {
        long claim = tryAcquireTicket();
        if (claim >= 0) {
            return stripe(claim);
        }
        lock.lockInterruptibly();
        try {
            waiters++;
            try {
                while ((claim = tryAcquireTicket()) < 0) {
                    available.await();
                }
                return stripe(claim);
            } finally {
                waiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Returns a permit to {@code stripe}, the stripe its claim named. */
    void release(int stripe) {
        words.getAndAdd(at(stripe), -1L);
        if (waiters > 0) {
            signalAll();
        }
    }

    /** Changes the limit; waiters re-check at once. */
    void setLimit(int newLimit) {
        checkLimit(newLimit);
        if (stripes > 1 && newLimit < limit) {
            draining = true; // before the limit: a try that reads the new limit reads this too
        }
        limit = newLimit;
        signalAll();
    }

    int limit() {
        return limit;
    }

    /**
     * The permits in use: exact with one stripe; with more, each stripe read once, so a read
     * racing acquisitions and releases may be off by those in progress, never by a permit held
     * throughout or free throughout.
     */
    int inUse() {
        long sum = 0;
        for (int i = 0; i < stripes; i++) {
            sum += (int) (words.get(at(i)) & IN_USE);
        }
        return (int) sum;
    }

    private void signalAll() {
        lock.lock();
        try {
            available.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
