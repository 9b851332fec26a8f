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
 * Each stripe counts its acquisitions and its releases on lines of their own.
 *
 * <p><b>Thread safety.</b> Every method may be called from any thread. {@link #release(int)}
 * takes the lock only when someone is waiting, so the common path is one atomic update on each
 * side, each on a line that side alone writes.
 */
final class ConcurrencyLimit {

    /*
     * Implementation notes. A waiter increments `waiters` (a volatile guarded by `lock` for writes)
     * and then tries to acquire; a releaser updates its stripe and then reads `waiters`. Both sides
     * write a volatile and then read the other's, so either the releaser sees the waiter (and
     * signals, under the lock) or the waiter's try sees the released permit. The waiter holds the
     * lock from its try until await() releases it, so the signal cannot fall in between.
     *
     * A stripe is two counters that only grow, on lines of their own: its acquisitions (written
     * by the acquiring threads, a CAS) and its releases (written by the releasing threads, an
     * add); its permits in use are the difference. Acquirer and releaser are usually on different
     * processors (a task ends on another thread than the one that submitted it), and with one word
     * for both every acquisition's CAS missed on the line the last release had written (one
     * thread taking, another giving back: 33 against 7.5 ns a take; benchmarks/executor.md, "The
     * slot gate"). An acquisition's ticket (a sequence number the executor samples by) is its
     * stripe's acquisitions before it.
     *
     * The acquirer checks against a copy of the releases kept on its own line (`seen`), re-read
     * from the releases' line only when the copy says the stripe is at its share. Releases only
     * grow, so a copy never shows more room than there is: no over-admission; a try fails only
     * after a fresh read, so "full" is exact. Two acquirers may write the copy out of order; an
     * older copy only costs a fresh read.
     *
     * "Full" is exact, not a guess from one stripe: a try fails only after every stripe was at its
     * share, which sum to the limit. The counters are 128 bytes apart (two lines and the
     * adjacent-line prefetch), so two acquiring threads on two stripes, or an acquirer and a
     * releaser, do not share a line.
     *
     * A read of the permits in use reads a stripe's releases before its acquisitions: a permit
     * held throughout the read is counted (acquired before the later read, released after the
     * earlier), and one taken and given back meanwhile may be counted too, never subtracted.
     *
     * Lowering the limit can leave a stripe over its new share while another is under it, and the
     * one under it would grant permits the limit no longer has. So a lowered limit sets
     * `draining`, and until every stripe is at or under its share an acquisition takes the lock,
     * adds up the stripes and grants from one under its share only if the sum is under the limit:
     * exact, because acquisitions are serialized then and releases only lower the sum. (A thread
     * that read the old limit just before the change may still take one permit by it.)
     */

    /** The distance between two counters, in longs: 128 bytes. */
    private static final int SPACING = 16;
    /** From a stripe's acquisitions, its copy of the releases (see the notes): the same line. */
    private static final int SEEN = 1;
    /** The most stripes {@link #stripesFor(int)} gives. */
    static final int MAX_STRIPES = 16;

    /**
     * Stripe {@code i}'s acquisitions at {@link #acquired}{@code (i)} (its copy of the releases
     * beside them), its releases at {@link #released}{@code (i)}: each padded on both sides.
     */
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

    /** One stripe: one counter of acquisitions and one of releases. */
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
        this.words = new AtomicLongArray((2 * stripes + 2) * SPACING);
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

    /** The index of stripe {@code i}'s acquisitions in {@link #words}. */
    private static int acquired(int i) {
        return (2 * i + 1) * SPACING;
    }

    /** The index of stripe {@code i}'s releases in {@link #words}. */
    private static int released(int i) {
        return (2 * i + 2) * SPACING;
    }

    /** Stripe {@code i}'s permits in use, its releases read first (see the notes). */
    private long inUse(int i) {
        long r = words.get(released(i));
        return words.get(acquired(i)) - r;
    }

    /** The claim of the acquisition from stripe {@code i} that found {@code a} acquisitions before it. */
    private static long claimOf(long a, int i) {
        return (a & Integer.MAX_VALUE) << 32 | i;
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
            int at = acquired(i);
            for (long a = words.get(at); ; a = words.get(at)) {
                if (a - words.getOpaque(at + SEEN) >= share) { // full by the copy: read the releases
                    long r = words.get(released(i));
                    words.setOpaque(at + SEEN, r);
                    if (a - r >= share) {
                        break; // full: the next stripe
                    }
                }
                if (words.compareAndSet(at, a, a + 1)) {
                    return claimOf(a, i);
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
                long inUse = inUse(i);
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
            return claimOf(words.getAndIncrement(acquired(under)), under);
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
        words.getAndIncrement(released(stripe));
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
     * The permits in use: exact when nothing races the read; a read racing acquisitions and
     * releases may count those in progress (one taken and given back meanwhile, on another
     * stripe one taken or given back), never misses a permit held throughout and never counts one
     * free throughout.
     */
    int inUse() {
        long sum = 0;
        for (int i = 0; i < stripes; i++) {
            sum += inUse(i);
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
