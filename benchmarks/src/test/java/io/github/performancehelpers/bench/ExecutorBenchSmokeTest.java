package io.github.performancehelpers.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CI-sized smoke run of the executor benchmarks (issue 8): each bench's logic runs with tiny
 * durations so that it keeps compiling and running. Only the shape of the output is asserted,
 * never a figure: the published figures come from the full runs in benchmarks/executor.md.
 */
class ExecutorBenchSmokeTest {

    /** Every throughput contender completes every task of its batches, trivial and 10 µs. */
    @Test
    void throughputBenchmarkLogicCompletesEveryTask() throws InterruptedException {
        for (String impl : List.of("fixed", "flowFixed", "virtual", "flowVirtual")) {
            for (long work : new long[] {0, 10_000}) {
                assertEquals(2L * 2 * ExecutorThroughputBenchmark.BATCH,
                        ExecutorThroughputBenchmark.smoke(impl, work, 2, 2), impl + " " + work);
            }
        }
    }

    /** The submit-to-start bench produces one row per contender. */
    @Test
    void submitLatencyBenchProducesItsTable() throws InterruptedException {
        List<SubmitLatencyBench.Row> rows = SubmitLatencyBench.run(0.2, 2_000, 2);
        assertEquals(4, rows.size());
        assertTrue(SubmitLatencyBench.table(rows).contains("| flowVirtual |"));
    }

    /** The pacing bench produces one row per rate, each with admissions counted. */
    @Test
    void pacingBenchProducesItsTable() throws InterruptedException {
        List<PacingBench.Row> rows = PacingBench.run(new double[] {100, 10_000}, Duration.ofMillis(100),
                Duration.ofMillis(300));
        assertEquals(2, rows.size());
        assertTrue(rows.get(1).handoffs() > 1, "no admission counted");
        assertTrue(PacingBench.table(rows).contains("| 10,000 |"));
    }

    /** The closed-loop bench runs its four contenders and a constant rate through both phases and tabulates them. */
    @Test
    void closedLoopBenchProducesItsTable() throws Exception {
        ClosedLoopBench.Config config = ClosedLoopBench.Config.standard(2);
        List<ClosedLoopBench.Result> results = ClosedLoopBench.run(config, 100);
        assertEquals(5, results.size());
        String table = ClosedLoopBench.table(config, results);
        for (String name : List.of("fixedPool", "netflix", "flowPool", "flowDefaults", "constant100")) {
            assertTrue(table.contains("| " + name + " |"), name);
        }
    }

    /** The constant-rate probe drives each rate's downstream and reports one p99 per block. */
    @Test
    void constantRateProbeReportsEveryBlock() throws Exception {
        double[][] p = ConstantRateProbe.run(ClosedLoopBench.Config.standard(2), 1, 1, 50, 100);
        assertEquals(2, p.length);
        for (double[] rate : p) {
            assertEquals(1, rate.length);
            assertTrue(rate[0] > 0, "a block saw completions: " + rate[0]);
        }
    }

    /** A block is within ±10 % of the target at 0.9 to 1.1 × it; above is over, and so is a block without a completion. */
    @Test
    void blocksAreJudgedAgainstTheBandAroundTheTarget() {
        String line = ClosedLoopBench.describeBlocks(new double[] {53.9, 54, 66, 66.1, Double.NaN}, 60);
        assertTrue(line.endsWith("| within ±10 %: 2/5, over: 2, under: 1"), line);
    }

    /**
     * A phase long enough for two settled minutes or more gets them tabulated minute by minute;
     * with one (the 120-s phase, whose minute is its "p99 after") or none the table has no such section.
     */
    @Test
    void settledMinutesAreTabulatedWhenThePhaseHoldsTwoOrMore() {
        ClosedLoopBench.Config config = ClosedLoopBench.Config.standard(180);
        String heading = "latency p99 of each 60-s span of phase 2 after its first 60 s, ms:";
        String two = ClosedLoopBench.table(config, List.of(result(new double[] {58, 70})));
        assertTrue(two.contains(heading + "\nflowPool       58.0  70.0 | within ±10 %: 1/2, over: 1, under: 0\n"), two);
        String one = ClosedLoopBench.table(config, List.of(result(new double[] {58})));
        assertFalse(one.contains(heading), one);
        // The bound is on the end-to-end p99 of each settled 10-s block: tabulated beside the run time's.
        assertTrue(one.contains("latency p99 of each 10-s block (end to end) of phase 2 after its first 10 s, ms:\n"
                + "flowPool       62.0 | within ±10 %: 1/1, over: 0, under: 0\n"), one);
        // One pause excused, at the end of the second one-second window.
        assertTrue(one.contains("excused, at the end of which seconds:\nflowPool      1: 2\n"), one);
    }

    private static ClosedLoopBench.Result result(double[] minutes) {
        double[] windows = {50, 60};
        return new ClosedLoopBench.Result("flowPool", 50, 60, 1, 190, 200, 500, 1_000, 70, windows,
                new double[] {210, 215}, new double[] {60}, new double[] {62}, minutes, new long[] {0, 1, -1});
    }
}
