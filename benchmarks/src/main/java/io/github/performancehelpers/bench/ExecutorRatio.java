package io.github.performancehelpers.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The throughput of one executor against another's, in alternating JVMs: a fresh JVM runs one
 * contender ({@link ExecutorThroughputBenchmark#runBatch} from the given submitting threads,
 * warm-up first), the next JVM the other, and so on; each pair of neighbouring runs gives a
 * ratio, and the tool prints the median ratio and its quartiles.
 *
 * <p>Why not JMH alone: on this machine (two shared cores) the speed drifts by a factor of up to
 * two from one minute to the next, and JMH runs every fork of one contender before the next
 * contender's, so two of its scores a minute apart differ by more than the contenders do.
 * Alternating runs a few seconds long puts both contenders in the same minute, many times over.
 * One JVM per run, not both contenders in one JVM: there the shared JDK code (the virtual-thread
 * start, the task's {@code run()} call) is compiled for both contenders' types at once, which
 * slowed the plain {@code newVirtualThreadPerTaskExecutor} by about a fifth.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.ExecutorRatio
 * -Dtool.args="flowVirtual virtual 0 2 10"} (contender, baseline, work ns, submitting threads,
 * pairs of runs). Each run is 3.2 M tasks after 2.5 s of warm-up.
 */
public final class ExecutorRatio {

    /** Tasks per run, in batches of {@link ExecutorThroughputBenchmark#BATCH}. */
    private static final int RUN_BATCHES = 3200;
    /**
     * The warm-up, long enough for the compiler and for two of a flow executor's one-second
     * windows (its virtual delegate times only some tasks once a window has seen many).
     */
    private static final long WARMUP_NANOS = 2_500_000_000L;

    private ExecutorRatio() {
    }

    /**
     * @param args contender, baseline (as {@link ExecutorThroughputBenchmark#create}), work ns,
     *             submitting threads, pairs of runs; or {@code --one impl work threads} (a child
     *             run, which prints its tasks per second)
     * @throws Exception if a run fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--one")) {
            System.out.println("RATE " + one(args[1], Long.parseLong(args[2]), Integer.parseInt(args[3])));
            return;
        }
        String a = args.length > 0 ? args[0] : "flowVirtual";
        String b = args.length > 1 ? args[1] : "virtual";
        String work = args.length > 2 ? args[2] : "0";
        String threads = args.length > 3 ? args[3] : "2";
        int pairs = args.length > 4 ? Integer.parseInt(args[4]) : 10;
        double[] ra = new double[pairs];
        double[] rb = new double[pairs];
        double[] ratio = new double[pairs];
        for (int p = 0; p < pairs; p++) {
            // Alternate which runs first, so a drift within a pair favours neither.
            if ((p & 1) == 0) {
                ra[p] = child(a, work, threads);
                rb[p] = child(b, work, threads);
            } else {
                rb[p] = child(b, work, threads);
                ra[p] = child(a, work, threads);
            }
            ratio[p] = ra[p] / rb[p];
            System.out.printf("  pair %d: %s %.2f M/s, %s %.2f M/s, ratio %.3f%n", p + 1, a, ra[p] / 1e6, b, rb[p] / 1e6, ratio[p]);
        }
        System.out.printf("%s / %s, work %s ns, %s submitters, %d pairs of JVMs: median ratio %.3f"
                + " (quartiles %.3f-%.3f); median %s %.2f M/s, %s %.2f M/s%n",
                a, b, work, threads, pairs, quantile(ratio, 0.5), quantile(ratio, 0.25), quantile(ratio, 0.75),
                a, quantile(ra, 0.5) / 1e6, b, quantile(rb, 0.5) / 1e6);
    }

    /** Runs one contender in a fresh JVM (this one's java and class path) and returns its tasks/s. */
    private static double child(String impl, String work, String threads) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                ExecutorRatio.class.getName(), "--one", impl, work, threads));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        double rate = Double.NaN;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith("RATE ")) {
                    rate = Double.parseDouble(line.substring(5));
                } else {
                    System.err.println(line);
                }
            }
        }
        if (p.waitFor() != 0 || Double.isNaN(rate)) {
            throw new IllegalStateException("the run of " + impl + " failed (exit " + p.exitValue() + ")");
        }
        return rate;
    }

    /** One contender's tasks per second, after a warm-up, in this JVM. */
    private static double one(String impl, long work, int threads) throws InterruptedException {
        ExecutorService e = ExecutorThroughputBenchmark.create(impl, 2);
        try {
            for (long end = System.nanoTime() + WARMUP_NANOS; System.nanoTime() - end < 0; ) {
                rate(e, work, threads, 100 / threads);
            }
            return rate(e, work, threads, RUN_BATCHES / threads);
        } finally {
            e.shutdown();
            if (!e.awaitTermination(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(impl + " did not terminate");
            }
        }
    }

    /** Tasks per second over {@code batches} batches from each of {@code threads} submitters. */
    private static double rate(ExecutorService e, long work, int threads, int batches) throws InterruptedException {
        AtomicLong rejected = new AtomicLong();
        Thread[] ts = new Thread[threads];
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            ExecutorThroughputBenchmark.Batch batch = new ExecutorThroughputBenchmark.Batch();
            batch.workNanos = work;
            ts[t] = Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < batches; i++) {
                        ExecutorThroughputBenchmark.runBatch(e, batch, rejected);
                    }
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        for (Thread t : ts) {
            t.join();
        }
        long ns = System.nanoTime() - start;
        return (double) threads * batches * ExecutorThroughputBenchmark.BATCH / (ns / 1e9);
    }

    private static double quantile(double[] xs, double q) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[(int) Math.round(q * (s.length - 1))];
    }
}
