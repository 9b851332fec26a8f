package io.github.performancehelpers;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A concurrency bound whose limit can be changed while permits are held: the executor's slot gate
 * in front of its delegate. Lowering the limit below the number in use takes effect as permits are
 * released (nothing running is interrupted); raising it wakes the waiters at once.
 *
 * <p><b>Thread safety.</b> Every method may be called from any thread. {@link #release()} takes
 * the lock only when someone is waiting, so the common path is one CAS on each side.
 */
final class ConcurrencyLimit {

    /*
     * Implementation notes. A waiter increments `waiters` (a volatile guarded by `lock` for writes)
     * and then tries to acquire; a releaser decrements `inUse` and then reads `waiters`. Both sides
     * write a volatile and then read the other's, so either the releaser sees the waiter (and
     * signals, under the lock) or the waiter's try sees the released permit. The waiter holds the
     * lock from its try until await() releases it, so the signal cannot fall in between.
     *
     * One word holds the permits in use (low 32 bits) and the acquisitions so far (high 32 bits,
     * wrapping), so that an acquisition learns its ticket (a sequence number the executor samples
     * by) from the CAS it makes anyway; a release subtracts 1, which never borrows from the high
     * half because the low half is at least 1 then.
     */

    private static final long TICKET = 1L << 32;
    private static final long IN_USE = TICKET - 1;

    private final AtomicLong word = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition available = lock.newCondition();
    /** Threads inside acquire(). Guarded by {@code lock} (writes; volatile for the releaser's read). */
    private volatile int waiters;
    private volatile int limit;

    ConcurrencyLimit(int limit) {
        this.limit = checkLimit(limit);
    }

    private static int checkLimit(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1: " + limit);
        }
        return limit;
    }

    /** Takes a permit if fewer than {@code limit} are in use. */
    boolean tryAcquire() {
        return tryAcquireTicket() >= 0;
    }

    /**
     * Takes a permit if fewer than {@code limit} are in use.
     *
     * @return -1 if no permit was free; else a claim: the acquisition's ticket (the acquisitions
     *     before it modulo 2<sup>31</sup>, so consecutive acquisitions have consecutive tickets)
     *     in the high 32 bits, the permits in use before it in the low 32 bits
     */
    long tryAcquireTicket() {
        for (;;) {
            long w = word.get();
            if ((int) (w & IN_USE) >= limit) {
                return -1L;
            }
            if (word.compareAndSet(w, w + TICKET + 1)) { // the ticket's carry leaves the word
                return w & Long.MAX_VALUE;
            }
        }
    }

    /** Blocks until a permit is available and takes it. */
    void acquire() throws InterruptedException {
        if (tryAcquire()) {
            return;
        }
        lock.lockInterruptibly();
        try {
            waiters++;
            try {
                while (!tryAcquire()) {
                    available.await();
                }
            } finally {
                waiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns a permit.
     *
     * @return the permits still in use
     */
    int release() {
        int left = (int) ((word.getAndAdd(-1L) - 1) & IN_USE);
        if (waiters > 0) {
            signalAll();
        }
        return left;
    }

    /** Changes the limit; waiters re-check at once. */
    void setLimit(int newLimit) {
        limit = checkLimit(newLimit);
        signalAll();
    }

    int limit() {
        return limit;
    }

    int inUse() {
        return (int) (word.get() & IN_USE);
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
