package io.github.performancehelpers;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import io.github.performancehelpers.internal.Access;

/**
 * Where a {@link PowerFlowExecutor}'s admitted tasks run: one subclass per kind of delegate
 * ({@link VirtualThreads}, {@link Pool}, {@link Plain}), chosen once by {@link #of}. It hands a
 * task off, holds the slot gate in front of the delegate (a {@link ConcurrencyLimit}, none for a
 * delegate that is not sized), resizes, registers running tasks for {@code shutdownNow()}'s
 * interrupts, and stops what it owns on shutdown. Nothing outside this file asks which kind an
 * executor has.
 *
 * <p>The slot and registry operations are final methods of this class on final fields, so on
 * the hot paths they inline as the field accesses they replace; the per-kind operations are
 * abstract, and each executor's call sites see one subclass.
 *
 * <p><b>Thread safety.</b> Every method may be called from any thread; {@link #resize(int)} and
 * {@link #capInFlight(int)} are synchronized with each other.
 */
abstract class Delegate {

    private static final Access.ControllerAccess LOOP = Access.controller();

    /**
     * The slot gate: at most {@link ConcurrencyLimit#limit()} of the executor's tasks are in flight
     * on the delegate; null for a delegate that is not sized.
     */
    private final ConcurrencyLimit limit;
    /**
     * The tasks in flight on a delegate that is not sized (a sized one counts them in its slot
     * gate, where a slot is an in-flight count); null for a sized one.
     */
    private final AtomicLong unsizedInFlight;
    /**
     * The running tasks, one set node per task, so that {@code shutdownNow()} can interrupt them;
     * null where the delegate's own {@code shutdownNow()} interrupts its workers (an owned pool).
     */
    private final Set<Job> runningJobs;
    /** Whether a worker that finishes a task may take the next queued one (a chain). */
    final boolean chains;
    /**
     * Whether each task runs on a thread of its own (the virtual delegate), so that nothing a
     * chain of tasks would share is shared: a task claims one of {@link #recorders()} for its
     * records as it ends, a finishing task looks at the queue before it takes an admission, and no
     * running gauge is kept (the slots in use are the tasks on the delegate).
     */
    final boolean threadPerTask;
    /** The size in force (the {@link PoolSizer}'s figure); written by {@link #resize(int)}. */
    private volatile int sizeInForce;
    /** The executor's cap on the tasks in flight; written by {@link #capInFlight(int)}. */
    private volatile int inFlightCap = InFlightCap.OPEN;

    private Delegate(ConcurrencyLimit limit, boolean trackRunning, boolean chains, boolean threadPerTask, int size) {
        this.limit = limit;
        this.unsizedInFlight = limit == null ? new AtomicLong() : null;
        this.runningJobs = trackRunning ? ConcurrentHashMap.newKeySet() : null;
        this.chains = chains;
        this.threadPerTask = threadPerTask;
        this.sizeInForce = size;
    }

    /**
     * Chooses the kind for the builder's delegate.
     *
     * @param given            the caller's executor, or null for the default (virtual threads)
     * @param owns             whether the caller's executor is owned (the builder's setting, or null)
     * @param name             the executor's name, for the default delegate's threads
     * @param fastPaths        whether finishing workers may take the next task (no global limiter)
     * @param size             the starting size, from the {@link PoolSizer}
     * @param maxConcurrency   the sizer's ceiling, which bounds the pool threads that run at once
     * @param relativeAccuracy the accuracy of a pool's recorders' histograms
     * @return the delegate, sized
     */
    static Delegate of(ExecutorService given, Boolean owns, String name, boolean fastPaths, int size,
            int maxConcurrency, double relativeAccuracy) {
        if (given == null) {
            return new VirtualThreads(name, fastPaths, size, maxConcurrency, relativeAccuracy);
        }
        boolean owned = owns != null && owns;
        if (given instanceof ThreadPoolExecutor pool) {
            return new Pool(pool, owned, fastPaths, size, maxConcurrency, relativeAccuracy);
        }
        return new Plain(given, owned);
    }

    /**
     * The default ceiling for the sizer when the builder sets none: for a
     * {@link ThreadPoolExecutor}, its maximum pool size at build time (at most {@code cap}).
     */
    static int defaultMaxConcurrency(ExecutorService given, int cap) {
        return given instanceof ThreadPoolExecutor pool ? Math.min(Math.max(1, pool.getMaximumPoolSize()), cap) : cap;
    }

    // ---------------------------------------------------------------- slots

    /** Whether every slot is taken (a cheap pre-check before the queue's contended lines). */
    final boolean full() {
        return limit != null && limit.inUse() >= limit.limit();
    }

    /**
     * Whether a slot is free now on a sized delegate: false when every slot is taken, and on one
     * not sized here, where the executor cannot tell (the door's head pace,
     * {@code WaitBudget.paceShownBy}).
     */
    final boolean slotFree() {
        return limit != null && limit.inUse() < limit.limit();
    }

    /*
     * A slot is the executor's in-flight count: taken before a task is handed off (by the
     * submitter on the fast path, by the dispatcher before it takes the queue's head), kept
     * across a chain, given back to its stripe when the chain ends or the hand-off does not
     * happen. One atomic update on each side, where a slot and a separate in-flight counter were
     * two (on the virtual delegate, a tenth of a trivial task's cost; benchmarks/executor.md),
     * each on a line that side alone writes (ConcurrencyLimit counts acquisitions and releases
     * apart); on the virtual delegate the counters are striped, because submitters on several
     * threads otherwise all update one line.
     */

    /** Takes a slot if one is free (on a delegate that is not sized, always). */
    final boolean tryAcquireSlot() {
        return claimSlot() >= 0;
    }

    /**
     * Takes a slot if one is free (on a delegate that is not sized, always).
     *
     * @return -1 if none was free; else a claim, read with {@link #ticket(long)} and
     *     {@link #stripe(long)}
     */
    final long claimSlot() {
        if (limit == null) {
            unsizedInFlight.getAndIncrement();
            return 0L;
        }
        return limit.tryAcquireTicket();
    }

    /**
     * A claim's ticket: consecutive within its stripe on a sized delegate (modulo 2<sup>31</sup>),
     * 0 otherwise.
     */
    static long ticket(long claim) {
        return ConcurrencyLimit.ticket(claim);
    }

    /** A claim's stripe, which {@link #releaseSlot(int)} takes back (0 on a delegate not sized). */
    static int stripe(long claim) {
        return ConcurrencyLimit.stripe(claim);
    }

    /** {@link #acquireSlot()}'s result: it waited for the slot. */
    static final long WAITED = 1L << 32;

    /**
     * Takes a slot, waiting for one if none is free.
     *
     * @return the slot's stripe (the low 32 bits), with {@link #WAITED} set if it waited
     * @throws InterruptedException if interrupted while waiting
     */
    final long acquireSlot() throws InterruptedException {
        if (limit == null) {
            unsizedInFlight.incrementAndGet();
            return 0L;
        }
        long claim = limit.tryAcquireTicket();
        return claim >= 0 ? stripe(claim) : limit.acquire() | WAITED;
    }

    /** The slots taken now: the tasks handed to the delegate and not yet ended (0 if not sized). */
    final int slotsInUse() {
        return limit != null ? limit.inUse() : 0;
    }

    /** The slots taken now on any delegate: the executor's tasks in flight. */
    final long inFlight() {
        return limit != null ? limit.inUse() : unsizedInFlight.get();
    }

    /**
     * Gives a slot back to the stripe its claim named; the executor's {@code releaseSlot(int)} is
     * the caller, which signals the last one of a shutdown.
     */
    final void releaseSlot(int stripe) {
        if (limit != null) {
            limit.release(stripe);
        } else {
            unsizedInFlight.decrementAndGet();
        }
    }

    /** Whether more slots are in use than the limit allows (it was lowered): a chain must end. */
    final boolean overLimit() {
        return limit.inUse() > limit.limit();
    }

    // ---------------------------------------------------------------- running tasks

    /** Registers a task that starts running on thread {@code t}, if running tasks are tracked. */
    final void running(Job job, Thread t) {
        if (runningJobs != null) {
            job.runner = t;
            runningJobs.add(job);
        }
    }

    /** Unregisters a task that has finished running. */
    final void ran(Job job) {
        if (runningJobs != null) {
            job.runner = null;
            runningJobs.remove(job);
        }
    }

    /** Interrupts every registered running task. */
    final void interruptRunning() {
        if (runningJobs != null) {
            for (Job j : runningJobs) {
                j.interrupt();
            }
        }
    }

    // ---------------------------------------------------------------- size

    /**
     * Returns the size in force: the concurrency bound or pool size, or -1 for a delegate that is
     * not sized.
     */
    final int poolSize() {
        return limit != null ? sizeInForce : -1;
    }

    /**
     * Applies a new size from the {@link PoolSizer} (at least 1). Called by the tick, one call at a
     * time; a delegate that is not sized ignores it.
     *
     * @throws RuntimeException if the delegate refuses the new size
     */
    final synchronized void resize(int size) {
        if (limit != null) {
            sizeInForce = size;
            applyLimit();
            resized(size);
        }
    }

    /**
     * Applies the executor's cap on the tasks in flight ({@link InFlightCap}, at least 1;
     * {@link InFlightCap#OPEN} for none): the slots are the fewer of the size's and the cap, the
     * pool's threads stay the size. Called by the tick; synchronized with {@link #resize(int)},
     * which the callback thread calls, so that the limit always reflects the latest of both.
     */
    final synchronized void capInFlight(int cap) {
        if (limit != null && cap != inFlightCap) {
            inFlightCap = cap;
            applyLimit();
        }
    }

    /** Sets the slot limit from the size and the cap in force: the fewer. Called holding this monitor. */
    private void applyLimit() {
        limit.setLimit(Math.min(slotsFor(sizeInForce), inFlightCap));
    }

    /** {@return the cap on the tasks in flight in force, {@link InFlightCap#OPEN} when none} */
    final int inFlightCap() {
        return inFlightCap;
    }

    /** The slots for a size: the size itself, unless a kind keeps more tasks in flight per thread. */
    int slotsFor(int size) {
        return size;
    }

    /** Applies a new size to the delegate itself, after the slot limit. */
    void resized(int size) {
    }

    // ---------------------------------------------------------------- hand-off and chains

    /**
     * Hands a task to the delegate. The caller holds its slot and has counted it in flight.
     *
     * @throws RuntimeException if the delegate refuses it (a {@code RejectedExecutionException},
     *     or whatever a caller's delegate throws)
     */
    abstract void start(Job job);

    /**
     * Goes on with a chain: {@code next} was taken and admitted by a worker that finished a task
     * and still holds the slot and in-flight count. Returns true if the calling thread runs it
     * itself (a pool thread, as a pool worker takes its next task; the caller counts the
     * admission); otherwise hands it off to a thread of its own, which inherits the slot and the
     * in-flight count, counts the admission and the calling thread's end, and returns false.
     */
    abstract boolean continueChain(PowerFlowExecutor executor, Job next);

    /** Whether a chain must end because the delegate itself is stopping. */
    boolean stopping() {
        return false;
    }

    /**
     * The recorders a pool thread running a chain claims (or each task, where
     * {@link #threadPerTask}), or null if tasks record into the shared histograms.
     */
    Recorders recorders() {
        return null;
    }

    // ---------------------------------------------------------------- shutdown

    /**
     * For {@code shutdownNow()}: takes back the executor's tasks the delegate holds but has not
     * started, adds each as it was submitted to {@code never}, and gives back each one's slot and
     * in-flight count ({@code executor.releaseSlot(int)}); stops an owned delegate and adds its own tasks.
     */
    abstract void takeBack(PowerFlowExecutor executor, List<Runnable> never);

    /** For termination: shuts down an owned delegate and waits for it; nothing otherwise. */
    abstract void shutdownOwned();

    /**
     * Whether the delegate itself is shut down (by its owner, or by this executor's termination):
     * it would refuse a task, so {@code execute} refuses it first.
     */
    abstract boolean isShutDown();

    /**
     * Whether {@link #shutdownOwned()} would return at once (no more than its threads' exit), so
     * that a {@code shutdown()} of an idle executor may terminate it on the caller's thread: true
     * unless an owned delegate may still be running tasks of its own.
     */
    abstract boolean quiet();

    /** Waits for {@code e} to terminate; an interrupt does not end the wait, and is kept. */
    static void awaitUninterruptibly(ExecutorService e) {
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    if (e.awaitTermination(1, TimeUnit.DAYS)) {
                        return;
                    }
                } catch (InterruptedException ignored) {
                    interrupted = true; // keep waiting: termination must cover the delegate
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---------------------------------------------------------------- the kinds

    /**
     * The default delegate: one virtual thread per task, under a concurrency bound the loop
     * resizes. Always owned: its thread executor is stopped by {@code shutdownNow()} and shut
     * down at termination. A chain's next task runs in a new virtual thread that inherits the
     * slot.
     */
    static final class VirtualThreads extends Delegate {
        private final ThreadFactory workerFactory;
        /**
         * Starts each task's thread, as {@code newVirtualThreadPerTaskExecutor} does: its threads
         * live in its own thread container (one set insert and removal per task) rather than in
         * the JVM's root container, and its {@code shutdownNow()} interrupts them, so this class
         * keeps no registry of its own. A registry beside the root container's cost two concurrent
         * set updates per task, about half of a trivial task's time (benchmarks/executor.md,
         * "The virtual delegate").
         */
        private final ExecutorService threads;
        /** Claimed by each task as it ends, for its three records and counts (see Job#runTask). */
        private final Recorders recorders;

        VirtualThreads(String name, boolean fastPaths, int size, int maxConcurrency, double relativeAccuracy) {
            super(new ConcurrencyLimit(size, ConcurrencyLimit.stripesFor(Runtime.getRuntime().availableProcessors())),
                    false, fastPaths, true, size);
            this.recorders = new Recorders(maxConcurrency, relativeAccuracy);
            // One shared name for every worker ("name-worker"), not a numbered one: a numbered name
            // makes the JDK build a new String per virtual thread, that is per task (see
            // benchmarks/executor.md, section "5. Throughput fixes: 2 × poolSize in flight on a
            // pool, fewer per-task allocations"). The virtual thread's id tells workers apart.
            this.workerFactory = Thread.ofVirtual().name(name + "-worker").factory();
            this.threads = Executors.newThreadPerTaskExecutor(workerFactory);
        }

        @Override
        void start(Job job) {
            try {
                threads.execute(job);
            } catch (RejectedExecutionException e) {
                if (!threads.isShutdown()) {
                    throw e;
                }
                // shutdownNow() has stopped the thread executor while this task was being handed
                // off: it still runs, on a thread of its own, and sees the interrupt a stopping
                // executor's tasks see (Job#run), as a task racing a pool's shutdownNow() would.
                workerFactory.newThread(job).start();
            }
        }

        @Override
        Recorders recorders() {
            return recorders;
        }

        @Override
        boolean continueChain(PowerFlowExecutor executor, Job next) {
            LOOP.countAdmitted(executor.controller, 1);
            executor.handOff(next);
            return false;
        }

        /** Nothing waits in the thread executor; stopping it interrupts every running task. */
        @Override
        void takeBack(PowerFlowExecutor executor, List<Runnable> never) {
            threads.shutdownNow();
        }

        /** At termination no task is in flight: this waits at most for the last threads' exit. */
        @Override
        void shutdownOwned() {
            threads.shutdown();
            awaitUninterruptibly(threads);
        }

        @Override
        boolean quiet() {
            return true;
        }

        @Override
        boolean isShutDown() {
            return false;
        }
    }

    /**
     * A {@link ThreadPoolExecutor}: resized with {@code setCorePoolSize}/{@code setMaximumPoolSize},
     * and a finishing pool thread runs the next queued tasks itself, recording into a claimed
     * {@link Recorder}. Without chains (a global limiter), {@link #POOL_IN_FLIGHT_FACTOR} tasks per
     * pool thread are kept in flight.
     */
    static final class Pool extends Delegate {

        /**
         * How many tasks per pool thread are kept in flight when the pool's workers cannot take
         * the next task themselves (with a global limiter, whose admissions cannot be refunded): 2,
         * so up to {@code poolSize} tasks wait in the pool's own queue. With exactly
         * {@code poolSize} in flight the pool's queue would always be empty and the workers would
         * move in lockstep with the dispatcher: a worker that finishes a task frees a slot and
         * wakes the parked dispatcher, which hands off and wakes a parked worker, two thread
         * wake-ups in series per task. With a second task per thread already queued, a worker that
         * finishes takes its next task at once while the dispatcher refills the queue in parallel
         * (see benchmarks/executor.md, section "5. Throughput fixes: 2 × poolSize in flight on a
         * pool, fewer per-task allocations").
         *
         * <p>Otherwise (the usual case) the in-flight bound is the pool size itself: a finishing
         * worker takes the next queued task itself (see {@link Job#run()}), so there is no
         * lockstep to avoid, and a second task per thread in the pool's queue would wait there
         * behind the tasks the workers take from the executor's queue.
         */
        static final int POOL_IN_FLIGHT_FACTOR = 2;

        private final ThreadPoolExecutor pool;
        private final boolean owned;
        private final Recorders recorders;

        Pool(ThreadPoolExecutor pool, boolean owned, boolean fastPaths, int size, int maxConcurrency,
                double relativeAccuracy) {
            // An owned pool's shutdownNow() interrupts its workers, and so the tasks running on them.
            super(new ConcurrencyLimit(slotsFor(size, fastPaths)), !owned, fastPaths, false, size);
            this.pool = pool;
            this.owned = owned;
            this.recorders = fastPaths ? new Recorders(maxConcurrency, relativeAccuracy) : null;
            resized(size);
        }

        private static int slotsFor(int size, boolean chains) {
            return chains ? size
                    : (int) Math.min(Integer.MAX_VALUE, (long) POOL_IN_FLIGHT_FACTOR * size);
        }

        @Override
        int slotsFor(int size) {
            return slotsFor(size, chains);
        }

        /** Resizes the pool in the order that never throws (core <= maximum at every step). */
        @Override
        void resized(int size) {
            if (size >= pool.getCorePoolSize()) {
                pool.setMaximumPoolSize(size);
                pool.setCorePoolSize(size);
            } else {
                pool.setCorePoolSize(size);
                pool.setMaximumPoolSize(size);
            }
        }

        @Override
        void start(Job job) {
            pool.execute(job);
        }

        @Override
        boolean continueChain(PowerFlowExecutor executor, Job next) {
            return true;
        }

        @Override
        boolean stopping() {
            return pool.isShutdown();
        }

        @Override
        Recorders recorders() {
            return recorders;
        }

        @Override
        void takeBack(PowerFlowExecutor executor, List<Runnable> never) {
            List<Runnable> fromPool;
            if (owned) {
                fromPool = pool.shutdownNow();
            } else {
                fromPool = new ArrayList<>();
                for (Runnable r : pool.getQueue().toArray(new Runnable[0])) {
                    if (r instanceof Job j && j.owner == executor && pool.remove(r)) {
                        fromPool.add(r);
                    }
                }
            }
            for (Runnable r : fromPool) {
                if (r instanceof Job j && j.owner == executor) {
                    never.add(j.task);
                    executor.releaseSlot(j.slot());
                } else {
                    never.add(r); // the owned pool's own tasks, given to it directly
                }
            }
        }

        @Override
        void shutdownOwned() {
            if (owned) {
                pool.shutdown();
                awaitUninterruptibly(pool);
            }
        }

        /** A caller's pool is not waited for; an owned one is quiet when it runs and holds nothing. */
        @Override
        boolean quiet() {
            return !owned || (pool.getActiveCount() == 0 && pool.getQueue().isEmpty());
        }

        @Override
        boolean isShutDown() {
            return pool.isShutdown();
        }
    }

    /**
     * Any other {@link ExecutorService}: used as is, neither sized nor bounded, and no chains.
     * {@code shutdownNow()} can take back only what an owned one returns from its own.
     */
    static final class Plain extends Delegate {
        private final ExecutorService executor;
        private final boolean owned;

        Plain(ExecutorService executor, boolean owned) {
            super(null, true, false, false, 0);
            this.executor = executor;
            this.owned = owned;
        }

        @Override
        void start(Job job) {
            executor.execute(job);
        }

        @Override
        boolean continueChain(PowerFlowExecutor executor, Job next) {
            throw new AssertionError("no chains on an unsized delegate");
        }

        @Override
        void takeBack(PowerFlowExecutor owner, List<Runnable> never) {
            if (!owned) {
                return;
            }
            for (Runnable r : executor.shutdownNow()) {
                if (r instanceof Job j && j.owner == owner) {
                    never.add(j.task);
                    owner.releaseSlot(j.slot());
                } else {
                    never.add(r);
                }
            }
        }

        @Override
        void shutdownOwned() {
            if (owned) {
                executor.shutdown();
                awaitUninterruptibly(executor);
            }
        }

        /** An owned executor of unknown kind may be running tasks of its own: not known quiet. */
        @Override
        boolean quiet() {
            return !owned || executor.isTerminated();
        }

        @Override
        boolean isShutDown() {
            return executor.isShutdown();
        }
    }
}
