package io.github.performancehelpers;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
 *     latency feedback bring the rate down. (The servo's first output is {@code kp × error}
 *     alone, see {@link PowerFlowController}, so the rate settles from the floor up after the
 *     first observation.)</li>
 * <li>{@code minRate = maxRate / 100}.</li>
 * <li>The gains: the flow controller's defaults ({@code kp = 0.05}, {@code ki = 0.001}) were
 *     tuned on the seed's plant (about 400/s against a 30 ms target). They are absolute, in
 *     (tasks/s)/ms, so they are rescaled by {@code scale = (maxRate / W[ms]) / (400 / 30)}: the
 *     same relative correction for the same relative latency error. Then
 *     {@code kp = 0.05 × scale} and {@code ki = 0.001 × scale / 4}. The quarter: the seed's plant
 *     is linear (its latency rises 90 ms from zero to full capacity), a pool in front of a
 *     queueing downstream is not. Its p99 stays near the service time's own p99 up to 80-90 %
 *     utilisation and then rises several ms per task/s, and when the target is not far above the
 *     service time's p99 that knee is where the loop settles. There the full integral gain makes
 *     each one-second step overshoot the knee, and the loop cycles: the rate creeps up, the p99
 *     spikes, the rate falls to the floor. On {@code ClosedLoopBench}'s downstream (simulated,
 *     {@code ClosedLoopSimulation}, 40 seeds, 60 s after the capacity halves) the p99 of the last
 *     30 s was more than 10 % over the target in 29 of 40 runs with the full integral (goodput
 *     129/s) and in 1 of 40 with a quarter of it (157/s); see {@code benchmarks/closedloop.md}. The price is a slower climb after a cut, by
 *     {@code ki × dt × error} per observation.</li>
 * <li>{@code queueCapacity = min(10,000, max(n, ceil(maxRate × 1 s)))}: one second of work at
 *     full speed (the loop's default observe interval), at least one pool's worth ({@code n}),
 *     at most 10,000. A batch the pool could start within a second is queued rather than
 *     refused; beyond that a full queue throws {@link QueueFullException}, so sustained
 *     overload is shed at the door instead of waiting in line. The bound on the wait follows:
 *     a queued task waits at most {@code queueCapacity / rate}, one second at {@code maxRate},
 *     {@code maxRate / rate} seconds once the loop has cut the rate to {@code rate}. (The
 *     constant 10,000 it replaces was minutes of waiting under sustained overload: on the
 *     closed-loop bench, 64 threads at a 60 ms target, whose loop settles near 130/s, an
 *     end-to-end p99 of 30 s; see {@code benchmarks/closedloop.md}.)</li>
 * <li>The pool is sized with {@link PoolSizer#littlesLaw(Duration, int, int)
 *     littlesLaw(W, 1, n)}.</li>
 * </ul>
 * Use {@link PowerFlowExecutor#builder()} for anything else.
 *
 * <p>Thread-safety: the factories may be called from any thread.
 *
 * @since 0.1.0
 */
public final class PowerExecutors {

    /** The seed's reference plant: the defaults' gains fit 400/s at a 30 ms target. */
    private static final double REFERENCE_RATE_PER_MS = 400.0 / 30.0;

    /** The factories' integral gain as a share of the rescaled seed default (see the class description). */
    static final double INTEGRAL_SHARE = 0.25;

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
        double scale = (maxRate / targetMs) / REFERENCE_RATE_PER_MS;
        return b.rate(maxRate).maxRate(maxRate).minRate(maxRate / 100)
                .targetP99(targetMs)
                .kp(0.05 * scale).ki(0.001 * scale * INTEGRAL_SHARE)
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
