package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad inputs give PowerGCRA's exceptions, with messages naming the option and the value, and
 * inputs the contract answers locally (counts {@code <= 0}, batches above the ceiling) never
 * reach Redis. No Redis server needed: the bridge is a recording fake.
 */
class RedisGCRAValidationTest {

    /** A bridge that records each call's arguments and answers "admitted, 5 available". */
    static final class RecordingRedis implements RedisScriptExecutor {
        final List<List<String>> calls = new CopyOnWriteArrayList<>();

        @Override
        public Object evalsha(String sha1, List<String> keys, List<String> args) {
            calls.add(new ArrayList<>(args));
            return List.of(1L, 0L, 5L, 1_700_000_000L, 0L);
        }

        @Override
        public Object eval(String script, List<String> keys, List<String> args) {
            return evalsha(null, keys, args);
        }
    }

    private final RecordingRedis redis = new RecordingRedis();

    /** Calls run on the caller's thread: a deadline missed on a loaded machine must not turn into a refusal. */
    private RedisGCRA.Builder builder() {
        return RedisGCRA.builder().redis(redis).key("k").rate(10).enforceTimeout(false);
    }

    @ParameterizedTest
    @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -1.0})
    void rateThatIsNotFiniteAndPositiveIsRejectedNamingTheValue(double rate) {
        var e = assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().rate(rate));
        assertEquals("rate must be finite and > 0: " + rate, e.getMessage());
    }

    /** The seed's example message, verbatim. */
    @Test
    void nanRateMessageMatchesTheLibraryStyle() {
        var e = assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().rate(Double.NaN));
        assertEquals("rate must be finite and > 0: NaN", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, -0.5, -1.0})
    void burstThatIsNotFiniteAndNonNegativeIsRejectedNamingTheValue(double burst) {
        var e = assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().burst(burst));
        assertEquals("burst must be finite and >= 0: " + burst, e.getMessage());
    }

    @Test
    void zeroOrNegativePerIsRejected() {
        var zero = assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().per(Duration.ZERO));
        assertEquals("per must be > 0: PT0S", zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().per(Duration.ofSeconds(-1)));
    }

    @Test
    void nullsAreRejectedNamingTheParameter() {
        RedisGCRA.Builder b = RedisGCRA.builder();
        assertEquals("per", assertThrows(NullPointerException.class, () -> b.per(null)).getMessage());
        assertEquals("redis", assertThrows(NullPointerException.class, () -> b.redis(null)).getMessage());
        assertEquals("key", assertThrows(NullPointerException.class, () -> b.key(null)).getMessage());
        assertEquals("timeout", assertThrows(NullPointerException.class, () -> b.timeout(null)).getMessage());
        assertEquals("ticker", assertThrows(NullPointerException.class, () -> b.ticker(null)).getMessage());
        assertEquals("fallback", assertThrows(NullPointerException.class, () -> b.failOpen(null)).getMessage());
        assertEquals("probeInterval",
                assertThrows(NullPointerException.class, () -> b.probeInterval(null)).getMessage());
        assertEquals("callExecutor",
                assertThrows(NullPointerException.class, () -> b.callExecutor(null)).getMessage());
        assertEquals("evalsha", assertThrows(NullPointerException.class,
                () -> RedisScriptExecutor.of(null, (s, k, a) -> null)).getMessage());
    }

    @Test
    void emptyKeyZeroTimeoutAndNegativeProbeIntervalAreRejected() {
        assertEquals("key must not be empty: \"\"",
                assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().key("")).getMessage());
        assertEquals("timeout must be > 0: PT0S", assertThrows(IllegalArgumentException.class,
                () -> RedisGCRA.builder().timeout(Duration.ZERO)).getMessage());
        assertEquals("probeInterval must be >= 0: PT-1S", assertThrows(IllegalArgumentException.class,
                () -> RedisGCRA.builder().probeInterval(Duration.ofSeconds(-1))).getMessage());
    }

    @Test
    void buildWithoutRedisKeyOrRateFailsNamingWhatIsMissing() {
        assertTrue(assertThrows(IllegalStateException.class,
                () -> RedisGCRA.builder().key("k").rate(1).build()).getMessage().startsWith("redis is required"));
        assertTrue(assertThrows(IllegalStateException.class,
                () -> RedisGCRA.builder().redis(redis).rate(1).build()).getMessage().startsWith("key is required"));
        assertTrue(assertThrows(IllegalStateException.class,
                () -> RedisGCRA.builder().redis(redis).key("k").build()).getMessage().startsWith("rate is required"));
    }

    /** An emission interval under one nanosecond cannot be represented exactly, so it is refused. */
    @Test
    void rateAboveOnePerNanosecondIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> builder().rate(2e9).build());
        assertTrue(e.getMessage().startsWith("rate must be at most one operation per nanosecond"), e.getMessage());
    }

    /** A span beyond 2^52 ns would leave Lua's exact integer range, so it is refused. */
    @Test
    void burstSpanBeyondTwoToThe52NanosecondsIsRejected() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> builder().rate(1).per(Duration.ofDays(1)).burst(100).build());
        assertTrue(e.getMessage().startsWith("burst must keep"), e.getMessage());
        builder().rate(1).per(Duration.ofDays(1)).burst(50).build(); // 51 days fits
    }

    /** A duration beyond Long.MAX_VALUE nanoseconds is refused by its setter, naming the option, not by build() with an ArithmeticException. */
    @Test
    void durationsBeyondLongNanosecondsAreRejectedNamingTheOption() {
        Duration tooLong = Duration.ofDays(300 * 365L);
        assertEquals("per must be at most Long.MAX_VALUE ns (~292 years): PT2628000H",
                assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().per(tooLong)).getMessage());
        assertEquals("timeout must be at most Long.MAX_VALUE ns (~292 years): PT2628000H",
                assertThrows(IllegalArgumentException.class, () -> RedisGCRA.builder().timeout(tooLong)).getMessage());
        assertEquals("probeInterval must be at most Long.MAX_VALUE ns (~292 years): PT2628000H",
                assertThrows(IllegalArgumentException.class,
                        () -> RedisGCRA.builder().probeInterval(tooLong)).getMessage());
        Duration longest = Duration.ofNanos(Long.MAX_VALUE);
        builder().per(longest).rate(1e9).timeout(longest).probeInterval(longest).build(); // the largest fit
    }

    /** A rate so low that one emission interval exceeds 2^52 ns is reported as a rate problem, even at burst 0. */
    @Test
    void rateWhoseIntervalAloneIsTooLongIsRejectedNamingTheRate() {
        var e = assertThrows(IllegalArgumentException.class, () -> builder().rate(1e-9).burst(0).build());
        assertEquals("rate must keep per / rate <= 2^52 ns (about 52 days): 1.0E-9 per PT1S", e.getMessage());
        RedisGCRA limiter = builder().build();
        var set = assertThrows(IllegalArgumentException.class, () -> limiter.setRate(1e-9));
        assertEquals(e.getMessage(), set.getMessage());
    }

    /** failOpen(share) whose local rate the local PowerGCRA cannot hold is refused naming failOpen and the share. */
    @Test
    void failOpenShareTooSmallForTheLocalLimiterIsRejectedNamingIt() {
        var e = assertThrows(IllegalArgumentException.class, () -> builder().failOpen(1e-12).build());
        assertTrue(e.getMessage().startsWith("failOpen share 1.0E-12 of rate 10.0 per PT1S gives a local rate"
                + " of 1.0E-11 per PT1S, which the local PowerGCRA refuses: "), e.getMessage());
        assertTrue(e.getCause() instanceof IllegalArgumentException);
    }

    @Test
    void setRateWithABadValueThrowsAndChangesNothing() {
        RedisGCRA limiter = builder().rate(3).build();
        RedisGCRA.Stats before = limiter.stats();
        var e = assertThrows(IllegalArgumentException.class, () -> limiter.setRate(Double.NaN));
        assertEquals("rate must be finite and > 0: NaN", e.getMessage());
        assertEquals(before, limiter.stats());
    }

    /** Counts {@code <= 0} are a no-op that succeeds, answered without a Redis call. */
    @Test
    void zeroAndNegativeCountsSucceedWithoutCallingRedis() {
        RedisGCRA limiter = builder().build();
        assertTrue(limiter.tryConsume(0));
        assertTrue(limiter.tryConsume(-3));
        assertEquals(Take.admitted(), limiter.take(0));
        assertEquals(0, limiter.retryAfterNanos(-1));
        assertEquals(Duration.ZERO, limiter.retryAfter(0));
        assertEquals(List.of(), redis.calls);
    }

    /** A batch above {@code burst + 1} is refused by tryConsume without a Redis call. */
    @Test
    void tryConsumeAboveTheCeilingIsRefusedWithoutCallingRedis() {
        RedisGCRA limiter = builder().burst(20).build();
        assertFalse(limiter.tryConsume(22));
        assertEquals(List.of(), redis.calls);
    }

    /** The seed: retryAfter(22) at burst 20 throws, since no wait could ever admit it; take propagates. */
    @Test
    void retryAfterAndTakeAboveTheCeilingThrow() {
        RedisGCRA limiter = builder().burst(20).build();
        var e = assertThrows(IllegalArgumentException.class, () -> limiter.retryAfterNanos(22));
        assertTrue(e.getMessage().startsWith("n must be <= burst + 1 (21): 22"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> limiter.retryAfter(22));
        assertThrows(IllegalArgumentException.class, () -> limiter.take(22));
        assertEquals(List.of(), redis.calls);
    }

    /** A fractional burst floors: 2.9 admits batches of 3, not 4. */
    @Test
    void fractionalBurstFloors() {
        RedisGCRA limiter = builder().burst(2.9).build();
        assertThrows(IllegalArgumentException.class, () -> limiter.take(4));
        assertTrue(limiter.take(3).ok());
        assertEquals(2 * limiter.stats().emissionIntervalNanos(), limiter.stats().delayToleranceNanos());
    }

    /** The script receives the interval rounded up to a whole nanosecond, and floor(burst) intervals. */
    @Test
    void scriptArgumentsCarryTheIntervalRoundedUpAndTheTolerance() {
        RedisGCRA limiter = builder().rate(3).burst(7).build();
        limiter.tryConsume(2);
        limiter.available();
        assertEquals(List.of(
                List.of("T", "333333334", Long.toString(7 * 333_333_334L), "2"),
                List.of("P", "333333334", Long.toString(7 * 333_333_334L), "1")), redis.calls);
        assertEquals(333_333_334L, limiter.stats().emissionIntervalNanos());
    }

    /** setRate changes the interval sent with the next call. */
    @Test
    void setRateAppliesToTheNextCall() {
        RedisGCRA limiter = builder().rate(10).burst(1).build();
        limiter.setRate(20);
        limiter.tryConsume();
        assertEquals(List.of("T", "50000000", "50000000", "1"), redis.calls.get(0));
        assertEquals(20.0, limiter.stats().rate());
    }

    /** A {@code per} other than one second scales the interval. */
    @Test
    void perScalesTheEmissionInterval() {
        RedisGCRA limiter = builder().rate(1).per(Duration.ofMillis(1000)).burst(0).build();
        assertEquals(1_000_000_000L, limiter.stats().emissionIntervalNanos());
        assertEquals(0L, limiter.stats().delayToleranceNanos());
        RedisGCRA perMinute = builder().rate(120).per(Duration.ofMinutes(1)).build();
        assertEquals(500_000_000L, perMinute.stats().emissionIntervalNanos());
    }
}
