package io.github.performancehelpers.loop;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.testsupport.FakeTicker;

class PowerFlowControllerTest {

    private static PowerFlowController.Builder<String> base(FakeTicker t) {
        return PowerFlowController.<String>builder().rate(100).minRate(1).targetP99(30).ticker(t);
    }

    // ------------------------------------------------------------ the seed's examples

    /** The seed's deterministic example: inject the clock, drive it by hand, observe a positive rate. */
    @Test
    void seedDeterministicExample() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).build();
        assertTrue(flow.submit("a"));
        t.advanceMillis(1000);
        assertEquals(Optional.of("a"), flow.admit());
        flow.record(12);
        assertTrue(flow.observe(1000) > 0);
    }

    /** The seed's wiring example: bounded submit counted when it drops, the rate gate, the loop on a tick, and onRateChange pushing the rate into a pool. */
    @Test
    void seedWiringExample() {
        FakeTicker t = new FakeTicker();
        List<double[]> resizes = new ArrayList<>();
        PowerFlowController<Integer> flow = PowerFlowController.<Integer>builder()
                .rate(200).minRate(5).maxRate(800).targetP99(30).kp(0.05).ki(0.001)
                .queueCapacity(256).ticker(t)
                .onRateChange((rate, previous) -> resizes.add(new double[] {rate, previous}))
                .build();
        int dropped = 0;
        for (int i = 0; i < 300; i++) {
            if (!flow.submit(i)) {
                dropped++;
            }
        }
        assertEquals(44, dropped);
        assertEquals(44, flow.dropped());
        assertEquals(256, flow.depth());

        // Consumer side: at 200/s with burst 0, one admission per 5 ms.
        int admitted = 0;
        for (int ms = 0; ms < 1000; ms++) {
            Optional<Integer> job = flow.admit();
            if (job.isPresent()) {
                admitted++;
                flow.record(10); // well under the 30 ms target
            }
            t.advanceMillis(1);
        }
        assertEquals(200, admitted);

        double rate = flow.observe(1000);
        // First observation: only kp × error = 0.05 × 20 = 1.0, which the floor turns into 5.
        assertEquals(5.0, rate, 1e-9);
        assertEquals(1, resizes.size());
        assertArrayEquals(new double[] {5.0, 200.0}, resizes.get(0), 1e-9);
        assertEquals(5.0, flow.limiter().rate(), 1e-9);
    }

    /** The seed's disposal example: close() is a state reset that releases the queued state. */
    @Test
    void closeReleasesState() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> outer;
        try (PowerFlowController<String> flow = base(t).build()) {
            outer = flow;
            flow.submit("a");
            assertEquals(1, flow.depth());
        }
        assertEquals(0, outer.depth());
        assertTrue(outer.submit("b"), "a closed controller is reset, not torn down");
    }

    // ------------------------------------------------------------ queueing

    /** submit refuses when full, counts the drop, and never consults the limiter. */
    @Test
    void submitDropsWhenFullWithoutTouchingTheLimiter() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).queueCapacity(2).build();
        long before = flow.limiter().available();
        assertTrue(flow.submit("a"));
        assertTrue(flow.submit("b"));
        assertFalse(flow.submit("c"));
        assertEquals(1, flow.dropped());
        assertEquals(1, flow.stats().dropped());
        assertEquals(2, flow.stats().submitted());
        assertEquals(before, flow.limiter().available());
    }

    /** A null item is refused with a NullPointerException naming it. */
    @Test
    void submitNullThrows() {
        PowerFlowController<String> flow = base(new FakeTicker()).build();
        NullPointerException e = assertThrows(NullPointerException.class, () -> flow.submit(null));
        assertEquals("item", e.getMessage());
    }

    // ------------------------------------------------------------ admission

    /** admit on an empty queue returns empty and consumes no admission. */
    @Test
    void admitOnEmptyQueueConsumesNothing() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).rate(1).build();
        for (int i = 0; i < 10; i++) {
            assertTrue(flow.admit().isEmpty());
        }
        assertEquals(1, flow.limiter().available());
        flow.submit("a");
        assertEquals(Optional.of("a"), flow.admit());
        assertEquals(1, flow.stats().admitted());
    }

    /** admit hands out items in FIFO order at the limiter's rate and leaves refused items queued. */
    @Test
    void admitFollowsTheRate() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).rate(1).build();
        flow.submit("a");
        flow.submit("b");
        assertEquals(Optional.of("a"), flow.admit());
        assertTrue(flow.admit().isEmpty());
        assertEquals(1, flow.depth());
        t.advanceMillis(999);
        assertTrue(flow.admit().isEmpty());
        t.advanceMillis(1);
        assertEquals(Optional.of("b"), flow.admit());
    }

    // ------------------------------------------------------------ the loop

    /** error = targetP99 − p99: a p99 below target gives a positive P term, a p99 above it a negative one (the seed's sign). */
    @Test
    void latencyAboveTargetLowersTheRateAndBelowRaisesIt() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).rate(100).minRate(1).maxRate(1000)
                .kp(1).ki(0).relativeAccuracy(0.001).build();
        flow.record(10);
        assertEquals(20, flow.observe(1000), 0.05); // kp × (30 − 10)
        flow.record(25);
        assertEquals(5, flow.observe(1000), 0.05); // kp × (30 − 25)
        flow.record(60);
        assertEquals(1, flow.observe(1000), 0); // kp × (30 − 60) < 0: the floor
    }

    /** With the integral on, windows above target keep pulling the rate down and windows below keep pushing it up. */
    @Test
    void integralMovesInTheDirectionOfTheError() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).rate(100).minRate(1).maxRate(1000).build();
        double previous = Double.NaN;
        for (int i = 0; i < 5; i++) {
            flow.record(10);
            double r = flow.observe(1000);
            if (i > 0) {
                assertTrue(r > previous, "below target must raise: " + previous + " -> " + r);
            }
            previous = r;
        }
        // The first window above target still sees the integral as it was before that step (the
        // one-step lag), so it cannot yet fall; every window after it does.
        flow.record(90);
        previous = flow.observe(1000);
        for (int i = 0; i < 2; i++) {
            flow.record(90);
            double r = flow.observe(1000);
            assertTrue(r < previous, "above target must lower: " + previous + " -> " + r);
            previous = r;
        }
    }

    // ------------------------------------------------------------ reading the quantile

    /** Records {@code tens} samples of 10 ms, then 50, 100 and 200 ms: the three largest are distinct. */
    private static void recordTailOf(PowerFlowController<String> flow, int tens) {
        for (int i = 0; i < tens; i++) {
            flow.record(10);
        }
        flow.record(50);
        flow.record(100);
        flow.record(200);
    }

    /**
     * The loop reads the sample of 1-based rank ceil(q(n+1)): of 200 samples, the 199th smallest
     * (100 ms), where the histogram's lower quantile would read the 198th (50 ms).
     */
    @Test
    void observationReadsTheOrderStatisticOfRankCeilQTimesNPlusOne() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).build();
        recordTailOf(flow, 197);
        assertEquals(50, flow.latency().quantile(0.99), 50 * 0.01); // the histogram's own reading
        flow.observe(1000);
        assertEquals(100, flow.lastObservedP99(), 100 * 0.01);
    }

    /** Up to 198 samples the p99 the loop reads is the window's largest sample: of 130, 200 ms, not the lower quantile's 50 ms. */
    @Test
    void smallWindowObservesItsLargestSampleForThePercentile99() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).build();
        recordTailOf(flow, 127);
        flow.observe(1000);
        assertEquals(200, flow.lastObservedP99(), 0); // the maximum is exact
        recordTailOf(flow, 0); // 3 samples
        flow.observe(1000);
        assertEquals(200, flow.lastObservedP99(), 0);
    }

    /** The servo is stepped with that reading: kp × (150 − 100) = 50/s, where the lower quantile's 50 ms would give 100/s. */
    @Test
    void servoIsSteppedWithTheObservedQuantile() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).targetP99(150).maxRate(1000).kp(1).ki(0).build();
        recordTailOf(flow, 197);
        PowerServo reference = PowerServo.builder().kp(1).ki(0).setpoint(150).min(1).max(1000).build();
        double rate = flow.observe(1000);
        assertEquals(reference.step(flow.lastObservedP99(), 1000), rate, 1e-9);
        assertEquals(50, rate, 1.0); // within the histogram's 1 %
    }

    /** The rank rule holds for any quantile: the median of 1, 2, 3, 4 is 3 (rank ceil(2.5)), of 1, 2, 3 it is 2 (rank 2, exactly). */
    @Test
    void rankRuleAppliesToOtherQuantiles() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).quantile(0.5).relativeAccuracy(0.001).build();
        for (int v = 1; v <= 4; v++) {
            flow.record(v);
        }
        flow.observe(1000);
        assertEquals(3, flow.lastObservedP99(), 3 * 0.001);
        for (int v = 1; v <= 3; v++) {
            flow.record(v);
        }
        flow.observe(1000);
        assertEquals(2, flow.lastObservedP99(), 2 * 0.001);
    }

    /** p99() and stats().p99() read the current window with the same rank as the observation will. */
    @Test
    void partialWindowReadOutsUseTheSameRank() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).build();
        recordTailOf(flow, 197);
        assertEquals(100, flow.p99().getAsDouble(), 100 * 0.01);
        assertEquals(100, flow.stats().p99(), 100 * 0.01);
    }

    /** A window whose samples are all equal reads that value whatever the count, as the seed's noise-free plant needs. */
    @Test
    void equalSamplesReadTheirValue() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).build();
        for (int n : new int[] {1, 2, 42, 99, 100, 111, 1000}) {
            for (int i = 0; i < n; i++) {
                flow.record(32.3);
            }
            flow.observe(1000);
            assertEquals(32.3, flow.lastObservedP99(), 0, "n = " + n); // min = max: exact
        }
    }

    /** The window resets at each observation: p99 is the current partial window only. */
    @Test
    void windowResetsAtEachObservation() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).build();
        assertTrue(flow.p99().isEmpty());
        assertTrue(Double.isNaN(flow.stats().p99()));
        flow.record(40);
        assertEquals(40, flow.p99().getAsDouble(), 40 * 0.01);
        flow.observe(1000);
        assertTrue(flow.p99().isEmpty(), "observe must clear the window");
        flow.record(20);
        assertEquals(20, flow.p99().getAsDouble(), 20 * 0.01);
        assertEquals(2, flow.stats().recorded());
    }

    /** An observation of an empty window steps nothing, keeps the rate and does not count. */
    @Test
    void emptyWindowObservationChangesNothing() {
        FakeTicker t = new FakeTicker();
        AtomicInteger calls = new AtomicInteger();
        PowerFlowController<String> flow = base(t).onRateChange((r, p) -> calls.incrementAndGet()).build();
        assertEquals(100, flow.observe(1000), 0);
        assertEquals(0, flow.stats().observations());
        assertEquals(0, calls.get());
        assertEquals(0, flow.servo().steps());
    }

    /** The seed's cold start: 5.0 → 30.4 → 59.5 → 88.5 → 117.5 → 146.4 → 175.4 → 204.4 → 210.0, one observation per second. */
    @Test
    void coldStartClimbFromTheSeed() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = PowerFlowController.<String>builder()
                .rate(100).minRate(5).maxRate(210).targetP99(30).kp(0.05).ki(0.001)
                // 0.1% accuracy: the histogram's representative of 1 ms is then 0.999 ms, so each
                // step is within 0.06 of the seed's figures (at 1% the 7th step would be 0.12 off).
                .relativeAccuracy(0.001).ticker(t).build();
        double[] expected = {5.0, 30.4, 59.5, 88.5, 117.5, 146.4, 175.4, 204.4, 210.0};
        for (double e : expected) {
            flow.record(1);
            t.advanceMillis(1000);
            assertEquals(e, flow.observe(1000), 0.1);
        }
        assertTrue(flow.stats().saturated());
        assertEquals(9, flow.stats().observations());
    }

    /** Under sustained overload the rate goes straight to minRate on the first observation and holds there. */
    @Test
    void sustainedOverloadGoesToTheFloorAndHolds() {
        FakeTicker t = new FakeTicker();
        List<Double> changes = new ArrayList<>();
        PowerFlowController<String> flow = base(t).rate(100).minRate(5).maxRate(500)
                .onRateChange((r, p) -> changes.add(r)).build();
        for (int i = 0; i < 10; i++) {
            flow.record(500);
            assertEquals(5.0, flow.observe(1000), 0);
        }
        assertEquals(List.of(5.0), changes, "onRateChange fires only when the rate moves");
        assertTrue(flow.stats().saturated());
    }

    /** A listener that throws is reported and counted; the rate stays changed and the loop goes on. */
    @Test
    void throwingListenerDoesNotBreakTheLoop() {
        FakeTicker t = new FakeTicker();
        AtomicInteger calls = new AtomicInteger();
        PowerFlowController<String> flow = base(t).rate(100).minRate(5).maxRate(500)
                .onRateChange((r, p) -> {
                    calls.incrementAndGet();
                    throw new IllegalStateException("pool is gone");
                }).build();
        flow.record(500);
        assertEquals(5.0, flow.observe(1000), 0);
        assertEquals(5.0, flow.limiter().rate(), 0);
        flow.record(1);
        assertEquals(5.0, flow.observe(1000), 0); // kp × 29 = 1.45: still the floor, no call
        flow.record(1);
        double r = flow.observe(1000);
        assertEquals(30.45, r, 0.05); // 1.45 + ki × 29 000: the loop kept running
        assertEquals(2, calls.get());
        assertEquals(2, flow.callbackFailures());
    }

    /** reset() discards the queue, the window and the learned rate, and keeps the counters. */
    @Test
    void resetDiscardsQueueWindowAndLearnedRate() {
        FakeTicker t = new FakeTicker();
        List<Double> changes = new ArrayList<>();
        PowerFlowController<String> flow = base(t).rate(100).minRate(5).maxRate(500)
                .onRateChange((r, p) -> changes.add(r)).build();
        flow.submit("a");
        flow.record(500);
        flow.observe(1000);
        flow.record(7);
        assertEquals(5.0, flow.rate(), 0);
        flow.reset();
        assertEquals(100.0, flow.rate(), 0);
        assertEquals(100.0, flow.limiter().rate(), 0);
        assertEquals(0, flow.depth());
        assertTrue(flow.p99().isEmpty());
        assertEquals(0, flow.servo().steps());
        assertEquals(List.of(5.0, 100.0), changes);
        assertEquals(1, flow.stats().submitted());
        assertEquals(1, flow.stats().observations());
        flow.clear(); // alias
        assertEquals(100.0, flow.rate(), 0);
    }

    /** The observe(dt) argument is validated. */
    @Test
    void observeRejectsBadDt() {
        PowerFlowController<String> flow = base(new FakeTicker()).build();
        for (double dt : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> flow.observe(dt));
            assertTrue(e.getMessage().startsWith("dt must be finite and > 0"), e.getMessage());
        }
    }

    /** stats() carries every field of the seed's stats with the configured values. */
    @Test
    void statsCarriesTheSeedsFields() {
        FakeTicker t = new FakeTicker();
        PowerFlowController<String> flow = base(t).rate(50).minRate(2).maxRate(400).targetP99(25)
                .quantile(0.9).queueCapacity(7).build();
        flow.submit("x");
        PowerFlowController.Stats s = flow.stats();
        assertEquals(50, s.rate());
        assertEquals(2, s.minRate());
        assertEquals(400, s.maxRate());
        assertEquals(25, s.targetP99());
        assertEquals(0.9, s.quantile());
        assertEquals(1, s.depth());
        assertEquals(7, s.queueCapacity());
        assertEquals(1, s.submitted());
        assertEquals(0, s.admitted());
        assertEquals(0, s.recorded());
        assertEquals(0, s.dropped());
        assertEquals(0, s.observations());
        assertFalse(s.saturated());
        assertSame(t, flow.ticker());
        assertNotNull(flow.queue());
        assertNotNull(flow.latency());
    }

    // ------------------------------------------------------------ validation

    /** Every option refuses its bad values with a message naming the option and the value. */
    @Test
    void everyOptionIsValidated() {
        assertBad("rate must be finite and > 0: NaN", b -> b.rate(Double.NaN));
        assertBad("rate must be finite and > 0: 0.0", b -> b.rate(0));
        assertBad("rate must be finite and > 0: Infinity", b -> b.rate(Double.POSITIVE_INFINITY));
        assertBad("burst must be finite and >= 0: -1.0", b -> b.burst(-1));
        assertBad("burst must be finite and >= 0: NaN", b -> b.burst(Double.NaN));
        assertBad("minRate must be finite and > 0: 0.0", b -> b.minRate(0));
        assertBad("minRate must be finite and > 0: -5.0", b -> b.minRate(-5));
        assertBad("maxRate must be > 0: NaN", b -> b.maxRate(Double.NaN));
        assertBad("maxRate must be > 0: 0.0", b -> b.maxRate(0));
        assertBad("targetP99 must be finite and > 0: 0.0", b -> b.targetP99(0));
        assertBad("targetP99 must be finite and > 0: NaN", b -> b.targetP99(Double.NaN));
        assertBad("targetP99 must be finite and > 0: -0.001", b -> b.targetP99(Duration.ofNanos(-1000)));
        assertBad("quantile must be in (0, 1]: 0.0", b -> b.quantile(0));
        assertBad("quantile must be in (0, 1]: 1.5", b -> b.quantile(1.5));
        assertBad("queueCapacity must be >= 1: 0", b -> b.queueCapacity(0));
        assertBad("kp must be finite and >= 0: -0.1", b -> b.kp(-0.1));
        assertBad("ki must be finite and >= 0: NaN", b -> b.ki(Double.NaN));
        assertBad("kd must be finite and >= 0: Infinity", b -> b.kd(Double.POSITIVE_INFINITY));
        assertBad("derivativeFilter must be in [0, 1): 1.0", b -> b.derivativeFilter(1));
        assertBad("dt must be finite and > 0: 0.0", b -> b.dt(0));
        assertBad("relativeAccuracy must be in (0, 1): 1.0", b -> b.relativeAccuracy(1));
        assertThrows(NullPointerException.class, () -> PowerFlowController.builder().ticker(null));
        assertThrows(NullPointerException.class, () -> PowerFlowController.builder().targetP99((Duration) null));
    }

    /** Required options and cross-field constraints are checked at build(). */
    @Test
    void crossFieldChecksAtBuild() {
        IllegalStateException noRate = assertThrows(IllegalStateException.class,
                () -> PowerFlowController.builder().minRate(1).build());
        assertEquals("rate is required", noRate.getMessage());
        assertThrows(IllegalStateException.class, () -> PowerFlowController.builder().rate(1).build());
        IllegalArgumentException below = assertThrows(IllegalArgumentException.class,
                () -> PowerFlowController.builder().rate(1).minRate(5).build());
        assertEquals("rate must be within [minRate, maxRate]: rate=1.0, minRate=5.0, maxRate=Infinity",
                below.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> PowerFlowController.builder().rate(100).minRate(5).maxRate(50).build());
        IllegalArgumentException inverted = assertThrows(IllegalArgumentException.class,
                () -> PowerFlowController.builder().rate(5).minRate(5).maxRate(5).build());
        assertEquals("minRate must be < maxRate: minRate=5.0, maxRate=5.0", inverted.getMessage());
    }

    private static void assertBad(String message, Consumer<PowerFlowController.Builder<Object>> setter) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> setter.accept(PowerFlowController.builder()));
        assertEquals(message, e.getMessage());
    }

    // ------------------------------------------------------------ composition with a global limiter

    /** With a global limiter, admission needs both; a refusal by the global one charges neither. */
    @Test
    void globalLimiterMustAlsoAdmit() {
        FakeTicker t = new FakeTicker();
        PowerGCRA global = PowerGCRA.builder().rate(1).ticker(t).build();
        PowerFlowController<String> flow = base(t).rate(1000).minRate(1).globalLimiter(global).build();
        flow.submit("a");
        flow.submit("b");
        assertEquals(Optional.of("a"), flow.admit());
        long localBefore = flow.limiter().available();
        assertTrue(flow.admit().isEmpty(), "global 1/s refuses the second");
        assertEquals(localBefore, flow.limiter().available(), "local limiter not charged for a refused batch");
        t.advanceMillis(1000);
        assertEquals(Optional.of("b"), flow.admit());
    }

    // ------------------------------------------------------------ concurrency

    /** Producers submit, workers admit and record, a tick observes, concurrently: no item, sample or count is lost. */
    @Test
    void concurrentUseLosesNothing() throws Exception {
        PowerFlowController<Long> flow = PowerFlowController.<Long>builder()
                .rate(1e9).minRate(1e8).maxRate(2e9).burst(1000).targetP99(30)
                .queueCapacity(1024).build();
        int producers = 4;
        int perProducer = 50_000;
        int workers = 3;
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        AtomicLong refused = new AtomicLong();
        AtomicLong records = new AtomicLong();
        AtomicBoolean producing = new AtomicBoolean(true);
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            long base = (long) p * perProducer;
            threads.add(Thread.ofPlatform().start(() -> {
                await(start);
                for (long i = 0; i < perProducer; i++) {
                    if (!flow.submit(base + i)) {
                        refused.incrementAndGet();
                    }
                }
            }));
        }
        List<Thread> consumers = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            consumers.add(Thread.ofPlatform().start(() -> {
                await(start);
                while (producing.get() || flow.depth() > 0) {
                    Optional<Long> item = flow.admit();
                    if (item.isPresent()) {
                        assertTrue(seen.add(item.get()), "duplicate " + item.get());
                        flow.record(item.get() % 50);
                        records.incrementAndGet();
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }));
        }
        Thread ticker = Thread.ofPlatform().start(() -> {
            await(start);
            while (producing.get()) {
                flow.observe(1);
                Thread.yield();
            }
        });
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        producing.set(false);
        for (Thread t : consumers) {
            t.join();
        }
        ticker.join();
        PowerFlowController.Stats s = flow.stats();
        assertEquals((long) producers * perProducer, s.submitted() + s.dropped());
        assertEquals(refused.get(), s.dropped());
        assertEquals(s.submitted(), s.admitted());
        assertEquals(s.admitted(), seen.size());
        assertEquals(records.get(), s.recorded());
        assertEquals(0, s.depth());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
