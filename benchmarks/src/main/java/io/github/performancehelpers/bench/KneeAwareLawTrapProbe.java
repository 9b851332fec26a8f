package io.github.performancehelpers.bench;

import io.github.performancehelpers.loop.KneeAwareLawTrap;
import java.util.Locale;

/**
 * The knee-aware law's low-rate trap over many seeds: how many climb out of it (the scenario is
 * {@link KneeAwareLawTrap}, in the library's tests).
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.KneeAwareLawTrapProbe -Dtool.args="40 50"} (seeds,
 * starting rate per second). Figures: {@code docs/knee-aware-law.md}, "The low-rate trap".
 */
public final class KneeAwareLawTrapProbe {

    private KneeAwareLawTrapProbe() {
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
            double[] run = KneeAwareLawTrap.run(seed, start);
            escaped += run[0] >= 200 ? 1 : 0;
            sum += run[1];
        }
        System.out.printf(Locale.ROOT, "from %.0f/s: reached 200/s within 120 s in %d of %d seeds; mean rate at 120 s %.0f/s%n",
                start, escaped, seeds, sum / seeds);
    }
}
