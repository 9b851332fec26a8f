package io.github.performancehelpers;

import java.util.concurrent.atomic.AtomicInteger;
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
     */

    private final AtomicInteger inUse = new AtomicInteger();
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
        for (;;) {
            int c = inUse.get();
            if (c >= limit) {
                return false;
            }
            if (inUse.compareAndSet(c, c + 1)) {
                return true;
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

    /** Returns a permit. */
    void release() {
        inUse.decrementAndGet();
        if (waiters > 0) {
            signalAll();
        }
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
        return inUse.get();
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
