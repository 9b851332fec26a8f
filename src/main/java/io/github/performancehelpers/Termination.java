package io.github.performancehelpers;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How a {@link PowerFlowExecutor} ends: its state transitions, the one run of the termination
 * (by the dispatcher as its last act, or by a {@code shutdown()}/{@code shutdownNow()} that finds
 * the executor idle, as {@code ThreadPoolExecutor.tryTerminate()} does), and the waits for it.
 * The executor's class notes ("Lifecycle") give the states and who moves them.
 *
 * <p>{@link #lock} guards every transition of the executor's {@code state} and the two
 * conditions: {@link #quiescent} (the last task in flight of a shutting-down executor has ended)
 * and {@link #terminated}. Whoever wins {@link #claimed} runs {@link #terminate()}, once.
 */
final class Termination {

    private final PowerFlowExecutor ex;
    private final Delegate delegate;
    private final Dispatcher dispatcher;
    private final Tick tick;
    private final ExecutorObservability observability;

    /** Set by whichever thread runs terminate(): the dispatcher, or an idle executor's shutdown(). */
    private final AtomicBoolean claimed = new AtomicBoolean();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition terminated = lock.newCondition();
    private final Condition quiescent = lock.newCondition();

    Termination(PowerFlowExecutor ex, Delegate delegate, Dispatcher dispatcher, Tick tick,
            ExecutorObservability observability) {
        this.ex = ex;
        this.delegate = delegate;
        this.dispatcher = dispatcher;
        this.tick = tick;
        this.observability = observability;
    }

    /**
     * Moves the executor's state forward to {@code to} (SHUTDOWN or STOP), under the lock; a
     * state already there or past it stays.
     */
    void advanceTo(int to) {
        lock.lock();
        try {
            if (ex.state < to) {
                ex.state = to;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Wakes a terminate() waiting for the tasks in flight to end. */
    void signalQuiescent() {
        lock.lock();
        try {
            quiescent.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * After the state is SHUTDOWN or more: terminates an idle executor on the calling thread, or,
     * if the dispatcher already did, waits for its thread to end, so that
     * {@link #isTerminated()} holds on return. Nothing if a task is queued, held or in flight, if
     * an owned delegate is not quiet, or if the caller is the observation thread, which
     * terminate() waits for, or the dispatcher itself.
     */
    void ifIdle() {
        Thread me = Thread.currentThread();
        if (tick.runsOn(me) || me == dispatcher.thread) {
            return;
        }
        // TERMINATED may be the dispatcher's write, woken by this very call: its thread is ending
        // and isTerminated() must hold on return, so it is joined below like any other.
        if (ex.state != PowerFlowExecutor.TERMINATED) {
            if (!delegate.quiet() || !dispatcher.retireIfIdle()) {
                return;
            }
            if (claimed.compareAndSet(false, true)) {
                terminate();
            }
        }
        // Whoever ran terminate(), it was quick (nothing in flight, the delegate quiet): wait for
        // it, and for the dispatcher thread to end.
        lock.lock();
        try {
            while (ex.state != PowerFlowExecutor.TERMINATED) {
                terminated.awaitUninterruptibly();
            }
        } finally {
            lock.unlock();
        }
        boolean interrupted = false;
        for (;;) {
            try {
                dispatcher.thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The dispatcher's exit: it terminates the executor unless an idle shutdown() does. */
    void dispatcherExited() {
        if (claimed.compareAndSet(false, true)) {
            terminate();
        }
    }

    /**
     * Terminates, once, on the thread that claimed it: waits for the tasks in flight, stops what
     * is owned, sets TERMINATED. Keeps the calling thread's interrupt status.
     */
    private void terminate() {
        lock.lock();
        try {
            while (ex.inFlight() > 0) {
                quiescent.awaitUninterruptibly(); // shutdownNow() may interrupt us again; keep waiting
            }
        } finally {
            lock.unlock();
        }
        delegate.shutdownOwned();
        tick.stop();
        observability.close();
        lock.lock();
        try {
            ex.state = PowerFlowExecutor.TERMINATED;
            terminated.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** TERMINATED, and the dispatcher's thread has ended. */
    boolean isTerminated() {
        return ex.state == PowerFlowExecutor.TERMINATED && !dispatcher.thread.isAlive();
    }

    /**
     * Waits at most {@code nanos} for {@link #isTerminated()}.
     *
     * @return whether terminated
     * @throws InterruptedException if interrupted while waiting
     */
    boolean await(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        lock.lock();
        try {
            while (ex.state != PowerFlowExecutor.TERMINATED) {
                if (nanos <= 0L) {
                    return false;
                }
                nanos = terminated.awaitNanos(nanos);
            }
        } finally {
            lock.unlock();
        }
        // TERMINATED is the dispatcher's last write, or the idle shutdown's, which retired it:
        // wait for its thread to end too.
        long left = deadline - System.nanoTime();
        Thread d = dispatcher.thread;
        if (d.isAlive()) {
            if (left <= 0) {
                return false;
            }
            return d.join(Duration.ofNanos(left));
        }
        return true;
    }
}
