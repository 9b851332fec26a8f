package io.github.performancehelpers.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * The noise floor of {@link ClosedLoopBench}'s "p99 within 10 % of target": its phase-2 downstream
 * (4 slots, the same lognormal service times, capacity 235/s) driven at constant rates, with no
 * loop at all. Each rate gets its own downstream and a {@code newFixedThreadPool(64)}, admissions
 * evenly spaced; all rates run at the same time, side by side. The first block is the settling
 * allowance, as in the bench; then the p99 of each block of one-second windows is printed, with how
 * many are within ±10 % of the 60 ms target.
 *
 * <p>A rate that no controller beats by holding it: if no constant rate keeps every block within
 * the band, the band is narrower than the downstream's own block-to-block variation at its knee.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.ConstantRateProbe -Dtool.args="5 200 205 210 215 220 225"}
 * (blocks after the allowance, then the rates).
 */
public final class ConstantRateProbe {

    private ConstantRateProbe() {
    }

    /**
     * Drives one downstream per rate, all at the same time.
     *
     * @param config       the bench's configuration (its phase-2 slots, service time and pool size)
     * @param blockSeconds a block's length, seconds
     * @param blocks       blocks measured after the one-block allowance
     * @param rates        the constant rates, per second
     * @return per rate, the p99 of each measured block, ms
     * @throws InterruptedException if interrupted while the pools finish
     */
    public static double[][] run(ClosedLoopBench.Config config, int blockSeconds, int blocks, double... rates)
            throws InterruptedException {
        int windows = (blocks + 1) * blockSeconds;
        List<ClosedLoopBench.Downstream> downstreams = new ArrayList<>();
        List<ExecutorService> pools = new ArrayList<>();
        ConcurrentHistogram[][] latency = new ConcurrentHistogram[rates.length][windows + 1];
        for (int i = 0; i < rates.length; i++) {
            downstreams.add(new ClosedLoopBench.Downstream(config.slots() / 2, config.medianMs(), config.sigma()));
            pools.add(Executors.newFixedThreadPool(config.threads()));
            for (int w = 0; w <= windows; w++) {
                latency[i][w] = new ConcurrentHistogram(3_600_000_000_000L, 2);
            }
        }
        long start = System.nanoTime();
        long[] sent = new long[rates.length];
        for (;;) {
            long elapsed = System.nanoTime() - start;
            if (elapsed >= windows * 1_000_000_000L) {
                break;
            }
            for (int i = 0; i < rates.length; i++) {
                long due = (long) (elapsed / 1e9 * rates[i]) + 1;
                for (; sent[i] < due; sent[i]++) {
                    ClosedLoopBench.Downstream d = downstreams.get(i);
                    ConcurrentHistogram[] h = latency[i];
                    pools.get(i).execute(() -> {
                        try {
                            long l = d.call();
                            h[(int) Math.min(windows, (System.nanoTime() - start) / 1_000_000_000L)].recordValue(l);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                }
            }
            LockSupport.parkNanos(500_000L);
        }
        for (ExecutorService pool : pools) {
            pool.shutdownNow();
        }
        for (ExecutorService pool : pools) {
            pool.awaitTermination(30, TimeUnit.SECONDS);
        }
        double[][] out = new double[rates.length][];
        for (int i = 0; i < rates.length; i++) {
            out[i] = ClosedLoopBench.blocks(latency[i], blockSeconds, windows, blockSeconds); // after the allowance
        }
        return out;
    }

    /**
     * Runs the probe and prints one line per rate.
     *
     * @param args optional: blocks (default 5), then rates (default 200 205 210 215 220 225)
     * @throws Exception if interrupted
     */
    public static void main(String[] args) throws Exception {
        int blocks = args.length > 0 && !args[0].startsWith("${") ? Integer.parseInt(args[0]) : 5;
        double[] rates = args.length > 1
                ? java.util.Arrays.stream(args, 1, args.length).mapToDouble(Double::parseDouble).toArray()
                : new double[] {200, 205, 210, 215, 220, 225};
        ClosedLoopBench.Config config = ClosedLoopBench.Config.standard(ClosedLoopBench.BLOCK);
        String start = Jmx.machineLine();
        double[][] p = run(config, ClosedLoopBench.BLOCK, blocks, rates);
        System.out.println(start + " (at the start)");
        System.out.println(Jmx.machineLine() + " (at the end)");
        System.out.printf(Locale.ROOT, "constant rates into %d slots (capacity %.0f/s), target %.0f ms; latency p99 of "
                + "each %d-s block after the first, ms:%n", config.slots() / 2, config.capacity(config.slots() / 2),
                config.targetMs(), ClosedLoopBench.BLOCK);
        for (int i = 0; i < rates.length; i++) {
            System.out.printf(Locale.ROOT, "%5.0f/s %s%n", rates[i], ClosedLoopBench.describeBlocks(p[i], config.targetMs()));
        }
    }
}
