package io.github.performancehelpers.bench;

import io.github.performancehelpers.bench.FlowLoopSimulation.Arm;
import io.github.performancehelpers.bench.FlowLoopSimulation.Config;
import io.github.performancehelpers.bench.FlowLoopSimulation.Result;
import io.github.performancehelpers.bench.FlowLoopSimulation.Tick;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import io.github.performancehelpers.loop.PowerFlowController;

/**
 * The "flowloop" bench: the seed's "premise, measured" table for {@code PowerFlowController},
 * reproduced deterministically on a fake clock (see {@link FlowLoopSimulation} for the plant and
 * the tick), plus the sample-interval sweep, the cold-start climb and an SVG plot.
 *
 * <p>Run:
 * <pre>{@code
 * mvn -q -f benchmarks/pom.xml compile exec:exec@tool -Dtool.main=io.github.performancehelpers.bench.FlowLoopBench
 * mvn -q -f benchmarks/pom.xml compile exec:exec@tool -Dtool.main=io.github.performancehelpers.bench.FlowLoopBench -Dtool.args="path/to/plot.svg"
 * }</pre>
 * The plot goes to {@code target/flowloop.svg} unless a path is given.
 */
public final class FlowLoopBench {

    /** The seed's published table, row for row with {@link FlowLoopSimulation#SEED_ARMS}. */
    static final String[][] SEED_TABLE = {
        {"111.1", "—", "—", "—", "41.7", "71.7", "—"},
        {"41.7", "0.0", "10", "41.7", "0.8", "32.3", "5"},
        {"41.7", "0.0", "7", "40.2", "0.3", "34.5", "1"},
        {"7.1", "34.5", "never", "41.7", "0.0", "33.9", "6"},
        {"5.0", "36.7", "never", "64.6", "0.0", "47.9", "9"},
        {"223.8", "182.1", "never", "440.7", "0.0", "195.8", "12"},
        {"35.8", "5.8", "6", "164.2", "134.4", "86.0", "10"},
        {"5.0", "36.7", "never", "0.0", "0.0", "8.0", "0"},
    };

    private FlowLoopBench() {
    }

    /**
     * Runs the bench.
     *
     * @param args optional: the SVG output path (default {@code target/flowloop.svg})
     * @throws IOException if the plot cannot be written
     */
    public static void main(String[] args) throws IOException {
        Locale.setDefault(Locale.ROOT);
        // Without -Dtool.args the exec plugin passes the property's literal text: treat it as absent.
        boolean given = args.length > 0 && !args[0].isBlank() && !args[0].startsWith("${");
        Path svg = Path.of(given ? args[0] : "target/flowloop.svg");
        PrintStream out = System.out;
        Config c = Config.SEED;

        printHeader(out, c);
        List<Result> results = new ArrayList<>();
        for (Arm arm : FlowLoopSimulation.SEED_ARMS) {
            results.add(FlowLoopSimulation.run(c, arm));
        }
        out.println("PowerFlowController (this library), measured:");
        out.println();
        printTable(out, results, false);
        out.println();
        out.println("The knee-aware law (PowerFlowController.ControlLaw.KNEE_AWARE) on the same plant, next to the seed's default:");
        out.println();
        printTable(out, List.of(results.get(1), FlowLoopSimulation.run(c, Arm.kneeAware())), false);
        out.println();
        out.println("The seed's table (node bench/claims.js flowloop), for comparison:");
        out.println();
        printSeed(out);
        out.println();
        out.println("Reference model: the same plant and column definitions with the seed's own servo rule");
        out.println("(integral contribution clamped to [min - kp*e, max - kp*e]) in closed form, not the library:");
        out.println();
        List<Result> reference = new ArrayList<>();
        for (Arm arm : FlowLoopSimulation.SEED_ARMS) {
            reference.add(FlowLoopSimulation.referenceModel(c, arm));
        }
        printTable(out, reference, true);
        out.println();
        out.println("Pinned at the clamp (library): ticks at minRate or maxRate, and how many of them report saturated=true");
        for (Result r : results) {
            if (r.arm().fixed()) {
                continue;
            }
            int pinned = 0;
            int flagged = 0;
            double lo = Double.POSITIVE_INFINITY;
            double hi = Double.NEGATIVE_INFINITY;
            for (Tick t : r.ticks()) {
                lo = Math.min(lo, t.rateAfter());
                hi = Math.max(hi, t.rateAfter());
                if (t.rateAfter() == c.minRate() || t.rateAfter() == c.maxRate()) {
                    pinned++;
                    if (t.saturated()) {
                        flagged++;
                    }
                }
            }
            out.printf("  %-20s rate range [%.1f, %.1f]  pinned %2d/%d ticks, saturated on %2d of them; shed (dropped) %d%n",
                    r.arm().label(), lo, hi, pinned, r.ticks().size(), flagged, r.dropped());
        }
        out.println();
        out.println("Sample-interval sweep: default gains, cap-400 plant only (no drop), starting at 111.1/s; equilibrium =");
        out.println("mean rate in force over the last 20 s of 120 s simulated (sustainable: 111.1/s); for context, the rate");
        out.println("in force at 20 s and at 30 s (the end of the table's cap-400 half)");
        for (double dt : new double[] {100, 250, 500, 1000, 2000}) {
            out.printf("  dt %6.0f ms   equilibrium %6s/s   at 20 s %6s/s   at 30 s %6s/s%n", dt,
                    f1(FlowLoopSimulation.equilibriumAtDt(c, dt, 120, 20)),
                    f1(FlowLoopSimulation.equilibriumAtDt(c, dt, 20, dt / 1000)),
                    f1(FlowLoopSimulation.equilibriumAtDt(c, dt, 30, dt / 1000)));
        }
        out.println();
        out.println("Cold start: default gains, minRate 5, maxRate 210, one observation per second of 1 ms against 30 ms");
        StringBuilder climb = new StringBuilder("  ");
        double[] cs = FlowLoopSimulation.coldStart(9);
        for (int i = 0; i < cs.length; i++) {
            climb.append(i == 0 ? "" : " → ").append(f1(cs[i]));
        }
        out.println(climb);
        out.println("  seed: 5.0 → 30.4 → 59.5 → 88.5 → 117.5 → 146.4 → 175.4 → 204.4 → 210.0");

        Path parent = svg.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(svg, FlowLoopPlot.render(c, results), StandardCharsets.UTF_8);
        out.println();
        out.println("Plot: " + svg.toAbsolutePath());
    }

    private static void printHeader(PrintStream out, Config c) {
        out.println("flowloop — PowerFlowController on the seed's plant (deterministic, fake clock)");
        out.println();
        out.printf("  plant      latency(rate) = %.0f ms + (rate / cap) × %.0f ms, noise-free; target %.0f ms%n",
                c.baseMs(), c.slopeMs(), c.targetMs());
        out.printf("  run        %d ticks at cap %.0f (equilibrium %.1f/s), then %d ticks at cap %.0f (equilibrium %.1f/s)%n",
                c.ticksPerHalf(), c.capBefore(), c.equilibrium(c.capBefore()), c.ticksPerHalf(), c.capAfter(),
                c.equilibrium(c.capAfter()));
        out.printf("  tick       dt %.0f ms; observe(dt) once per tick; every arm starts at rate %.1f/s; minRate %.0f, maxRate %.0f;%n",
                c.dtMs(), c.initialRate(), c.minRate(), c.maxRate());
        out.printf("             histogram relativeAccuracy %.3g (a window's samples are identical, so its p99 is exact)%n",
                c.relativeAccuracy());
        out.println("  rate       the rate in the latency formula is the controller's rate in force during the tick;");
        out.println("             admission is event-driven on the fake clock (rate × dt admissions per tick, ±1),");
        out.println("             offered load is 2 × maxRate so the queue never runs dry (the excess is shed)");
        out.println();
        out.println("  Columns (ticks are counted from the capacity drop, the drop tick being tick 0):");
        out.println("  Final rate  the rate in force at the end of the run, ops/s");
        out.printf("  Eq. error   |final rate − %.1f| (the cap-150 equilibrium), ops/s%n", c.equilibrium(c.capAfter()));
        out.printf("  Settles     the first tick whose rate in force is within ±%.0f%% of %.1f/s (first entry into the band,%n",
                100 * c.settleBand(), c.equilibrium(c.capAfter()));
        out.println("              not \"stays in it\"); never = not within the run");
        out.println("  Transient   peak p99 above target from the drop through the settle tick (the whole second half");
        out.println("              when it never settles), ms: the unavoidable response to a change not yet observed");
        out.println("  Overshoot   peak p99 above target in the ticks after the settle tick, ms: the controller's own error");
        out.println("              (0 when it never settles; for the fixed arm, the peak over the whole second half)");
        out.println("  p99         mean of the per-tick p99 over the second half (after the drop), ms");
        out.printf("  Reversals   direction changes of the rate over the last %d observations (steps of exactly 0 skipped)%n",
                c.reversalWindow());
        out.println();
    }

    private static final String ROW = "| %-22s | %10s | %9s | %7s | %9s | %9s | %6s | %9s |%n";

    private static void printTable(PrintStream out, List<Result> results, boolean withSeed) {
        out.printf(ROW, "Configuration", "Final rate", "Eq. error", "Settles", "Transient", "Overshoot", "p99",
                "Reversals");
        out.printf("| %s | %s: | %s: | %s: | %s: | %s: | %s: | %s: |%n", "-".repeat(22), "-".repeat(9), "-".repeat(8),
                "-".repeat(6), "-".repeat(8), "-".repeat(8), "-".repeat(5), "-".repeat(8));
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            String[] cells = cells(r);
            if (withSeed) {
                for (int j = 0; j < cells.length; j++) {
                    if (!cells[j].equals(SEED_TABLE[i][j])) {
                        cells[j] = cells[j] + " (" + SEED_TABLE[i][j] + ")";
                    }
                }
            }
            out.printf(ROW, r.arm().label(), cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]);
        }
        if (withSeed) {
            out.println("(a figure in parentheses is the seed's, shown only where the model differs from it)");
        }
    }

    /**
     * The table's cells for one result, formatted as the seed formats them.
     *
     * @param r the result
     * @return final rate, eq. error, settles, transient, overshoot, p99, reversals
     */
    static String[] cells(Result r) {
        boolean fixed = r.arm().fixed();
        return new String[] {
            f1(r.finalRate()),
            fixed ? "—" : f1(r.eqError()),
            fixed ? "—" : r.settles().isPresent() ? Integer.toString(r.settles().getAsInt()) : "never",
            fixed ? "—" : f1(r.transientPeak()),
            f1(r.overshoot()),
            f1(r.meanP99()),
            fixed ? "—" : Integer.toString(r.reversals()),
        };
    }

    private static void printSeed(PrintStream out) {
        out.printf(ROW, "Configuration", "Final rate", "Eq. error", "Settles", "Transient", "Overshoot", "p99",
                "Reversals");
        out.printf("| %s | %s: | %s: | %s: | %s: | %s: | %s: | %s: |%n", "-".repeat(22), "-".repeat(9), "-".repeat(8),
                "-".repeat(6), "-".repeat(8), "-".repeat(8), "-".repeat(5), "-".repeat(8));
        for (int i = 0; i < SEED_TABLE.length; i++) {
            String[] s = SEED_TABLE[i];
            out.printf(ROW, FlowLoopSimulation.SEED_ARMS.get(i).label(), s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
        }
    }

    /**
     * Formats to one decimal by rounding the double's exact binary value (as JavaScript's
     * {@code toFixed} does, so 30.45, stored as 30.4499…, prints as the seed prints it: 30.4).
     *
     * @param v the value
     * @return the formatted value
     */
    static String f1(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        String s = new BigDecimal(v).setScale(1, RoundingMode.HALF_UP).toPlainString();
        return s.equals("-0.0") ? "0.0" : s;
    }
}
