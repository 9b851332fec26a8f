package io.github.performancehelpers.backpressure;

import static io.github.performancehelpers.backpressure.PowerBackpressureTest.assertAccounted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;
import io.github.performancehelpers.testsupport.ManualScheduler;

/**
 * The refill tick and the AIMD window, driven by a hand-run scheduler and a fake ticker: no test
 * here waits for real time.
 */
class PowerBackpressureRefillTest {

    private final ManualScheduler scheduler = new ManualScheduler();
    private final FakeTicker ticker = new FakeTicker();

    /** The seed's example configuration: capacity 8, queueCapacity 100, lowWaterMark 2, refillAmount 2, refillInterval 100. */
    private PowerBackpressure.Builder seedExample() {
        return PowerBackpressure.builder().scheduler(scheduler).ticker(ticker)
                .capacity(8).queueCapacity(100).lowWaterMark(2).refillAmount(2).refillInterval(Duration.ofMillis(100));
    }

    private static List<Permit> take(PowerBackpressure bp, int n) {
        List<Permit> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(bp.tryAcquire().orElseThrow());
        }
        return out;
    }

    private static List<CompletableFuture<Permit>> queue(PowerBackpressure bp, int n) {
        List<CompletableFuture<Permit>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            CompletableFuture<Permit> f = bp.acquire();
            assertFalse(f.isDone());
            out.add(f);
        }
        return out;
    }

    private static long served(List<CompletableFuture<Permit>> futures) {
        return futures.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count();
    }

    // ---- when the tick runs ----------------------------------------------------------------

    /** No tick is scheduled while available stays at or above lowWaterMark. */
    @Test
    void noTickWhilePressureIsLow() {
        PowerBackpressure bp = seedExample().build();
        take(bp, 6);
        assertEquals(2, bp.available());
        assertEquals(0, scheduler.all().size());
        assertFalse(bp.stats().refillScheduled());
    }

    /** Taking available below lowWaterMark schedules one tick at refillInterval (100 ms in the seed's example). */
    @Test
    void tickIsScheduledWhenAvailableFallsBelowLowWaterMark() {
        PowerBackpressure bp = seedExample().build();
        take(bp, 7);
        assertEquals(1, scheduler.live().size());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(100), scheduler.live().get(0).periodNanos);
        assertTrue(bp.stats().refillScheduled());
        take(bp, 1);
        queue(bp, 3);
        assertEquals(1, scheduler.all().size(), "still one tick, however deep the pressure");
    }

    /**
     * The seed's example under load: every permit held, three producers queued. Each tick mints
     * refillAmount 2, queued producers first, so active exceeds capacity; once available is back at
     * lowWaterMark a tick cancels itself without minting.
     */
    @Test
    void seedExampleRefillServesWaitersThenThePoolThenStops() {
        PowerBackpressure bp = seedExample().build();
        take(bp, 8);
        List<CompletableFuture<Permit>> waiters = queue(bp, 3);

        scheduler.runAll();
        assertEquals(2, served(waiters));
        assertEquals(10, bp.active(), "active exceeds capacity: capacity is a pool");
        assertEquals(0, bp.available());

        scheduler.runAll();
        assertEquals(3, served(waiters));
        assertEquals(11, bp.active());
        assertEquals(1, bp.available());

        scheduler.runAll();
        assertEquals(3, bp.available());
        assertEquals(3, bp.stats().refillTicks());

        scheduler.runAll(); // available 3 >= lowWaterMark 2: the tick stops itself
        assertEquals(3, bp.available());
        assertEquals(3, bp.stats().refillTicks());
        assertEquals(0, scheduler.live().size());
        assertTrue(scheduler.all().get(0).isCancelled());
        assertFalse(bp.stats().refillScheduled());
        assertAccounted(bp);
    }

    /** Without waiters a tick refills the pool, and permits minted above the pool are retired when they come back. */
    @Test
    void tickRefillsThePoolAndMintedPermitsAreRetiredOnReturn() {
        PowerBackpressure bp = seedExample().build();
        List<Permit> held = take(bp, 7);
        scheduler.runAll();
        assertEquals(3, bp.available());
        assertEquals(10, bp.stats().minted());
        held.forEach(Permit::release);
        assertEquals(8, bp.available(), "available never exceeds capacity");
        assertEquals(2, bp.stats().retired());
        assertEquals(0, bp.active());
        assertAccounted(bp);
    }

    /** A new episode of pressure schedules a new tick after the previous one stopped itself. */
    @Test
    void pressureAgainSchedulesANewTick() {
        PowerBackpressure bp = seedExample().build();
        List<Permit> held = take(bp, 7);
        held.forEach(Permit::release);
        scheduler.runAll();
        assertEquals(0, scheduler.live().size());
        take(bp, 7);
        assertEquals(1, scheduler.live().size());
        assertEquals(2, scheduler.all().size());
    }

    /** initialTokens 0 starts under pressure: the tick is scheduled at build and fills the pool. */
    @Test
    void initialTokensZeroStartsTheRefill() {
        PowerBackpressure bp = seedExample().initialTokens(0).build();
        assertEquals(1, scheduler.live().size());
        scheduler.runAll();
        assertEquals(2, bp.available());
        scheduler.runAll();
        assertEquals(2, bp.available(), "2 is not below lowWaterMark 2: the tick stopped");
    }

    /** lowWaterMark 0 disables the refill entirely. */
    @Test
    void lowWaterMarkZeroNeverRefills() {
        PowerBackpressure bp = seedExample().lowWaterMark(0).build();
        take(bp, 8);
        queue(bp, 2);
        assertEquals(0, scheduler.all().size());
    }

    /** The ticker measures how long pressure has been high; 0 once it is low again. */
    @Test
    void highPressureDurationIsMeasuredWithTheTicker() {
        PowerBackpressure bp = seedExample().build();
        List<Permit> held = take(bp, 7);
        ticker.advanceMillis(300);
        assertEquals(TimeUnit.MILLISECONDS.toNanos(300), bp.stats().highPressureNanos());
        held.get(0).release();
        assertEquals(0, bp.stats().highPressureNanos());
    }

    // ---- AIMD ------------------------------------------------------------------------------

    /** A tick that finds a permit came back since the last tick grows the window by additiveIncrease. */
    @Test
    void aPermitComingBackGrowsTheWindow() {
        PowerBackpressure bp = seedExample().adaptive(true).build();
        List<Permit> held = take(bp, 8);
        List<CompletableFuture<Permit>> waiters = queue(bp, 10);
        held.get(0).release(); // a transfer to the first waiter, and a probe that came back
        assertEquals(1, served(waiters));
        scheduler.runAll();
        assertEquals(3, bp.refillAmount());
        assertEquals(1 + 3, served(waiters), "the grown window is what this tick minted");
        assertEquals(1, bp.stats().windowIncreases());
    }

    /** A tick that finds every permit still out cuts the window by beta, down to min. */
    @Test
    void everyPermitStillOutCutsTheWindowDownToMin() {
        PowerBackpressure bp = seedExample().refillAmount(4).adaptive(true).build();
        take(bp, 8);
        List<CompletableFuture<Permit>> waiters = queue(bp, 20);
        scheduler.runAll();
        assertEquals(2, bp.refillAmount());
        assertEquals(2.0, bp.stats().refillWindow());
        scheduler.runAll();
        assertEquals(1, bp.refillAmount());
        scheduler.runAll();
        assertEquals(1.0, bp.stats().refillWindow(), "floored at min 1");
        assertEquals(2 + 1 + 1, served(waiters));
        assertEquals(3, bp.stats().windowDecreases());
    }

    /** The window does not grow beyond max. */
    @Test
    void windowIsCappedAtMax() {
        PowerBackpressure bp = seedExample()
                .adaptive(PowerBackpressure.Adaptive.defaults().withAdditiveIncrease(5).withMax(4)).build();
        List<Permit> held = take(bp, 8);
        queue(bp, 20);
        held.get(0).release();
        scheduler.runAll();
        assertEquals(4, bp.refillAmount());
    }

    /** An unbounded max means the larger of capacity and refillAmount. */
    @Test
    void defaultMaxIsCapacity() {
        PowerBackpressure bp = seedExample()
                .adaptive(PowerBackpressure.Adaptive.defaults().withAdditiveIncrease(100)).build();
        List<Permit> held = take(bp, 8);
        queue(bp, 50);
        held.get(0).release();
        scheduler.runAll();
        assertEquals(8, bp.refillAmount());
    }

    /** With no producer queued there is nothing to measure: ticks refill but the window does not move. */
    @Test
    void windowDoesNotMoveWithAnEmptyQueue() {
        PowerBackpressure bp = seedExample().adaptive(true).build();
        List<Permit> held = take(bp, 8);
        scheduler.runAll(); // nothing came back, but nobody waits: no cut
        assertEquals(2, bp.refillAmount());
        held.get(0).release();
        take(bp, bp.available());
        scheduler.runAll(); // a permit came back, but nobody waits: no increase
        assertEquals(2, bp.refillAmount());
        assertEquals(0, bp.stats().windowIncreases() + bp.stats().windowDecreases());
        assertEquals(2, bp.stats().refillTicks());
    }

    /** With adaptive off the refill amount never moves. */
    @Test
    void nonAdaptiveRefillAmountIsConstant() {
        PowerBackpressure bp = seedExample().build();
        take(bp, 8);
        List<CompletableFuture<Permit>> waiters = queue(bp, 10);
        scheduler.runAll();
        scheduler.runAll();
        assertEquals(2, bp.refillAmount());
        assertEquals(4, served(waiters));
    }

    /**
     * Capacity is a pool: with consumers that keep their permits, minting pushes active above
     * capacity, and the AIMD cut brings the minting rate down (4 per tick without AIMD; 2, 1, 1 with it).
     */
    @Test
    void activeExceedsCapacityAndTheCutBringsTheRateDown() {
        PowerBackpressure fixed = seedExample().refillAmount(4).build();
        take(fixed, 8);
        queue(fixed, 40);
        scheduler.runAll();
        assertEquals(12, fixed.active());
        fixed.close();

        ManualScheduler s = new ManualScheduler();
        PowerBackpressure bp = PowerBackpressure.builder().scheduler(s).ticker(ticker).capacity(8).lowWaterMark(2)
                .refillAmount(4).adaptive(true).build();
        take(bp, 8);
        queue(bp, 40);
        int[] expectedActive = {10, 11, 12, 13};
        for (int expected : expectedActive) {
            s.runAll();
            assertEquals(expected, bp.active());
        }
        assertTrue(bp.active() > bp.capacity());
        assertEquals(1, bp.refillAmount());
        assertAccounted(bp);
    }

    /**
     * Permits that never come back: the refill cannot relieve the queue. The window falls to min,
     * each tick admits one producer, available stays 0, pressure reads 1 and the tick keeps running.
     */
    @Test
    void refillCannotRelieveAQueueWhosePermitsNeverComeBack() {
        PowerBackpressure bp = seedExample().adaptive(true).build();
        take(bp, 8);
        List<CompletableFuture<Permit>> waiters = queue(bp, 20);
        for (int tick = 1; tick <= 10; tick++) {
            scheduler.runAll();
            assertEquals(0, bp.available());
            assertEquals(1.0, bp.stats().pressure());
            assertTrue(bp.stats().refillScheduled());
        }
        assertEquals(1, bp.refillAmount());
        assertEquals(10, served(waiters), "one per tick at min, after the first cut from 2 to 1");
        assertEquals(10, bp.pending());
    }

    /** Seed "Adaptive refill" example: capacity 64 with additiveIncrease 2, beta 0.5, min 1; reset() restores the base. */
    @Test
    void seedAdaptiveExampleWindowMovesAndResetRestoresIt() {
        PowerBackpressure bp = PowerBackpressure.builder().scheduler(scheduler).ticker(ticker).capacity(64)
                .adaptive(new PowerBackpressure.Adaptive(2, 0.5, 1, Double.POSITIVE_INFINITY)).build();
        assertEquals(7, bp.refillAmount(), "base: max(1, ceil(64 * 0.1))");
        List<Permit> held = take(bp, 64);
        queue(bp, 30);
        scheduler.runAll(); // every permit still out: 7 * 0.5
        assertEquals(3, bp.refillAmount());
        assertEquals(3.5, bp.stats().refillWindow());
        held.get(0).release(); // a probe came back
        scheduler.runAll(); // 3.5 + 2
        assertEquals(5, bp.refillAmount());
        bp.reset();
        assertEquals(7, bp.refillAmount());
        assertEquals(7.0, bp.stats().refillWindow());
    }

    /** reset() does not cancel the tick; with every permit still held, the tick keeps minting afterwards. */
    @Test
    void resetDoesNotCancelTheTick() {
        PowerBackpressure bp = seedExample().adaptive(true).build();
        take(bp, 8);
        queue(bp, 5);
        scheduler.runAll();
        bp.reset();
        assertEquals(1, scheduler.live().size());
        assertFalse(scheduler.all().get(0).isCancelled());
        assertTrue(bp.stats().refillScheduled());
        assertEquals(0, bp.available(), "capacity 8 less 9 held");
        scheduler.runAll();
        assertEquals(2, bp.available(), "the tick continued, with the restored window 2");
    }

    /** close() cancels the tick, and a tick that was already under way when close() ran does nothing. */
    @Test
    void closeCancelsTheTickAndAStaleTickDoesNothing() {
        PowerBackpressure bp = seedExample().build();
        take(bp, 8);
        ManualScheduler.Task task = scheduler.live().get(0);
        bp.close();
        assertTrue(task.isCancelled());
        assertEquals(0, scheduler.live().size());
        task.body.run();
        assertEquals(0, bp.available());
        assertEquals(0, bp.stats().refillTicks());
        assertFalse(scheduler.isShutdown(), "a supplied scheduler is not shut down");
    }

    /** A supplied scheduler that refuses the tick does not break acquisition; the failure is counted. */
    @Test
    void aRefusingSchedulerIsReportedNotThrown() {
        scheduler.shutdown();
        PowerBackpressure bp = seedExample().build();
        take(bp, 8);
        assertTrue(bp.stats().tickFailures() >= 1);
        assertTrue(bp.tryAcquire().isEmpty());
    }

    /** A real supplied scheduler is used for the tick and left running by close(). */
    @Test
    void aRealSuppliedSchedulerIsNotShutDown() throws Exception {
        ScheduledExecutorService real = Executors.newSingleThreadScheduledExecutor();
        try {
            PowerBackpressure bp = PowerBackpressure.builder().scheduler(real).capacity(4)
                    .initialTokens(0).refillInterval(Duration.ofMillis(1)).build();
            PowerBackpressureTest.await(() -> bp.available() > 0);
            bp.close();
            assertFalse(real.isShutdown());
        } finally {
            real.shutdownNow();
            assertTrue(real.awaitTermination(10, TimeUnit.SECONDS));
        }
    }
}
