package io.github.performancehelpers;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import io.github.performancehelpers.internal.Preconditions;
import io.github.performancehelpers.loop.FlowOptions;
import io.github.performancehelpers.loop.PowerFlowController;

/**
 * One-line factories for {@link PowerFlowExecutor}s, so that moving from
 * {@code Executors.newFixedThreadPool(n)} or {@code Executors.newVirtualThreadPerTaskExecutor()}
 * to a flow-controlled executor changes one line:
 *
 * <pre>{@code
 * try (ExecutorService executor = PowerExecutors.newFixedFlowPool(8, Duration.ofMillis(50))) {
 *     executor.submit(task);
 * }
 * }</pre>
 *
 * <h2>What the factories set</h2>
 * Both take the pool's concurrency {@code n} (for the virtual-thread executor, the default ceiling
 * 10,000) and the latency target {@code W}:
 * <ul>
 * <li>No rate limit of their own: {@code maxRate} and the starting rate are
 *     {@link PowerFlowExecutor#OPEN_RATE}, and {@code minRate} is 1 per second. While the run-time
 *     p99 is under the target the executor runs what it is given as fast as the pool it
 *     replaces; the pool size, {@code n}, bounds the concurrency. The rate limit engages when the
 *     run-time p99 goes over the target, from the throughput the downstream showed.</li>
 * <li>The control law {@link PowerFlowController.ControlLaw#KNEE_AWARE} (the executor builder's
 *     default too).</li>
 * <li>Shedding on (see "Shedding and the rate" in {@link PowerFlowExecutor}): a task that cannot
 *     start in time to finish within {@code W} is refused at the door or shed from the queue with
 *     a {@link ShedException}, so the wait the caller sees stays within the target.</li>
 * <li>{@code queueCapacity = 10,000}: the time budget bounds the wait, the count bounds memory.</li>
 * <li>The pool stays at {@code n}: the rate is the loop's one actuator. A pool sized from the
 *     rate and the target ({@link PoolSizer#littlesLaw(Duration, int, int)}) undersizes itself
 *     whenever calls take longer than the target, which is when the loop cuts: the field trial's
 *     "tail" scenario starved that way (see {@code benchmarks/fieldtrial.md}).</li>
 * <li>Daemon threads, unlike {@code newFixedThreadPool}'s: an executor that is never closed does
 *     not keep the JVM alive (its queued tasks are then lost with the JVM, as with any daemon
 *     thread). Close it, or shut it down and await termination, to run what was accepted.</li>
 * <li>{@link RejectionPolicy#ABORT}: a refused task throws at {@code submit}. A producer that
 *     submits more than the queue holds at once wants the builder with
 *     {@link RejectionPolicy#BLOCK}.</li>
 * </ul>
 * Use {@link PowerFlowExecutor#builder()} for anything else.
 *
 * <p><b>Thread safety.</b> The factories may be called from any thread.
 *
 * @since 0.1.0
 */
public final class PowerExecutors {

    /** The factories' queue bound. */
    static final int QUEUE_CAPACITY = 10_000;

    private PowerExecutors() {
    }

    /**
     * Returns a flow-controlled replacement for {@code Executors.newFixedThreadPool(nThreads)}: an
     * owned {@link ThreadPoolExecutor} of at most {@code nThreads} daemon threads (named
     * {@code power-flow-N-worker-K}); the pool stays at {@code nThreads}. See the class
     * description for the derived settings.
     *
     * @param nThreads  the most threads, {@code >= 1}
     * @param targetP99 the end-to-end p99 to hold (submit to completion), positive, at most
     *                  {@link FlowOptions#MAX_DURATION}
     * @return a started executor; close it (try-with-resources) or shut it down
     * @throws NullPointerException     if {@code targetP99} is null
     * @throws IllegalArgumentException if {@code nThreads < 1} or {@code targetP99} is not
     *                                  positive or over {@code MAX_DURATION}
     */
    public static PowerFlowExecutor newFixedFlowPool(int nThreads, Duration targetP99) {
        if (nThreads < 1) {
            throw new IllegalArgumentException("nThreads must be >= 1: " + nThreads);
        }
        checkTarget(targetP99);
        String name = PowerFlowExecutor.nextName();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(nThreads, nThreads, 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), daemonThreads(name + "-worker-"));
        try {
            return configure(PowerFlowExecutor.builder(), nThreads, targetP99)
                    .name(name).delegate(pool).ownsDelegate(true).build();
        } catch (RuntimeException | Error e) {
            pool.shutdownNow();
            throw e;
        }
    }

    /**
     * Returns a flow-controlled replacement for {@code Executors.newVirtualThreadPerTaskExecutor()}:
     * one virtual thread per task, under a concurrency bound of at most 10,000 that the loop
     * resizes. See the class description for the derived settings.
     *
     * @param targetP99 the end-to-end p99 to hold (submit to completion), positive, at most
     *                  {@link FlowOptions#MAX_DURATION}
     * @return a started executor; close it (try-with-resources) or shut it down
     * @throws NullPointerException     if {@code targetP99} is null
     * @throws IllegalArgumentException if {@code targetP99} is not positive or over
     *                                  {@code MAX_DURATION}
     */
    public static PowerFlowExecutor newVirtualFlowExecutor(Duration targetP99) {
        checkTarget(targetP99);
        return configure(PowerFlowExecutor.builder(), PowerFlowExecutor.DEFAULT_MAX_CONCURRENCY, targetP99).build();
    }

    private static void checkTarget(Duration targetP99) {
        Preconditions.requireDurationIn("targetP99", targetP99, Duration.ofNanos(1), FlowOptions.MAX_DURATION);
    }

    private static PowerFlowExecutor.Builder configure(PowerFlowExecutor.Builder b, int n, Duration target) {
        return b.targetP99(target)
                .controlLaw(PowerFlowController.ControlLaw.KNEE_AWARE)
                .queueCapacity(QUEUE_CAPACITY)
                .maxConcurrency(n)
                .poolSizer(rate -> n);
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.getAndIncrement());
            t.setDaemon(true);
            return t;
        };
    }
}
