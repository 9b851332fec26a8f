package io.github.performancehelpers.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.github.performancehelpers.bench.FlowLoopSimulation.Arm;
import io.github.performancehelpers.bench.FlowLoopSimulation.Config;
import io.github.performancehelpers.bench.FlowLoopSimulation.Result;
import io.github.performancehelpers.bench.FlowLoopSimulation.Tick;
import java.util.List;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.loop.PowerFlowController;

/**
 * The claims of the seed's "The premise, measured" and "The cold start" sections, on the flowloop
 * simulation ({@link FlowLoopSimulation}: the seed's plant on a fake clock, driving the real
 * {@link PowerFlowController}). Deterministic; no timing is asserted.
 */
class FlowLoopBenchTest {

    private static final Config SEED = Config.SEED;
    private static final double EQ_AFTER = 150.0 * 25 / 90; // 41.67/s

    private static Result run(String label) {
        for (Arm arm : FlowLoopSimulation.SEED_ARMS) {
            if (arm.label().equals(label)) {
                return FlowLoopSimulation.run(SEED, arm);
            }
        }
        throw new AssertionError("no arm " + label);
    }

    /** The plant's closed form gives the seed's equilibria: 111.1/s at cap 400 and 41.7/s at cap 150. */
    @Test
    void plantEquilibriaAreTheSeeds() {
        assertEquals(111.1, SEED.equilibrium(400), 0.05);
        assertEquals(41.7, SEED.equilibrium(150), 0.05);
        assertEquals(30.0, SEED.latency(SEED.equilibrium(150), 150), 1e-9);
    }

    /** A fixed rate at the old equilibrium sits at 71.7 ms p99 after the capacity drop, 2.4× the target, and stays there. */
    @Test
    void fixedArmSitsAt71point7AfterTheStep() {
        Result fixed = run("fixed, no feedback");
        for (Tick t : fixed.afterDrop()) {
            assertEquals(71.7, t.p99(), 0.05, "tick " + t.index());
            assertEquals(111.1, t.rateBefore(), 0.05);
        }
        assertEquals(71.7, fixed.meanP99(), 0.05);
        assertEquals(2.4, fixed.meanP99() / SEED.targetMs(), 0.05);
        assertEquals(41.7, fixed.overshoot(), 0.05);
    }

    /** The default gains (kp 0.05, ki 0.001) reach the new 41.7/s equilibrium within 0.1 and settle. */
    @Test
    void defaultArmReachesTheNewEquilibriumAndSettles() {
        Result r = run("kp 0.05, ki 0.001");
        assertEquals(41.7, r.finalRate(), 0.05);
        assertTrue(r.eqError() < 0.1, "eq. error " + r.eqError());
        assertTrue(r.settles().isPresent(), "never settled");
        // Every arm that reaches its equilibrium beats the fixed rate's 71.7 ms.
        assertTrue(r.meanP99() < 71.7, "mean p99 " + r.meanP99());
    }

    /** kp 0.1, ki 0.0005 also reaches 41.7/s within 0.1 and settles. */
    @Test
    void slowIntegralArmReachesTheNewEquilibriumAndSettles() {
        Result r = run("kp 0.1, ki 0.0005");
        assertEquals(41.7, r.finalRate(), 0.05);
        assertTrue(r.eqError() < 0.1, "eq. error " + r.eqError());
        assertTrue(r.settles().isPresent(), "never settled");
    }

    /** With ki 0 the rate ends at the 5.0/s floor, 12% of the sustainable 41.7/s, and the servo reports the clamp. */
    @Test
    void proportionalOnlyEndsAtTheFloor() {
        Result r = run("ki 0 (P only)");
        assertEquals(5.0, r.finalRate(), 1e-9);
        assertEquals(36.7, r.eqError(), 0.05);
        assertEquals(0.12, r.finalRate() / EQ_AFTER, 0.005);
        Tick last = r.ticks().get(r.ticks().size() - 1);
        assertTrue(last.saturated(), "pinned at minRate but not saturated");
        assertTrue(r.settles().isEmpty());
    }

    /** Every unstable tuning stays inside [minRate, maxRate], and whenever it is pinned at a bound the loop reports saturated. */
    @Test
    void unstableArmsStayBoundedByTheClampAndReportSaturation() {
        for (String label : List.of("kp 0.1, ki 0.002", "kp 0.2, ki 0.004", "kp 0.5, ki 0.05", "kp 0.2, ki 0.01")) {
            Result r = run(label);
            int pinned = 0;
            for (Tick t : r.ticks()) {
                assertTrue(t.rateAfter() >= SEED.minRate() && t.rateAfter() <= SEED.maxRate(),
                        label + " left the clamp at tick " + t.index() + ": " + t.rateAfter());
                if (t.rateAfter() == SEED.minRate() || t.rateAfter() == SEED.maxRate()) {
                    pinned++;
                    assertTrue(t.saturated(), label + " pinned at " + t.rateAfter() + " on tick " + t.index()
                            + " without saturated");
                }
            }
            assertTrue(pinned > 0, label + " was never pinned, so it is not the unstable arm the seed describes");
        }
    }

    /** The integral dominates at steady state: the equilibrium is 108–111/s for every dt from 100 ms to 2000 ms on the cap-400 plant. */
    @Test
    void equilibriumIsRobustToTheSampleInterval() {
        for (double dt : new double[] {100, 250, 500, 1000, 2000}) {
            double eq = FlowLoopSimulation.equilibriumAtDt(SEED, dt, 120, 20);
            // 111.1/s is the exact ceiling; the seed rounds the band's top to 111.
            assertTrue(eq >= 108 && eq <= 111.15, "dt " + dt + " ms: " + eq);
        }
    }

    /** The seed's cold start at maxRate 210: 5.0 → 30.4 → 59.5 → 88.5 → 117.5 → 146.4 → 175.4 → 204.4 → 210.0. */
    @Test
    void coldStartClimbsAsTheSeedMeasured() {
        double[] seed = {5.0, 30.4, 59.5, 88.5, 117.5, 146.4, 175.4, 204.4, 210.0};
        double[] climb = FlowLoopSimulation.coldStart(seed.length);
        for (int i = 0; i < seed.length; i++) {
            assertEquals(seed[i], climb[i], 0.051, "observation " + (i + 1));
        }
    }

    /** The first observation after a cold start can only produce kp × error (1.45), which the floor turns into 5.0. */
    @Test
    void coldStartFirstObservationIsTheFloor() {
        assertEquals(5.0, FlowLoopSimulation.coldStart(1)[0], 1e-9);
    }

    /** Event-driven admission on the fake clock admits rate × dt operations per tick (±1), so the plant sees the rate in force. */
    @Test
    void eachTickAdmitsTheRateInForce() {
        Result r = run("kp 0.05, ki 0.001");
        for (Tick t : r.ticks()) {
            double expected = t.rateBefore() * SEED.dtMs() / 1000;
            assertEquals(expected, t.admitted(), 1.0 + 1e-9, "tick " + t.index());
        }
    }

    /** The simulation is deterministic: two runs of an arm produce the same ticks. */
    @Test
    void runsAreDeterministic() {
        Arm arm = FlowLoopSimulation.SEED_ARMS.get(5);
        assertEquals(FlowLoopSimulation.run(SEED, arm).ticks(), FlowLoopSimulation.run(SEED, arm).ticks());
    }

    /**
     * The column definitions are the seed's: on a closed-form model of the seed's own servo (integral
     * contribution clamped to the output bounds), the bench's columns reproduce the seed's table cell
     * for cell (one transient differs by 0.1 ms: 64.5 against 64.6).
     */
    @Test
    void columnDefinitionsReproduceTheSeedTableOnTheSeedServoModel() {
        String[][] expected = {
            {"111.1", null, null, null, "41.7", "71.7", null},
            {"41.7", "0.0", "10", "41.7", "0.8", "32.3", "5"},
            {"41.7", "0.0", "7", "40.2", "0.3", "34.5", "1"},
            {"7.1", "34.5", "never", "41.7", "0.0", "33.9", "6"},
            {"5.0", "36.7", "never", "64.5", "0.0", "47.9", "9"}, // seed: transient 64.6
            {"223.8", "182.1", "never", "440.7", "0.0", "195.8", "12"},
            {"35.8", "5.8", "6", "164.2", "134.4", "86.0", "10"},
            {"5.0", "36.7", "never", "0.0", "0.0", "8.0", "0"},
        };
        for (int i = 0; i < expected.length; i++) {
            Result r = FlowLoopSimulation.referenceModel(SEED, FlowLoopSimulation.SEED_ARMS.get(i));
            String settles = r.settles().isPresent() ? Integer.toString(r.settles().getAsInt()) : "never";
            String[] got = {f1(r.finalRate()), f1(r.eqError()), settles, f1(r.transientPeak()), f1(r.overshoot()),
                f1(r.meanP99()), Integer.toString(r.reversals())};
            for (int j = 0; j < got.length; j++) {
                if (expected[i][j] != null) {
                    assertEquals(expected[i][j], got[j], r.arm().label() + " column " + j);
                }
            }
        }
    }

    /** One decimal, rounding the double's exact binary value as the seed's JavaScript toFixed does. */
    private static String f1(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        return new java.math.BigDecimal(v).setScale(1, java.math.RoundingMode.HALF_UP).toPlainString();
    }
}
