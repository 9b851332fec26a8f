package io.github.performancehelpers.bench;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Recording;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.metrics.InMemoryMetricsCollector;
import io.github.performancehelpers.metrics.MetricsCollector;

/**
 * Observability off against on, side by side: does publishing slow the hot path?
 *
 * <ul>
 *   <li>{@code executorSubmitRun}: submit a batch of {@value #BATCH} no-op tasks to a
 *       {@link PowerFlowExecutor} (rate far above what the machine can do, observing every
 *       100 ms) and wait until all have run; the score is tasks per microsecond.</li>
 *   <li>{@code controllerSubmitAdmitRecord}: one {@link PowerFlowController} item through
 *       submit, admit and record, on one thread, while a scheduled thread observes every 100 ms.</li>
 * </ul>
 * {@code on} = metrics registered in a collector, the MXBean registered in the platform MBean
 * server, and a JFR recording running with the library's four events enabled; a reader thread
 * scrapes the collector and the MBean every 100 ms (a very aggressive scrape). {@code off} =
 * none of these (the loop still observes).
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="ObservabilityBenchmark -f 1 -wi 3
 * -w 1 -i 5 -r 1"}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ObservabilityBenchmark {

    static final int BATCH = 1000;
    private static final AtomicInteger RUN = new AtomicInteger();

    /** Whether observability is on. */
    @Param({"off", "on"})
    public String observability;

    private PowerFlowExecutor executor;
    private PowerFlowController<Integer> controller;
    private ScheduledExecutorService side;
    private Recording recording;
    private final AtomicLong done = new AtomicLong();
    private final Runnable task = done::incrementAndGet;
    private final Integer item = 1;
    private volatile Object sink;

    @Setup
    public void setUp() {
        boolean on = observability.equals("on");
        String name = "bench-" + RUN.incrementAndGet();
        InMemoryMetricsCollector collector = MetricsCollector.inMemory();
        PowerFlowExecutor.Builder eb = PowerFlowExecutor.builder().name(name).rate(1e7).minRate(1e6).maxRate(1e8)
                .targetP99(50).queueCapacity(4 * BATCH).observeInterval(Duration.ofMillis(100));
        PowerFlowController.Builder<Integer> cb = PowerFlowController.<Integer>builder().name(name + "-ctl")
                .rate(1e9).burst(1e6).minRate(1e6).maxRate(1e10).queueCapacity(1024);
        if (on) {
            eb.observability(collector).jmx(true);
            cb.observability(collector).jmx(true);
            recording = new Recording();
            for (String e : new String[] {"Observation", "RateChange", "Drops", "StaleLoop"}) {
                recording.enable("io.github.performancehelpers." + e);
            }
            recording.setToDisk(true);
            recording.start();
        }
        executor = eb.build();
        controller = cb.build();
        side = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "bench-side");
            t.setDaemon(true);
            return t;
        });
        side.scheduleAtFixedRate(() -> controller.observe(100), 100, 100, TimeUnit.MILLISECONDS);
        if (on) {
            side.scheduleAtFixedRate(() -> {
                Map<String, Number> s = collector.snapshot();
                sink = s;
                sink = executor.isStale();
            }, 100, 100, TimeUnit.MILLISECONDS);
        }
    }

    @TearDown
    public void tearDown() throws InterruptedException {
        executor.close();
        controller.close();
        side.shutdownNow();
        side.awaitTermination(10, TimeUnit.SECONDS);
        if (recording != null) {
            recording.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long executorSubmitRun() {
        long target = done.get() + BATCH;
        for (int i = 0; i < BATCH; i++) {
            executor.execute(task);
        }
        while (done.get() < target) {
            Thread.yield();
        }
        return target;
    }

    @Benchmark
    public Optional<Integer> controllerSubmitAdmitRecord() {
        controller.submit(item);
        Optional<Integer> out = controller.admit();
        controller.record(0.5);
        return out;
    }
}
