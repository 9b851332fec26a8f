package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;

/** The seed's PowerGCRA contract, driven by a {@link FakeTicker}. */
class PowerGCRATest {

    private static final long MS = 1_000_000L;
    private static final long S = 1_000_000_000L;

    private final FakeTicker clock = new FakeTicker(123_456_789L);

    private PowerGCRA gcra(double rate, Duration per, double burst) {
        return PowerGCRA.builder().rate(rate).per(per).burst(burst).ticker(clock).build();
    }

    private PowerGCRA gcra(double rate, double burst) {
        return gcra(rate, Duration.ofSeconds(1), burst);
    }

    // --- Batches (seed: rate 1 per 1000 ms, burst 0) ---------------------------------------------

    /** The first operation is free: an idle limiter with burst 0 reports one available. */
    @Test
    void idleLimiterWithBurstZeroHasOneAvailable() {
        assertEquals(1, gcra(1, Duration.ofMillis(1000), 0).available());
    }

    /** Five operations at 1/s span four seconds, past a burst of 0: refused. */
    @Test
    void batchWhoseSpanExceedsToleranceIsRefused() {
        assertFalse(gcra(1, Duration.ofMillis(1000), 0).tryConsume(5));
    }

    /** After the refused batch the single operation is still admitted (refusal consumed nothing). */
    @Test
    void singleOperationAdmittedAfterRefusedBatch() {
        PowerGCRA l = gcra(1, Duration.ofMillis(1000), 0);
        assertFalse(l.tryConsume(5));
        assertTrue(l.tryConsume());
    }

    /** The admission check uses the pre-update TAT, so the very first operation is admitted. */
    @Test
    void firstOperationIsAdmittedAgainstPreUpdateTat() {
        PowerGCRA l = gcra(1, 0);
        assertTrue(l.tryConsume());
        assertFalse(l.tryConsume());
    }

    // --- Batches (seed: rate 100, burst 20) --------------------------------------------------------

    /** Burst 20 covers 21 operations back to back. */
    @Test
    void burstCoversBurstPlusOneBackToBack() {
        assertTrue(gcra(100, 20).tryConsume(21));
    }

    /** 22 is one past the ceiling: refused even on an idle limiter. */
    @Test
    void batchOnePastCeilingIsRefused() {
        PowerGCRA l = gcra(100, 20);
        assertFalse(l.tryConsume(22));
        assertEquals(21, l.available());
    }

    /** retryAfter(22) throws: no wait could ever admit it. */
    @Test
    void retryAfterAboveCeilingThrows() {
        PowerGCRA l = gcra(100, 20);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> l.retryAfter(22));
        assertTrue(e.getMessage().contains("22"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> l.retryAfterNanos(22));
    }

    /** take(n) propagates the ceiling error rather than inventing a wait. */
    @Test
    void takeAboveCeilingThrows() {
        assertThrows(IllegalArgumentException.class, () -> gcra(100, 20).take(22));
    }

    /** The seed's example: take() is ok, and once refused it carries the exact wait (10 ms at 100/s). */
    @Test
    void takeReturnsOkThenExactRetryAfter() {
        PowerGCRA l = gcra(100, 20);
        assertTrue(l.take().ok());
        assertTrue(l.tryConsume(20));
        Take refused = l.take();
        assertFalse(refused.ok());
        assertEquals(10 * MS, refused.retryAfterNanos());
        assertEquals(Duration.ofMillis(10), refused.retryAfter());
        clock.advanceNanos(refused.retryAfterNanos() - 1);
        assertFalse(l.take().ok());
        clock.advanceNanos(1);
        assertTrue(l.take().ok());
    }

    // --- retryAfter --------------------------------------------------------------------------------

    /** At 7/s the wait is 142.857142857 ms, rounded up to a whole nanosecond and exact. */
    @Test
    void retryAfterAtSevenPerSecondIsFractionalMillisRoundedUp() {
        PowerGCRA l = gcra(7, 0);
        assertTrue(l.tryConsume());
        assertEquals(142_857_143L, l.retryAfterNanos());
        assertEquals(Duration.ofNanos(142_857_143L), l.retryAfter());
        clock.advanceNanos(142_857_142L);
        assertFalse(l.tryConsume());
        clock.advanceNanos(1);
        assertTrue(l.tryConsume());
    }

    /** retryAfter(n) grows by (n - 1) emission intervals beyond the single-operation wait. */
    @Test
    void retryAfterGrowsByNMinusOneIntervals() {
        PowerGCRA l = gcra(10, 4);
        assertTrue(l.tryConsume(5));
        clock.advanceMillis(30);
        long one = l.retryAfterNanos(1);
        assertEquals(70 * MS, one);
        for (long n = 2; n <= 5; n++) {
            assertEquals(one + (n - 1) * 100 * MS, l.retryAfterNanos(n), "n=" + n);
        }
    }

    /** retryAfter is 0 when the batch would be admitted now. */
    @Test
    void retryAfterIsZeroWhenAdmittedNow() {
        PowerGCRA l = gcra(100, 20);
        assertEquals(0, l.retryAfterNanos(21));
        assertEquals(Duration.ZERO, l.retryAfter());
    }

    /** Waiting exactly retryAfter(n) and retrying succeeds; one nanosecond less does not (random states). */
    @Test
    void retryAfterIsNeverEarlyAndNeverLate() {
        Random rnd = new Random(42);
        double[] rates = {3, 7, 100, 300_000.0 / 7, 1e6 / 3};
        for (double rate : rates) {
            PowerGCRA l = gcra(rate, 5);
            for (int i = 0; i < 2_000; i++) {
                clock.advanceNanos(rnd.nextInt(1 + (int) (2 * S / rate)));
                l.tryConsume(1 + rnd.nextInt(6));
                long n = 1 + rnd.nextInt(6);
                long wait = l.retryAfterNanos(n);
                if (wait > 0) {
                    clock.advanceNanos(wait - 1);
                    assertFalse(l.available() >= n, "early at rate " + rate);
                    clock.advanceNanos(1);
                }
                assertTrue(l.tryConsume(n), "late at rate " + rate);
            }
        }
    }

    // --- available -----------------------------------------------------------------------------------

    /** rate 3, burst 7 reports 8 at an idle instant (a float division would read 6.999... and say 7). */
    @Test
    void availableAtRateThreeBurstSevenIsEight() {
        assertEquals(8, gcra(3, 7).available());
    }

    /** available() is burst + 1 at an idle instant for every rate. */
    @Test
    void availableIsBurstPlusOneWhenIdleForEveryRate() {
        double[] rates = {0.001, 0.1, 1, 3, 7, 9.9, 100, 1e5 / 7, 300_000.0 / 7, 1e6 / 3, 1e9, 3e9};
        double[] bursts = {0, 1, 7, 20, 50, 999.9};
        for (double rate : rates) {
            for (double burst : bursts) {
                assertEquals((long) Math.floor(burst) + 1, gcra(rate, burst).available(),
                        "rate " + rate + ", burst " + burst);
            }
        }
    }

    /** tryConsume(n) succeeds exactly when available() >= n, at every instant (random walk). */
    @Test
    void tryConsumeAndAvailableAgreeExactly() {
        Random rnd = new Random(7);
        for (double rate : new double[] {3, 7, 100, 300_000.0 / 7}) {
            PowerGCRA l = gcra(rate, 7);
            for (int i = 0; i < 5_000; i++) {
                clock.advanceNanos(rnd.nextInt(1 + (int) (S / rate)));
                long a = l.available();
                assertFalse(l.tryConsume(a + 1), "tryConsume(available + 1) at rate " + rate);
                if (a > 0) {
                    long n = 1 + rnd.nextInt((int) a);
                    assertTrue(l.tryConsume(n), "tryConsume(n <= available) at rate " + rate);
                    assertEquals(a - n, l.available());
                }
            }
        }
    }

    /** hasCapacity() is available() >= 1. */
    @Test
    void hasCapacityMatchesAvailable() {
        PowerGCRA l = gcra(1, 0);
        assertTrue(l.hasCapacity());
        assertTrue(l.tryConsume());
        assertFalse(l.hasCapacity());
        clock.advance(Duration.ofSeconds(1));
        assertTrue(l.hasCapacity());
    }

    // --- request counts --------------------------------------------------------------------------------

    /** Counts of zero or below are a no-op that succeeds and consumes nothing. */
    @Test
    void nonPositiveCountsAreNoOps() {
        PowerGCRA l = gcra(1, 0);
        assertTrue(l.tryConsume());
        for (long n : new long[] {0, -1, Long.MIN_VALUE}) {
            assertTrue(l.tryConsume(n));
            assertEquals(0, l.retryAfterNanos(n));
            assertTrue(l.take(n).ok());
            assertTrue(l.tryConsumeCatchingUp(n, 0));
        }
        assertEquals(S, l.retryAfterNanos());
    }

    /** A huge count is refused by tryConsume (no overflow admits it). */
    @Test
    void hugeCountIsRefused() {
        PowerGCRA l = gcra(100, 20);
        assertFalse(l.tryConsume(Long.MAX_VALUE));
        assertEquals(21, l.available());
    }

    /** A refused attempt does not push the TAT (or the next allowed time) further out. */
    @Test
    void refusedAttemptDoesNotMoveTat() {
        PowerGCRA l = gcra(10, 2);
        assertTrue(l.tryConsume(3));
        double tat = l.stats().tatNanos();
        long wait = l.retryAfterNanos();
        for (int i = 0; i < 10; i++) {
            assertFalse(l.tryConsume());
            assertFalse(l.take(2).ok());
        }
        assertEquals(tat, l.stats().tatNanos());
        assertEquals(wait, l.retryAfterNanos());
    }

    // --- lateness and drift ------------------------------------------------------------------------

    private static long pollGrid(PowerGCRA l, FakeTicker clock, long stepNanos, long steps) {
        long admitted = 0;
        for (long i = 0; i <= steps; i++) {
            if (l.tryConsume()) {
                admitted++;
            }
            clock.advanceNanos(stepNanos);
        }
        return admitted;
    }

    private void assertNoDrift(double rate, long stepNanos, long seconds) {
        PowerGCRA l = gcra(rate, 1);
        long admitted = pollGrid(l, clock, stepNanos, seconds * S / stepNanos);
        long expected = (long) Math.floor(seconds * rate) + 1 + 1;
        assertTrue(Math.abs(admitted - expected) <= 1,
                "rate " + rate + ": admitted " + admitted + ", expected " + expected + " +-1");
    }

    /** 3/s (333333333.3 ns interval) polled every 1 ms with burst 1 for 2000 s: no drift. */
    @Test
    void noDriftAtThreePerSecond() {
        assertNoDrift(3, MS, 2_000);
    }

    /** 7/s (142857142.857 ns interval) polled every 1 ms with burst 1 for 2000 s: no drift. */
    @Test
    void noDriftAtSevenPerSecond() {
        assertNoDrift(7, MS, 2_000);
    }

    /** 300000/7 per second (23333.33 ns interval) polled every 1 us with burst 1 for 10 s: no drift. */
    @Test
    void noDriftAtThreeHundredThousandSevenths() {
        assertNoDrift(300_000.0 / 7, 1_000, 10);
    }

    /** Documented behaviour: with burst 0, a poller on a coarse grid runs slow (lateness is forgotten). */
    @Test
    void burstZeroForgetsLatenessSoCoarsePollerRunsSlow() {
        PowerGCRA l = gcra(3, 0);
        long admitted = pollGrid(l, clock, MS, 1_000 * S / MS);
        // each admission lands on the first 1 ms grid point after its due time: 334 ms apart, not 333.3
        assertTrue(3_000 - admitted >= 4, "admitted " + admitted);
    }

    /** The pacing hook keeps the lateness: burst 0, coarse grid, exact long-run rate. */
    @Test
    void catchingUpHoldsTheRateWithBurstZero() {
        PowerGCRA l = gcra(7, 0);
        long admitted = 0;
        for (long i = 0; i <= 1_000_000; i++) {
            while (l.tryConsumeCatchingUp(1, 5 * MS)) {
                admitted++;
            }
            clock.advanceNanos(MS);
        }
        long expected = (long) Math.floor(1_000 * 7.0) + 1;
        assertTrue(Math.abs(admitted - expected) <= 1, "admitted " + admitted + ", expected " + expected);
    }

    /** A dispatcher woken 10 ms late at 1000/s, burst 0, admits the ten due operations in one wake-up. */
    @Test
    void catchingUpAdmitsSeveralDueOperationsPerWakeUp() {
        PowerGCRA l = gcra(1000, 0);
        assertTrue(l.tryConsumeCatchingUp(1, 20 * MS));
        clock.advanceMillis(11);
        int n = 0;
        while (l.tryConsumeCatchingUp(1, 20 * MS)) {
            n++;
        }
        assertEquals(11, n);
        assertFalse(l.tryConsume());
        assertEquals(MS, l.retryAfterNanos());
    }

    /** The hook makes the same admission check as tryConsume(n): it refuses what tryConsume refuses. */
    @Test
    void catchingUpMakesTheSameAdmissionCheck() {
        PowerGCRA l = gcra(10, 2);
        assertFalse(l.tryConsumeCatchingUp(4, S));
        assertTrue(l.tryConsumeCatchingUp(3, S));
        assertFalse(l.tryConsumeCatchingUp(1, S));
        assertEquals(0, l.available());
    }

    /** With maxCatchUpNanos 0 the hook is exactly tryConsume (the burst-0 poller runs slow again). */
    @Test
    void catchingUpWithZeroIsTryConsume() {
        PowerGCRA a = gcra(3, 0);
        PowerGCRA b = gcra(3, 0);
        for (int i = 0; i < 100_000; i++) {
            assertEquals(a.tryConsume(), b.tryConsumeCatchingUp(1, 0), "step " + i);
            clock.advanceNanos(MS);
        }
    }

    /** At a fresh reading, the reading-taking hook decides exactly as the clock-reading one. */
    @Test
    void catchingUpAtTheCurrentReadingIsCatchingUp() {
        PowerGCRA a = gcra(7, 0);
        PowerGCRA b = gcra(7, 0);
        for (int i = 0; i < 100_000; i++) {
            assertEquals(a.tryConsumeCatchingUp(1, 5 * MS), b.tryConsumeCatchingUpAt(1, 5 * MS, clock.read()), "step " + i);
            clock.advanceNanos(MS);
        }
    }

    /**
     * A reading older than one the limiter has seen is stale, not a backwards clock: it counts as
     * the newest reading seen (no clock error) and admits exactly what is due at that reading.
     */
    @Test
    void aStaleReadingCountsAsTheNewestReadingSeen() {
        List<Long> errors = new ArrayList<>();
        PowerGCRA l = PowerGCRA.builder().rate(1000).burst(9).ticker(clock).onError(errors::add).build();
        long stale = clock.read();
        clock.advanceMillis(3);
        assertTrue(l.tryConsume()); // the limiter has seen +3 ms; TAT +4 ms, of a 10 ms tolerance
        int n = 0;
        while (l.tryConsumeCatchingUpAt(1, 0, stale)) {
            n++;
        }
        assertEquals(9, n); // as at +3 ms; at the stale reading itself only 6 would fit
        assertEquals(0, l.clockErrors());
        assertEquals(List.of(), errors);
    }

    /**
     * A caller's reading from before a backwards clock step (ahead of the shifted timeline) is
     * not recorded as seen: the next ordinary reading raises no second clock error.
     */
    @Test
    void aReadingFromBeforeABackwardsStepRaisesNoSecondClockError() {
        FakeTicker stepping = new FakeTicker(10_000_000_000L);
        List<Long> errors = new ArrayList<>();
        PowerGCRA l = PowerGCRA.builder().rate(1000).ticker(stepping).onError(errors::add).build();
        assertTrue(l.tryConsume());
        long workerReading = stepping.read(); // a worker's task-end time
        stepping.set(workerReading - 5_000_000_000L); // the stepping steps back 5 s
        l.tryConsume(); // the one real report
        assertEquals(1, l.clockErrors());
        stepping.advanceNanos(2_000_000);
        l.tryConsumeCatchingUpAt(1, 1_000_000, workerReading); // 5 s "ahead" of the new timeline
        stepping.advanceNanos(1_000);
        l.tryConsume(); // an ordinary, monotonic reading
        assertEquals(1, l.clockErrors());
        assertEquals(1, errors.size());
    }

    /** Catch-up credit never outlives maxCatchUpNanos: after a long idle only burst + 1 + catch-up. */
    @Test
    void catchingUpIsBoundedAfterIdle() {
        PowerGCRA l = gcra(1000, 0);
        clock.advance(Duration.ofSeconds(10));
        int n = 0;
        while (l.tryConsumeCatchingUp(1, 5 * MS)) {
            n++;
        }
        assertEquals(5 + 1, n);
    }

    // --- setRate -----------------------------------------------------------------------------------

    /** setRate rescales the outstanding backlog: the wait for the next slot scales with the interval. */
    @Test
    void setRateRescalesBacklog() {
        PowerGCRA l = gcra(10, 0);
        assertTrue(l.tryConsume());
        assertEquals(100 * MS, l.retryAfterNanos());
        l.setRate(20);
        assertEquals(20.0, l.rate());
        assertEquals(50 * MS, l.retryAfterNanos());
        l.setRate(5);
        assertEquals(200 * MS, l.retryAfterNanos());
        clock.advanceMillis(200);
        assertTrue(l.tryConsume());
        assertEquals(200 * MS, l.retryAfterNanos());
    }

    /** setRate leaves available() as it was, and an idle limiter idle. */
    @Test
    void setRateKeepsAvailable() {
        PowerGCRA l = gcra(3, 7);
        assertTrue(l.tryConsume(5));
        clock.advanceMillis(100);
        long before = l.available();
        l.setRate(7);
        assertEquals(before, l.available());
        PowerGCRA idle = gcra(3, 7);
        idle.setRate(1e5 / 7);
        assertEquals(8, idle.available());
    }

    /**
     * On a frozen clock, every setRate keeps available() exactly: after k admissions, any
     * sequence of rate switches leaves burst + 1 - k (the rescale of the backlog rounds neither a
     * whole admission away nor one into existence). This is the single-threaded form of the
     * concurrent test's occasional 199 of 200.
     */
    @Test
    void setRateOnAFrozenClockNeverChangesAvailable() {
        double[] rates = {3000, 1000.0 / 7, 2000, 1000, 7, 1e5 / 3, 333.3};
        Random random = new Random(23);
        for (int round = 0; round < 50; round++) {
            PowerGCRA l = PowerGCRA.builder().rate(1000).burst(199).ticker(new FakeTicker(round * 12_345L)).build();
            long admitted = 0;
            for (int step = 0; step < 400; step++) {
                if (random.nextBoolean() && l.tryConsume()) {
                    admitted++;
                }
                double rate = rates[random.nextInt(rates.length)];
                l.setRate(rate);
                assertEquals(200 - admitted, l.available(),
                        "round " + round + ", step " + step + ", after setRate(" + rate + ")");
            }
        }
    }

    /** setRate validates like the builder's rate and changes nothing on a bad value. */
    @Test
    void setRateRejectsBadValuesAndChangesNothing() {
        PowerGCRA l = gcra(10, 0);
        assertTrue(l.tryConsume());
        for (double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0, -1}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> l.setRate(bad));
            assertTrue(e.getMessage().contains("rate") && e.getMessage().contains(String.valueOf(bad)), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> l.setRate(1e30));
        assertEquals(10.0, l.rate());
        assertEquals(100 * MS, l.retryAfterNanos());
    }

    // --- reset, close, stats ---------------------------------------------------------------------------

    /** reset() is a hard clear: the limiter is idle again. */
    @Test
    void resetIsHardClear() {
        PowerGCRA l = gcra(1, 4);
        assertTrue(l.tryConsume(5));
        assertEquals(0, l.available());
        l.reset();
        assertEquals(5, l.available());
        assertEquals(0, l.retryAfterNanos(5));
    }

    /** reset() also drops catch-up credit: it clears, it does not refill beyond idle. */
    @Test
    void resetDropsCatchUpCredit() {
        PowerGCRA l = gcra(1000, 0);
        clock.advanceMillis(50);
        l.reset();
        assertTrue(l.tryConsumeCatchingUp(1, 20 * MS));
        assertFalse(l.tryConsumeCatchingUp(1, 20 * MS));
    }

    /** close() clears state and leaves the limiter usable. */
    @Test
    void closeClearsStateAndStaysUsable() {
        PowerGCRA l = gcra(1, 0);
        assertTrue(l.tryConsume());
        l.close();
        assertTrue(l.tryConsume());
        assertFalse(l.tryConsume());
    }

    /** stats() reports rate, per, burst, interval and tolerance in nanoseconds, and the TAT on the ticker scale. */
    @Test
    void statsReportsConfigurationAndTat() {
        PowerGCRA l = gcra(100, 20);
        long t0 = clock.read();
        assertTrue(l.tryConsume(3));
        PowerGCRA.Stats s = l.stats();
        assertEquals(100.0, s.rate());
        assertEquals(Duration.ofSeconds(1), s.per());
        assertEquals(20, s.burst());
        assertEquals(1e7, s.emissionIntervalNanos());
        assertEquals(2e8, s.delayToleranceNanos());
        assertEquals(t0 + 3e7, s.tatNanos(), 1e-3);
        assertEquals(Duration.ofSeconds(1), l.per());
        assertEquals(20, l.burst());
    }

    /** A fractional burst floors. */
    @Test
    void fractionalBurstFloors() {
        PowerGCRA l = gcra(1, 2.9);
        assertEquals(2, l.burst());
        assertEquals(3, l.available());
    }

    /** per is honoured: rate 1 per 1000 ms is one per second. */
    @Test
    void perSetsTheUnit() {
        PowerGCRA l = gcra(30, Duration.ofMinutes(1), 0);
        assertTrue(l.tryConsume());
        assertEquals(2 * S, l.retryAfterNanos());
    }

    // --- long runs, rebase, wrap -------------------------------------------------------------------

    /** After a year idle the limiter is idle (burst + 1) and paces exactly. */
    @Test
    void longIdleIsIdle() {
        PowerGCRA l = gcra(10, 3);
        assertTrue(l.tryConsume(4));
        clock.advance(Duration.ofDays(365));
        assertEquals(4, l.available());
        assertTrue(l.tryConsume(4));
        assertEquals(100 * MS, l.retryAfterNanos());
    }

    /** Readings that wrap past Long.MAX_VALUE (nanoTime may) do not disturb pacing. */
    @Test
    void readingsWrappingPastLongMaxArePacedExactly() {
        clock.set(Long.MAX_VALUE - 5 * S);
        PowerGCRA l = gcra(10, 0);
        long admitted = pollGrid(l, clock, MS, 10_000);
        assertEquals(101, admitted);
    }

    /** A backlog survives the periodic internal rebase (readings far from the first one). */
    @Test
    void backlogSurvivesRebase() {
        PowerGCRA l = gcra(1, Duration.ofHours(1), 2);
        assertTrue(l.tryConsume(3));
        for (int i = 0; i < 10; i++) {
            clock.advance(Duration.ofMinutes(5));
            assertFalse(l.tryConsume(), "minute " + (i + 1) * 5);
        }
        assertEquals(Duration.ofMinutes(10), l.retryAfter());
        clock.advance(Duration.ofMinutes(10));
        assertTrue(l.tryConsume());
    }

    // --- clock -------------------------------------------------------------------------------------

    /** A backwards step calls onError with the offending reading; state is kept (time stood still). */
    @Test
    void clockBackwardsCallsOnErrorWithReadingAndKeepsState() {
        List<Long> readings = new ArrayList<>();
        PowerGCRA l = PowerGCRA.builder().rate(1).ticker(clock).onError(readings::add).build();
        clock.set(10 * S);
        assertTrue(l.tryConsume());
        clock.set(5 * S);
        assertFalse(l.tryConsume());
        assertEquals(List.of(5 * S), readings);
        assertEquals(S, l.retryAfterNanos());
        clock.advance(Duration.ofSeconds(1));
        assertTrue(l.tryConsume());
        assertEquals(List.of(5 * S), readings);
        assertEquals(1, l.clockErrors());
    }

    /** Without onError a backwards step throws once, naming both readings; the limiter stays usable. */
    @Test
    void clockBackwardsWithoutOnErrorThrowsOnceAndStaysUsable() {
        PowerGCRA l = gcra(1, 0);
        clock.set(10 * S);
        assertTrue(l.tryConsume());
        clock.set(4 * S);
        IllegalStateException e = assertThrows(IllegalStateException.class, l::tryConsume);
        assertTrue(e.getMessage().contains(String.valueOf(4 * S)) && e.getMessage().contains(String.valueOf(10 * S)),
                e.getMessage());
        assertFalse(l.tryConsume());
        assertEquals(S, l.retryAfterNanos());
        clock.advance(Duration.ofSeconds(1));
        assertTrue(l.tryConsume());
    }

    /** An onError that throws is counted and does not break the call. */
    @Test
    void throwingOnErrorIsCountedAndSwallowed() {
        PowerGCRA l = PowerGCRA.builder().rate(1).ticker(clock).onError(r -> {
            throw new IllegalStateException("boom");
        }).build();
        clock.set(10 * S);
        assertTrue(l.tryConsume());
        clock.set(3 * S);
        assertFalse(l.tryConsume());
        assertEquals(1, l.callbackFailures());
        assertEquals(1, l.clockErrors());
    }

    /** onError is never called for a refusal. */
    @Test
    void onErrorIsNotCalledOnRefusal() {
        AtomicLong calls = new AtomicLong();
        PowerGCRA l = PowerGCRA.builder().rate(1).ticker(clock).onError(r -> calls.incrementAndGet()).build();
        assertTrue(l.tryConsume());
        for (int i = 0; i < 10; i++) {
            assertFalse(l.tryConsume());
        }
        assertEquals(0, calls.get());
    }

    /** The injected ticker is the only clock: a ticker that never moves means no refill, ever. */
    @Test
    void injectedTickerIsTheOnlyClock() throws InterruptedException {
        PowerGCRA l = gcra(1e6, 0);
        assertTrue(l.tryConsume());
        Thread.sleep(5);
        assertFalse(l.tryConsume());
    }

    // --- validation --------------------------------------------------------------------------------

    private static void assertRejects(String option, String value, Runnable r) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().contains(option) && e.getMessage().contains(value), e.getMessage());
    }

    /** rate must be finite and > 0. */
    @Test
    void rateValidation() {
        for (double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0, -0.0, -5}) {
            assertRejects("rate", String.valueOf(bad), () -> PowerGCRA.builder().rate(bad));
        }
        assertRejects("rate", "required", () -> PowerGCRA.builder().build());
    }

    /** per must be non-null and > 0. */
    @Test
    void perValidation() {
        assertThrows(NullPointerException.class, () -> PowerGCRA.builder().per(null));
        assertRejects("per", "PT0S", () -> PowerGCRA.builder().per(Duration.ZERO));
        assertRejects("per", "PT-1S", () -> PowerGCRA.builder().per(Duration.ofSeconds(-1)));
        assertRejects("per", "PT", () -> PowerGCRA.builder().per(Duration.ofDays(365L * 1000)));
    }

    /** burst must be finite and >= 0. */
    @Test
    void burstValidation() {
        for (double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -1, -0.5}) {
            assertRejects("burst", String.valueOf(bad), () -> PowerGCRA.builder().burst(bad));
        }
        assertRejects("burst", "rate", () -> PowerGCRA.builder().rate(1).burst(1e30).build());
    }

    /** ticker and onError must be non-null. */
    @Test
    void tickerAndOnErrorValidation() {
        NullPointerException t = assertThrows(NullPointerException.class, () -> PowerGCRA.builder().ticker(null));
        assertEquals("ticker", t.getMessage());
        NullPointerException o = assertThrows(NullPointerException.class, () -> PowerGCRA.builder().onError(null));
        assertEquals("onClockError", o.getMessage());
    }

    /** A rate too high for per (interval below 2^-20 ns) is rejected at build. */
    @Test
    void absurdRateRejectedAtBuild() {
        assertRejects("rate", "1.0E30", () -> PowerGCRA.builder().rate(1e30).build());
    }
}
