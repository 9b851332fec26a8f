package io.github.performancehelpers.loop;

import java.util.SplittableRandom;

/**
 * The knee-aware law's low-rate trap ({@code docs/knee-aware-law.md}, "The low-rate
 * trap"): the law alone, fed windows of lognormal service times (median
 * 15 ms, sigma 0.5, no queueing, so no knee at any rate) at the rate it sets, target p99 60 ms.
 * The first window, at the starting rate, holds one call of 500 ms (a stall). At a low rate three
 * windows hold too few samples for a p99, and their reading is the largest of them. The law
 * before the sparse-reading rule (commit 018fd4d) cut on it, bounded its capacity estimate there,
 * and cut again on every later slow call.
 *
 * <p>The scenario, for {@code KneeAwareLawTest} and for the probe that runs it over many seeds
 * ({@code io.github.performancehelpers.bench.KneeAwareLawTrapProbe} in the benchmarks project:
 * {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.KneeAwareLawTrapProbe -Dtool.args="40 50"}, seeds
 * and starting rate per second). From 50/s the law reaches 200/s within 120 s in 40 of 40 seeds (the
 * law before: 0 of 40); from 120/s, in 38 of 40 (before: 36 of 40).
 */
public final class KneeAwareLawTrap {

    private KneeAwareLawTrap() {
    }

    /**
     * One seed: the stall at {@code start}, then 120 windows.
     *
     * @param seed  the service-time seed
     * @param start the starting rate, per second
     * @return {the highest rate the law set, the rate after the last window}, per second
     */
    public static double[] run(long seed, double start) {
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
}
