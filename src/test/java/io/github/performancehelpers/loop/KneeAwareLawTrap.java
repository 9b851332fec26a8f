package io.github.performancehelpers.loop;

import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The knee-aware law's low-rate trap ({@code benchmarks/closedloop.md}, "Twelve-minute phases"
 * and "The low-rate trap, fixed"): the law alone, fed windows of lognormal service times (median
 * 15 ms, sigma 0.5, no queueing, so no knee at any rate) at the rate it sets, target p99 60 ms.
 * The first window, at the starting rate, holds one call of 500 ms (a stall). At a low rate three
 * windows hold too few samples for a p99, and their reading is the largest of them. The law
 * before the sparse-reading rule (commit 018fd4d) cut on it, bounded its capacity estimate there,
 * and cut again on every later slow call.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.loop.KneeAwareLawTrapProbe -Dtool.args="40 50"} (seeds,
 * starting rate per second). From 50/s the law reaches 200/s within 120 s in 40 of 40 seeds (the
 * law before: 0 of 40); from 120/s, in 38 of 40 (before: 36 of 40).
 */
public final class KneeAwareLawTrapProbe {

    private KneeAwareLawTrapProbe() {
    }

    /**
     * One seed: the stall at {@code start}, then 120 windows.
     *
     * @param seed  the service-time seed
     * @param start the starting rate, per second
     * @return {the highest rate the law set, the rate after the last window}, per second
     */
    static double[] run(long seed, double start) {
        KneeAwareLaw law = new KneeAwareLaw(60, 0.99, 10.7, 1067);
        PowerHistogram h = PowerHistogram.builder().build();
        SplittableRandom random = new SplittableRandom(seed);
        h.record(500);
        for (int i = 1; i < start; i++) {
            h.record(15);
        }
        double rate = law.step(h.snapshotAndReset(), start, 1.0, 700, 0);
        double highest = rate;
        for (int t = 0; t < 120; t++) {
            for (long i = Math.round(rate); i > 0; i--) {
                h.record(15 * Math.exp(0.5 * random.nextGaussian()));
            }
            rate = law.step(h.snapshotAndReset(), rate, 1.0, 700, 0);
            highest = Math.max(highest, rate);
        }
        return new double[] {highest, rate};
    }

    /**
     * Runs the probe and prints how many seeds climbed out.
     *
     * @param args optional: seeds (default 40), starting rate per second (default 50)
     */
    public static void main(String[] args) {
        int seeds = args.length > 0 && !args[0].startsWith("${") ? Integer.parseInt(args[0]) : 40;
        double start = args.length > 1 ? Double.parseDouble(args[1]) : 50;
        int escaped = 0;
        double sum = 0;
        for (int seed = 0; seed < seeds; seed++) {
            double[] run = run(seed, start);
            escaped += run[0] >= 200 ? 1 : 0;
            sum += run[1];
        }
        System.out.printf(Locale.ROOT, "from %.0f/s: reached 200/s within 120 s in %d of %d seeds; mean rate at 120 s %.0f/s%n",
                start, escaped, seeds, sum / seeds);
    }
}
