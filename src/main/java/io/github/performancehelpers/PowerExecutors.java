package io.github.performancehelpers;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * <h2>How the factories derive the loop's settings</h2>
 * Both take the pool's concurrency {@code n} (for the virtual-thread executor, the default ceiling
 * 10,000) and the latency target {@code W}, and derive:
 * <ul>
 * <li>{@code maxRate = n / W}: by Little's law, the throughput of {@code n} concurrent tasks
 *     that each take exactly the target. Beyond it the pool could hold the target only if tasks
 *     ran faster than the target, in which case the target is not the constraint anyway.</li>
 * <li>{@code rate = maxRate}: start at full speed, as the pool being replaced does, and let the
 *     latency feedback bring the rate down (under overload, by at most half per observation).</li>
 * <li>{@code minRate = maxRate / 100}.</li>
 * <li>The control law: {@link PowerFlowController.ControlLaw#KNEE_AWARE}, selected explicitly
 *     with {@link PowerFlowExecutor.Builder#controlLaw controlLaw(KNEE_AWARE)} (the executor
 *     builder's default too). Its steps are relative to the rate in force and scheduled on the
 *     capacity the downstream shows when it saturates, so no gains are derived. The PI law with
 *     the default gains rescaled to the pool settled under the target, still climbing slowly after
 *     a cut (see {@code benchmarks/closedloop.md}, sections "Quiet rerun on main, after the
 *     executor's fast paths" and "The knee-aware control law").</li>
 * <li>{@code queueCapacity = min(10,000, max(n, ceil(maxRate × 1 s)))}: one second of work at
 *     full speed (the loop's default observe interval), at least one pool's worth ({@code n}),
 *     at most 10,000. A batch the pool could start within a second is queued rather than
 *     refused; beyond that a full queue throws {@link QueueFullException}, so sustained
 *     overload is shed at the door instead of waiting in line. The bound on the wait follows:
 *     a queued task waits at most {@code queueCapacity / rate}, one second at {@code maxRate},
 *     {@code maxRate / rate} seconds once the loop has cut the rate to {@code rate}. (A constant
 *     10,000 would be minutes of waiting under sustained overload at a low settled rate; see
 *     {@code benchmarks/closedloop.md}, section "Reading it".)</li>
 * <li>The pool is sized with {@link PoolSizer#littlesLaw(Duration, int, int)
 *     littlesLaw(W, 1, n)}.</li>
 * </ul>
 * Use {@link PowerFlowExecutor#builder()} for anything else.
 *
 * <p><b>Thread safety.</b> The factories may be called from any thread.
 *
 * @since 0.1.0
 */
public final class PowerExecutors {

    /** How much work at maxRate the factories' queue holds, in seconds. */
    static final double QUEUE_SECONDS = 1.0;

    /** The factories' largest queue. */
    static final int MAX_QUEUE_CAPACITY = 10_000;

    private PowerExecutors() {
    }

    /**
     * Returns a flow-controlled replacement for {@code Executors.newFixedThreadPool(nThreads)}: an
     * owned {@link ThreadPoolExecutor} of at most {@code nThreads} daemon threads (named
     * {@code power-flow-N-worker-K}), shrunk by the loop when the rate falls. See the class
     * description for the derived settings.
     *
     * @param nThreads  the most threads, {@code >= 1}
     * @param targetP99 the run-time p99 to hold, positive
     * @return a started executor; close it (try-with-resources) or shut it down
     * @throws NullPointerException     if {@code targetP99} is null
     * @throws IllegalArgumentException if {@code nThreads < 1} or {@code targetP99} is not
     *                                  positive
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
     * @param targetP99 the run-time p99 to hold, positive
     * @return a started executor; close it (try-with-resources) or shut it down
     * @throws NullPointerException     if {@code targetP99} is null
     * @throws IllegalArgumentException if {@code targetP99} is not positive
     */
    public static PowerFlowExecutor newVirtualFlowExecutor(Duration targetP99) {
        checkTarget(targetP99);
        return configure(PowerFlowExecutor.builder(), PowerFlowExecutor.DEFAULT_MAX_CONCURRENCY, targetP99).build();
    }

    private static void checkTarget(Duration targetP99) {
        Objects.requireNonNull(targetP99, "targetP99");
        if (targetP99.isNegative() || targetP99.isZero()) {
            throw new IllegalArgumentException("targetP99 must be positive: " + targetP99);
        }
    }

    private static PowerFlowExecutor.Builder configure(PowerFlowExecutor.Builder b, int n, Duration target) {
        double targetMs = target.toNanos() / 1e6;
        double maxRate = n / (targetMs / 1000.0);
        return b.rate(maxRate).maxRate(maxRate).minRate(maxRate / 100)
                .targetP99(targetMs)
                .controlLaw(PowerFlowController.ControlLaw.KNEE_AWARE)
                .queueCapacity(queueCapacity(n, maxRate))
                .maxConcurrency(n)
                .poolSizer(PoolSizer.littlesLaw(target, 1, n));
    }

    /**
     * The factories' queue bound: {@code min(10,000, max(n, ceil(maxRate × 1 s)))} (see the class
     * description).
     */
    static int queueCapacity(int n, double maxRate) {
        double oneSecond = Math.ceil(maxRate * QUEUE_SECONDS);
        return (int) Math.min(MAX_QUEUE_CAPACITY, Math.max(n, oneSecond));
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
