package io.github.performancehelpers;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Where submitters blocked under {@link RejectionPolicy#BLOCK} wait for room in the queue: on a
 * condition that a consumer which took tasks signals ({@link #signal}, a volatile read when no one
 * waits), looking again at least every {@link #RECHECK_NANOS}, so that a missed signal costs no
 * more than that.
 *
 * <p><b>Thread safety.</b> Any thread may wait or signal.
 */
final class RoomGate {

    /** The longest a blocked submitter waits before it looks again, ns: a safety net for a missed signal. */
    static final long RECHECK_NANOS = 10_000_000L;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition room = lock.newCondition();
    private volatile int waiters;

    /**
     * Waits until signalled or {@code min(nanos, RECHECK_NANOS)} pass, if {@code blocked} (asked
     * once the caller is registered, so that a consumer that takes a task after it answered
     * signals this waiter) still holds.
     *
     * @param nanos   the longest wait, ns
     * @param blocked whether the caller still has to wait
     * @throws InterruptedException if interrupted while waiting for the lock or the signal
     */
    void await(long nanos, BooleanSupplier blocked) throws InterruptedException {
        lock.lockInterruptibly();
        try {
            waiters++; // volatile write, then the re-reads: a consumer that polls after sees us
            try {
                if (blocked.getAsBoolean()) {
                    room.awaitNanos(Math.min(nanos, RECHECK_NANOS));
                }
            } finally {
                waiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter: a consumer took tasks, or the executor's state changed. */
    void signal() {
        if (waiters != 0) {
            lock.lock();
            try {
                room.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }
}
