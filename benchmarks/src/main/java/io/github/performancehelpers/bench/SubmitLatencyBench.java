package io.github.performancehelpers.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * Submit-to-start latency at a moderate rate: one platform thread submits trivial tasks at a
 * steady {@code rate} (due times {@code i / rate}, several per wake-up if it woke late) to each
 * contender of {@link ExecutorThroughputBenchmark} in turn (the flow executors with their limiter
 * effectively unlimited), and each task records {@code System.nanoTime()} at its start minus its
 * submit instant. Sequential, so the contenders do not share the two cores.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.SubmitLatencyBench -Dtool.args="5 10000"}
 * (seconds per contender, tasks per second).
 */
public final class SubmitLatencyBench {

    private SubmitLatencyBench() {
    }

    /**
     * One contender's figures.
     *
     * @param impl  the contender
     * @param tasks tasks measured
     * @param p50   submit-to-start median, µs
     * @param p99   submit-to-start p99, µs
     * @param p999  submit-to-start p99.9, µs
     * @param max   submit-to-start maximum, µs
     */
    public record Row(String impl, long tasks, double p50, double p99, double p999, double max) {
    }

    /**
     * Measures every contender in turn.
     *
     * @param seconds  measured seconds per contender (after a warm-up of a quarter of that)
     * @param rate     submissions per second
     * @param poolSize the fixed pools' size
     * @return one row per contender
     * @throws InterruptedException if interrupted
     */
    public static List<Row> run(double seconds, double rate, int poolSize) throws InterruptedException {
        List<Row> rows = new ArrayList<>();
        for (String impl : List.of("fixed", "flowFixed", "virtual", "flowVirtual")) {
            ExecutorService e = ExecutorThroughputBenchmark.create(impl, poolSize);
            try {
                drive(e, seconds / 4, rate, null);
                ConcurrentHistogram h = new ConcurrentHistogram(60_000_000_000L, 2);
                drive(e, seconds, rate, h);
                rows.add(new Row(impl, h.getTotalCount(), h.getValueAtPercentile(50) / 1e3,
                        h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3, h.getMaxValue() / 1e3));
            } finally {
                e.shutdown();
                e.awaitTermination(30, TimeUnit.SECONDS);
            }
        }
        return rows;
    }

    private static void drive(ExecutorService e, double seconds, double rate, ConcurrentHistogram h)
            throws InterruptedException {
        long start = System.nanoTime();
        long n = (long) (seconds * rate);
        for (long i = 0; i < n; i++) {
            long due = start + (long) (i * 1e9 / rate);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            long submitted = System.nanoTime();
            e.execute(() -> {
                long started = System.nanoTime();
                if (h != null) {
                    h.recordValue(Math.max(0, started - submitted));
                }
            });
        }
        // let the last tasks start before the histogram is read
        Thread.sleep(50);
    }

    /**
     * Formats the rows as a markdown table.
     *
     * @param rows the rows
     * @return the table
     */
    public static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("| executor | tasks | p50 µs | p99 µs | p99.9 µs | max µs |\n|---|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "| %s | %,d | %.1f | %.1f | %.1f | %.0f |%n",
                    r.impl(), r.tasks(), r.p50(), r.p99(), r.p999(), r.max()));
        }
        return sb.toString();
    }

    /**
     * Prints the table.
     *
     * @param args optional: seconds per contender (default 5), tasks per second (default 10,000)
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        boolean given = args.length > 0 && !args[0].startsWith("${");
        double seconds = given ? Double.parseDouble(args[0]) : 5;
        double rate = given && args.length > 1 ? Double.parseDouble(args[1]) : 10_000;
        List<Row> rows = run(seconds, rate, 2);
        System.out.println(Jmx.machineLine() + String.format(Locale.ROOT, "; %.0f tasks/s, pools of 2", rate));
        System.out.print(table(rows));
    }
}
