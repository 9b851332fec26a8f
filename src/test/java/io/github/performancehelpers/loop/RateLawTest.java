package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.loop.PowerFlowController.ControlLaw;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * The control-law seam: a law is one class and one builder call, the controller hands it each
 * window and never asks which law it holds, and the statistics are built from the loop's parts and
 * the law's own.
 */
class RateLawTest {

    private final FakeTicker t = new FakeTicker();

    /** A law that halves the rate on every window and remembers what it was handed. */
    static final class HalvingLaw implements RateLaw {
        final RateLaw.Setup setup;
        final List<RateLaw.Window> windows = new ArrayList<>();
        int resets;
        int forgets;

        HalvingLaw(RateLaw.Setup setup) {
            this.setup = setup;
        }

        @Override
        public double step(RateLaw.Window window) {
            windows.add(window);
            return Math.max(setup.minRate(), window.rate() / 2);
        }

        @Override
        public boolean saturated(double rate) {
            return rate <= setup.minRate();
        }

        @Override
        public void reset() {
            resets++;
        }

        @Override
        public void forgetWindows() {
            forgets++;
        }
    }

    private HalvingLaw created;

    private RateLaw create(RateLaw.Setup setup) {
        created = new HalvingLaw(setup);
        return created;
    }

    /**
     * A held window (an executor's cap acted on it) is not the law's: the rate holds and the law
     * is not stepped; when the cap moved, any law, not only the knee-aware one, is told to forget
     * what it gathered.
     */
    @Test
    void aHeldWindowIsNotSteppedAndAMoveOfTheCapIsForgottenByAnyLaw() {
        PowerFlowController<String> flow = PowerFlowController.<String>builder().rate(100).minRate(10)
                .maxRate(400).targetP99(30).controlLaw(this::create).ticker(t).build();
        flow.record(12);
        flow.holdNextStep(false);
        assertEquals(100, flow.observe(1000));
        assertEquals(0, created.windows.size());
        assertEquals(0, created.forgets);
        flow.record(12);
        flow.holdNextStep(true);
        assertEquals(100, flow.observe(1000));
        assertEquals(0, created.windows.size());
        assertEquals(1, created.forgets);
        flow.record(12);
        assertEquals(50, flow.observe(1000), "the next window is the law's again");
        assertEquals(1, created.forgets);
    }

    @Test
    void aNewLawIsOneClassAndOneBuilderCall() {
        ControlLaw halving = this::create;
        PowerFlowController<String> flow = PowerFlowController.<String>builder().rate(100).minRate(10)
                .maxRate(400).targetP99(30).quantile(0.9).controlLaw(halving).ticker(t).build();
        assertSame(halving, flow.controlLaw());
        assertEquals(30, created.setup.targetP99());
        assertEquals(0.9, created.setup.quantile());
        assertEquals(10, created.setup.minRate());
        assertEquals(400, created.setup.maxRate());
        assertSame(flow.servo(), created.setup.servo());

        flow.record(12);
        assertEquals(50, flow.observe(1000));
        assertEquals(50, flow.rate());
        assertEquals(50, flow.limiter().rate());
        assertEquals(0, flow.servo().steps()); // the PI law's servo is left alone
        assertFalse(flow.stats().saturated());
        flow.record(12);
        flow.observe(1000);
        flow.record(12);
        assertEquals(12.5, flow.observe(1000));
        flow.record(12);
        assertEquals(10, flow.observe(1000)); // the law's own floor
        assertTrue(flow.stats().saturated());
        assertEquals(4, flow.stats().observations());

        // A law that keeps none of the law-owned numbers reports RateLaw.Stats.NONE.
        assertSame(RateLaw.Stats.NONE, flow.stats().law());
        assertTrue(Double.isNaN(flow.stats().smoothedP99()));
        assertTrue(Double.isNaN(flow.stats().capacityEstimate()));
        assertEquals(0, flow.stats().pausesExcused());

        flow.reset();
        assertEquals(1, created.resets);
        assertEquals(100, flow.rate());
    }

    @Test
    void theLawIsHandedTheWindowAndItsContext() {
        PowerFlowController<String> flow = PowerFlowController.<String>builder().rate(100).minRate(10)
                .targetP99(30).queueCapacity(5).controlLaw(this::create).ticker(t).build();
        for (int i = 0; i < 7; i++) {
            flow.submit("x" + i); // 5 queued, 2 refused: all 7 are demand
        }
        for (int i = 1; i <= 10; i++) {
            flow.record(i);
        }
        flow.noteStall(3_000_000);
        t.advanceMillis(500);
        flow.observe(250);
        RateLaw.Window w = created.windows.get(0);
        assertEquals(10, w.samples().count());
        assertEquals(flow.lastObservedP99(), w.reading());
        assertEquals(10, w.reading(), 10 * 0.02); // rank ceil(0.99 × 11) = 11 of 10: the largest
        assertEquals(100, w.rate());
        assertEquals(250, w.dt());
        assertEquals(0.5, w.seconds(), 1e-12);
        assertEquals(7, w.demand());
        assertEquals(3.0, w.pauseMs(), 1e-12);

        flow.record(5);
        flow.observe(); // the builder's dt, 1; the clock did not move: one second
        RateLaw.Window second = created.windows.get(1);
        assertEquals(1, second.dt());
        assertEquals(1.0, second.seconds());
        assertEquals(0, second.demand());
        assertEquals(0, second.pauseMs());
        assertEquals(50, second.rate());
    }

    @Test
    void anEmptyWindowDoesNotStepTheLaw() {
        PowerFlowController<String> flow = PowerFlowController.<String>builder().rate(100).minRate(10)
                .controlLaw(this::create).ticker(t).build();
        assertEquals(100, flow.observe(1000));
        assertTrue(created.windows.isEmpty());
    }

    @Test
    void aFactoryThatCreatesNullFailsTheBuild() {
        PowerFlowController.Builder<String> b = PowerFlowController.<String>builder().rate(100).minRate(10)
                .controlLaw(setup -> null);
        assertThrows(NullPointerException.class, b::build);
    }

    @Test
    void theConstantsCreateTheTwoLawsAndKeepTheirNames() {
        RateLaw.Setup setup = new RateLaw.Setup(60, 0.99, 1, 100, PowerServo.builder().build());
        assertInstanceOf(PiLaw.class, ControlLaw.PI.create(setup));
        assertInstanceOf(KneeAwareLaw.class, ControlLaw.KNEE_AWARE.create(setup));
        assertNotSame(ControlLaw.KNEE_AWARE.create(setup), ControlLaw.KNEE_AWARE.create(setup));
        assertEquals("PI", ControlLaw.PI.toString());
        assertEquals("KNEE_AWARE", ControlLaw.KNEE_AWARE.toString());
    }

    @Test
    void thePiLawStepsTheServoAndIsSaturatedWhenItsClampBinds() {
        PowerFlowController<String> flow = PowerFlowController.<String>builder().rate(100).minRate(5)
                .maxRate(210).targetP99(30).ticker(t).build();
        assertSame(ControlLaw.PI, flow.controlLaw());
        flow.record(1);
        assertEquals(5.0, flow.observe(1000)); // 0.05 × 29 = 1.45, lifted to the floor
        assertEquals(1, flow.servo().steps());
        assertTrue(flow.stats().saturated());
        assertSame(RateLaw.Stats.NONE, flow.stats().law());
    }

    @Test
    void statsAreBuiltFromPartsAndKeepEveryAccessor() {
        PowerFlowController<String> flow = PowerFlowController.<String>builder().rate(100).minRate(1)
                .maxRate(1000).targetP99(60).quantile(0.95).queueCapacity(3)
                .controlLaw(ControlLaw.KNEE_AWARE).ticker(t).build();
        flow.submit("a");
        flow.submit("b");
        flow.admit();
        flow.record(20);
        flow.record(30);
        t.advanceMillis(1000);
        flow.observe();
        flow.record(40);
        PowerFlowController.Stats st = flow.stats();
        assertEquals(new PowerFlowController.Stats.Settings(1, 1000, 60, 0.95, 3), st.settings());
        assertEquals(st.settings().minRate(), st.minRate());
        assertEquals(st.settings().maxRate(), st.maxRate());
        assertEquals(st.settings().targetP99(), st.targetP99());
        assertEquals(st.settings().quantile(), st.quantile());
        assertEquals(st.settings().queueCapacity(), st.queueCapacity());
        assertEquals(new PowerFlowController.Stats.Counts(2, 1, 3, 0, 1), st.counts());
        assertEquals(st.counts().submitted(), st.submitted());
        assertEquals(st.counts().admitted(), st.admitted());
        assertEquals(st.counts().recorded(), st.recorded());
        assertEquals(st.counts().dropped(), st.dropped());
        assertEquals(st.counts().observations(), st.observations());
        assertEquals(flow.rate(), st.rate());
        assertEquals(1, st.depth());
        assertEquals(40, st.p99(), 40 * 0.02);
        assertSame(ControlLaw.KNEE_AWARE, st.controlLaw());
        assertEquals(st.law().smoothedP99(), st.smoothedP99());
        assertEquals(st.law().capacityEstimate(), st.capacityEstimate());
        assertEquals(st.law().pausesExcused(), st.pausesExcused());
        assertEquals(30, st.smoothedP99(), 30 * 0.02);
        assertFalse(st.law().trimming());
    }

    /** A law reads merged windows with the controller's own rank. */
    @Test
    void aLawReadsTheQuantileAsTheControllerDoes() {
        PowerFlowController<String> flow = PowerFlowController.<String>builder().rate(100).minRate(1).ticker(t).build();
        for (int i = 1; i <= 250; i++) {
            flow.record(i);
        }
        PowerHistogram.Snapshot window = flow.latency().snapshot();
        assertEquals(flow.p99().orElseThrow(), RateLaw.reading(window, 0.99));
        assertEquals(249, RateLaw.reading(window, 0.99), 249 * 0.02); // rank ceil(0.99 × 251) = 249
        assertEquals(250, RateLaw.reading(window, 1.0));
        assertTrue(Double.isNaN(RateLaw.reading(PowerHistogram.builder().build().snapshot(), 0.99)));
    }

    /** The executor's builder takes the loop's options from FlowOptions, with the same messages. */
    @Test
    void theExecutorBuilderTakesTheLoopOptions() {
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().rate(200).minRate(20).maxRate(2_000)
                .targetP99(Duration.ofMillis(50)).quantile(0.9).queueCapacity(7).build()) {
            PowerFlowController<Runnable> c = e.controller();
            assertEquals(200, c.rate());
            assertEquals(20, c.minRate());
            assertEquals(2_000, c.maxRate());
            assertEquals(45, c.targetP99()); // the loop holds the run time at 0.9 x the target: the rest is the wait
            assertEquals(0.9, c.quantile());
            assertEquals(7, c.queueCapacity());
        }
        ControlLaw halving = this::create;
        try (PowerFlowExecutor e = PowerFlowExecutor.builder().rate(100).minRate(1).kp(0.1)
                .controlLaw(halving).build()) {
            assertSame(halving, e.controller().controlLaw());
            assertEquals(0.1, e.controller().servo().kp());
        }
        for (String m : new String[] {"rate", "minRate", "targetP99"}) {
            PowerFlowController.Builder<String> flow = PowerFlowController.builder();
            PowerFlowExecutor.Builder exec = PowerFlowExecutor.builder();
            IllegalArgumentException a = assertThrows(IllegalArgumentException.class, () -> set(flow, m));
            IllegalArgumentException b = assertThrows(IllegalArgumentException.class, () -> set(exec, m));
            assertEquals(a.getMessage(), b.getMessage());
        }
    }

    private static void set(FlowOptions<?> options, String option) {
        switch (option) {
            case "rate" -> options.rate(-1);
            case "minRate" -> options.minRate(Double.NaN);
            default -> options.targetP99(0);
        }
    }
}
