// Over 800 lines (about 2,000) because the public nested types Stats and Builder live here
// (their names are API), about 600 lines of it; the data path itself is split across
// Dispatcher, Job, Delegate, Recorders, Tick, WaitBudget, RoomGate and Termination.
package io.github.performancehelpers;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.internal.FlowEvents;
import io.github.performancehelpers.internal.Preconditions;
import io.github.performancehelpers.limit.RateLimiter;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.PowerHistogram;
import io.github.performancehelpers.loop.RateChangeListener;
import io.github.performancehelpers.loop.RateLaw;
import io.github.performancehelpers.metrics.MetricsCollector;
import io.github.performancehelpers.metrics.PowerFlowExecutorMXBean;

/**
 * An {@link ExecutorService} that runs admission control, queueing and latency feedback in one
 * closed loop: a drop-in replacement for a thread pool that holds the p99 its callers see, from
 * {@code submit} to completion, at a target. While the run time is under the target it adds no
 * throttling; when the run time goes over, it limits the rate at which it starts tasks; and a task
 * that could not start in time to finish within the target is refused or shed with a
 * {@link ShedException} (see "Shedding and the rate").
 *
 * <pre>
 *  execute()/submit() ── nothing waiting, slot free, limiter admits ──► delegate (fast path)
 *          │ otherwise
 *          ▼
 *     bounded queue ── full ──► RejectionPolicy (QueueFullException by default)
 *          │
 *          ├─ a worker that finishes a task takes the next one if the limiter admits it now
 *          │
 *          └─ dispatcher (one virtual thread): wait for work → wait for a slot → take
 *                   → wait until the rate limiter admits → hand off
 *                              ▼
 *          delegate ── runs the task, timed ──► latency window (run time on the delegate)
 *                              ▲
 *  tick every observeInterval: observe(measured elapsed ms) → control law → new rate
 *          → rate limiter, PoolSizer → delegate size, dispatcher woken, onRateChange
 * </pre>
 *
 * <p>Every task is admitted by the same rate limiter and runs under the same slot bound,
 * whichever of three paths hands it off. The dispatcher paces: it waits for the limiter, so it
 * is the path when tasks wait for admission. Two fast paths keep it out of the common cases,
 * where it would cost two thread wake-ups per task: a submitter that finds the queue empty, the
 * dispatcher holding nothing, a free slot and the limiter admitting hands its task off itself
 * (as {@code ThreadPoolExecutor.execute} starts a worker); and a worker that finishes a task
 * while others are queued takes the next one if the limiter admits it now, keeping its slot: on
 * a {@code ThreadPoolExecutor} it runs it in the same pool thread (as a pool worker takes its
 * next task), on the default delegate in a new virtual thread. Both stand back while the
 * dispatcher holds a task (that task is older) and with a {@linkplain Builder#globalLimiter
 * global limiter}, whose admissions cannot be refunded. Tasks are admitted in queue order, except
 * that tasks taken at the same moment by different threads start in either order, as in any
 * thread pool.
 *
 * <p>It composes a {@link PowerFlowController} ({@link #controller()}): the controller's bounded
 * queue holds the waiting tasks, its GCRA paces the dispatcher, its histogram receives each task's
 * run time on the delegate, and its control law ({@link PowerFlowController.ControlLaw#KNEE_AWARE}
 * by default here, see {@link Builder#controlLaw}) moves the rate at every observation. With
 * shedding on, the controller's {@code targetP99} is nine tenths of this executor's. The time a task
 * waits before it starts (queue, rate limiter and slot) is tracked separately
 * ({@link Stats#queueWaitP99()}): it is the consequence of the rate, not the plant's latency, and
 * feeding it back would make the loop chase its own shadow.
 *
 * <pre>{@code
 * try (PowerFlowExecutor executor = PowerExecutors.newFixedFlowPool(8, Duration.ofMillis(50))) {
 *     Future<Response> f = executor.submit(() -> client.call(request));
 *     ...
 * } // close(): waits for queued and running tasks
 * }</pre>
 *
 * <h2>Shedding and the rate</h2>
 * Two mechanisms hold the caller's latency, one for each bottleneck:
 * <ul>
 * <li><b>The wait budget</b> (the executor's own pool, or any queue here, is the bottleneck): a
 *     task may wait before it starts at most nine tenths of {@code targetP99} less the run-time
 *     p99 the law reads (times the growth of the cap on the tasks in flight, below, in the window
 *     after it grows: more calls in flight run longer where the downstream queues inside)
 *     (at least a tenth of the target; the whole target while the law finds it unreachable), set
 *     at every observation ({@link #MIN_WAIT_SHARE}), and tightened within a window, at most once
 *     per tenth of the observe interval, when the window so far (200 samples or more) reads a
 *     higher run-time p99 than the one it was set from. {@code execute}/{@code submit} refuse a task
 *     by the {@link RejectionPolicy} ({@link ShedException} under {@code ABORT}) when the queue's
 *     oldest task has already waited longer, or when the tasks queued would take longer than the
 *     budget to start at the pace the last window started them (its mean run time over the
 *     tasks that run at once, or the rate's interval if that is longer), or at the slower pace
 *     the queue shows now (the head's wait over the starts it has seen, while no slot is free;
 *     a head that has seen none shows a pace once it has waited a mean run time): where tasks
 *     arrive faster than they start, the head's wait alone would let in every task that arrives
 *     while it is within the budget, each then waiting behind all of them. The dispatcher and a
 *     finishing worker shed a queued
 *     task of {@code submit}, {@code invokeAll} or {@code invokeAny} that has: its {@code Future}
 *     fails with an {@link java.util.concurrent.ExecutionException} caused by a
 *     {@link ShedException}, and it counts in {@link Stats#shed()}. So does the next task to
 *     queue, for such tasks at the head of the queue, before the door reads it: a newcomer that
 *     can still start in time takes the place of one that cannot, and the queue holds a task
 *     when the next slot frees. A {@code Runnable} given to {@code execute} is never dropped once
 *     accepted, since its caller could not be told: only the door refuses it, and it is let in
 *     behind at most half as many queued tasks as a {@code submit}'s (a submitter under
 *     {@link RejectionPolicy#BLOCK} waits for the door as a {@code submit}'s), for a cut of the
 *     cap on the tasks in flight or of the rate after it queued slows the starts ahead of it, by
 *     up to half, and nothing can then take it out of the queue; after a calm window (callers on
 *     time, nothing shed or refused, the cap open) it is let in behind as many. Turn shedding off with
 *     {@link Builder#shedding(boolean) shedding(false)}.</li>
 * <li><b>The rate</b> (the downstream is the bottleneck): the starting rate and the ceiling
 *     default to {@link #OPEN_RATE}, a limit that never binds. The loop holds the run-time p99 at
 *     nine tenths of the target (the rest is the wait budget's floor); when it goes over, the law
 *     cuts from the throughput the window carried, not from the open rate, and climbs back when
 *     the run time falls. When cutting does not lower the run time (a tail the load does not set,
 *     a target under the downstream's own unloaded p99), the law stops cutting, serves the load
 *     and reports {@link Stats#targetUnreachable()}; where the demand is under the rate it finds
 *     that without a cut, when the tasks over the target started at no higher concurrency (tasks
 *     in flight) than the rest.</li>
 * <li><b>The tasks in flight</b> (the downstream queues inside): on a sized delegate (the
 *     default one, a {@code ThreadPoolExecutor}), outside fixed-rate mode, each window also sets a
 *     cap on the tasks in flight from the run time (see "The cap on tasks in flight" below).</li>
 * </ul>
 * A task's end-to-end latency, submit to end, is in {@link Stats#endToEndP99()} and
 * {@link Stats#lastEndToEndP99()} beside the run time ({@link Stats#p99()}); both are in the
 * metrics, the MXBean and the {@code ExecutorWindow} JFR event. The wait the budget bounds runs
 * from the {@code submit} call to the task's start (queue, rate limiter and slot).
 *
 * <h2>The cap on tasks in flight</h2>
 * A downstream that queues inside (a FIFO server such as a partner's quota, a database with
 * fewer slots than the pool in front of it) holds every call started past what it serves at once,
 * where nothing can shed it and each call waits behind the others: a rate a few percent over such
 * a downstream's capacity fills it to the pool's size, and the run time alone then exceeds the
 * target whatever the rate does next. So while callers are late (the window's end-to-end p99 over
 * the target, or tasks refused or shed), a run-time p99 over half the target cuts the tasks in
 * flight, by Little's law to what brings the run time to that half; the other half is the wait
 * budget's, and the calls held back wait here, where the budget sheds them in time. Once the cap
 * binds, it is cut only where the run time shows the calls queued (it rose with the calls in
 * flight, or fell with the last cut), not for a p99 that scatters over the budget, and never
 * below the calls the downstream serves at once (by Little's law at its own mean run time,
 * once a window has shown it), where a cut would only idle it. A cut that
 * costs throughput (the calls were being served, not queued) is undone, and the run time it read
 * becomes the budget, as does the downstream's own p99 once more calls in flight ran as fast as
 * the fewest did; a cap under its budget grows (a downstream given capacity back is found
 * within a window or two); a cap that binds nothing for ten windows with callers on time is
 * dropped, and none is kept while the target is unreachable. A window on which the cap is cut,
 * or binds, is not given to the rate law, which holds its rate for it (one actuator a window;
 * the next window shows what the cut did, and a window the cap limited is not the downstream's
 * capacity). {@link #inFlightLimit()} (and
 * {@link Stats#inFlightLimit()}, the metric, the MXBean and the JFR window event) shows it; the
 * pool's threads stay as sized.
 *
 * <h2>Delegates</h2>
 * <ul>
 * <li>The default: one virtual thread per task under a concurrency bound that the loop resizes
 *     with the {@link PoolSizer}. Owned.</li>
 * <li>A {@link ThreadPoolExecutor}: resized with {@code setCorePoolSize}/{@code setMaximumPoolSize}
 *     (grow: maximum first; shrink: core first; so the calls never throw), and this executor keeps
 *     at most that size of tasks in flight on it; every other task waits in the bounded, counted
 *     queue here. A pool thread that finishes one of these tasks may run the next queued ones
 *     before it returns to the pool (see above), so the pool's {@code beforeExecute},
 *     {@code afterExecute} and task counts see one task where this executor ran several. With a
 *     global limiter, whose workers do not take tasks themselves, the bound is twice the size: one
 *     running and one waiting in the pool's queue per pool thread, so that a worker finds its next
 *     task already queued instead of waiting for the dispatcher ({@link Stats#depth()} does not
 *     count those). Owned only if {@link Builder#ownsDelegate(boolean)}.</li>
 * <li>Any other {@code ExecutorService}: used as is, neither resized nor bounded
 *     ({@link Stats#poolSize()} is -1). Owned only if {@link Builder#ownsDelegate(boolean)}.</li>
 * </ul>
 * An owned delegate is shut down when this executor terminates ({@code shutdownNow} when it is
 * stopped); a caller's is never shut down.
 *
 * <h2>Pacing</h2>
 * The dispatcher parks ({@link LockSupport#parkNanos(long)}) for exactly the time the limiter
 * says the next admission is due, and admits every due task at each wake-up. The operating system
 * wakes a parked thread tens of microseconds late; a GCRA admitting from {@code max(now, tat)}
 * forgets that lateness, and a dispatcher that does so loses it at every wake-up and runs slow
 * (at 100k/s a 10 µs interval and a 50 µs lateness would cut the rate by 80%). So when the
 * dispatcher had work waiting continuously (it was pacing, not idle) it lets the limiter catch up
 * by at most {@link #MAX_CATCH_UP} of lateness; after waiting on an empty queue it passes 0, as
 * idle time is correctly forgotten. The bound caps the burst a long stall (a GC pause, a
 * descheduled carrier) can release at {@code rate × 20 ms} tasks (and the delegate's slots
 * still bound how many run at once), which is what an on-time dispatcher would have admitted over
 * that time. The bound is 20 ms rather than the few tens of microseconds of an ordinary wake-up
 * because on a loaded machine a thread is routinely kept off a CPU for one scheduler period (a
 * few to tens of milliseconds), and every stall beyond the bound is lost from the long-run rate
 * for good. Below 100/s, where one emission interval is longer than 20 ms, the bound is two
 * intervals instead, so that one late wake-up never costs a whole admission. A worker that
 * finishes a task and finds others queued admits the next with the same catch-up, since work was
 * waiting; it never waits for the limiter, so pacing stays the dispatcher's. A wake-up more than
 * 10 ms late, with a task waiting, or a tick more than 10 ms after its interval, is noted to the
 * controller as a pause of the process: the knee-aware law does not cut on the latency of a long
 * one (see {@link PowerFlowController.ControlLaw#KNEE_AWARE}, "Pauses"), nor does the cap on the
 * tasks in flight. Those threads see only the pauses that struck while they waited on the clock,
 * so while an executor with a control law runs on the system ticker, one daemon thread for the
 * whole JVM, {@code performance-helpers-pause-watch}, sleeps 10 ms at a time and notes each
 * wake-up more than 10 ms late the same way (a pause inside a window at an open rate, when the
 * dispatcher waits for work, not the clock); it ends when the last such executor terminates. A
 * rate change wakes the dispatcher, so it takes effect at once, also when the dispatcher is
 * already waiting. The dispatcher is a virtual thread, so it shares the carrier threads with the
 * default delegate's tasks: CPU-bound tasks that keep every carrier busy delay it (use a
 * {@code ThreadPoolExecutor} delegate for such work).
 *
 * <h2>Statistics</h2>
 * {@link #stats()}: the controller's loop figures plus the executor's task accounting. Every task
 * accepted by {@code execute}/{@code submit} ends as exactly one of: completed, failed, cancelled
 * (a {@code Future} cancelled by its owner), or returned by {@link #shutdownNow()}; every task
 * refused counts in {@code rejected}.
 *
 * <p>What is timed. A task's run time counts from its start on the delegate, and for a task the
 * submitting thread handed straight to the delegate (nothing queued, a slot free) from its
 * submission: its queue wait is 0, and the delegate's own start-up (a virtual thread's
 * scheduling, a pool thread's wake-up) counts as time on the delegate. On the default
 * virtual-thread delegate, once an observation window completes more than 16,384 tasks, the
 * next window times only one such direct task in {@code k} (the largest power of two, at most 64,
 * that keeps at least 8,192 timed) and records each with weight {@code k}, so the histograms'
 * counts and quantiles still stand for every task; the others run without a clock read or a
 * record. Their completions are derived (see {@link Stats.Tasks#completed()}). Tasks that wait
 * in the queue are always timed, and the start-load statistics of the knee-aware law see only
 * timed tasks, unweighted: in a window that mixes sampled direct tasks and queued ones, the
 * queued ones weigh more there than their share.
 *
 * <h2>Observability</h2>
 * {@link Builder#observability(boolean)} publishes the numbers in a {@link MetricsCollector}
 * (pulled: nothing is added per task), {@link Builder#jmx(boolean)} as a
 * {@link PowerFlowExecutorMXBean}; both are unregistered when the executor terminates. The loop
 * commits JFR events ({@code io.github.performancehelpers.Observation}, {@code RateChange},
 * {@code Drops}, {@code StaleLoop}) subject to the JFR settings. When the tick has not run for
 * longer than {@link Builder#staleAfter(Duration)} the loop is reported stale.
 *
 * <p><b>Thread safety.</b> All methods are thread-safe.
 *
 * <p><b>Note</b> (departures from the {@link ExecutorService} contract and from
 * {@code ThreadPoolExecutor}):
 * <ul>
 * <li>The queue is bounded ({@link Builder#queueCapacity(int)}): a full queue refuses a task
 *     with {@link QueueFullException} (under the default {@link RejectionPolicy#ABORT}), where
 *     {@code Executors.newFixedThreadPool} would queue without bound; under
 *     {@link RejectionPolicy#BLOCK} the submitter waits for room instead, up to
 *     {@link Builder#blockTimeout(Duration)}.</li>
 * <li>With a caller's delegate that is not a {@code ThreadPoolExecutor}, {@link #shutdownNow()}
 *     cannot take back tasks already handed to it: they are not in the returned list and still
 *     run (with their thread interrupted). Termination waits for every task handed to a delegate
 *     to finish, so a caller's delegate that drops accepted work (shut down by its owner, a
 *     discarding policy) keeps this executor from terminating.</li>
 * <li>A task is "started", and no longer returned by {@code shutdownNow()}, once it is handed to
 *     the delegate or taken by a worker that finished its previous task; if it begins running
 *     after {@code shutdownNow()}, it runs with its thread interrupted, as a
 *     {@code ThreadPoolExecutor} worker does.</li>
 * </ul>
 *
 * @since 0.1.0
 */
public final class PowerFlowExecutor extends AbstractExecutorService implements AutoCloseable {

    /*
     * The data path, file by file: this class (submission and the submit-side fast path, the
     * public lifecycle methods), Termination (the state transitions and the termination),
     * Dispatcher (the paced path, one method per step), Job (the task wrapper and
     * a worker's chain of queued tasks), Delegate (one subclass per kind of delegate: hand-off,
     * slots, resizing, shutdown), Recorders (the workers' uncontended recorders), WaitBudget (how
     * long a task may wait, for shedding), RoomGate (where BLOCK's submitters wait), Tick (the
     * observation, which applies the rate the law returns to the delegate's size), then the
     * read-outs: Stats below and ExecutorObservability.
     *
     * Lifecycle (Termination). `state` moves only forward, and every transition is made under
     * Termination's lock:
     *
     *   RUNNING:    accepts tasks; the dispatcher takes, paces and hands them off.
     *   SHUTDOWN:   refuses new tasks; the dispatcher still runs every queued task under the
     *               limiter, then exits when it finds the queue empty.
     *   STOP:       refuses new tasks; the queued tasks and the one the dispatcher holds were
     *               taken by shutdownNow(), which interrupts the running ones; the dispatcher
     *               exits at its next step.
     *   TERMINATED: the dispatcher has exited, no task is in flight on the delegate, the owned
     *               delegate and the tick (and its owned scheduler) have terminated.
     *
     *   RUNNING -> SHUTDOWN:            shutdown() (close() calls it)
     *   RUNNING or SHUTDOWN -> STOP:    shutdownNow() (close() calls it when interrupted)
     *   SHUTDOWN or STOP -> TERMINATED: by the dispatcher, as its last act (terminate()): after
     *                                   it exits its loop it waits for the tasks in flight to
     *                                   finish, shuts down the owned delegate and the tick, then
     *                                   sets TERMINATED and signals awaitTermination(). Or, when
     *                                   shutdown() or shutdownNow() finds the executor idle
     *                                   (nothing queued, held or in flight, an owned delegate
     *                                   quiet), by that call itself, as ThreadPoolExecutor's
     *                                   tryTerminate() does: it retires the dispatcher, runs
     *                                   terminate() and joins the dispatcher, so that an idle
     *                                   executor is terminated when shutdown() returns. Whoever
     *                                   wins Termination's claim runs terminate(), once.
     *
     * The numeric order matters: `state >= SHUTDOWN` means "refuse new tasks", `state >= STOP`
     * means "start nothing more".
     *
     * Locking rules.
     *  - Termination's lock guards the transitions and the `terminated` and `quiescent`
     *    conditions.
     *  - Dispatcher.lock guards writes to `held` (the task the dispatcher has taken from the queue
     *    and not yet handed off). The dispatcher holds it while it polls the queue and while it
     *    hands off; shutdownNow holds it while it drains the queue and takes `held`. So a task the
     *    dispatcher takes is exactly one of: in the queue, held, handed to the delegate, or
     *    returned, and never two, and the owned delegate is never shut down under its hand-off.
     *  - The fast paths take no lock. A worker takes tasks from the queue only by polling it (the
     *    queue gives each element to one consumer), so a task is still exactly one of: queued,
     *    taken by one worker, held, handed off, or returned. A worker that took a task after
     *    shutdownNow() drained the queue runs it interrupted, as a task handed off then does.
     *  - A submitter on the fast path takes its slot (the in-flight count) before it re-checks the state:
     *    either it sees the shutdown and takes the task back (and refuses it), or the dispatcher's
     *    terminate() sees it in flight and waits for it. If shutdownNow() stops the owned delegate
     *    between the re-check and the hand-off, the delegate's refusal is turned into this
     *    executor's refusal: the task was never accepted.
     *  - A producer enqueues and then re-checks the state (as ThreadPoolExecutor does): if the
     *    executor was shut down in between and the task can still be removed from the queue, it
     *    is refused; if it cannot, the dispatcher or shutdownNow owns it.
     *  - The dispatcher treats an interrupt as "wake up and re-read the state": shutdown() and
     *    shutdownNow() write the state before they interrupt, so an observed interrupt always
     *    comes with the new state (JLS 17.4.4).
     *  - The tick runs under Tick.lock, so stopping it waits for one in progress.
     *
     * The fields the other classes of the data path read are package-private; the references are
     * final, `state` is written only here, `held` only by Dispatcher, and the counters by the
     * class that counts.
     */

    private static final System.Logger LOG = System.getLogger(PowerFlowExecutor.class.getName());
    private static final Access.ControllerAccess LOOP = Access.controller();

    /**
     * The most wake-up lateness the dispatcher lets the rate limiter catch up when it had work
     * waiting continuously: 20 ms. See "Pacing" in the class description.
     */
    public static final Duration MAX_CATCH_UP = Duration.ofMillis(20);

    /**
     * A pacing wake-up, or a tick, later than this is noted to the controller as a pause of the
     * process ({@code PowerFlowController.noteStall}); the knee-aware law reads only far longer
     * ones. Nanoseconds.
     */
    static final long STALL_NOTE_NANOS = 10_000_000L;

    /**
     * The completions per window above which the virtual delegate times only some of its direct
     * tasks ({@link #sampleMask}): below it every task is timed. The sampling keeps at least
     * {@code SAMPLE_FROM / 2} timed tasks a window (a p99 from 8,192 samples is within about a
     * tenth of its rank), and times one task in at most {@link #MAX_SAMPLE_EVERY}.
     */
    static final int SAMPLE_FROM = 16_384;
    /** The largest sampling interval: one direct task in this many is timed. A power of two. */
    static final int MAX_SAMPLE_EVERY = 64;

    /**
     * The shortest observe interval: 1 ms. See {@link Builder#observeInterval(Duration)}.
     */
    public static final Duration MIN_OBSERVE_INTERVAL = Duration.ofMillis(1);

    /**
     * The longest the executor waits for a user's callback of a rate change (the
     * {@link PoolSizer}, then {@link Builder#onRateChange}): 1 s. These run on a thread of their
     * own, {@code name-callbacks}; the observation that posts one waits for it at most this long
     * (and not at all while an earlier one still runs), and termination, after every task has
     * ended, interrupts a callback still running and waits for it at most this long more. See
     * {@link Builder#onRateChange(RateChangeListener)}.
     */
    public static final Duration MAX_CALLBACK_WAIT = Duration.ofSeconds(1);

    /** How long a submitter waits for room under {@link RejectionPolicy#BLOCK} by default: 1 minute. */
    static final Duration DEFAULT_BLOCK_TIMEOUT = Duration.ofMinutes(1);

    /** The default ceiling on the pool size or concurrency bound the default sizer chooses. */
    static final int DEFAULT_MAX_CONCURRENCY = 10_000;

    /**
     * The open rate, operations per second: a rate limit that never binds (one admission per
     * nanosecond, far above what any executor starts). An unbounded {@code maxRate} (the default)
     * is this rate, and the starting rate defaults to it: the executor adds no throttling until
     * latency calls for it. See "Shedding and the rate" in the class description.
     */
    public static final double OPEN_RATE = 1e9;

    /**
     * The least share of the target a task may wait before it starts, however close the run-time
     * p99 is to the target: while the law holds the run time at the target, a task may still wait
     * a tenth of it for the rate limiter, and the end-to-end p99 stays within +10 % of the target.
     */
    static final double MIN_WAIT_SHARE = 0.1;

    /**
     * The default floor of the rate, per second (lower if the ceiling or the starting rate is
     * under 100 or 1 per second): one task a second still probes the downstream once per default
     * observe interval.
     */
    static final double DEFAULT_MIN_RATE = 1.0;

    private static final AtomicInteger POOL_NUMBER = new AtomicInteger();

    static final int RUNNING = 0;
    static final int SHUTDOWN = 1;
    static final int STOP = 2;
    static final int TERMINATED = 3;

    private final String name;
    final PowerFlowController<Runnable> controller;
    final Ticker ticker;
    /** The time tasks waited before they started (queue, limiter, slot); not fed to the loop. */
    final PowerHistogram queueWait;
    /** Each completed task's time from submit to its end, the caller's latency; not fed to the loop. */
    final PowerHistogram endToEnd;
    /** The end-to-end p99 of the last completed observation window, ms; NaN before one. */
    private volatile double lastEndToEndP99 = Double.NaN;
    /** Whether late tasks are refused at the door and shed from the queue (see "Shedding"). */
    private final boolean shedding;
    /** The target, nanoseconds. */
    private final long targetNanos;
    /**
     * A run time over this is slow for the start-load test: the law's target, ns; 0 when nothing
     * steps a law (a fixed rate), and the test is off.
     */
    final long slowRunNanos;
    /** The concurrency tasks started at, over all tasks and the slow ones: the tick's start-load test. */
    final StartLoad startLoad = new StartLoad();
    /** The longest a task may wait before it starts (see "Shedding and the rate"); set by the tick. */
    private final WaitBudget budget;
    /**
     * The most tasks in flight on a sized delegate, from the run time (see "The cap on tasks in
     * flight"); stepped by the tick. Null in fixed-rate mode and on a delegate that is not sized.
     */
    private final InFlightCap inFlightCap;
    /** The windows the cap reads, sparse ones merged ({@link CapWindows}); null with no cap. */
    private final CapWindows capWindows;
    /** The refusals and sheds counted up to the last window's end; the tick's. */
    private long refusedSeen;
    /** Whether the window the tick is ending refused or shed a task ({@link #countRefusals}); the tick's. */
    private boolean refusedInWindow;
    private final RejectionPolicy rejectionPolicy;
    private final PoolSizer poolSizer;
    /** Whether a submitter waits for room ({@link RejectionPolicy#BLOCK}). */
    private final boolean blocking;
    /** The longest a submitter waits for room under BLOCK, ns. */
    private final long blockTimeoutNanos;
    /** Under BLOCK: where submitters wait for room. */
    private final RoomGate roomGate = new RoomGate();
    /** Under BLOCK: {@link #blockedForRoom()}, which the gate asks once a waiter is registered. */
    private final java.util.function.BooleanSupplier blockedForRoom = this::blockedForRoom;

    /** Where admitted tasks run; see Delegate. */
    final Delegate delegate;
    /** A pool's or the virtual delegate's recorders, which the tick and stats() drain; else null. */
    private final Recorders recorders;
    /**
     * Whether the submit-side fast path is on (the worker-side one is {@link Delegate#chains}):
     * off with a global limiter, whose admissions cannot be refunded.
     */
    private final boolean fastPaths;

    /** The observation tick, which applies the rate the law returns. */
    private final Tick tick;
    private final Dispatcher dispatcher;

    /** The state transitions, the one run of the termination, and the waits for it. */
    private final Termination termination;
    // Guarded by Termination's lock (writes; volatile for the lock-free reads).
    volatile int state = RUNNING;

    /**
     * The task the dispatcher has taken from the queue and not yet handed off, or its placeholder
     * while it polls the queue; read without the lock by the fast paths, which stand back while it
     * is non-null. Guarded by {@code Dispatcher.lock} (writes).
     */
    volatile Job held;

    /**
     * Which direct tasks on the virtual delegate are timed: those whose slot ticket is 0 modulo
     * {@code sampleMask + 1}, each recorded with that weight; 0 (every task timed) until a window
     * completes more than {@link #SAMPLE_FROM} tasks. Written by the tick ({@link #endWindow}).
     * At millions of trivial tasks a second, two clock reads and three records per task were
     * about half the delegate's cost beyond {@code newVirtualThreadPerTaskExecutor}'s
     * (benchmarks/executor.md, "Sampled timing on the virtual delegate").
     */
    private volatile int sampleMask;

    /** The running-tasks gauge: +1 when a chain starts on a thread, -1 when it ends. */
    final LongAdder running = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    /** Tasks the controller counted as submitted but the shutdown re-check took back and refused. */
    private final LongAdder retracted = new LongAdder();
    final LongAdder completed = new LongAdder();
    /**
     * Direct tasks timed on the virtual delegate (all of them until it samples), counted by the
     * submitter before the hand-off: the direct admissions less these are the untimed direct tasks
     * ({@link Job#timing} {@code UNTIMED_DIRECT}), whose completions {@link #untimedCompleted()} derives, so that such
     * a task writes no counter of its own, neither as it is submitted nor as it ends.
     */
    private final LongAdder timedDirect = new LongAdder();
    /** Untimed direct tasks that failed or were cancelled (also counted there), before their slot's release. */
    final LongAdder untimedAbnormal = new LongAdder();
    /** The largest {@link #untimedCompleted()} reported, which keeps the count monotonic. */
    private final AtomicLong untimedCompletedSeen = new AtomicLong();
    final LongAdder failed = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    /** Accepted tasks shed from the queue, their Future failed with a ShedException. */
    final LongAdder shed = new LongAdder();
    /** Internal failures reported and survived, including the user's onRateChange throwing (see Tick). */
    final AtomicLong internalFailures = new AtomicLong();
    /** Metrics, MXBean and the staleness check; see ExecutorObservability. */
    private final ExecutorObservability observability;

    private PowerFlowExecutor(Builder b, PowerFlowController.Builder<Runnable> flow) {
        this.name = b.name != null ? b.name : nextName();
        this.ticker = b.ticker;
        this.rejectionPolicy = b.rejectionPolicy;
        this.blocking = b.rejectionPolicy == RejectionPolicy.BLOCK;
        this.blockTimeoutNanos = b.blockTimeout.toNanos();
        boolean fixedRate = b.fixedRate;
        boolean hasGlobalLimiter = b.globalLimiter != null;
        this.queueWait = PowerHistogram.builder().relativeAccuracy(b.relativeAccuracy).build();
        this.endToEnd = PowerHistogram.builder().relativeAccuracy(b.relativeAccuracy).build();
        this.shedding = b.shedding && !fixedRate;
        this.targetNanos = (long) Math.min(Long.MAX_VALUE / 4.0, b.targetP99 * 1e6);

        int maxConcurrency = b.maxConcurrency > 0 ? b.maxConcurrency
                : Delegate.defaultMaxConcurrency(b.delegate, DEFAULT_MAX_CONCURRENCY);
        this.poolSizer = b.poolSizer != null ? b.poolSizer
                : PoolSizer.littlesLaw(Duration.ofNanos(Math.max(1L, (long) (b.targetP99 * 1e6))), 1, maxConcurrency);
        this.fastPaths = !hasGlobalLimiter;
        this.delegate = Delegate.of(b.delegate, b.ownsDelegate, name, fastPaths, sizeFor(b.rate), maxConcurrency,
                b.relativeAccuracy);
        this.recorders = delegate.recorders();
        this.inFlightCap = fixedRate || delegate.poolSize() < 0 ? null : new InFlightCap(b.targetP99);

        // The tick applies the rate observe() returns (see Tick): no listener on the controller,
        // whose builder's was cleared by build().
        this.controller = flow.name(name).build();
        this.capWindows = inFlightCap == null ? null : new CapWindows(b.targetP99, controller.quantile());
        if (!fixedRate) {
            LOOP.startAtRate(controller); // the PI law's first healthy window holds the rate
        }
        this.slowRunNanos = fixedRate ? 0 : (long) Math.min(Long.MAX_VALUE / 4.0, controller.targetP99() * 1e6);
        this.budget = new WaitBudget(targetNanos, Math.max(1, b.observeInterval.toNanos() / 10), () -> {
            drainRecorders();
            return controller.latency().snapshot();
        }, controller.quantile());

        this.dispatcher = new Dispatcher(this, controller, delegate, ticker, hasGlobalLimiter);
        long staleAfter = b.staleAfter != null ? b.staleAfter.toNanos() : 3 * b.observeInterval.toNanos();
        this.observability = new ExecutorObservability(this, ticker, staleAfter, fixedRate, b.collector, b.jmx);
        observability.publish(); // before any thread starts: a duplicate name fails the build cleanly

        try {
            this.tick = new Tick(this, observability, fixedRate, b.onRateChange, dispatcher.thread, b.scheduler,
                    b.observeInterval.toNanos());
        } catch (RuntimeException e) {
            observability.close();
            throw e;
        }
        this.termination = new Termination(this, delegate, dispatcher, tick, observability);
        dispatcher.thread.start();
    }

    static String nextName() {
        return "power-flow-" + POOL_NUMBER.incrementAndGet();
    }

    /**
     * Returns a builder. Unlike {@link PowerFlowController}'s, nothing is required: the ceiling
     * {@code maxRate} defaults to {@link #OPEN_RATE} (no limit), the starting {@code rate} to the
     * ceiling, and {@code minRate} to 1 per second (or {@code min(maxRate / 100, rate)} if lower).
     * In {@linkplain Builder#fixedRate(boolean) fixed-rate} mode {@code rate} is required.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- submission

    /**
     * Queues a task to run on the delegate once the rate limiter admits it.
     *
     * @param command the task
     * @throws NullPointerException       if {@code command} is null
     * @throws RejectedExecutionException if the executor is shut down, or (a
     *                                    {@link QueueFullException}) the queue is full under
     *                                    {@link RejectionPolicy#ABORT}, or (a
     *                                    {@link ShedException}) the queue's oldest task, one that
     *                                    is never shed, has waited past the wait budget (a late
     *                                    one of {@code submit} is shed instead), or the task would wait past it
     *                                    behind those queued, under {@link RejectionPolicy#ABORT}
     *                                    (see "Shedding"); under {@link RejectionPolicy#BLOCK},
     *                                    the same at the end of {@code blockTimeout}, or if the
     *                                    wait for room is interrupted (see there)
     */
    @Override
    public void execute(Runnable command) {
        Objects.requireNonNull(command, "command");
        if (state != RUNNING) {
            rejected.increment();
            throw shutDownRejection();
        }
        if (delegate.isShutDown()) { // its owner shut it down: it would refuse the task
            rejected.increment();
            throw new RejectedExecutionException("the delegate is shut down: " + this);
        }
        Job job = new Job(this, command); // timed in tryDirect, or below for the queue
        if (fastPaths && tryDirect(job)) {
            return;
        }
        job.enqueuedAt = ticker.read();
        observability.onSubmit(job.enqueuedAt);
        if (blocking) {
            enqueueBlocking(job);
            return;
        }
        if (shedding) {
            dropDeadHeads(job.enqueuedAt); // a head that waits for no one must not close the door
        }
        if (shedding && lateAtDoor(job.enqueuedAt, !sheddable(job))) {
            rejected.increment();
            LOOP.countDeclined(controller);
            reject(command, true);
            return;
        }
        if (shedding) {
            job.queuedBehind(controller.queue().size()); // for the door's pace (lateAtDoor)
        }
        if (!controller.submit(job)) {
            rejected.increment();
            reject(command, false);
            return;
        }
        // Re-check: shutdown may have happened between the state read and the offer, after the
        // dispatcher last looked at the queue.
        if (state != RUNNING && controller.queue().remove(job)) {
            retracted.increment();
            rejected.increment();
            throw shutDownRejection();
        }
    }

    /**
     * The submit-side fast path: when nothing waits (the queue is empty and the dispatcher holds
     * no task), a slot is free and the limiter admits now, the submitting thread hands the task
     * off itself, as {@code ThreadPoolExecutor.execute} starts a worker, and the dispatcher is
     * not involved. Nothing that waits is overtaken: the queue is empty.
     *
     * @return true if handed off (or refused by the delegate and accounted); false to queue it
     * @throws RejectedExecutionException if the executor was shut down meanwhile
     */
    private boolean tryDirect(Job job) {
        Delegate d = delegate;
        // The queue first, then `held`: the dispatcher writes `held` before it polls, so a queue
        // seen empty because the dispatcher took its head is followed by a non-null `held`.
        if (!controller.queue().isEmpty() // a backlog: its lines are read anyway
                || held != null || job.isCancelled()) {
            return false;
        }
        // The slot is the in-flight count, taken before the state re-check: either this thread
        // sees the shutdown, or the dispatcher's terminate() sees this task in flight and waits
        // for it (both are volatile).
        long claim = d.claimSlot();
        if (claim < 0) {
            return false;
        }
        int slot = Delegate.stripe(claim);
        int admission = LOOP.tryAdmitDirect(controller);
        if (admission == Access.ControllerAccess.DIRECT_REFUSED) {
            releaseSlot(slot);
            return false;
        }
        job.holdsSlotOf(slot);
        if (state == RUNNING) {
            int mask = sampleMask;
            if ((Delegate.ticket(claim) & mask) == 0) { // timed, standing for mask + 1 tasks (1 unless sampling)
                job.timing = mask + 1;
                job.startsAt(d.inFlight()); // its own slot included
                job.enqueuedAt = ticker.read();
                observability.onSubmit(job.enqueuedAt);
                if (d.threadPerTask) {
                    timedDirect.increment(); // the direct admissions less these are the untimed
                }
            } else {
                job.timing = Job.UNTIMED_DIRECT;
            }
            try {
                d.start(job);
                return true;
            } catch (RuntimeException | Error e) {
                if (!(e instanceof RejectedExecutionException) || state == RUNNING) {
                    delegateRefused(job, e);
                    return true;
                }
                // shutdownNow() stopped the owned delegate between the re-check and the hand-off:
                // refuse the task, as if it had come a moment later.
            }
        }
        if (d.threadPerTask && job.timing > 0) { // timed and counted (not if the state check failed)
            timedDirect.decrement(); // refused: never accepted, and the admission is taken back
        }
        LOOP.unadmitDirect(controller, admission); // counted taken back, before the slot (see untimedCompleted)
        releaseSlot(slot);
        rejected.increment();
        throw shutDownRejection();
    }

    /**
     * Removes the tasks at the head of the queue that wait for no one: those cancelled (of an
     * {@code invokeAll} that failed, say), counted as cancelled, and those a consumer would shed,
     * a {@code submit()}'s task that has waited past the budget by {@code now}, shed here. The door
     * reads the head's wait and the queue's length; a head that is already too late would close
     * it to a newcomer that can still start in time, and leave the queue empty when the next
     * slot frees (where tasks arrive faster than they start, a slot then idles until the next
     * arrival). A {@code Runnable} of {@code execute} stays (it is never dropped once accepted).
     * A consumer that polls one first counts it instead (the queue gives each element to one
     * taker).
     */
    private void dropDeadHeads(long now) {
        boolean dropped = false;
        for (Runnable head; (head = controller.queue().peek()) instanceof Job j; ) {
            boolean cancel = j.isCancelled();
            if (!cancel && !isLate(j, now)) {
                break;
            }
            if (controller.queue().remove(head)) {
                dropped = true;
                if (cancel) {
                    cancelled.increment();
                } else {
                    shed(j, now);
                }
            }
        }
        if (dropped) {
            roomFreed(); // a submitter waiting under BLOCK may offer
        }
    }

    /**
     * The queue path under {@link RejectionPolicy#BLOCK}: offers the job when the queue has room
     * and (with shedding) the door is open, else waits for a consumer to take a task, for at most
     * {@code blockTimeout} in all (real time, as the dispatcher's waits). The job keeps its submit
     * time: the wait counts toward its wait budget and its end-to-end latency.
     *
     * @throws RejectedExecutionException if the executor is shut down meanwhile, or the wait is
     *     interrupted (the cause is the {@link InterruptedException}; the interrupt status is kept)
     * @throws QueueFullException         if the queue is still full at the timeout
     * @throws ShedException              if, with shedding, the door is still closed at the timeout
     */
    private void enqueueBlocking(Job job) {
        long deadline = System.nanoTime() + blockTimeoutNanos;
        boolean waitedForRoom = false;
        for (;;) {
            if (state != RUNNING) {
                rejected.increment();
                throw shutDownRejection();
            }
            boolean late = false;
            if (shedding) {
                long now = ticker.read();
                dropDeadHeads(now);
                late = lateAtDoor(now);
            }
            long left = deadline - System.nanoTime();
            // Offer while there is room; at the timeout, offer once more so that a refusal counts
            // as a drop, as under the other policies.
            if (shedding) { // for the door's pace (lateAtDoor); a wait for room is not the queue's
                job.queuedBehind(waitedForRoom ? Job.AHEAD_UNKNOWN : controller.queue().size());
            }
            if (!late && (queueHasRoom() || left <= 0) && controller.submit(job)) {
                if (state != RUNNING && controller.queue().remove(job)) { // as in execute()
                    retracted.increment();
                    rejected.increment();
                    throw shutDownRejection();
                }
                return;
            }
            if (left <= 0) {
                rejected.increment();
                if (late) {
                    LOOP.countDeclined(controller);
                    throw new ShedException(doorRefusal() + " for all of blockTimeout " + millis(blockTimeoutNanos)
                            + " ms: " + this);
                }
                throw new QueueFullException("queue full (queueCapacity " + controller.queueCapacity()
                        + ") for all of blockTimeout " + millis(blockTimeoutNanos) + " ms: " + this);
            }
            awaitRoom(left);
            waitedForRoom = true;
        }
    }

    /** Whether a submitter under BLOCK must go on waiting: running, and no room or the door closed. */
    private boolean blockedForRoom() {
        return state == RUNNING && (!queueHasRoom() || shedding && lateAtDoor(ticker.read()));
    }

    /** Whether the queue has room for one more task (tombstones of removed tasks aside). */
    private boolean queueHasRoom() {
        return controller.queue().size() < controller.queueCapacity();
    }

    /**
     * Waits until a consumer takes a task, the state changes, or {@code nanos} (at most 10 ms at
     * a time, so that a missed signal costs no more) pass.
     */
    private void awaitRoom(long nanos) {
        try {
            roomGate.await(nanos, blockedForRoom);
        } catch (InterruptedException e) {
            rejected.increment();
            Thread.currentThread().interrupt();
            RejectedExecutionException ree = new RejectedExecutionException(
                    "interrupted while waiting for room in the queue: " + this);
            ree.initCause(e);
            throw ree;
        }
    }

    /**
     * Called by a consumer that took tasks from the queue (or by a state change): wakes the
     * submitters waiting for room under BLOCK. A volatile read when none waits.
     */
    void roomFreed() {
        roomGate.signal();
    }

    private RejectedExecutionException shutDownRejection() {
        return new RejectedExecutionException(this + " is shut down");
    }

    /**
     * Whether a task submitted at {@code now} would wait past the budget: the queue's oldest task
     * has already waited longer, or the tasks ahead of it would take longer to start than the
     * budget at the pace the queue starts them: the last window's, or the slower one the head's
     * wait shows ({@link WaitBudget#paceShownBy}, {@link WaitBudget#queueRoom}). The head's wait
     * alone lets in all that arrive while it is within the budget, and where they arrive faster
     * than they start each waits longer than the head has.
     */
    private boolean lateAtDoor(long now) {
        return lateAtDoor(now, false);
    }

    /**
     * {@link #lateAtDoor(long)} for a task that cannot be shed once queued ({@code unsheddable}:
     * a {@code Runnable} given to {@code execute}), which is let in behind at most
     * {@link WaitBudget#UNSHEDDABLE_ROOM} of the queued tasks a sheddable one may be, unless the
     * last window was calm ({@link WaitBudget#queueRoom}). Under
     * {@link RejectionPolicy#BLOCK} the door is read without it: the submitter's wait for it
     * ({@link #blockedForRoom}) reads the door as a sheddable task's.
     */
    private boolean lateAtDoor(long now, boolean unsheddable) {
        budget.tighten(now);
        Runnable head = controller.queue().peek();
        if (!(head instanceof Job j)) {
            return false;
        }
        long waited = now - j.enqueuedAt;
        if (budget.exceededBy(waited)) {
            return true;
        }
        int ahead = j.queuedAhead();
        long paced = ahead == Job.AHEAD_UNKNOWN ? 0L : budget.paceShownBy(waited, ahead, delegate.slotFree());
        int room = budget.queueRoom(paced, unsheddable); // the length is read only where the queue can hold more
        return room < controller.queueCapacity() && controller.queue().size() > room;
    }

    /** Why the door refused, for a {@link ShedException}: the head's wait, or the queue's length. */
    private String doorRefusal() {
        Runnable head = controller.queue().peek();
        long waited = head instanceof Job j ? ticker.read() - j.enqueuedAt : 0L;
        String why = budget.exceededBy(waited) ? "the queue's oldest task has waited"
                : "a task queued behind the " + controller.queue().size() + " waiting would wait";
        return why + " over the wait budget of " + millis(budget.nanos()) + " ms (targetP99 " + millis(targetNanos)
                + " ms)";
    }

    /** Refuses a task the queue cannot take ({@code late}: too late for the target) by the policy. */
    private void reject(Runnable command, boolean late) {
        switch (rejectionPolicy) {
            case ABORT -> throw late
                    ? new ShedException(doorRefusal() + ": " + this)
                    : new QueueFullException("queue full (queueCapacity " + controller.queueCapacity() + "): " + this);
            case CALLER_RUNS -> command.run();
            case DISCARD -> {
                if (command instanceof Future<?> f) {
                    f.cancel(false);
                }
            }
        }
    }

    private static String millis(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e6);
    }

    /**
     * Whether a queued job taken at {@code now} has waited past the budget and may be shed: only
     * the tasks of {@code submit}, {@code invokeAll} and {@code invokeAny}, whose caller learns it
     * from the {@code Future}; a {@code Runnable} given to {@code execute} is never dropped once
     * accepted (only the door refuses it).
     */
    boolean isLate(Job job, long now) {
        if (!sheddable(job)) {
            return false;
        }
        budget.tighten(now);
        return budget.exceededBy(now - job.enqueuedAt);
    }

    /** Whether {@code job} may be shed at all: shedding is on and it is a {@code submit()}'s task. */
    boolean sheddable(Job job) {
        return shedding && job.task instanceof FlowTask<?>;
    }

    /**
     * Sheds a job {@link #isLate} found late and that its taker removed: its Future fails with a
     * {@link ShedException}, counted in {@code shed} (or in {@code cancelled} if its owner
     * cancelled it first).
     */
    void shed(Job job, long now) {
        FlowTask<?> t = (FlowTask<?>) job.task;
        if (t.shed(new ShedException("shed after waiting " + millis(now - job.enqueuedAt)
                + " ms in the queue, over the wait budget of " + millis(budget.nanos()) + " ms (targetP99 "
                + millis(targetNanos) + " ms): " + name))) {
            shed.increment();
        } else {
            cancelled.increment();
        }
    }

    /**
     * Notes whether the window the tick is ending refused or shed a task, for the cap
     * ({@link #stepInFlightCap}) and the door ({@link #endWindow}). Called by the tick once a
     * window, before either.
     */
    void countRefusals() {
        long refused = shed.sum() + rejected.sum();
        refusedInWindow = refused != refusedSeen;
        refusedSeen = refused;
    }

    /**
     * Ends an observation window, after the tick's {@code observe}: keeps the window's end-to-end
     * p99 and resets it, and sets the wait budget from the law's reading (see "Shedding").
     *
     * @param capGrowth how many times the cap on the tasks in flight grew at this window
     *                  ({@link #stepInFlightCap}; 1 when it did not): the budget is set from the
     *                  run-time p99 times it
     */
    void endWindow(double capGrowth) {
        PowerHistogram.Snapshot e2e = endToEnd.snapshotAndReset();
        if (delegate.threadPerTask) {
            sampleMask = sampleMaskFor(e2e.count());
        }
        double e2eP99 = e2e.count() > 0 ? e2e.quantile(0.99) : Double.NaN;
        if (!Double.isNaN(e2eP99)) {
            lastEndToEndP99 = e2eP99;
        }
        RateLaw.Stats law = LOOP.lawStats(controller);
        boolean unreachable = law.targetUnreachable();
        double last = controller.lastObservedP99();
        if (shedding) {
            // The larger of the law's reading and the last window's: the budget applies to the next
            // window, and a run time that just rose must not leave an old, larger budget in force.
            double smoothed = law.smoothedP99();
            double run = Double.isNaN(smoothed) ? last : Double.isNaN(last) ? smoothed : Math.max(smoothed, last);
            if (unreachable) {
                budget.whole();
            } else if (!Double.isNaN(run)) {
                // A cap that just grew may lengthen the next window's run time with it: where the
                // downstream queues inside, a call waits there behind the extra calls in flight.
                budget.setFrom(run * capGrowth);
            }
            budget.calm(!CapWindows.late(refusedInWindow, e2e, targetNanos / 1e6)
                    && delegate.inFlightCap() == InFlightCap.OPEN);
        }
        FlowEvents.executorWindow(name, last, e2eP99, budget.nanos(), shed.sum(), unreachable, inFlightLimit());
    }

    /**
     * Sets how long the queue takes to start a task, for the door ({@link WaitBudget#drainEvery}),
     * from the window's mean run time: a queued task starts when one of the tasks running at once
     * ends (the fewer of the delegate's size and the cap on the tasks in flight), or when the rate
     * admits it, whichever comes later. Unknown (no prediction, the head's wait alone) without
     * shedding, before a window with a run time, and on a delegate whose concurrency is not
     * bounded here (the caller's executor of another kind).
     *
     * @param meanRunMs the window's mean run time, ms; NaN when none
     */
    void setDrainFrom(double meanRunMs) {
        if (!shedding) {
            return;
        }
        int running = Math.min(delegate.poolSize(), delegate.inFlightCap());
        if (running <= 0 || Double.isNaN(meanRunMs)) {
            budget.drainEvery(0L, 0L); // unknown: the head's wait alone
            return;
        }
        // Tasks shorter than the run time's resolution (a microsecond) are paced by the rate alone.
        long meanRun = (long) (meanRunMs * 1e6);
        budget.drainEvery((long) Math.max((double) meanRun / running, 1e9 / controller.rate()), meanRun);
    }

    /**
     * Steps the cap on the tasks in flight with the window about to be observed
     * ({@link InFlightCap}), before the law, and applies it to the delegate. Called by the tick,
     * after the recorders are drained. When the cap was cut or bound, the law holds its rate this
     * window (a window the cap limited reads as saturated at the cap's throughput, not the
     * downstream's), and when it moved, the law forgets the sparse windows it merged, which ran
     * with another number in flight.
     *
     * @param load    the window's start-load verdict
     * @param seconds the window's length, seconds
     * @return how many times the cap grew (its new level over its old), 1 when it did not grow
     *         (or is open, or there is none)
     */
    double stepInFlightCap(StartLoad.Verdict load, double seconds) {
        if (inFlightCap == null) {
            return 1;
        }
        InFlightCap.Window w = capWindows.add(seconds, endToEnd.snapshot(), controller.latency().snapshot(), load,
                refusedInWindow, LOOP.lawStats(controller).targetUnreachable(), LOOP.stallNanos(controller) / 1e6);
        int before = inFlightCap.cap();
        if (w == null) {
            // Gathering a sparse window: the cap holds unless a doubling is judged on the calls so
            // far, and a window it limited is still not the law's.
            StartLoad.Verdict soFar = capWindows.gathered();
            int cap = inFlightCap.judgeGrowth(soFar.count(), soFar.meanConcurrency(), soFar.meanRunMs());
            delegate.capInFlight(cap); // no change when it holds
            if (inFlightCap.bindsAt(load.meanConcurrency())) {
                LOOP.holdNextStep(controller, cap != before);
            }
            return 1;
        }
        int cap = inFlightCap.step(w);
        delegate.capInFlight(cap);
        if (cap < before || inFlightCap.bound()) {
            LOOP.holdNextStep(controller, cap != before);
        }
        return before != InFlightCap.OPEN && cap != InFlightCap.OPEN && cap > before ? (double) cap / before : 1;
    }

    /**
     * The {@link #sampleMask} after a window of {@code completed} tasks (weighted): 0 up to
     * {@link #SAMPLE_FROM}, else one less than the largest power of two that keeps at least
     * {@code SAMPLE_FROM / 2} of them timed, at most {@link #MAX_SAMPLE_EVERY}.
     */
    static int sampleMaskFor(long completed) {
        if (completed <= SAMPLE_FROM) {
            return 0;
        }
        long every = Long.highestOneBit(completed / (SAMPLE_FROM / 2));
        return (int) Math.min(every, MAX_SAMPLE_EVERY) - 1;
    }

    /** {@return the sampling mask in force} For tests. */
    int sampleMask() {
        return sampleMask;
    }

    /** {@return the wait budget in force, nanoseconds} For tests. */
    long waitBudgetNanos() {
        return budget.nanos();
    }

    /**
     * Returns a {@link FlowTask}, which the executor can shed (see "Shedding").
     *
     * @param runnable the task
     * @param value    the result
     * @return the task's future
     */
    @Override
    protected <T> RunnableFuture<T> newTaskFor(Runnable runnable, T value) {
        return new FlowTask<>(runnable, value);
    }

    /**
     * Returns a {@link FlowTask}, which the executor can shed (see "Shedding").
     *
     * @param callable the task
     * @return the task's future
     */
    @Override
    protected <T> RunnableFuture<T> newTaskFor(Callable<T> callable) {
        return new FlowTask<>(callable);
    }

    /**
     * Hands off a job that holds a slot and is counted in flight (by the dispatcher, or by a
     * finishing worker for the next task); a refusal is {@link #delegateRefused}.
     */
    void handOff(Job job) {
        try {
            delegate.start(job);
        } catch (RuntimeException | Error e) {
            delegateRefused(job, e);
        }
    }

    /**
     * The delegate refused an admitted task: its slot and in-flight count are given back, and it
     * ends cancelled (a Future) or failed, reported as an internal failure.
     */
    private void delegateRefused(Job job, Throwable e) {
        if (job.timing == Job.UNTIMED_DIRECT) {
            untimedAbnormal.increment(); // before the slot, as untimedCompleted() requires
        }
        releaseSlot(job.slot());
        internalFailures.incrementAndGet();
        if (job.task instanceof Future<?> f) {
            f.cancel(false);
            cancelled.increment();
            LOG.log(Level.WARNING, name + ": the delegate refused an admitted task; its Future is cancelled", e);
        } else {
            failed.increment();
            LOG.log(Level.WARNING, name + ": the delegate refused an admitted task; it is dropped", e);
        }
    }

    /** The executor's tasks in flight: the delegate's slots taken. */
    long inFlight() {
        return delegate.inFlight();
    }

    /**
     * Gives a slot of stripe {@code slot} back: a task in flight has ended (or was taken back), or
     * a hand-off did not happen. The last one of a shutdown signals: each releaser updates its
     * stripe and then reads them all, so of two last releases racing, the later sees none in use.
     */
    void releaseSlot(int slot) {
        delegate.releaseSlot(slot);
        if (state >= SHUTDOWN && delegate.inFlight() == 0) {
            termination.signalQuiescent();
        }
    }

    // ---------------------------------------------------------------- sizing

    /** The delegate's size for a rate: the {@link PoolSizer}'s figure, at least 1. */
    int sizeFor(double rate) {
        return Math.max(1, poolSizer.poolSize(rate));
    }

    /** Moves what the delegate's recorders hold into the histograms the loop and stats() read. */
    void drainRecorders() {
        if (recorders != null) {
            recorders.drain(controller.latency(), queueWait, endToEnd);
        }
    }

    /**
     * Adds the counts free recorders hold to the shared counters, before a counter is read (by
     * {@code stats()}, a counter read-out, and the tick, so that the controller's own counts are
     * exact one window after the executor goes idle). The wait budget's tightening, which reads
     * only the histograms, does not need it.
     */
    void flushRecorderCounts() {
        if (recorders != null) {
            recorders.flushFree(this);
        }
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Starts an orderly shutdown: no new task is accepted, and every task already queued still
     * runs, under the rate limiter. Does not wait for tasks; use {@link #awaitTermination}.
     * Idempotent.
     *
     * <p>An idle executor (nothing queued or running) terminates before this method returns, as a
     * {@code ThreadPoolExecutor} with nothing to run does: {@link #isTerminated()} is then
     * {@code true}. Terminating stops the owned threads and an owned delegate, so the call may
     * wait for their threads to end; it does not wait for a user's callback beyond the bound of
     * {@link Builder#onRateChange}. Called from the observation thread (an {@code onRateChange}
     * listener or a {@link PoolSizer}), or with an owned delegate that is not a
     * {@code ThreadPoolExecutor} and has not terminated, it leaves the termination to the
     * dispatcher, a moment later.
     */
    @Override
    public void shutdown() {
        termination.advanceTo(SHUTDOWN);
        dispatcher.thread.interrupt(); // a dispatcher waiting on an empty queue re-reads the state
        roomFreed(); // a submitter waiting for room is refused
        if (inFlight() == 0) {
            termination.signalQuiescent();
        }
        termination.ifIdle();
    }

    /** The dispatcher's exit: it terminates the executor unless an idle shutdown() does. */
    void dispatcherExited() {
        termination.dispatcherExited();
    }

    /**
     * Stops the executor: no new task is accepted, no queued task is started, and the running
     * ones are interrupted (a task that ignores interrupts runs to its end). Does not wait for
     * running tasks; use {@link #awaitTermination}.
     *
     * @return every accepted task that never started, in queue order where there is one: the
     *     queued tasks, the one the dispatcher held, and those handed to a
     *     {@code ThreadPoolExecutor} delegate that had not started; each as it was given to this
     *     executor (for {@code submit}, the {@link java.util.concurrent.FutureTask} that
     *     {@code submit} returned)
     */
    @Override
    public List<Runnable> shutdownNow() {
        termination.advanceTo(STOP);
        dispatcher.thread.interrupt();
        roomFreed();
        List<Runnable> never = new ArrayList<>();
        dispatcher.takeBack(never);
        delegate.takeBack(this, never);
        delegate.interruptRunning();
        if (inFlight() == 0) {
            termination.signalQuiescent();
        }
        termination.ifIdle();
        return never;
    }

    /**
     * Returns whether {@link #shutdown()} or {@link #shutdownNow()} has been called.
     *
     * @return {@code true} once the executor refuses new tasks
     */
    @Override
    public boolean isShutdown() {
        return state >= SHUTDOWN;
    }

    /**
     * Returns whether the executor has terminated: shut down, every accepted task finished or
     * returned, the dispatcher ended, and the owned delegate and tick terminated.
     *
     * @return {@code true} once terminated
     */
    @Override
    public boolean isTerminated() {
        return termination.isTerminated();
    }

    /**
     * Returns whether the executor is shutting down but has not terminated.
     *
     * @return {@code true} between shutdown and termination
     */
    public boolean isTerminating() {
        return state >= SHUTDOWN && !isTerminated();
    }

    /**
     * Blocks until the executor has terminated (see {@link #isTerminated()}), the timeout
     * elapses, or the current thread is interrupted, whichever happens first.
     *
     * @param timeout the longest wait
     * @param unit    the unit of {@code timeout}
     * @return {@code true} if terminated, {@code false} if the timeout elapsed first
     * @throws InterruptedException if interrupted while waiting
     * @throws NullPointerException if {@code unit} is null
     */
    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return termination.await(unit.toNanos(timeout));
    }

    /**
     * Shuts down and waits for termination, with the semantics of
     * {@link ExecutorService#close()} (JDK 19+): queued and running tasks complete first; if the
     * calling thread is interrupted while waiting, the executor is stopped with
     * {@link #shutdownNow()}, the wait continues until termination, and the method returns with
     * the thread's interrupt status set. Idempotent.
     */
    @Override
    public void close() {
        super.close();
    }

    // ---------------------------------------------------------------- read-outs

    /**
     * Returns a snapshot of the loop's figures and the executor's task accounting. The set is not
     * one atomic cut, and the counters are striped (as {@link java.util.concurrent.atomic.LongAdder}
     * is, so that workers do not contend on them): each is exact whenever no update to it is in
     * progress, and otherwise lies between its values at the start and the end of the call. A
     * pool thread that runs queued tasks back to back counts their admissions, completions and
     * recorded latencies locally and adds them every 64 tasks and when it stops, so while such a
     * run lasts {@code admitted}, {@code completed} and {@code recorded} may lag by up to 64 tasks
     * per pool thread (as {@code ThreadPoolExecutor}'s task counts are approximate while it runs);
     * once the executor is idle they are exact.
     *
     * @return the statistics
     */
    public Stats stats() {
        drainRecorders();
        flushRecorderCounts();
        PowerFlowController.Stats c = controller.stats();
        // Read in the order of the former positional constructor's arguments.
        long submitted = c.submitted() - retracted.sum();
        long rejectedNow = rejected.sum();
        int runningNow = runningNow();
        long completedNow = completedSum();
        long failedNow = failed.sum();
        long cancelledNow = cancelled.sum();
        int poolSize = poolSize();
        int inFlightLimit = inFlightLimit();
        double queueWaitP99 = queueWait.quantile(0.99);
        double endToEndP99 = endToEnd.quantile(0.99);
        double lastObservedP99 = controller.lastObservedP99();
        return new Stats(
                new Stats.Loop(c.rate(), c.minRate(), c.maxRate(), targetNanos / 1e6, c.quantile(), c.observations(),
                        c.p99(), lastObservedP99, c.saturated(), c.pausesExcused(), c.targetUnreachable(),
                        endToEndP99, lastEndToEndP99),
                new Stats.Queue(c.depth(), c.queueCapacity(), c.dropped(), queueWaitP99),
                new Stats.Tasks(submitted, c.admitted(), c.recorded(), rejectedNow, runningNow, completedNow,
                        failedNow, cancelledNow, shed.sum()),
                poolSize, inFlightLimit);
    }

    /** The running-tasks gauge; never negative, even while a task's +1 and -1 sit in different cells. */
    int runningNow() {
        // The virtual delegate counts no gauge per task: a task holds its slot from its hand-off
        // to its end, so the slots taken are the tasks on the delegate.
        return delegate.threadPerTask ? delegate.slotsInUse() : (int) Math.max(0L, running.sum());
    }

    // Single counters of stats(), for the metrics and MXBean read-outs: stats() also drains the
    // recorders and takes two histogram images, which a counter read has no use for.

    long submittedCount() {
        return LOOP.submittedCount(controller) - retracted.sum();
    }

    long rejectedCount() {
        return rejected.sum();
    }

    long completedCount() {
        flushRecorderCounts();
        return completedSum();
    }

    /** The completions counted (after a flush of the recorders' counts) and derived. */
    private long completedSum() {
        return completed.sum() + untimedCompleted();
    }

    /**
     * The untimed direct tasks that completed normally: the direct admissions made, less every
     * task in flight, the timed direct tasks, the untimed ones that failed or were cancelled, and
     * the admissions taken back (a submitter that met a shutdown); 0 on a delegate that does not
     * sample. The admissions (a count that never falls) are read first and the in-flight count
     * right after: a task among the admissions that is not in flight then has given its slot
     * back, and everything it counted (timed, abnormal, taken back) it counted before that, so
     * before the later reads; so no task is counted as completed before it is. While tasks run the figure lags by at most
     * the tasks in flight; once the executor is idle it is exact. Kept monotonic: never below a
     * figure already reported, itself never above the truth.
     */
    private long untimedCompleted() {
        if (!delegate.threadPerTask || !fastPaths) {
            return 0L;
        }
        long direct = LOOP.directCount(controller);
        long inFlightNow = inFlight();
        long derived = direct - inFlightNow - timedDirect.sum() - untimedAbnormal.sum()
                - LOOP.directTakenBackCount(controller);
        return untimedCompletedSeen.accumulateAndGet(derived, Math::max);
    }

    long failedCount() {
        return failed.sum();
    }

    long cancelledCount() {
        return cancelled.sum();
    }

    /** The executor's target, ms (its loop holds the run time at {@code 1 − MIN_WAIT_SHARE} of it when shedding). */
    double targetP99() {
        return targetNanos / 1e6;
    }

    long shedCount() {
        return shed.sum();
    }

    double lastEndToEndP99() {
        return lastEndToEndP99;
    }

    /**
     * Returns the size in force for the delegate: the concurrency bound of the default delegate or
     * of a {@code ThreadPoolExecutor} delegate (whose pool size is kept equal to it), or -1 for
     * another delegate, which is not sized.
     *
     * @return the pool size, or -1
     */
    public int poolSize() {
        return delegate.poolSize();
    }

    /**
     * Returns the most tasks the executor keeps in flight on its delegate now, from the run time
     * (see "The cap on tasks in flight"), or -1 while nothing is capped: the cap is open, the
     * delegate is not sized, or the rate is fixed. The slots in use are at most the fewer of this
     * and {@link #poolSize()}.
     *
     * @return the cap on the tasks in flight, or -1
     */
    public int inFlightLimit() {
        int cap = delegate.inFlightCap(); // OPEN throughout where no cap is stepped
        return cap == InFlightCap.OPEN ? -1 : cap;
    }

    /**
     * Returns the composed flow controller: the live one, for reading its figures and its
     * primitives ({@link PowerFlowController#limiter()}, {@link PowerFlowController#latency()},
     * ...). Its queue holds this executor's internal task wrappers. A pool thread running a chain
     * of tasks records their run times in a recorder of its own, which the observation tick and
     * {@link #stats()} move into {@link PowerFlowController#latency()}: read the latency there
     * through {@link #stats()}, or expect the samples of running chains to arrive at the next
     * tick. Do not call its mutators
     * ({@code submit}, {@code admit}, {@code observe}, {@code reset}, {@code clear},
     * {@code close}) while the executor is in use: they bypass the executor's accounting, a
     * task removed through them is neither run nor returned by {@link #shutdownNow()}, and a rate
     * they move does not resize the delegate (the tick resizes it from the rate it observes).
     *
     * @return the controller
     */
    public PowerFlowController<Runnable> controller() {
        return controller;
    }

    /**
     * Returns whether the observation tick has not run for longer than
     * {@link Builder#staleAfter(Duration)}: the rate in force is stale. Runs the staleness check.
     *
     * @return {@code true} while the loop is stalled
     */
    public boolean isStale() {
        return observability.isStale();
    }

    /**
     * Returns the name used for this executor's threads ({@code name-dispatcher},
     * {@code name-tick}, and {@code name-worker} for every worker of the default delegate; the
     * JVM's pause watch, {@code performance-helpers-pause-watch}, is shared by all executors).
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Returns how many internal failures were reported and survived: observations, pool sizing
     * and dispatcher steps that threw, delegates that refused an admitted task, and
     * {@code onRateChange} listeners that threw.
     *
     * @return the count since construction
     */
    public long callbackFailures() {
        return internalFailures.get() + controller.callbackFailures();
    }

    /**
     * Returns the name, state and main figures, for logs.
     *
     * @return a description
     */
    @Override
    public String toString() {
        String s = switch (state) {
            case RUNNING -> "Running";
            case SHUTDOWN -> "Shutting down";
            case STOP -> "Stopping";
            default -> "Terminated";
        };
        return "PowerFlowExecutor[" + name + ", " + s + ", rate = " + controller.rate() + "/s, queued = "
                + controller.depth() + ", running = " + runningNow() + ", completed = " + completedSum() + "]";
    }

    /** The dispatcher thread, for tests. */
    Thread dispatcherThread() {
        return dispatcher.thread;
    }

    // ---------------------------------------------------------------- stats

    /**
     * A snapshot of a {@link PowerFlowExecutor}, in three parts: the loop's figures
     * ({@link Loop}, as in {@link PowerFlowController.Stats}), the queue's ({@link Queue}) and the
     * task accounting ({@link Tasks}), plus the delegate's size. Every figure also has an accessor
     * here that reads it from its part.
     *
     * <p><b>Thread safety.</b> Immutable.
     *
     * @param loop     the loop's figures
     * @param queue    the waiting queue's figures
     * @param tasks    the task accounting
     * @param poolSize the delegate's size in force ({@link PowerFlowExecutor#poolSize()}), or -1
     * @param inFlightLimit the cap on the tasks in flight from the run time
     *                 ({@link PowerFlowExecutor#inFlightLimit()}), or -1 while nothing is capped
     */
    public record Stats(Loop loop, Queue queue, Tasks tasks, int poolSize, int inFlightLimit) {

        /**
         * Checks the parts.
         *
         * @throws NullPointerException if a part is null
         */
        public Stats {
            Objects.requireNonNull(loop, "loop");
            Objects.requireNonNull(queue, "queue");
            Objects.requireNonNull(tasks, "tasks");
        }

        /**
         * The control loop's figures.
         *
         * <p><b>Thread safety.</b> Immutable.
         *
         * @param rate            the rate in force, operations (task starts) per second
         * @param minRate         the floor of the adaptive rate, per second
         * @param maxRate         the ceiling of the adaptive rate, per second
         * @param targetP99       the latency setpoint, milliseconds
         * @param quantile        the quantile of the window that drives the loop
         * @param observations    observations that stepped the control law
         * @param p99             the driving quantile of the run times in the current, partial
         *                        window, milliseconds; {@link Double#NaN} when the window is empty
         * @param lastObservedP99 the quantile the last observation fed the control law (the last
         *                        completed window), milliseconds; {@code NaN} before the first
         * @param saturated       whether the loop's output is pinned at {@code minRate} or
         *                        {@code maxRate} (under the PI law, the servo's clamp on its last
         *                        step)
         * @param pausesExcused   pauses of the process (a dispatcher wake-up or a tick late by at
         *                        least max(half the target, 50 ms)) that excused a window from the
         *                        knee-aware law, which held the rate through it; 0 under the PI law
         * @param targetUnreachable whether the law found that cutting the rate does not lower the
         *                        run-time p99 (a latency the load does not set), and so serves the
         *                        load instead of cutting (see "Shedding and the rate" in
         *                        {@link PowerFlowExecutor}); {@code false} under the PI law
         * @param endToEndP99     the p99 of the tasks' time from submit to completion, the
         *                        caller's latency, in the current, partial window, milliseconds;
         *                        {@code NaN} when the window is empty
         * @param lastEndToEndP99 the same for the last completed window, milliseconds; {@code NaN}
         *                        before the first
         */
        public record Loop(double rate, double minRate, double maxRate, double targetP99, double quantile,
                long observations, double p99, double lastObservedP99, boolean saturated, long pausesExcused,
                boolean targetUnreachable, double endToEndP99, double lastEndToEndP99) {
        }

        /**
         * The waiting queue's figures.
         *
         * <p><b>Thread safety.</b> Immutable.
         *
         * @param depth         tasks waiting in the queue
         * @param queueCapacity the bound on the queue
         * @param dropped       offers the queue refused because it was full
         * @param queueWaitP99  the p99 of the time tasks waited before they started (queue, rate
         *                      limiter, slot; 0 for a task handed straight to the delegate) in
         *                      the current window, milliseconds; {@code NaN} when empty
         */
        public record Queue(int depth, int queueCapacity, long dropped, double queueWaitP99) {
        }

        /**
         * The task accounting: every task accepted ends as exactly one of completed, failed,
         * cancelled, shed, or returned by {@link PowerFlowExecutor#shutdownNow()}.
         *
         * <p><b>Thread safety.</b> Immutable.
         *
         * @param submitted tasks accepted: queued, or handed off at once by the fast path
         * @param admitted  tasks admitted by the rate limiter
         * @param recorded  run times recorded: one per task that ran, except on the default
         *                  virtual-thread delegate while it samples (see "What is timed" in
         *                  {@link PowerFlowExecutor}), where one timed task stands for up to 64
         * @param rejected  tasks refused at {@code execute}/{@code submit}: queue full or too
         *                  late for the target (whatever the {@link RejectionPolicy} did with
         *                  them), or shut down
         * @param running   tasks running on the delegate now (a pool thread between two tasks of
         *                  a chain counts as running one)
         * @param completed tasks that ran and returned normally. While tasks run this may lag by
         *                  up to 64 per pool thread or recorder, and on the virtual delegate while
         *                  it samples by up to the tasks in flight (the untimed tasks' completions
         *                  are the direct admissions less the timed, failed, cancelled and
         *                  in-flight tasks); it never runs ahead, never falls, and is exact once
         *                  the executor is idle
         * @param failed    tasks that ran and threw (for {@code submit}, whose {@code Future}
         *                  failed)
         * @param cancelled tasks whose {@code Future} was cancelled before or while they ran
         * @param shed      tasks shed from the queue because they had waited past the wait budget,
         *                  their {@code Future} failed with a {@link ShedException}
         */
        public record Tasks(long submitted, long admitted, long recorded, long rejected, int running,
                long completed, long failed, long cancelled, long shed) {
        }

        /** {@return the rate in force, operations (task starts) per second} From {@link Loop}. */
        public double rate() {
            return loop.rate();
        }

        /** {@return the floor of the adaptive rate, per second} From {@link Loop}. */
        public double minRate() {
            return loop.minRate();
        }

        /** {@return the ceiling of the adaptive rate, per second} From {@link Loop}. */
        public double maxRate() {
            return loop.maxRate();
        }

        /** {@return the latency setpoint, milliseconds} From {@link Loop}. */
        public double targetP99() {
            return loop.targetP99();
        }

        /** {@return the quantile of the window that drives the loop} From {@link Loop}. */
        public double quantile() {
            return loop.quantile();
        }

        /** {@return tasks waiting in the queue} From {@link Queue}. */
        public int depth() {
            return queue.depth();
        }

        /** {@return the bound on the queue} From {@link Queue}. */
        public int queueCapacity() {
            return queue.queueCapacity();
        }

        /** {@return tasks accepted: queued, or handed off at once by the fast path} From {@link Tasks}. */
        public long submitted() {
            return tasks.submitted();
        }

        /** {@return tasks admitted by the rate limiter} From {@link Tasks}. */
        public long admitted() {
            return tasks.admitted();
        }

        /** {@return run times recorded (one per task that ran)} From {@link Tasks}. */
        public long recorded() {
            return tasks.recorded();
        }

        /** {@return offers the queue refused because it was full} From {@link Queue}. */
        public long dropped() {
            return queue.dropped();
        }

        /** {@return observations that stepped the control law} From {@link Loop}. */
        public long observations() {
            return loop.observations();
        }

        /**
         * {@return the driving quantile of the current window's run times, ms; NaN when empty}
         * From {@link Loop}.
         */
        public double p99() {
            return loop.p99();
        }

        /**
         * {@return whether the loop's output is pinned at {@code minRate} or {@code maxRate}}
         * From {@link Loop}.
         */
        public boolean saturated() {
            return loop.saturated();
        }

        /** {@return tasks refused at {@code execute}/{@code submit}} From {@link Tasks}. */
        public long rejected() {
            return tasks.rejected();
        }

        /** {@return tasks running on the delegate now} From {@link Tasks}. */
        public int running() {
            return tasks.running();
        }

        /** {@return tasks that ran and returned normally} From {@link Tasks}. */
        public long completed() {
            return tasks.completed();
        }

        /** {@return tasks that ran and threw} From {@link Tasks}. */
        public long failed() {
            return tasks.failed();
        }

        /** {@return tasks whose {@code Future} was cancelled before or while they ran} From {@link Tasks}. */
        public long cancelled() {
            return tasks.cancelled();
        }

        /** {@return the p99 of the current window's queue waits, ms; NaN when empty} From {@link Queue}. */
        public double queueWaitP99() {
            return queue.queueWaitP99();
        }

        /**
         * {@return the quantile the last observation fed the control law, ms; NaN before the first}
         * From {@link Loop}.
         */
        public double lastObservedP99() {
            return loop.lastObservedP99();
        }

        /**
         * {@return pauses of the process that excused a window from the knee-aware law} From {@link Loop}.
         */
        public long pausesExcused() {
            return loop.pausesExcused();
        }

        /** {@return whether the law found the target unreachable} From {@link Loop}. */
        public boolean targetUnreachable() {
            return loop.targetUnreachable();
        }

        /** {@return the end-to-end p99 of the current, partial window, milliseconds} From {@link Loop}. */
        public double endToEndP99() {
            return loop.endToEndP99();
        }

        /** {@return the end-to-end p99 of the last completed window, milliseconds} From {@link Loop}. */
        public double lastEndToEndP99() {
            return loop.lastEndToEndP99();
        }

        /** {@return the tasks shed from the queue} From {@link Tasks}. */
        public long shed() {
            return tasks.shed();
        }
    }

    // ---------------------------------------------------------------- builder

    /**
     * Builds a {@link PowerFlowExecutor}. The loop's options are inherited from
     * {@link io.github.performancehelpers.loop.FlowOptions}, with the names, defaults and
     * validation of {@link PowerFlowController.Builder} (invalid values are refused when set);
     * their rates are task starts per second, and in {@linkplain #fixedRate(boolean) fixed-rate}
     * mode {@code rate} is the rate and {@code minRate} is optional. The {@code ticker} also
     * times the tasks and the observation interval (the dispatcher still parks in real time: a
     * fake ticker is for driving the loop and the limiter from a test). When a
     * {@code globalLimiter} refuses while the local limiter would admit, the dispatcher retries
     * after 1 ms. The control law defaults to
     * {@link PowerFlowController.ControlLaw#KNEE_AWARE} unless a PI gain is set (see
     * {@link #defaultControlLaw(boolean)}). The executor's own options are validated when set and
     * again in {@link #build()}.
     *
     * <p><b>Thread safety.</b> Not thread-safe: one thread configures a builder.
     */
    public static final class Builder extends io.github.performancehelpers.loop.FlowOptions<Builder> {
        // The five loop options the executor's constructor reads, resolved from FlowOptions by
        // build(): not options of their own (the setters are FlowOptions'), a copy because
        // FlowOptions' getters are protected and the constructor is outside this class's body.
        private double rate;
        private double targetP99;
        private double relativeAccuracy;
        private Ticker ticker;
        private RateLimiter globalLimiter;
        private RateChangeListener onRateChange;
        private Duration observeInterval = Duration.ofSeconds(1);
        private ExecutorService delegate;
        private Boolean ownsDelegate;
        private PoolSizer poolSizer;
        private int maxConcurrency;
        private RejectionPolicy rejectionPolicy = RejectionPolicy.ABORT;
        private Duration blockTimeout = DEFAULT_BLOCK_TIMEOUT;
        private boolean shedding = true;
        private boolean fixedRate;
        private ScheduledExecutorService scheduler;
        private String name;
        private MetricsCollector collector;
        private boolean jmx;
        private Duration staleAfter;

        private Builder() {
        }

        /**
         * The executor's control law when {@link #controlLaw} was not called:
         * {@link PowerFlowController.ControlLaw#KNEE_AWARE}, unless {@link #kp}, {@link #ki},
         * {@link #kd} or {@link #derivativeFilter} was set, in which case
         * {@link PowerFlowController.ControlLaw#PI} with those gains: whoever sets a gain gets
         * the law that uses it.
         *
         * <p>Why the executor differs from {@link PowerFlowController#builder()}, whose default
         * is the PI law with the default gains: those gains are absolute (tasks per second per
         * millisecond), fitted to a linear plant (about 400/s at a 30 ms target, see
         * {@code benchmarks/flowloop.md}), and a pool in front of a queueing downstream is
         * neither that scale nor linear. Its p99 is flat up to a knee, then steep; there the
         * default gains creep past the knee, spike and fall to the floor, over and over. The
         * knee-aware law's steps are relative to the rate in force and scheduled on the capacity
         * the downstream shows when it saturates, so it needs no gains (see
         * {@code docs/knee-aware-law.md}, section "Relative steps"). The controller
         * keeps the PI default so that its behaviour with the default gains stays as
         * {@code benchmarks/flowloop.md} describes it.
         *
         * @param gainSet whether a PI gain was set
         * @return the law
         */
        @Override
        protected PowerFlowController.ControlLaw defaultControlLaw(boolean gainSet) {
            return gainSet ? PowerFlowController.ControlLaw.PI : PowerFlowController.ControlLaw.KNEE_AWARE;
        }

        /**
         * Whether tasks that cannot start in time to finish within {@code targetP99} are refused
         * at the door and shed from the queue (see "Shedding and the rate" in
         * {@link PowerFlowExecutor}). Default {@code true}; off in fixed-rate mode. With
         * {@code false}, the queue is bounded by count only, and a task may wait as long as the
         * queue's length at the rate in force takes.
         *
         * @param shedding whether to shed late tasks
         * @return this builder
         */
        public Builder shedding(boolean shedding) {
            this.shedding = shedding;
            return this;
        }

        /**
         * Publishes the executor's numbers in the shared collector
         * ({@link MetricsCollector#shared()}) when {@code true}; {@code false} (the default)
         * publishes nothing. They are unregistered when the executor terminates.
         *
         * @param observability whether to publish in the shared collector
         * @return this builder
         */
        public Builder observability(boolean observability) {
            this.collector = observability ? MetricsCollector.shared() : null;
            return this;
        }

        /**
         * Publishes the executor's numbers in the caller's collector, tagged {@code name} and
         * {@code type=executor}: gauges {@code power.flow.rate}, {@code .p99} (last observed),
         * {@code .depth}, {@code .pool.size}, {@code .running}, {@code .saturated} and
         * {@code .stale} (0 or 1); counters {@code power.flow.submitted}, {@code .admitted},
         * {@code .dropped}, {@code .rejected}, {@code .observations}, {@code .completed},
         * {@code .failed}, {@code .cancelled}, {@code .stale.episodes}.
         *
         * @param collector the collector
         * @return this builder
         * @throws NullPointerException if {@code collector} is null
         */
        public Builder observability(MetricsCollector collector) {
            this.collector = Objects.requireNonNull(collector, "collector");
            return this;
        }

        /**
         * Registers a {@link PowerFlowExecutorMXBean} in the platform MBean server as
         * {@code io.github.performancehelpers:type=PowerFlowExecutor,name=<name>} when
         * {@code true}, until the executor terminates. Default {@code false}. A name already
         * registered makes {@link #build()} throw; it is never overwritten.
         *
         * @param jmx whether to register the MXBean
         * @return this builder
         */
        public Builder jmx(boolean jmx) {
            this.jmx = jmx;
            return this;
        }

        /**
         * Sets how long the observation tick may go without running before the loop is reported
         * stale ({@link PowerFlowExecutor#isStale()}, the {@code power.flow.stale} gauge, a
         * {@code StaleLoop} JFR event). Default three times the observe interval; it must be
         * longer than the observe interval (checked by {@link #build()}), so longer than
         * {@link PowerFlowExecutor#MIN_OBSERVE_INTERVAL}.
         *
         * @param staleAfter a duration over {@link PowerFlowExecutor#MIN_OBSERVE_INTERVAL} and at
         *     most {@link #MAX_DURATION}
         * @return this builder
         * @throws NullPointerException     if {@code staleAfter} is null
         * @throws IllegalArgumentException if {@code staleAfter} is not over
         *                                  {@code MIN_OBSERVE_INTERVAL}, or is over
         *                                  {@code MAX_DURATION}
         */
        public Builder staleAfter(Duration staleAfter) {
            Preconditions.requireDurationIn("staleAfter", staleAfter, MIN_OBSERVE_INTERVAL.plusNanos(1), MAX_DURATION);
            this.staleAfter = staleAfter;
            return this;
        }

        /**
         * Sets a listener called as {@code onRateChange(rate, previous)} when the loop moves the
         * rate, after the delegate has been resized (with the {@link PoolSizer}'s answer).
         *
         * <p><b>Which thread, and what happens when it blocks or throws.</b> The sizer and the
         * listener run on the executor's callback thread, a daemon named {@code name-callbacks},
         * one change at a time, never on the observation thread: the observation puts the rate
         * into the limiter and wakes the dispatcher first, then hands the callbacks over and waits
         * for them at most {@link PowerFlowExecutor#MAX_CALLBACK_WAIT} (1 s), so with callbacks that
         * return at once the pool is resized and the listener called by the time the observation
         * ends. A callback that blocks stalls nothing but later callbacks: observations go on at
         * their interval, the rate limiter follows the law, and the changes that come meanwhile
         * are coalesced into one (the latest rate, and as {@code previous} the rate the callbacks
         * last saw), delivered when the callback returns. Termination waits for every task, then
         * interrupts a callback still running and waits for it at most {@code MAX_CALLBACK_WAIT}
         * more; a callback that outlives that is left to end on its daemon thread, and no later
         * change is delivered. A listener or sizer that throws is reported and counted
         * ({@link PowerFlowExecutor#callbackFailures()}) and stops nothing (the size stays as it
         * was). The sizer's first call, for the starting rate, runs in {@link #build()}.
         *
         * @param onRateChange the listener, or {@code null} for none
         * @return this builder
         */
        public Builder onRateChange(RateChangeListener onRateChange) {
            this.onRateChange = onRateChange;
            return this;
        }

        /**
         * Sets how often the loop observes. Default 1 s. Each observation passes the control law
         * the elapsed time measured with the ticker since the previous one, in milliseconds. At
         * least {@link PowerFlowExecutor#MIN_OBSERVE_INTERVAL} (1 ms): a window shorter than that
         * holds too few samples for a p99, and ticking faster only burns a core.
         *
         * @param observeInterval a duration in {@code [MIN_OBSERVE_INTERVAL, MAX_DURATION]}
         * @return this builder
         * @throws NullPointerException     if {@code observeInterval} is null
         * @throws IllegalArgumentException if {@code observeInterval} is not positive, under
         *                                  {@link PowerFlowExecutor#MIN_OBSERVE_INTERVAL}, or over
         *                                  {@link #MAX_DURATION}
         */
        public Builder observeInterval(Duration observeInterval) {
            Preconditions.requireDurationIn("observeInterval", observeInterval, MIN_OBSERVE_INTERVAL, MAX_DURATION);
            this.observeInterval = observeInterval;
            return this;
        }

        /**
         * Sets the executor the tasks run on. Default: one virtual thread per task under a
         * concurrency bound the loop resizes. A {@link ThreadPoolExecutor} is resized and bounded
         * (see the class description); any other executor is used as is. Not owned unless
         * {@link #ownsDelegate(boolean)} says so.
         *
         * @param delegate the delegate
         * @return this builder
         * @throws NullPointerException if {@code delegate} is null
         */
        public Builder delegate(ExecutorService delegate) {
            this.delegate = Objects.requireNonNull(delegate, "delegate");
            return this;
        }

        /**
         * Sets whether this executor owns the delegate: shuts it down when it terminates, and
         * stops it in {@link PowerFlowExecutor#shutdownNow()}. Default {@code true} for the default
         * delegate (which is always owned), {@code false} for a caller's.
         *
         * @param ownsDelegate whether the delegate is owned
         * @return this builder
         */
        public Builder ownsDelegate(boolean ownsDelegate) {
            this.ownsDelegate = ownsDelegate;
            return this;
        }

        /**
         * Sets the rate-to-size mapping for the delegate. Default
         * {@link PoolSizer#littlesLaw(Duration, int, int) littlesLaw(targetP99, 1, maxConcurrency)}:
         * {@code ceil(2 × rate × targetP99)}, within {@code [1, maxConcurrency]}.
         *
         * @param poolSizer the sizer
         * @return this builder
         * @throws NullPointerException if {@code poolSizer} is null
         */
        public Builder poolSizer(PoolSizer poolSizer) {
            this.poolSizer = Objects.requireNonNull(poolSizer, "poolSizer");
            return this;
        }

        /**
         * Sets the ceiling of the default pool sizer. Default 10,000 for the default delegate;
         * for a {@code ThreadPoolExecutor}, its maximum pool size at build time (at most 10,000).
         * Ignored when a {@link #poolSizer(PoolSizer)} is set.
         *
         * @param maxConcurrency tasks, {@code >= 1}
         * @return this builder
         * @throws IllegalArgumentException if {@code maxConcurrency < 1}
         */
        public Builder maxConcurrency(int maxConcurrency) {
            if (maxConcurrency < 1) {
                throw new IllegalArgumentException("maxConcurrency must be >= 1: " + maxConcurrency);
            }
            this.maxConcurrency = maxConcurrency;
            return this;
        }

        /**
         * Sets what happens to a task the full queue refuses. Default {@link RejectionPolicy#ABORT}.
         *
         * @param rejectionPolicy the policy
         * @return this builder
         * @throws NullPointerException if {@code rejectionPolicy} is null
         */
        public Builder rejectionPolicy(RejectionPolicy rejectionPolicy) {
            this.rejectionPolicy = Objects.requireNonNull(rejectionPolicy, "rejectionPolicy");
            return this;
        }

        /**
         * Sets the longest a submitter waits for room under {@link RejectionPolicy#BLOCK} before
         * it gets a {@link QueueFullException} (or, with shedding, a {@link ShedException} if the
         * door is still closed: the queue's oldest task over the wait budget, or the task would
         * wait past it behind those queued). Default 1 minute; ignored under the
         * other policies. The wait is in real time, whatever the {@code ticker}.
         *
         * @param blockTimeout a positive duration, at most {@link #MAX_DURATION}
         * @return this builder
         * @throws NullPointerException     if {@code blockTimeout} is null
         * @throws IllegalArgumentException if {@code blockTimeout} is not positive or is over
         *                                  {@link #MAX_DURATION}
         */
        public Builder blockTimeout(Duration blockTimeout) {
            this.blockTimeout = Preconditions.requireDurationIn("blockTimeout", blockTimeout, Duration.ofNanos(1),
                    MAX_DURATION);
            return this;
        }

        /**
         * Turns the feedback off: the rate stays at {@code rate}, and the tick only rolls the
         * latency windows over. {@code minRate} is then optional. Default {@code false}.
         *
         * @param fixedRate whether the rate is fixed
         * @return this builder
         */
        public Builder fixedRate(boolean fixedRate) {
            this.fixedRate = fixedRate;
            return this;
        }

        /**
         * Sets the scheduler that runs the observation tick. Not owned: it is not shut down; the
         * executor cancels its tick when it terminates. Default: an owned single daemon thread
         * named {@code name-tick}.
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
         * Sets the name used for the executor's threads. Default {@code power-flow-N}.
         *
         * @param name a non-blank name
         * @return this builder
         * @throws NullPointerException     if {@code name} is null
         * @throws IllegalArgumentException if {@code name} is blank
         */
        public Builder name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank: \"" + name + "\"");
            }
            this.name = name;
            return this;
        }

        /**
         * Builds and starts the executor: its dispatcher thread and its tick.
         *
         * @return a new executor
         * @throws IllegalStateException    if {@code rate} (or, unless fixed-rate, {@code minRate})
         *                                  was not set
         * @throws IllegalArgumentException if the options contradict each other, as for
         *                                  {@link PowerFlowController.Builder#build()}, or
         *                                  {@code staleAfter} is not longer than
         *                                  {@code observeInterval}
         * @throws IllegalStateException    if observability or JMX was asked and the name is
         *                                  already registered there by another live executor
         *                                  (nothing is started and nothing stays registered)
         * @throws IllegalArgumentException if the {@code delegate} or the {@code scheduler} is
         *                                  already shut down, or the scheduler refuses the tick
         */
        public PowerFlowExecutor build() {
            // A shut-down executor refuses everything: say so now, not with a cancelled Future per task.
            if (delegate != null && delegate.isShutdown()) {
                throw new IllegalArgumentException("delegate must not be shut down: " + delegate);
            }
            if (scheduler != null && scheduler.isShutdown()) {
                throw new IllegalArgumentException("scheduler must not be shut down: " + scheduler);
            }
            if (staleAfter != null && staleAfter.compareTo(observeInterval) <= 0) {
                throw new IllegalArgumentException("staleAfter must be > observeInterval: staleAfter="
                        + staleAfter + ", observeInterval=" + observeInterval);
            }
            PowerFlowController.Builder<Runnable> flow = PowerFlowController.builder();
            copyTo(flow); // the loop's options, with the law resolved by defaultControlLaw
            // An unbounded ceiling is the open rate, and the start defaults to the ceiling: no
            // throttling until latency calls for it.
            double ceiling = Math.min(maxRate(), OPEN_RATE);
            flow.maxRate(ceiling);
            rate = Double.isNaN(rate()) && !fixedRate ? ceiling : Math.min(rate(), ceiling);
            if (!Double.isNaN(rate)) {
                flow.rate(rate);
            }
            if (Double.isNaN(minRate()) && !fixedRate) {
                flow.minRate(Math.min(Math.min(DEFAULT_MIN_RATE, ceiling / 100), rate));
            }
            targetP99 = targetP99();
            if (shedding && !fixedRate) {
                // The loop holds the run time under the target by the share a task may wait.
                flow.targetP99(targetP99 * (1 - MIN_WAIT_SHARE));
            }
            relativeAccuracy = relativeAccuracy();
            ticker = ticker();
            globalLimiter = globalLimiter();
            if (fixedRate && Double.isNaN(minRate()) && !Double.isNaN(rate)) {
                flow.minRate(rate / 2); // never used: the loop does not run
            }
            // Validate the controller's options before anything is started.
            flow.onRateChange(null).build();
            return new PowerFlowExecutor(this, flow);
        }
    }
}
