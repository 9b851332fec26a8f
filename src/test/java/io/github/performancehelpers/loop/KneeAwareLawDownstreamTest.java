package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import io.github.performancehelpers.loop.PowerFlowController.ControlLaw;
import io.github.performancehelpers.testsupport.FakeTicker;
import org.junit.jupiter.api.Test;

/**
 * The knee-aware law against modelled downstreams, on a {@link FakeTicker}, one-second windows:
 * the executor's open rate (the cut starts from the flow), a target the rate cannot reach (a tail
 * the load does not set), and the climb back after a capacity step.
 */
class KneeAwareLawDownstreamTest {

    private static final double TARGET = 60;

    private final FakeTicker t = new FakeTicker();

    private PowerFlowController<String> open() {
        return PowerFlowController.<String>builder().rate(1e9).minRate(1).maxRate(1e9).targetP99(TARGET)
                .queueCapacity(10).controlLaw(ControlLaw.KNEE_AWARE).ticker(t).build();
    }

    /** One window: {@code offered} items offered, {@code done} samples of {@code ms}, one second, observed. */
    private double window(PowerFlowController<String> flow, long offered, long done, double ms) {
        for (long i = 0; i < offered; i++) {
            flow.submit("w"); // the queue takes 10; the rest is refused, and counts as offered too
        }
        flow.queue().clear();
        for (long i = 0; i < done; i++) {
            flow.record(ms);
        }
        t.advanceMillis(1000);
        return flow.observe(1000);
    }

    /**
     * A tail the load does not set (every call 80 ms, target 60 ms, 1,000/s offered and done): the
     * law cuts from the flow (750/s), finds after two windows cut by a fifth or more that the
     * reading did not fall, goes back to the rate before the cuts (open) and reports the target
     * unreachable; it then holds, so the offered load is served.
     */
    @Test
    void aTailTheRateCannotMoveIsDetectedNotChased() {
        PowerFlowController<String> flow = open();
        assertEquals(750, window(flow, 1000, 1000, 80), 1e-9); // 1,000/s × 60 / 80
        assertFalse(flow.stats().targetUnreachable());
        double second = window(flow, 1000, 750, 80); // cut by a fourth, reading flat: one
        assertTrue(second <= 750, "second " + second);
        assertEquals(1e9, window(flow, 1000, (long) second, 80), 1e-9); // two: unreachable, back to open
        assertTrue(flow.stats().targetUnreachable());
        for (int w = 0; w < 5; w++) {
            assertEquals(1e9, window(flow, 1000, 1000, 80), 1e-9, "window " + w); // serve the load
        }
        assertTrue(flow.stats().targetUnreachable());
    }

    /**
     * The same tail, with the executor's start-load statistic: the calls over the target started
     * at the mean concurrency (z = 0.5). The first reading over the target, demand under the rate
     * and kept up with, reports the target unreachable and holds the open rate: no cut, so nothing
     * refused to find it out.
     */
    @Test
    void aTailAtAnyConcurrencyIsUnreachableAtTheFirstReading() {
        PowerFlowController<String> flow = open();
        flow.noteStartLoad(0.5, Double.NaN);
        assertEquals(1e9, window(flow, 1000, 1000, 80), 1e-9);
        assertTrue(flow.stats().targetUnreachable());
        for (int w = 0; w < 5; w++) {
            assertEquals(1e9, window(flow, 1000, 1000, 80), 1e-9, "window " + w); // serve the load
        }
    }

    /**
     * The start-load rule needs every one of its conditions: slow calls that started at a high
     * concurrency (z = 8), no statistic (a bare controller), a loaded window (the rate bound: 800/s
     * against 1,000 offered) or a saturated one (700 done of 1,000) all cut as before.
     */
    @Test
    void theStartLoadRuleAppliesOnlyToAnUnloadedKeptUpWindowWhoseSlowCallsAreNotTheLoads() {
        PowerFlowController<String> queued = open();
        queued.noteStartLoad(8, Double.NaN);
        assertEquals(750, window(queued, 1000, 1000, 80), 1e-9);
        assertFalse(queued.stats().targetUnreachable());

        PowerFlowController<String> bare = open();
        assertEquals(750, window(bare, 1000, 1000, 80), 1e-9);

        PowerFlowController<String> loaded = PowerFlowController.<String>builder().rate(800).minRate(1)
                .maxRate(1e9).targetP99(TARGET).queueCapacity(10).controlLaw(ControlLaw.KNEE_AWARE).ticker(t)
                .build();
        loaded.noteStartLoad(0, Double.NaN);
        assertEquals(600, window(loaded, 1000, 800, 80), 1e-9); // 800 × 60 / 80
        assertFalse(loaded.stats().targetUnreachable());

        PowerFlowController<String> saturated = open();
        saturated.noteStartLoad(0, Double.NaN);
        assertTrue(window(saturated, 1000, 700, 80) < 1000);
        assertFalse(saturated.stats().targetUnreachable());
    }

    /** The statistic is for the next observation only. */
    @Test
    void theStartLoadStatisticIsForOneObservation() {
        PowerFlowController<String> flow = open();
        flow.noteStartLoad(0.5, Double.NaN);
        flow.observe(1000); // an empty window: not stepped, the statistic spent
        assertEquals(750, window(flow, 1000, 1000, 80), 1e-9);
        assertFalse(flow.stats().targetUnreachable());
    }

    /**
     * A downstream of slots: its p99 is the service time's own (30 ms) at any load under its
     * capacity C, and past C it completes C per second and reads 100 ms. Calls queue for a slot
     * from 80 % of C (the start-load correlation then reads 10 standard errors; under it, 0.5).
     * Work is offered at {@code offered} per second; what is admitted is the lesser of that and
     * the rate.
     */
    private double slotsWindow(PowerFlowController<String> flow, double capacity, double offered, boolean measured) {
        double admitted = Math.min(offered, flow.rate());
        double rho = admitted / capacity;
        if (measured) {
            flow.noteStartLoad(Double.NaN, rho >= 0.8 ? 10 : 0.5);
        }
        return rho < 1 ? window(flow, (long) offered, (long) admitted, 30) : window(flow, (long) offered, (long) capacity, 100);
    }

    /**
     * Recovery on a downstream whose latency rises only at its knee: settled under overload at a
     * capacity of 1,000/s, the capacity doubles. The reading is the same below either knee, so only
     * the start-load statistic shows the room: a window near the old knee whose calls did not
     * queue probes (steps doubling from 2 %) at once, instead of the 2 % steps to the estimate
     * first, and the rate reaches 0.85 of the new capacity within five observations. Without the
     * statistic it takes longer. While the capacity holds, the settled rate stays between 0.8 and
     * 1.05 of it: the probe stops on the first window that queued.
     */
    @Test
    void aKneeOnlyDownstreamsCapacityStepIsFoundWithinFiveObservations() {
        for (boolean measured : new boolean[] {true, false}) {
            PowerFlowController<String> flow = open();
            for (int w = 0; w < 40; w++) {
                slotsWindow(flow, 1000, 1500, measured);
            }
            for (int w = 0; w < 30; w++) {
                double r = slotsWindow(flow, 1000, 1500, measured);
                assertTrue(r >= 800 && r <= 1050, "settled window " + w + ": " + r);
            }
            int took = 0;
            while (flow.rate() < 0.85 * 2000 && took < 30) {
                slotsWindow(flow, 2000, 3000, measured);
                took++;
            }
            if (measured) {
                assertTrue(took <= 5, "took " + took + " observations, rate " + flow.rate());
            } else {
                assertTrue(took > 5, "without the statistic: " + took);
            }
        }
    }

    /**
     * A backlog draining after a drop in capacity reads flat through cuts of a fifth, like a tail
     * the load does not set; when the slow calls are the ones that started with the most in
     * flight (slowLoadZ 12), it is the load's, and the target is not declared unreachable: the
     * law keeps cutting. The same windows without the statistic declare it (the old rule).
     */
    @Test
    void aFlatReadingWhoseSlowCallsAreTheLoadsIsNotUnreachable() {
        for (boolean measured : new boolean[] {true, false}) {
            PowerFlowController<String> flow = open();
            double rate = 1e9;
            for (int w = 0; w < 3; w++) {
                if (measured) {
                    flow.noteStartLoad(12, 12);
                }
                long offered = 1000;
                long done = (long) Math.min(offered, rate);
                rate = window(flow, offered, done, 80);
            }
            assertEquals(!measured, flow.stats().targetUnreachable(), "measured " + measured);
            if (measured) {
                assertTrue(rate < 1000, "still cutting: " + rate);
            }
        }
    }

    /** An unreachable target ends on a reading at or under the target (the climb resumes). */
    @Test
    void anUnreachableTargetEndsUnderTheTarget() {
        PowerFlowController<String> flow = unreachable();
        assertEquals(1e9, window(flow, 1000, 1000, 50), 1e-9);
        assertFalse(flow.stats().targetUnreachable());
    }

    /**
     * An unreachable target ends on a reading more than twice the larger of the target and the flat
     * reading (80 ms), or on a saturated window: the downstream changed, and the law cuts again.
     */
    @Test
    void anUnreachableTargetEndsWhenTheDownstreamChanges() {
        PowerFlowController<String> flow = unreachable();
        assertEquals(1e9, window(flow, 1000, 1000, 150), 1e-9); // under 2 × 80: held
        assertTrue(flow.stats().targetUnreachable());
        assertEquals(500, window(flow, 1000, 1000, 200), 1e-9); // over 160: cut by at most half of the flow
        assertFalse(flow.stats().targetUnreachable());

        PowerFlowController<String> saturated = unreachable();
        // 600 done of 1,000: saturated, C = 600: max(0.5 × 1,000, min(1,000 × 60 / 100, 0.85 × 600))
        assertEquals(510, window(saturated, 1000, 600, 100), 1e-9);
        assertFalse(saturated.stats().targetUnreachable());
    }

    private PowerFlowController<String> unreachable() {
        PowerFlowController<String> flow = open();
        window(flow, 1000, 1000, 80);
        double second = window(flow, 1000, 750, 80);
        window(flow, 1000, (long) second, 80);
        assertTrue(flow.stats().targetUnreachable());
        return flow;
    }

    /**
     * A queueing downstream whose latency falls with the rate is never reported unreachable: a cut
     * from overload lowers its reading at once.
     */
    @Test
    void aQueueingDownstreamIsNotUnreachable() {
        PowerFlowController<String> flow = open();
        Downstream d = new Downstream(1000);
        for (int w = 0; w < 30; w++) {
            d.window(this, flow, 1500);
            assertFalse(flow.stats().targetUnreachable(), "window " + w);
        }
    }

    /**
     * A downstream of capacity C whose p99 is {@code 5 / (1 − ρ)} ms at utilisation
     * {@code ρ = rate / C} (the shape of a single queue: 5 ms unloaded, the target of 60 ms at
     * ρ = 0.917), and past C completes C per second and reads 20 × 5 ms. Work is offered at
     * {@code offered} per second; what is admitted is the lesser of that and the rate.
     */
    private static final class Downstream {
        double capacity;

        Downstream(double capacity) {
            this.capacity = capacity;
        }

        double window(KneeAwareLawDownstreamTest test, PowerFlowController<String> flow, double offered) {
            double admitted = Math.min(offered, flow.rate());
            double rho = admitted / capacity;
            long done = (long) Math.min(admitted, capacity);
            double ms = rho < 0.95 ? 5 / (1 - rho) : 100;
            return test.window(flow, (long) offered, done, ms);
        }
    }

    /**
     * A fixed-rate FIFO server (a partner's quota) behind a bounded pool: a backlog carried from
     * window to window, at most {@code pool} calls in flight; a call waits for the backlog ahead of
     * it, and the queueing of random arrivals ({@code 5 / (1 − ρ)} ms) comes on top.
     */
    private static final class Fifo {
        double capacity;
        final double pool;
        double backlog;

        Fifo(double capacity, double pool) {
            this.capacity = capacity;
            this.pool = pool;
        }

        double window(KneeAwareLawDownstreamTest test, PowerFlowController<String> flow, double offered) {
            double room = Math.max(0, pool + capacity - backlog); // the pool bounds what is in flight
            double admitted = Math.min(room, Math.min(offered, flow.rate()));
            double before = backlog;
            double total = backlog + admitted;
            double done = Math.min(total, capacity);
            backlog = total - done;
            double rho = admitted / capacity;
            double queued = Math.max(before, backlog); // the calls that wait for a backlog wait for it alone
            double ms = queued >= 1 ? 1000 * queued / capacity : rho < 0.95 ? 5 / (1 - rho) : 100;
            return test.window(flow, (long) offered, (long) done, ms);
        }
    }

    /**
     * A fixed-rate FIFO server behind a bounded pool halves its capacity, within a window (that
     * window completes 750/s, the next ones 500/s). While the backlog the pool holds drains, every
     * call waits for the full pool (320 ms, target 60) however far the rate is cut: the reading is
     * flat, and read so it declared the target unreachable and bounded the capacity to the cut
     * rate. Draining windows (completions over 1.1 × the flow) hold, and a bound never goes below
     * what was completed: the target is never unreachable, the capacity estimate is the new one,
     * and the rate is within ±10 % of its new equilibrium from the fifth observation on.
     */
    @Test
    void aFifoBehindABoundedPoolThatHalvesIsNotUnreachableAndSettlesWithinFive() {
        PowerFlowController<String> flow = open();
        Fifo d = new Fifo(1000, 160);
        for (int w = 0; w < 60; w++) {
            d.window(this, flow, 1500);
        }
        double[] rates = new double[60];
        for (int w = 0; w < rates.length; w++) {
            d.capacity = w == 0 ? 750 : 500;
            rates[w] = d.window(this, flow, 1500);
            assertFalse(flow.stats().targetUnreachable(), "window " + w + ": " + java.util.Arrays.toString(rates));
        }
        assertEquals(500, flow.lawStats().capacityEstimate(), 500 * 0.05);
        assertSettled(rates, 500);
    }

    /**
     * Recovery in seconds: settled near the knee of a 1,000/s downstream under overload (1.5 ×
     * offered), the capacity doubles. The law is within ±10 % of its new equilibrium (the rate
     * where it settles, read over the 20 windows after the 20th) within five observations, and
     * stays there; the same after the capacity halves again.
     */
    @Test
    void aCapacityStepEitherWaySettlesWithinFiveObservations() {
        PowerFlowController<String> flow = open();
        Downstream d = new Downstream(1000);
        for (int w = 0; w < 60; w++) {
            d.window(this, flow, 3000);
        }
        assertSettlesWithinFive(flow, d, 2000, 3000);
        assertSettlesWithinFive(flow, d, 1000, 3000);
    }

    private void assertSettlesWithinFive(PowerFlowController<String> flow, Downstream d, double capacity,
            double offered) {
        d.capacity = capacity;
        double[] rates = new double[60];
        for (int w = 0; w < rates.length; w++) {
            rates[w] = d.window(this, flow, offered);
        }
        assertSettled(rates, capacity);
    }

    /**
     * The rates of the windows after a capacity step are within ±10 % of the equilibrium (their
     * mean over windows 20 to 39, between 0.8 and 1 × the capacity) from the fifth observation on.
     */
    private static void assertSettled(double[] rates, double capacity) {
        double sum = 0;
        for (int w = 20; w < 40; w++) {
            sum += rates[w];
        }
        double equilibrium = sum / 20;
        assertTrue(equilibrium > 0.8 * capacity && equilibrium < capacity,
                "equilibrium " + equilibrium + " for capacity " + capacity);
        for (int w = 4; w < rates.length; w++) { // the fifth observation on
            assertEquals(equilibrium, rates[w], 0.1 * equilibrium,
                    "observation " + (w + 1) + " after the step to " + capacity + ": " + java.util.Arrays.toString(rates));
        }
    }

    /**
     * A downstream of slots whose calls do not queue until all are busy: its p99 is the service
     * time's own, 25 ms, up to 98 % utilisation, and 100 ms past it; past C it completes C per
     * second. Its latency shows nothing of a larger capacity.
     */
    private static double slots(KneeAwareLawDownstreamTest test, PowerFlowController<String> flow, double capacity,
            double offered) {
        double admitted = Math.min(offered, flow.rate());
        long done = (long) Math.min(admitted, capacity);
        return test.window(flow, (long) offered, done, admitted / capacity < 0.98 ? 25 : 100);
    }

    /**
     * Where the latency rises only at the knee, the climb probes past the capacity estimate (the
     * step doubles each window, 2 % to 30 %). Settled, it goes past the knee by at most 5 %; after the capacity doubles under overload, the rate
     * is at 85 % of the new capacity or more within 20 observations (what is left of a trim block,
     * up to ten windows; the 2 % climb to the old estimate; then six probes), where the slow climb
     * took more than 30; it stays under the
     * target's knee there (never a window past 1.3 × the new capacity, a cut on each overshoot),
     * and after the capacity halves again the rate is under it within two observations.
     */
    @Test
    void whereLatencyRisesOnlyAtTheKneeTheClimbProbesPastAStaleEstimate() {
        PowerFlowController<String> flow = open();
        for (int w = 0; w < 60; w++) {
            double r = slots(this, flow, 1000, 3000);
            // Settled, a trim step down reads the service time's own p99, which is no recovery: no
            // fast climb past the knee (the rule compares a window with the block's at its rate).
            assertTrue(w < 10 || r <= 1.05 * 1000, "window " + (w + 1) + ": " + r);
        }
        assertTrue(flow.rate() < 1000 && flow.rate() > 800, "settled at " + flow.rate());
        double[] rates = new double[40];
        int reached = -1;
        for (int w = 0; w < rates.length; w++) {
            rates[w] = slots(this, flow, 2000, 3000);
            if (reached < 0 && rates[w] >= 0.85 * 2000) {
                reached = w + 1;
            }
        }
        String trace = java.util.Arrays.toString(rates);
        assertTrue(reached > 0 && reached <= 20, "reached 1,700/s at observation " + reached + ": " + trace);
        for (int w = reached; w < rates.length; w++) {
            assertTrue(rates[w] >= 0.8 * 2000 && rates[w] <= 1.3 * 2000, "observation " + (w + 1) + ": " + trace);
        }
        double first = slots(this, flow, 1000, 3000);
        double second = slots(this, flow, 1000, 3000);
        assertTrue(Math.min(first, second) < 1000, "after the halving: " + first + ", " + second);
    }

    /** At an open rate a healthy window changes nothing: no throttling while the p99 is under the target. */
    @Test
    void atAnOpenRateAHealthyWindowKeepsItOpen() {
        PowerFlowController<String> flow = open();
        for (int w = 0; w < 5; w++) {
            assertEquals(1e9, window(flow, 5000, 5000, 20), 1e-9);
        }
    }
}
