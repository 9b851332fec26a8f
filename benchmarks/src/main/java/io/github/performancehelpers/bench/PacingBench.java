package io.github.performancehelpers.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.testsupport.InlineExecutor;

/**
 * Pacing accuracy of {@link PowerFlowExecutor}'s dispatcher: the admitted rate against the
 * configured (fixed) rate, with the queue kept non-empty, and the dispatcher's CPU time.
 *
 * <p>Method. For each rate the executor runs in fixed-rate mode ({@code burst 0}) with a
 * delegate that runs each task inline on the dispatcher and records the instant of each
 * hand-off, so the hand-off instants are exactly the admissions. A platform producer thread tops
 * the queue up every millisecond, so the dispatcher always has work waiting. After a warm-up, the
 * admitted rate over the measured window is {@code (n - 1) / (last - first)} over the n hand-offs
 * in the window (exact at low rates, where counting whole admissions per window would be off by
 * up to one).
 *
 * <p>Dispatcher CPU. The dispatcher is a virtual thread, and {@code ThreadMXBean} cannot see a
 * virtual thread's CPU time. But with the inline delegate it is the only virtual thread in the
 * process, so the CPU time of the virtual-thread scheduler's carrier threads (platform threads
 * named {@code ForkJoinPool-N-worker-M}, which {@code ThreadMXBean} does see) over the window is
 * the dispatcher's CPU time, including running the trivial tasks' wrapper. The process's CPU
 * ({@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime}) and the producer's are
 * printed alongside for context.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.PacingBench -Dtool.args="5"} (the argument is
 * the measured seconds per rate; optional further arguments are the rates).
 */
public final class PacingBench {

    /** The rates of the published table, per second. */
    public static final double[] RATES = {10, 1_000, 10_000, 100_000};

    private static final Runnable NOOP = () -> { };

    private static final long CATCH_UP_NANOS = PowerFlowExecutor.MAX_CATCH_UP.toNanos();

    private PacingBench() {
    }

    /**
     * One row of the table.
     *
     * @param configured     the configured rate, per second
     * @param admitted       the measured admitted rate, per second
     * @param errorPercent   {@code 100 × (admitted − configured) / configured}
     * @param handoffs       admissions in the window
     * @param seconds        the window's length
     * @param dispatcherCpu  the dispatcher's CPU time in the window as a percentage of one core
     * @param processCpu     the whole process's CPU time in the window, percent of one core
     * @param producerCpu    the producer thread's CPU time, percent of one core
     * @param stalls         admissions later (gap minus one interval) than the dispatcher's
     *                       catch-up bound ({@link PowerFlowExecutor#MAX_CATCH_UP}, or two
     *                       intervals below 100/s): the dispatcher was kept off a CPU longer than
     *                       it may catch up
     * @param stallLossPercent the admissions those gaps cost beyond the bound, as a percentage of
     *                       the configured count ({@code rate × excess}): the loss the catch-up
     *                       bound explains
     * @param maxGapMs       the longest gap between consecutive admissions, ms
     */
    public record Row(double configured, double admitted, double errorPercent, long handoffs, double seconds,
            double dispatcherCpu, double processCpu, double producerCpu, long stalls, double stallLossPercent,
            double maxGapMs) {
    }

    /**
     * Measures every rate in turn.
     *
     * @param rates   the rates, per second
     * @param warmup  the time before the window at each rate
     * @param measure the window at each rate
     * @return one row per rate
     * @throws InterruptedException if interrupted
     */
    public static List<Row> run(double[] rates, Duration warmup, Duration measure) throws InterruptedException {
        List<Row> rows = new ArrayList<>();
        for (double rate : rates) {
            rows.add(measure(rate, warmup, measure));
        }
        return rows;
    }

    /** Runs tasks inline and records the hand-off instants inside the window. */
    static final class RecordingDelegate extends InlineExecutor {
        volatile long from = Long.MAX_VALUE;
        volatile long to = Long.MAX_VALUE;
        long count;
        long first;
        long last;
        /** Gaps between consecutive hand-offs longer than the catch-up bound, and their excess. */
        long stalls;
        long stallExcess;
        long maxGap;
        final long intervalNanos;
        final long boundNanos;

        RecordingDelegate(double rate) {
            intervalNanos = (long) (1e9 / rate);
            // the dispatcher's catch-up bound: 20 ms, or two intervals below 100/s
            boundNanos = Math.max(CATCH_UP_NANOS, 2 * intervalNanos);
        }

        @Override
        public void execute(Runnable command) {
            long now = System.nanoTime();
            if (now - from >= 0 && now - to < 0) {
                if (count++ == 0) {
                    first = now;
                } else {
                    long gap = now - last;
                    maxGap = Math.max(maxGap, gap);
                    long lateness = gap - intervalNanos; // how late this admission was
                    if (lateness > boundNanos) {
                        stalls++;
                        stallExcess += lateness - boundNanos;
                    }
                }
                last = now;
            }
            command.run();
        }
    }

    static Row measure(double rate, Duration warmup, Duration measure) throws InterruptedException {
        int capacity = (int) Math.max(64, Math.min(200_000, rate / 5)); // 200 ms of work
        RecordingDelegate delegate = new RecordingDelegate(rate);
        PowerFlowExecutor executor = PowerFlowExecutor.builder().rate(rate).fixedRate(true)
                .queueCapacity(capacity).delegate(delegate).name("pacing-" + (long) rate).build();
        Thread producer = Thread.ofPlatform().name("pacing-producer").daemon().start(() -> {
            while (!executor.isShutdown()) {
                int depth = executor.controller().depth();
                if (depth < capacity / 2) {
                    for (int i = depth; i < capacity; i++) {
                        try {
                            executor.execute(NOOP);
                        } catch (RejectedExecutionException e) {
                            break;
                        }
                    }
                }
                LockSupport.parkNanos(1_000_000L);
            }
        });
        try {
            Thread.sleep(warmup);
            long window = measure.toNanos();
            long start = System.nanoTime();
            Map<Long, Long> carriers0 = Jmx.carrierCpu();
            long process0 = Jmx.processCpuNanos();
            long producer0 = Jmx.threadCpuNanos(producer.threadId());
            delegate.to = start + window;
            delegate.from = start;
            Thread.sleep(Duration.ofNanos(window));
            long wall = System.nanoTime() - start;
            Map<Long, Long> carriers1 = Jmx.carrierCpu();
            long process1 = Jmx.processCpuNanos();
            long producer1 = Jmx.threadCpuNanos(producer.threadId());
            executor.shutdownNow();
            if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("executor did not terminate");
            }
            long dispatcherNanos = 0;
            for (Map.Entry<Long, Long> e : carriers1.entrySet()) {
                dispatcherNanos += e.getValue() - carriers0.getOrDefault(e.getKey(), 0L);
            }
            long n = delegate.count;
            double admitted = n > 1 ? (n - 1) * 1e9 / (delegate.last - delegate.first) : Double.NaN;
            return new Row(rate, admitted, 100 * (admitted - rate) / rate, n, wall / 1e9,
                    100.0 * dispatcherNanos / wall, 100.0 * (process1 - process0) / wall,
                    100.0 * (producer1 - producer0) / wall, delegate.stalls,
                    100.0 * delegate.stallExcess / (delegate.last - delegate.first), delegate.maxGap / 1e6);
        } finally {
            executor.shutdownNow();
            producer.join();
        }
    }

    /**
     * Formats the rows as a markdown table.
     *
     * @param rows the rows
     * @return the table
     */
    public static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("| configured /s | admitted /s | error | admissions | window s | dispatcher CPU (% of a core) "
                + "| process CPU % | producer CPU % | stalls beyond catch-up bound | loss they explain | longest gap ms |\n");
        sb.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "| %,.0f | %,.2f | %+.3f%% | %,d | %.2f | %.1f | %.1f | %.1f | %d | %.3f%% | %.1f |%n",
                    r.configured(), r.admitted(), r.errorPercent(), r.handoffs(), r.seconds(),
                    r.dispatcherCpu(), r.processCpu(), r.producerCpu(), r.stalls(), r.stallLossPercent(),
                    r.maxGapMs()));
        }
        return sb.toString();
    }

    /**
     * Prints the table.
     *
     * @param args optional: the measured seconds per rate (default 5), then the rates
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        double seconds = 5;
        double[] rates = RATES;
        if (args.length > 0 && !args[0].startsWith("${")) {
            seconds = Double.parseDouble(args[0]);
            if (args.length > 1) {
                rates = new double[args.length - 1];
                for (int i = 1; i < args.length; i++) {
                    rates[i - 1] = Double.parseDouble(args[i]);
                }
            }
        }
        List<Row> rows = run(rates, Duration.ofMillis(1000), Duration.ofMillis((long) (seconds * 1000)));
        System.out.println(Jmx.machineLine());
        System.out.print(table(rows));
    }
}
