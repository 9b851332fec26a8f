// Over 800 lines (about 1,250) because the public nested types Adaptive, Stats and Builder live
// here (their names are API, about 350 lines with their validation), and about 430 lines are the
// Javadoc of the seed's contract. The minting timer and the AIMD tuning are the seams to split
// if the file grows.
package io.github.performancehelpers.backpressure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import io.github.performancehelpers.QueueFullException;
import io.github.performancehelpers.Ticker;
import io.github.performancehelpers.internal.Preconditions;

/**
 * A producer-facing backpressure controller: producers take a {@link Permit} before they hand
 * work downstream and release it when the work is done, and the controller refills its pool on a
 * timer while pressure is high, optionally tuning the refill size with AIMD.
 *
 * <pre>{@code
 * PowerBackpressure backpressure = PowerBackpressure.builder()
 *         .capacity(8).queueCapacity(100).lowWaterMark(2)
 *         .refillAmount(2).refillInterval(Duration.ofMillis(100))
 *         .build();
 *
 * void publish(Task task) throws Exception {
 *     try (Permit permit = backpressure.acquire().get()) {
 *         pool.submit(task).get(5, TimeUnit.SECONDS);
 *     }
 * }
 * }</pre>
 *
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads. All
 * state is guarded by one {@link ReentrantLock} (never a monitor, so virtual threads do not pin);
 * futures are completed outside the lock, so callbacks chained on an {@link #acquire()} future
 * never run while the lock is held.
 *
 * <h2>Capacity is a pool, not a ceiling</h2>
 * Unlike a {@link java.util.concurrent.Semaphore}, whose permit count bounds how many holders
 * there can be, {@code capacity} here is the size of the <em>pool</em> the controller hands out
 * from and refills into: {@link #available()} never exceeds it. {@link #active()} can exceed it.
 * While available permits sit below {@code lowWaterMark}, a recurring refill tick creates
 * ("mints") new permits, and when producers are queued those new permits go to them even though
 * every earlier permit is still held. That is deliberate: consumers that hold their permits and
 * do not return them are exactly the situation in which the controller has to keep letting some
 * producers through rather than stall them all. What stops this from running away is the AIMD
 * window ({@link Builder#adaptive(Adaptive)}): a tick that finds that no permit at all has come
 * back since the previous tick shrinks the refill size, so the minting rate falls. For the same
 * reason, when permits minted above the pool come back and the pool is already full, they are
 * retired rather than added ({@link Stats#retired()}).
 *
 * <p>This is also why {@code active} counts holders instead of reporting
 * {@code capacity - available}: that difference can never exceed {@code capacity}, so it would
 * sit at its maximum and look like a healthy, fully used gate at exactly the moment work is
 * piling up. And it is why a refill cannot, on its own, rescue a queue whose permits are all out
 * and never coming back: that pressure is the signal this class exists to express.
 *
 * <h2>Refill and AIMD</h2>
 * Pressure is <em>high</em> while {@code available() < lowWaterMark}. When an acquisition takes
 * available permits below the mark (or the controller is built or reset in that state), a tick
 * is scheduled every {@code refillInterval} on the scheduler. Each tick first looks at the
 * pressure: if it is no longer high, the tick cancels itself and does nothing else, so at most one
 * idle tick runs after pressure subsides. Otherwise it mints the current refill amount: permits go
 * to queued producers first (oldest first), the rest into the pool up to {@code capacity}.
 *
 * <p>With {@code adaptive} on, the refill amount is a congestion window, adjusted at each tick
 * <em>before</em> it mints, and only when producers are queued (with an empty queue there is
 * nothing to measure, and a system that is not saturated has no reason to probe harder):
 * <ul>
 *   <li>if at least one permit has come back (been released) since the previous tick, the window
 *       grows by {@code additiveIncrease};</li>
 *   <li>if none has, and permits are out, the window is multiplied by {@code beta}.</li>
 * </ul>
 * The signal is "did a probe come back", not a clock, so a consumer that is fast but keeps
 * everything still reads as congested. {@link #reset()} returns the window to the configured
 * {@code refillAmount}: a tuned window describes a workload that no longer exists after a reset.
 *
 * <h2>Accounting</h2>
 * A permit counts in {@link #active()} from the moment it reaches a producer until it is
 * released. A release that hands the permit straight to a queued producer is a transfer, so
 * {@code active} is unchanged across it. At every instant
 * {@code active() + available() == stats().minted() - stats().retired()}.
 *
 * <h2>Lifecycle</h2>
 * {@link #close()} cancels the refill tick, fails every queued acquisition with a
 * {@link RejectedExecutionException}, and refuses acquisitions from then on ({@link #acquire()}
 * returns a failed future, {@link #tryAcquire()} returns empty). Permits still held may be
 * released afterwards. The default scheduler is a single daemon thread owned by this instance,
 * created only when a tick is first needed, idle threads time out, and it is shut down by
 * {@code close()}; a scheduler passed to the builder is used but never shut down. Nothing this
 * class starts keeps the JVM alive.
 *
 * <p><b>Note:</b> {@link #reset()} is not a teardown. It fails queued acquisitions, refills the
 * pool and restores the window, but it does not cancel the refill tick.
 *
 * @since 0.1.0
 */
public final class PowerBackpressure implements AutoCloseable, Iterable<Permit> {

    /*
     * Implementation notes.
     *
     * Length. This file is about 1,250 lines because the public nested types that must stay
     * nested (Builder, Adaptive, Stats) take about 350 of them, and the queue, the refill tick
     * and the AIMD window all change the same lock-guarded counters, so their code is kept next
     * to the invariants it maintains. The permit (HeldPermit) and the blocking iterator
     * (PermitIterator) are in their own files.
     *
     * State, each field marked "Guarded by lock.": available (0..capacity), active (permits held
     * by callers), a FIFO of waiters (an intrusive doubly linked list so that a cancelled waiter
     * is unlinked in O(1)), the AIMD window, and the tick (tickFuture + tickToken). Invariant: a
     * non-empty waiter list implies available == 0, because every path that adds to the pool
     * hands to waiters first. So tryAcquire never barges past a queued producer.
     *
     * Hand-offs are decided under the lock (the waiter is unlinked and the permit counted in
     * active) and delivered after unlocking, because completing a CompletableFuture runs its
     * dependents in the completing thread. If delivery fails because the future was completed
     * (cancelled) by someone else in between, the permit is returned through the same path as a
     * release, except that it does not count as a "permit came back" for AIMD.
     *
     * A waiter whose future is completed by anyone but us (cancel, completeExceptionally,
     * orTimeout...) is unlinked by a whenComplete hook, which frees its queue slot.
     *
     * The tick is identified by a token object; a tick whose token is no longer current (it was
     * cancelled and replaced, or it was dequeued by the scheduler just before being cancelled)
     * does nothing.
     */

    private static final System.Logger LOG = System.getLogger(PowerBackpressure.class.getName());

    // ---- configuration (immutable) ----
    private final int capacity;
    private final int queueCapacity;
    private final int highWaterMark;
    private final int lowWaterMark;
    private final int baseRefillAmount;
    private final long refillIntervalNanos;
    private final Adaptive adaptive; // null when off
    private final double windowMax;  // effective ceiling of the AIMD window
    private final Ticker ticker;
    private final ScheduledExecutorService suppliedScheduler; // null: use an owned one

    // ---- state ----
    private final ReentrantLock lock = new ReentrantLock();
    private int available; // Guarded by lock.
    private int active; // Guarded by lock.
    private int pending; // Guarded by lock.
    private Waiter head; // Guarded by lock.
    private Waiter tail; // Guarded by lock.
    private double window; // Guarded by lock.
    private long returnedSinceTick; // Guarded by lock.
    private ScheduledFuture<?> tickFuture; // Guarded by lock.
    private Object tickToken; // Guarded by lock.
    private ScheduledThreadPoolExecutor ownedScheduler; // Guarded by lock.
    private boolean closed; // Guarded by lock.
    private long highSinceNanos; // Guarded by lock.
    private boolean high; // Guarded by lock.
    // ---- counters ----
    private long minted; // Guarded by lock.
    private long retired; // Guarded by lock.
    private long acquired; // Guarded by lock.
    private long transfers; // Guarded by lock.
    private long rejected; // Guarded by lock.
    private long refillTicks; // Guarded by lock.
    private long windowIncreases; // Guarded by lock.
    private long windowDecreases; // Guarded by lock.
    private long tickFailures; // Guarded by lock.

    /** Test seam: runs between deciding a hand-off and delivering it. Package-private. */
    volatile Consumer<CompletableFuture<Permit>> beforeDelivery;

    private PowerBackpressure(Builder b) {
        this.capacity = b.capacity;
        this.queueCapacity = b.queueCapacity;
        this.highWaterMark = b.highWaterMark;
        this.lowWaterMark = b.resolvedLowWaterMark();
        this.baseRefillAmount = b.resolvedRefillAmount();
        this.refillIntervalNanos = b.refillInterval.toNanos();
        this.adaptive = b.adaptive;
        this.windowMax = adaptive == null ? baseRefillAmount
                : Double.isInfinite(adaptive.max()) ? Math.max(capacity, baseRefillAmount) : adaptive.max();
        this.ticker = b.ticker;
        this.suppliedScheduler = b.scheduler;
        this.window = baseRefillAmount;
        int initial = b.initialTokens < 0 ? capacity : b.initialTokens;
        lock.lock();
        try {
            this.minted = initial;
            setAvailableLocked(initial);
            maybeScheduleTickLocked();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns a new builder with every option at its default (each setter names its default).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    // =====================================================================================
    // Acquisition
    // =====================================================================================

    /**
     * Requests a permit. If one is available and nobody is queued, the returned future is
     * already complete. Otherwise the request waits in the FIFO queue and the future completes
     * when a permit is released to it or minted by the refill.
     *
     * <p>The future is already failed with a {@link QueueFullException} (the error the
     * specification calls {@code ERR_QUEUE_FULL}) when the request would have to wait and the queue already holds
     * {@code queueCapacity} waiters, or {@code highWaterMark} or more (fail-fast overload
     * protection). After {@link #close()} it is failed with a {@link RejectedExecutionException}.
     * A waiting future is failed with a {@link RejectedExecutionException} when the controller is
     * reset or closed; it never hangs.
     *
     * <p>Cancelling the future while it waits frees its queue slot. If a permit was being handed
     * to it at that moment, the permit goes back (to the next waiter or the pool); none is lost.
     * Callbacks chained on the future run without this controller's lock held.
     *
     * @return a future of the permit
     */
    public CompletableFuture<Permit> acquire() {
        Waiter w;
        lock.lock();
        try {
            if (closed) {
                rejected++;
                return CompletableFuture.failedFuture(closedException());
            }
            if (available > 0) {
                takeOneLocked();
                return CompletableFuture.completedFuture(new HeldPermit(this));
            }
            if (pending >= queueCapacity) {
                rejected++;
                return CompletableFuture.failedFuture(new QueueFullException(
                        "waiting queue is full: pending=" + pending + ", queueCapacity=" + queueCapacity));
            }
            if (pending >= highWaterMark) {
                rejected++;
                return CompletableFuture.failedFuture(new QueueFullException(
                        "waiting producers at highWaterMark: pending=" + pending
                                + ", highWaterMark=" + highWaterMark));
            }
            w = new Waiter();
            linkLocked(w);
            maybeScheduleTickLocked();
        } finally {
            lock.unlock();
        }
        // A completion by anyone but this controller (cancel, completeExceptionally, orTimeout)
        // frees the slot. Registered after unlocking; if a permit was delivered meanwhile, the
        // hook runs at once and finds the waiter already unlinked.
        w.future.whenComplete((p, ex) -> {
            if (w.linked) {
                unlinkIfLinked(w);
            }
        });
        return w.future;
    }

    /**
     * Waits for a permit, at most {@code timeout}: the blocking form of {@link #acquire()},
     * natural on a virtual thread. Waiting producers are served in FIFO order.
     *
     * @param timeout the longest time to wait; zero or negative means do not wait
     * @param unit    the unit of {@code timeout}
     * @return the permit
     * @throws InterruptedException       if the thread is interrupted before or while waiting; no
     *                                    permit is kept in that case
     * @throws TimeoutException           if no permit arrived in time; the request leaves the queue
     * @throws QueueFullException         if the request would have to wait and the queue is full or
     *                                    at {@code highWaterMark}
     * @throws RejectedExecutionException if the controller is closed, or was reset or closed while
     *                                    the request waited
     * @throws NullPointerException       if {@code unit} is null
     */
    public Permit acquire(long timeout, TimeUnit unit) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(unit, "unit");
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        Optional<Permit> fast = tryAcquire();
        if (fast.isPresent()) {
            return fast.get();
        }
        CompletableFuture<Permit> f = acquire();
        try {
            return f.get(timeout, unit);
        } catch (ExecutionException e) {
            throw rethrow(e.getCause());
        } catch (TimeoutException e) {
            Permit p = abandon(f);
            if (p != null) {
                return p; // it arrived as we gave up: the acquisition succeeded after all
            }
            throw e;
        } catch (InterruptedException e) {
            Permit p = abandon(f);
            if (p != null) {
                p.release();
            }
            throw e;
        }
    }

    /**
     * Takes a permit if one is available right now and nobody is queued ahead.
     *
     * @return the permit, or empty when none is available or the controller is closed
     */
    public Optional<Permit> tryAcquire() {
        lock.lock();
        try {
            if (closed || available == 0) {
                return Optional.empty();
            }
            takeOneLocked();
        } finally {
            lock.unlock();
        }
        return Optional.of(new HeldPermit(this));
    }

    /**
     * Adds {@code count} permits to the controller: each goes to a queued producer if there is
     * one, otherwise into the pool up to {@code capacity}; any beyond that are discarded.
     *
     * <p>This is not how a {@link Permit} is returned (use {@link Permit#release()}, which also
     * decrements {@link #active()}); it is for signalling capacity that was not handed out as a
     * {@code Permit}, for example a downstream that reports it can take more. It does not count
     * as a permit coming back for the AIMD window.
     *
     * @param count the number of permits to add, {@code >= 1}
     * @throws IllegalArgumentException if {@code count < 1}
     */
    public void release(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1: " + count);
        }
        List<Waiter> handed;
        lock.lock();
        try {
            handed = grantLocked(count, true);
        } finally {
            lock.unlock();
        }
        deliver(handed);
    }

    // =====================================================================================
    // Read-outs
    // =====================================================================================

    /**
     * Returns the pool size: the most permits that can be available at once (not a bound on
     * {@link #active()}; see the class documentation).
     *
     * @return the configured capacity
     */
    public int capacity() {
        return capacity;
    }

    /**
     * Returns the permits available right now.
     *
     * @return a value in {@code [0, capacity]}
     */
    public int available() {
        lock.lock();
        try {
            return available;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns the number of producers waiting for a permit.
     *
     * @return the queued acquisitions
     */
    public int pending() {
        lock.lock();
        try {
            return pending;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns the most producers that may wait at once.
     *
     * @return the configured queue capacity
     */
    public int queueCapacity() {
        return queueCapacity;
    }

    /**
     * Returns whether the waiting queue is saturated: an {@link #acquire()} that had to wait
     * would be refused, because {@code pending() >= queueCapacity} or
     * {@code pending() >= highWaterMark}.
     *
     * @return {@code true} when no further producer may queue
     */
    public boolean isFull() {
        lock.lock();
        try {
            return pending >= queueCapacity || pending >= highWaterMark;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns the number of permits held by producers: counted when a permit reaches a producer
     * and uncounted when it is released. It can exceed {@link #capacity()} when the refill has
     * minted permits while earlier ones were still out.
     *
     * @return the permits currently held
     */
    public int active() {
        lock.lock();
        try {
            return active;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns the number of permits the next refill tick will mint: the configured
     * {@code refillAmount}, or with {@code adaptive} on, the current AIMD window rounded down.
     *
     * @return the current refill amount, {@code >= 1}
     */
    public int refillAmount() {
        lock.lock();
        try {
            return windowPermitsLocked();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return {@code true} once closed
     */
    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns a consistent snapshot of the controller's state and counters.
     *
     * @return an immutable snapshot
     */
    public Stats stats() {
        lock.lock();
        try {
            return new Stats(capacity, available, pending, queueCapacity, active,
                    windowPermitsLocked(), window,
                    Math.min(1.0, (double) active / capacity),
                    pending >= queueCapacity || pending >= highWaterMark,
                    high ? Math.max(0L, ticker.read() - highSinceNanos) : 0L,
                    tickFuture != null, closed,
                    minted, retired, acquired, transfers, rejected, refillTicks,
                    windowIncreases, windowDecreases, tickFailures);
        } finally {
            lock.unlock();
        }
    }

    // =====================================================================================
    // Lifecycle
    // =====================================================================================

    /**
     * Clears waiting producers and restores the pool: every queued acquisition fails with a
     * {@link RejectedExecutionException}, {@code available} becomes {@code capacity} less the
     * permits still held (never negative), and the AIMD window returns to the configured
     * {@code refillAmount}. Held permits stay held and counted in {@link #active()}: their
     * consumers are still running. The window is reset because a tuned window describes a
     * workload that no longer exists after a reset.
     *
     * <p>It does not cancel the refill tick (use {@link #close()} for teardown). If pressure is
     * still high afterwards (every permit is held), the tick keeps minting; if not, the next tick
     * finds it low and stops itself.
     */
    public void reset() {
        List<Waiter> dropped;
        lock.lock();
        try {
            dropped = drainWaitersLocked();
            int target = Math.max(0, capacity - active);
            if (target > available) {
                minted += target - available;
            } else {
                retired += available - target;
            }
            setAvailableLocked(target);
            window = baseRefillAmount;
            returnedSinceTick = 0;
            maybeScheduleTickLocked();
        } finally {
            lock.unlock();
        }
        fail(dropped, "PowerBackpressure was reset while the acquisition waited");
    }

    /**
     * Tears the controller down: cancels the refill tick, fails every queued acquisition with a
     * {@link RejectedExecutionException}, refuses acquisitions from now on, and shuts down the
     * default scheduler if this instance created one (a scheduler passed to the builder is left
     * running). Permits still held may be released afterwards. Idempotent.
     */
    @Override
    public void close() {
        List<Waiter> dropped;
        ScheduledThreadPoolExecutor owned;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            cancelTickLocked();
            dropped = drainWaitersLocked();
            owned = ownedScheduler;
        } finally {
            lock.unlock();
        }
        fail(dropped, "PowerBackpressure was closed while the acquisition waited");
        if (owned != null) {
            owned.shutdownNow();
        }
    }

    /**
     * Returns a blocking iterator that yields one permit per step, acquiring each as
     * {@link #acquire()} does:
     *
     * <pre>{@code
     * for (Permit permit : backpressure) {
     *     try (permit) {
     *         doWork();
     *     }
     * }
     * }</pre>
     *
     * <p>{@code hasNext()} waits (as {@link #acquire()} does) until it holds the next permit, and
     * returns {@code false} once the controller is closed, including when it is closed while
     * {@code hasNext()} waits. Each permit it yields must be released by the caller. If the wait
     * is interrupted, iteration ends with the thread's interrupt status set and no permit kept.
     * A reset while waiting is not an end: the iterator queues again. A {@link QueueFullException}
     * propagates from {@code hasNext()}.
     *
     * @return a new iterator; not safe for use by several threads at once
     */
    @Override
    public Iterator<Permit> iterator() {
        return new PermitIterator(this);
    }

    // =====================================================================================
    // Internals (all *Locked methods require the lock)
    // =====================================================================================

    private void takeOneLocked() {
        setAvailableLocked(available - 1);
        active++;
        acquired++;
        maybeScheduleTickLocked();
    }

    private int windowPermitsLocked() {
        return Math.max(1, (int) Math.min(Integer.MAX_VALUE, Math.floor(window)));
    }

    private void setAvailableLocked(int value) {
        available = value;
        boolean nowHigh = value < lowWaterMark;
        if (nowHigh != high) {
            high = nowHigh;
            if (nowHigh) {
                highSinceNanos = ticker.read();
            }
        }
    }

    private void linkLocked(Waiter w) {
        w.linked = true;
        w.prev = tail;
        if (tail == null) {
            head = w;
        } else {
            tail.next = w;
        }
        tail = w;
        pending++;
    }

    private void unlinkLocked(Waiter w) {
        Waiter p = w.prev;
        Waiter n = w.next;
        if (p == null) {
            head = n;
        } else {
            p.next = n;
        }
        if (n == null) {
            tail = p;
        } else {
            n.prev = p;
        }
        w.prev = null;
        w.next = null;
        w.linked = false;
        pending--;
    }

    private void unlinkIfLinked(Waiter w) {
        lock.lock();
        try {
            if (w.linked) {
                unlinkLocked(w);
            }
        } finally {
            lock.unlock();
        }
    }

    private List<Waiter> drainWaitersLocked() {
        List<Waiter> out = new ArrayList<>(pending);
        while (head != null) {
            Waiter w = head;
            unlinkLocked(w);
            out.add(w);
        }
        return out;
    }

    /**
     * Hands up to {@code n} new or returned permits to waiters (oldest first), puts the rest into
     * the pool up to capacity, and discards any beyond. Returns the waiters to deliver to after
     * unlocking (empty list if none).
     *
     * @param n       the permits to place, {@code >= 1}
     * @param minting {@code true} if the permits are new (counted in minted, and the excess is
     *                simply not created); {@code false} if they are returning (the excess is
     *                counted as retired)
     */
    private List<Waiter> grantLocked(int n, boolean minting) {
        List<Waiter> handed = List.of();
        int left = n;
        while (left > 0 && head != null) {
            if (handed.isEmpty()) {
                handed = new ArrayList<>(Math.min(left, pending));
            }
            Waiter w = head;
            unlinkLocked(w);
            handed.add(w);
            active++;
            acquired++;
            left--;
        }
        int add = Math.min(left, capacity - available);
        if (add > 0) {
            setAvailableLocked(available + add);
        }
        if (minting) {
            minted += (n - left) + add;
        } else {
            retired += left - add;
        }
        return handed;
    }

    /** Returns one held permit: a transfer if someone waits, else into the pool. */
    void returnOne(boolean cameBack) {
        Waiter w = null;
        lock.lock();
        try {
            active--;
            if (cameBack) {
                returnedSinceTick++;
            } else {
                acquired--; // it never reached the producer it was handed to
            }
            if (head != null) {
                w = head;
                unlinkLocked(w);
                active++; // transfer: the permit goes from one holder to the next
                acquired++;
                transfers++;
            } else if (available < capacity) {
                setAvailableLocked(available + 1);
            } else {
                retired++; // a minted permit coming back to a full pool
            }
        } finally {
            lock.unlock();
        }
        if (w != null) {
            deliverOne(w);
        }
    }

    private void deliver(List<Waiter> handed) {
        for (int i = 0, n = handed.size(); i < n; i++) {
            deliverOne(handed.get(i));
        }
    }

    private void deliverOne(Waiter w) {
        HeldPermit permit = new HeldPermit(this);
        Consumer<CompletableFuture<Permit>> hook = beforeDelivery;
        if (hook != null) {
            hook.accept(w.future);
        }
        if (!w.future.complete(permit)) {
            // Cancelled (or otherwise completed) between the hand-off and now: the permit comes
            // back, without counting as a consumer returning one.
            permit.releaseUndelivered();
        }
    }

    private static void fail(List<Waiter> dropped, String message) {
        for (Waiter w : dropped) {
            w.future.completeExceptionally(new RejectedExecutionException(message));
        }
    }

    private static RejectedExecutionException closedException() {
        return new RejectedExecutionException("PowerBackpressure is closed");
    }

    private void maybeScheduleTickLocked() {
        if (tickFuture != null || closed || available >= lowWaterMark) {
            return;
        }
        ScheduledExecutorService s = suppliedScheduler;
        if (s == null) {
            if (ownedScheduler == null) {
                ownedScheduler = newOwnedScheduler();
            }
            s = ownedScheduler;
        }
        Object token = new Object();
        try {
            tickFuture = s.scheduleWithFixedDelay(() -> tick(token),
                    refillIntervalNanos, refillIntervalNanos, TimeUnit.NANOSECONDS);
            tickToken = token;
        } catch (RejectedExecutionException e) {
            // A caller-supplied scheduler that was shut down: acquisitions keep working, refill
            // does not. Reported and counted; retried at the next opportunity.
            tickFailures++;
            LOG.log(System.Logger.Level.WARNING, "PowerBackpressure: the scheduler refused the refill tick: {0}", e.toString());
        }
    }

    private void cancelTickLocked() {
        if (tickFuture != null) {
            tickFuture.cancel(false);
            tickFuture = null;
            tickToken = null;
        }
    }

    private static ScheduledThreadPoolExecutor newOwnedScheduler() {
        ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "PowerBackpressure-refill");
            t.setDaemon(true);
            return t;
        });
        s.setRemoveOnCancelPolicy(true);
        s.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        s.setKeepAliveTime(1, TimeUnit.SECONDS);
        s.allowCoreThreadTimeOut(true);
        return s;
    }

    /** One refill tick; see the class documentation. */
    private void tick(Object token) {
        List<Waiter> handed;
        lock.lock();
        try {
            if (token != tickToken) {
                return;
            }
            if (closed || available >= lowWaterMark) {
                cancelTickLocked();
                return;
            }
            refillTicks++;
            adaptWindowLocked();
            returnedSinceTick = 0;
            handed = grantLocked(windowPermitsLocked(), true);
        } catch (RuntimeException e) {
            tickFailures++; // still under the lock: the finally below releases it
            LOG.log(System.Logger.Level.ERROR, "PowerBackpressure: refill tick failed", e);
            return;
        } finally {
            lock.unlock();
        }
        deliver(handed);
    }

    /**
     * The AIMD step of a tick, before it mints: only with producers queued (with none there is
     * nothing to measure), the window grows by {@code additiveIncrease} if a permit came back
     * since the previous tick, and shrinks by {@code beta} if none did while permits are out.
     */
    private void adaptWindowLocked() {
        if (adaptive != null && pending > 0) {
            if (returnedSinceTick > 0) {
                window = Math.min(windowMax, window + adaptive.additiveIncrease());
                windowIncreases++;
            } else if (active > 0) {
                window = Math.max(adaptive.min(), window * adaptive.beta());
                windowDecreases++;
            }
        }
    }

    /** Cancels {@code f}; if it had already completed with a permit, returns that permit. */
    static Permit abandon(CompletableFuture<Permit> f) {
        if (f.cancel(false)) {
            return null;
        }
        try {
            return f.getNow(null);
        } catch (CompletionException | CancellationException e) {
            return null;
        }
    }

    private static RuntimeException rethrow(Throwable cause) {
        if (cause instanceof RuntimeException r) {
            throw r;
        }
        if (cause instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(cause);
    }

    /** A queued acquisition: a node of the intrusive FIFO plus the caller's future. */
    private static final class Waiter {
        final CompletableFuture<Permit> future = new CompletableFuture<>();
        Waiter prev; // Guarded by lock.
        Waiter next; // Guarded by lock.
        volatile boolean linked; // Guarded by lock for writes; the completion hook reads it without.
    }

    // =====================================================================================
    // Configuration types
    // =====================================================================================

    /**
     * AIMD tuning of the refill amount (see the class documentation).
     *
     * <p>{@code beta} is clamped into {@code [0.1, 0.99]}, as the specification requires
     * ({@code 0.05} becomes {@code 0.1}, {@code 1.5} becomes {@code 0.99}); every other component
     * is validated.
     *
     * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number
     * of threads.
     *
     * @param additiveIncrease how much a tick that saw a permit come back grows the window;
     *                         finite and {@code > 0}
     * @param beta             the factor a tick that saw no permit come back multiplies the window
     *                         by; finite, clamped into {@code [0.1, 0.99]}
     * @param min              the smallest window; finite and {@code >= 1} (a refill always mints
     *                         at least one permit)
     * @param max              the largest window; {@code >= min}, or
     *                         {@link Double#POSITIVE_INFINITY} for the larger of {@code capacity}
     *                         and the configured {@code refillAmount}
     */
    public record Adaptive(double additiveIncrease, double beta, double min, double max) {

        /**
         * Validates the components and clamps {@code beta}.
         *
         * @param additiveIncrease the additive increase, finite and {@code > 0}
         * @param beta             the multiplicative decrease factor, finite (then clamped)
         * @param min              the smallest window, finite and {@code >= 1}
         * @param max              the largest window, {@code >= min} (may be infinite)
         * @throws IllegalArgumentException naming the component if one is invalid
         */
        public Adaptive {
            Preconditions.requireFinitePositive("adaptive.additiveIncrease", additiveIncrease);
            if (!Double.isFinite(beta)) {
                throw new IllegalArgumentException("adaptive.beta must be finite: " + beta);
            }
            beta = Math.min(0.99, Math.max(0.1, beta));
            if (!(min >= 1) || Double.isInfinite(min)) {
                throw new IllegalArgumentException("adaptive.min must be finite and >= 1: " + min);
            }
            if (Double.isNaN(max) || max < min) {
                throw new IllegalArgumentException(
                        "adaptive.max must be >= adaptive.min (" + min + "): " + max);
            }
        }

        /**
         * Returns the defaults taken by {@code adaptive(true)}: {@code additiveIncrease} 1,
         * {@code beta} 0.5, {@code min} 1, {@code max} unbounded (meaning the larger of
         * {@code capacity} and {@code refillAmount}).
         *
         * @return the default tuning
         */
        public static Adaptive defaults() {
            return new Adaptive(1, 0.5, 1, Double.POSITIVE_INFINITY);
        }

        /**
         * Returns a copy with another additive increase.
         *
         * @param value the additive increase, finite and {@code > 0}
         * @return the copy
         * @throws IllegalArgumentException if {@code value} is invalid
         */
        public Adaptive withAdditiveIncrease(double value) {
            return new Adaptive(value, beta, min, max);
        }

        /**
         * Returns a copy with another decrease factor.
         *
         * @param value the factor, finite; clamped into {@code [0.1, 0.99]}
         * @return the copy
         * @throws IllegalArgumentException if {@code value} is not finite
         */
        public Adaptive withBeta(double value) {
            return new Adaptive(additiveIncrease, value, min, max);
        }

        /**
         * Returns a copy with another lower bound.
         *
         * @param value the smallest window, finite, {@code >= 1} and {@code <= max}
         * @return the copy
         * @throws IllegalArgumentException if {@code value} is invalid
         */
        public Adaptive withMin(double value) {
            return new Adaptive(additiveIncrease, beta, value, max);
        }

        /**
         * Returns a copy with another upper bound.
         *
         * @param value the largest window, {@code >= min}, or infinite for the default
         * @return the copy
         * @throws IllegalArgumentException if {@code value} is invalid
         */
        public Adaptive withMax(double value) {
            return new Adaptive(additiveIncrease, beta, min, value);
        }
    }

    /**
     * A consistent snapshot of a {@link PowerBackpressure}.
     *
     * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number
     * of threads.
     *
     * @param capacity          the pool size
     * @param available         permits available in the pool
     * @param pending           producers waiting
     * @param queueCapacity     the most producers that may wait
     * @param active            permits held by producers (may exceed {@code capacity})
     * @param refillAmount      permits the next refill tick mints
     * @param refillWindow      the AIMD window before rounding down ({@code refillAmount} exactly
     *                          when adaptive is off)
     * @param pressure          {@code min(1, active / capacity)}: how much of the pool is held, in
     *                          {@code [0, 1]}; a local signal another bounded helper can follow
     * @param full              what {@link PowerBackpressure#isFull()} returns
     * @param highPressureNanos for how long, by the ticker, {@code available} has been below
     *                          {@code lowWaterMark}; 0 when it is not
     * @param refillScheduled   whether the refill tick is scheduled
     * @param closed            whether the controller is closed
     * @param minted            permits created so far: the initial tokens, refills, permits added
     *                          by {@code release(count)} and by {@code reset()}
     * @param retired           permits removed so far: returned to a full pool, or taken out of the
     *                          pool by {@code reset()}; {@code active + available == minted - retired}
     * @param acquired          permits that reached producers so far (including transfers)
     * @param transfers         releases that went straight to a waiting producer
     * @param rejected          acquisitions refused (queue full, high-water mark, or closed)
     * @param refillTicks       refill ticks that minted permits
     * @param windowIncreases   AIMD additive increases so far
     * @param windowDecreases   AIMD multiplicative decreases so far
     * @param tickFailures      refill ticks the scheduler refused, or that failed
     */
    public record Stats(int capacity, int available, int pending, int queueCapacity, int active,
                        int refillAmount, double refillWindow, double pressure, boolean full,
                        long highPressureNanos, boolean refillScheduled, boolean closed,
                        long minted, long retired, long acquired, long transfers, long rejected,
                        long refillTicks, long windowIncreases, long windowDecreases,
                        long tickFailures) {
    }

    /**
     * Builds a {@link PowerBackpressure}. Every option has a default, named at its setter;
     * {@link #build()} validates them together, and setters that can validate a value on its own
     * do so at once.
     *
     * <p><b>Thread safety.</b> Not safe for concurrent use: confine a builder to one thread at a
     * time. The controller it builds is safe for concurrent use.
     */
    public static final class Builder {
        private int capacity = 100;
        private int queueCapacity = 1000;
        private int highWaterMark = Integer.MAX_VALUE;
        private int lowWaterMark = -1;   // -1: ceil(capacity * 0.25)
        private int refillAmount = -1;   // -1: max(1, ceil(capacity * 0.1))
        private Duration refillInterval = Duration.ofMillis(200);
        private int initialTokens = -1;  // -1: capacity
        private Adaptive adaptive;
        private ScheduledExecutorService scheduler;
        private Ticker ticker = Ticker.system();

        private Builder() {
        }

        /**
         * Sets the pool size (default 100). See the class documentation: this bounds
         * {@code available}, not {@code active}.
         *
         * @param capacity the pool size, {@code >= 1}
         * @return this builder
         * @throws IllegalArgumentException if {@code capacity < 1}
         */
        public Builder capacity(int capacity) {
            if (capacity < 1) {
                throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
            }
            this.capacity = capacity;
            return this;
        }

        /**
         * Sets how many producers may wait for a permit (default 1000). Zero means an
         * {@code acquire()} that cannot be served at once is refused.
         *
         * @param queueCapacity the most waiters, {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code queueCapacity < 0}
         */
        public Builder queueCapacity(int queueCapacity) {
            if (queueCapacity < 0) {
                throw new IllegalArgumentException("queueCapacity must be >= 0: " + queueCapacity);
            }
            this.queueCapacity = queueCapacity;
            return this;
        }

        /**
         * Sets the waiter count at or above which {@code acquire()} is refused with a
         * {@link QueueFullException} instead of queueing (default: none, which
         * {@code Integer.MAX_VALUE} also means).
         *
         * @param highWaterMark the threshold, {@code >= 1}
         * @return this builder
         * @throws IllegalArgumentException if {@code highWaterMark < 1}
         */
        public Builder highWaterMark(int highWaterMark) {
            if (highWaterMark < 1) {
                throw new IllegalArgumentException("highWaterMark must be >= 1: " + highWaterMark);
            }
            this.highWaterMark = highWaterMark;
            return this;
        }

        /**
         * Sets the available-permit count below which pressure is high and the refill tick runs
         * (default {@code ceil(capacity * 0.25)}). Zero disables the refill.
         *
         * @param lowWaterMark the threshold, in {@code [0, capacity]} (checked by {@link #build()})
         * @return this builder
         * @throws IllegalArgumentException if {@code lowWaterMark < 0}
         */
        public Builder lowWaterMark(int lowWaterMark) {
            if (lowWaterMark < 0) {
                throw new IllegalArgumentException("lowWaterMark must be >= 0: " + lowWaterMark);
            }
            this.lowWaterMark = lowWaterMark;
            return this;
        }

        /**
         * Sets the base number of permits each refill tick mints (default
         * {@code max(1, ceil(capacity * 0.1))}); with {@code adaptive} on, the starting window.
         *
         * @param refillAmount the permits per tick, {@code >= 1}
         * @return this builder
         * @throws IllegalArgumentException if {@code refillAmount < 1}
         */
        public Builder refillAmount(int refillAmount) {
            if (refillAmount < 1) {
                throw new IllegalArgumentException("refillAmount must be >= 1: " + refillAmount);
            }
            this.refillAmount = refillAmount;
            return this;
        }

        /**
         * Sets the interval between refill ticks while pressure is high (default 200 ms).
         *
         * @param refillInterval the interval, {@code > 0}
         * @return this builder
         * @throws NullPointerException     if {@code refillInterval} is null
         * @throws IllegalArgumentException if it is zero, negative, or too long to express in
         *                                  nanoseconds
         */
        public Builder refillInterval(Duration refillInterval) {
            Preconditions.requirePositive("refillInterval", refillInterval);
            try {
                refillInterval.toNanos();
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("refillInterval is too long: " + refillInterval, e);
            }
            this.refillInterval = refillInterval;
            return this;
        }

        /**
         * Sets how many permits are available at construction (default {@code capacity}).
         *
         * @param initialTokens the initial pool, in {@code [0, capacity]} (checked by
         *                      {@link #build()})
         * @return this builder
         * @throws IllegalArgumentException if {@code initialTokens < 0}
         */
        public Builder initialTokens(int initialTokens) {
            if (initialTokens < 0) {
                throw new IllegalArgumentException("initialTokens must be >= 0: " + initialTokens);
            }
            this.initialTokens = initialTokens;
            return this;
        }

        /**
         * Turns AIMD tuning of the refill amount on with {@link Adaptive#defaults()}, or off
         * (the default).
         *
         * @param adaptive whether the refill amount adapts
         * @return this builder
         */
        public Builder adaptive(boolean adaptive) {
            this.adaptive = adaptive ? Adaptive.defaults() : null;
            return this;
        }

        /**
         * Turns AIMD tuning of the refill amount on with the given tuning.
         *
         * @param adaptive the tuning
         * @return this builder
         * @throws NullPointerException if {@code adaptive} is null
         */
        public Builder adaptive(Adaptive adaptive) {
            this.adaptive = Objects.requireNonNull(adaptive, "adaptive");
            return this;
        }

        /**
         * Sets the scheduler that runs the refill tick. It is not shut down by
         * {@link PowerBackpressure#close()}. By default each instance creates, when first
         * needed, a single daemon thread that it shuts down on close.
         *
         * @param scheduler the scheduler
         * @return this builder
         * @throws NullPointerException if {@code scheduler} is null
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * Sets the time source (default {@link Ticker#system()}), read for
         * {@link Stats#highPressureNanos()}.
         *
         * @param ticker the ticker
         * @return this builder
         * @throws NullPointerException if {@code ticker} is null
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /**
         * Validates the options together and builds the controller. If {@code lowWaterMark}
         * starts pressure high (for example {@code initialTokens} 0), the refill tick is
         * scheduled at once.
         *
         * @return a new controller
         * @throws IllegalArgumentException if {@code lowWaterMark} or {@code initialTokens}
         *                                  exceeds {@code capacity}, or {@code adaptive} is on and
         *                                  {@code refillAmount} lies outside its
         *                                  {@code [min, max]}
         */
        public PowerBackpressure build() {
            int lwm = resolvedLowWaterMark();
            if (lwm > capacity) {
                throw new IllegalArgumentException(
                        "lowWaterMark must be <= capacity (" + capacity + "): " + lwm);
            }
            if (initialTokens > capacity) {
                throw new IllegalArgumentException(
                        "initialTokens must be <= capacity (" + capacity + "): " + initialTokens);
            }
            int refill = resolvedRefillAmount();
            if (adaptive != null && (refill < adaptive.min() || refill > adaptive.max())) {
                throw new IllegalArgumentException("refillAmount must lie within adaptive [min, max] ["
                        + adaptive.min() + ", " + adaptive.max() + "]: " + refill);
            }
            return new PowerBackpressure(this);
        }

        private int resolvedLowWaterMark() {
            return lowWaterMark >= 0 ? lowWaterMark : (int) ((capacity + 3L) / 4);
        }

        private int resolvedRefillAmount() {
            return refillAmount >= 1 ? refillAmount : (int) Math.max(1L, (capacity + 9L) / 10);
        }
    }
}
