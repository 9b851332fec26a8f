package io.github.performancehelpers.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import io.github.performancehelpers.PowerFlowExecutor;

/**
 * Completed tasks per second through {@link PowerFlowExecutor} with its limiter effectively
 * unlimited (fixed rate 10^9/s, burst 10^6, so the loop and the pacing never bind), against
 * {@code Executors.newFixedThreadPool} of the same size and
 * {@code Executors.newVirtualThreadPerTaskExecutor}, side by side in one run.
 *
 * <p>Each invocation submits a batch of {@link #BATCH} tasks from the benchmark thread and waits
 * (a {@link CountDownLatch}) until all of them have run, so the score counts completed tasks
 * ({@code @OperationsPerInvocation(BATCH)}: the score and {@code gc.alloc.rate.norm} are per
 * task). The flow executors' queue holds every batch of every submitting thread, so nothing is
 * refused; the {@code rejected} counter (a refusal is retried) shows it stayed at 0.
 *
 * <ul>
 * <li>{@code impl}: {@code fixed} ({@code newFixedThreadPool(poolSize)}), {@code flowFixed}
 *     (PowerFlowExecutor in front of its own {@code newFixedThreadPool(poolSize)}, which it bounds
 *     to {@code poolSize} tasks in flight), {@code virtual}
 *     ({@code newVirtualThreadPerTaskExecutor}), {@code flowVirtual} (PowerFlowExecutor's default
 *     delegate: a virtual thread per task under its concurrency bound, here 10,000).</li>
 * <li>{@code workNanos}: 0 (a trivial task: count down the latch) or 10,000 (spin 10 µs of wall
 *     time, then count down).</li>
 * <li>{@code t1}/{@code t2}/{@code t8}: 1, 2 or 8 submitting threads, each with its own batch.</li>
 * </ul>
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="ExecutorThroughputBenchmark -f 1
 * -wi 2 -w 1 -i 3 -r 1 -prof gc"}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ExecutorThroughputBenchmark {

    /** Tasks per batch per submitting thread. */
    public static final int BATCH = 1000;

    /** The executor under test. */
    @Param({"fixed", "flowFixed", "virtual", "flowVirtual"})
    public String impl;

    /** Each task's work: 0 (trivial) or a spin of this many nanoseconds. */
    @Param({"0", "10000"})
    public long workNanos;

    /** The fixed pools' size (both the plain one and the flow executor's delegate). */
    @Param({"2"})
    public int poolSize;

    private ExecutorService executor;

    /** Creates the executor under test. */
    @Setup(Level.Trial)
    public void setUp() {
        executor = create(impl, poolSize);
    }

    /** Shuts the executor down and waits for it. */
    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        executor.shutdown();
        if (!executor.awaitTermination(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(impl + " did not terminate");
        }
    }

    /**
     * Creates one contender.
     *
     * @param impl     {@code fixed}, {@code flowFixed}, {@code virtual} or {@code flowVirtual}; or
     *                 {@code virtualWrapped} (a calibration for {@link ExecutorRatio}, see {@link Wrapping})
     * @param poolSize the fixed pools' size
     * @return a started executor
     */
    public static ExecutorService create(String impl, int poolSize) {
        return switch (impl) {
            case "fixed" -> Executors.newFixedThreadPool(poolSize);
            case "virtual" -> Executors.newVirtualThreadPerTaskExecutor();
            case "flowFixed" -> unlimited().delegate(Executors.newFixedThreadPool(poolSize))
                    .ownsDelegate(true).build();
            case "flowVirtual" -> unlimited().build();
            case "virtualWrapped" -> new Wrapping(Executors.newVirtualThreadPerTaskExecutor());
            default -> throw new IllegalArgumentException("impl: " + impl);
        };
    }

    /**
     * A calibration, not a contender: {@code newVirtualThreadPerTaskExecutor} given each task in a
     * wrapper of its own, the one small object per task the issue allows over that executor.
     * What a wrapper costs there (its allocation, and the carrier reading a line the submitter
     * wrote) bounds from below what any executor that tracks its tasks can reach.
     */
    static final class Wrapping extends java.util.concurrent.AbstractExecutorService {
        private final ExecutorService inner;

        Wrapping(ExecutorService inner) {
            this.inner = inner;
        }

        /** The wrapper: a final field written by the submitter, read by the task's thread. */
        private record Wrapped(Runnable task) implements Runnable {
            @Override
            public void run() {
                task.run();
            }
        }

        @Override
        public void execute(Runnable command) {
            inner.execute(new Wrapped(command));
        }

        @Override
        public void shutdown() {
            inner.shutdown();
        }

        @Override
        public List<Runnable> shutdownNow() {
            return inner.shutdownNow();
        }

        @Override
        public boolean isShutdown() {
            return inner.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return inner.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return inner.awaitTermination(timeout, unit);
        }
    }

    /** A flow executor whose limiter never binds and whose queue holds 8 threads' batches. */
    static PowerFlowExecutor.Builder unlimited() {
        return PowerFlowExecutor.builder().rate(1e9).maxRate(1e9).burst(1e6).fixedRate(true)
                .queueCapacity(16 * BATCH);
    }

    /** Refusals seen by the submitting threads (each is retried); expected 0. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Counters {
        /** Submissions refused (and retried). */
        public long rejected;
    }

    /** One submitting thread's batch: a reusable task and the latch it counts down. */
    @State(Scope.Thread)
    public static class Batch {
        volatile CountDownLatch latch;
        long workNanos;
        final Runnable task = () -> {
            long w = workNanos;
            if (w > 0) {
                spin(w);
            }
            latch.countDown();
        };

        /** Reads the work size. */
        @Setup(Level.Trial)
        public void setUp(ExecutorThroughputBenchmark b) {
            workNanos = b.workNanos;
        }
    }

    /** Spins for about {@code nanos} of wall time. */
    static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    /**
     * Submits one batch and waits for every task in it to complete.
     *
     * @param executor the executor
     * @param batch    the submitting thread's batch
     * @param rejected counts refusals (retried after a yield)
     * @throws InterruptedException if interrupted while waiting
     */
    public static void runBatch(ExecutorService executor, Batch batch, AtomicLong rejected) throws InterruptedException {
        CountDownLatch latch = new CountDownLatch(BATCH);
        batch.latch = latch;
        Runnable task = batch.task;
        for (int i = 0; i < BATCH; i++) {
            for (;;) {
                try {
                    executor.execute(task);
                    break;
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    rejected.incrementAndGet();
                    Thread.yield();
                }
            }
        }
        latch.await();
    }

    /**
     * Runs {@code batches} batches from each of {@code threads} plain threads outside JMH: the
     * CI smoke run of this benchmark's logic (no figure from it is meaningful).
     *
     * @param impl      the contender, as for {@link #create(String, int)}
     * @param workNanos each task's spin
     * @param threads   submitting threads
     * @param batches   batches per thread
     * @return tasks completed
     * @throws InterruptedException if interrupted
     */
    public static long smoke(String impl, long workNanos, int threads, int batches) throws InterruptedException {
        ExecutorService executor = create(impl, 2);
        AtomicLong rejected = new AtomicLong();
        AtomicLong done = new AtomicLong();
        try {
            List<Thread> submitters = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Batch batch = new Batch();
                batch.workNanos = workNanos;
                submitters.add(Thread.ofPlatform().start(() -> {
                    try {
                        for (int i = 0; i < batches; i++) {
                            runBatch(executor, batch, rejected);
                            done.addAndGet(BATCH);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
            for (Thread t : submitters) {
                t.join();
            }
        } finally {
            executor.shutdown();
            executor.awaitTermination(30, TimeUnit.SECONDS);
        }
        return done.get();
    }

    private final AtomicLong rejectedTotal = new AtomicLong();

    private void batch(Batch batch, Counters counters) throws InterruptedException {
        long before = rejectedTotal.get();
        runBatch(executor, batch, rejectedTotal);
        counters.rejected += rejectedTotal.get() - before;
    }

    /**
     * One submitting thread.
     *
     * @param batch    the thread's batch
     * @param counters the refusal counter
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    @Threads(1)
    @OperationsPerInvocation(BATCH)
    public void t1(Batch batch, Counters counters) throws InterruptedException {
        batch(batch, counters);
    }

    /**
     * Two submitting threads.
     *
     * @param batch    the thread's batch
     * @param counters the refusal counter
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    @Threads(2)
    @OperationsPerInvocation(BATCH)
    public void t2(Batch batch, Counters counters) throws InterruptedException {
        batch(batch, counters);
    }

    /**
     * Eight submitting threads.
     *
     * @param batch    the thread's batch
     * @param counters the refusal counter
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    @Threads(8)
    @OperationsPerInvocation(BATCH)
    public void t8(Batch batch, Counters counters) throws InterruptedException {
        batch(batch, counters);
    }
}
