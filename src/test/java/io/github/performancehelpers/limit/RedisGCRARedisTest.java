package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * PowerGCRA's contract, evaluated by the Lua script in a real Redis on loopback. Exact
 * comparisons use the TAT stored in Redis and the {@code TIME} the script itself read, so they do
 * not depend on how long a call took.
 */
@Tag("redis")
class RedisGCRARedisTest {

    private static JedisPooled jedis;

    /** Per test rather than @BeforeAll, so a missing server reports every test as skipped, with the reason. */
    @BeforeEach
    void connect() {
        if (jedis == null) {
            jedis = RedisTestServer.shared().client(30_000);
        }
    }

    @AfterAll
    static void disconnect() {
        if (jedis != null) {
            jedis.close();
        }
    }

    private static String freshKey() {
        return "ph-test:" + UUID.randomUUID();
    }

    private static RedisGCRA.Builder limiter(String key) {
        return RedisGCRA.builder().redis(JedisBridge.of(jedis)).key(key).timeout(Duration.ofSeconds(60));
    }

    /** The TAT stored in the key, in nanoseconds on Redis's clock. */
    private static long storedTatNanos(String key) {
        String v = jedis.get(key);
        String[] parts = v.split(":");
        return Long.parseLong(parts[0]) * 1_000_000_000L + Long.parseLong(parts[1]);
    }

    /** The digest RedisGCRA sends with EVALSHA is the one Redis computes for the script. */
    @Test
    void scriptDigestMatchesRedis() {
        assertEquals(jedis.scriptLoad(RedisGCRA.SCRIPT), RedisGCRA.SCRIPT_SHA1);
    }

    /** After SCRIPT FLUSH, EVALSHA's NOSCRIPT is answered by one EVAL and the call succeeds. */
    @Test
    void scriptCacheFlushIsSurvived() {
        RedisGCRA gcra = limiter(freshKey()).rate(10).build();
        jedis.scriptFlush();
        assertTrue(gcra.tryConsume());
        assertEquals(1, gcra.stats().scriptLoads());
        assertTrue(gcra.available() >= 0);
        assertEquals(1, gcra.stats().scriptLoads());
        assertEquals(0, gcra.stats().failures());
    }

    /** The seed: at 1 per second with burst 0, one operation is available and a batch of 5 is refused. */
    @Test
    void seedExampleFirstOperationIsFreeAndABatchOfFiveIsRefused() {
        RedisGCRA gcra = limiter(freshKey()).rate(1).per(Duration.ofMillis(1000)).burst(0).build();
        assertEquals(1, gcra.available());
        assertFalse(gcra.tryConsume(5));
        assertTrue(gcra.tryConsume());
    }

    /** The seed: at 100/s, burst 20 covers 21 back to back; 22 is past the ceiling and retryAfter(22) throws. */
    @Test
    void seedExampleBurstCoversTwentyOneButNotTwentyTwo() {
        RedisGCRA gcra = limiter(freshKey()).rate(100).per(Duration.ofMillis(1000)).burst(20).build();
        assertTrue(gcra.tryConsume(21));
        assertFalse(gcra.tryConsume(22));
        assertThrows(IllegalArgumentException.class, () -> gcra.retryAfter(22));
    }

    /** At rate 3 and burst 7, an idle key reports 8 available, not the 7 a division would give. */
    @Test
    void idleKeyReportsBurstPlusOne() {
        RedisGCRA gcra = limiter(freshKey()).rate(3).burst(7).build();
        assertEquals(8, gcra.available());
        assertTrue(gcra.hasCapacity());
        assertTrue(gcra.tryConsume(8));
    }

    /** tryConsume(n) admits iff available() >= n; a partial batch consumes nothing. */
    @Test
    void batchIsAdmittedOnlyWhenAvailableCoversIt() {
        String key = freshKey();
        RedisGCRA gcra = limiter(key).rate(1).per(Duration.ofHours(1)).burst(4).build();
        assertEquals(5, gcra.available());
        assertTrue(gcra.tryConsume(2));
        assertEquals(3, gcra.available());
        long tat = storedTatNanos(key);
        assertFalse(gcra.tryConsume(4));
        assertEquals(tat, storedTatNanos(key));
        assertTrue(gcra.tryConsume(3));
        assertEquals(0, gcra.available());
        assertFalse(gcra.hasCapacity());
    }

    /** A refused attempt leaves the stored TAT and its expiry untouched. */
    @Test
    void refusedAttemptDoesNotMoveTheTat() {
        String key = freshKey();
        RedisGCRA gcra = limiter(key).rate(1).per(Duration.ofHours(1)).build();
        assertTrue(gcra.take().ok());
        String before = jedis.get(key);
        for (int i = 0; i < 5; i++) {
            assertFalse(gcra.take().ok());
        }
        assertEquals(before, jedis.get(key));
    }

    /** An admission moves the TAT to max(now, tat) + n * interval, exactly, on Redis's clock. */
    @Test
    void admissionAdvancesTheTatByExactlyNIntervals() throws Exception {
        String key = freshKey();
        RedisGCRA gcra = limiter(key).rate(7).per(Duration.ofMinutes(1)).burst(7).build();
        assertEquals(8_571_428_572L, gcra.stats().emissionIntervalNanos()); // 60 s / 7, rounded up
        long interval = gcra.stats().emissionIntervalNanos();
        RedisGCRA.Reply first = gcra.rawCall("T", 5);
        assertTrue(first.ok());
        assertEquals(first.redisMicros() * 1_000 + 5 * interval, storedTatNanos(key));
        RedisGCRA.Reply second = gcra.rawCall("T", 2);
        assertTrue(second.ok());
        assertEquals(first.redisMicros() * 1_000 + 7 * interval, storedTatNanos(key));
    }

    /**
     * retryAfter agrees with the Lua side: the wait the script reports is exactly
     * {@code (tat - now) + (n - 1) * interval - tolerance} for the stored TAT and the script's now.
     */
    @Test
    void retryAfterIsExactAgainstTheStoredTat() throws Exception {
        String key = freshKey();
        RedisGCRA gcra = limiter(key).rate(7).per(Duration.ofMinutes(1)).burst(7).build();
        long interval = gcra.stats().emissionIntervalNanos();
        long tolerance = gcra.stats().delayToleranceNanos();
        assertTrue(gcra.take(8).ok());
        long tat = storedTatNanos(key);
        for (int n = 1; n <= 8; n++) {
            RedisGCRA.Reply peek = gcra.rawCall("P", n);
            long expected = tat - peek.redisMicros() * 1_000 + (n - 1) * interval - tolerance;
            assertEquals(expected, peek.retryAfterNanos(), "n=" + n);
            assertFalse(peek.ok());
        }
        RedisGCRA.Reply earlier = gcra.rawCall("P", 3);
        Take refused = gcra.take(3);
        assertFalse(refused.ok());
        long waitAtEarlierNow = tat - earlier.redisMicros() * 1_000 + 2 * interval - tolerance;
        assertTrue(refused.retryAfterNanos() > 0 && refused.retryAfterNanos() <= waitAtEarlierNow,
                refused + " vs " + waitAtEarlierNow);
        assertEquals(tat, storedTatNanos(key));
    }

    /** retryAfter(n) grows by exactly (n - 1) intervals, once the time between the reads is accounted for. */
    @Test
    void retryAfterGrowsWithTheBatch() throws Exception {
        RedisGCRA gcra = limiter(freshKey()).rate(10).per(Duration.ofMinutes(1)).burst(3).build();
        long interval = gcra.stats().emissionIntervalNanos();
        assertTrue(gcra.tryConsume(4));
        RedisGCRA.Reply one = gcra.rawCall("P", 1);
        RedisGCRA.Reply four = gcra.rawCall("P", 4);
        long elapsed = (four.redisMicros() - one.redisMicros()) * 1_000;
        assertEquals(3 * interval, four.retryAfterNanos() + elapsed - one.retryAfterNanos());
    }

    /** Waiting the reported wait admits the request (1 ms allowed for Redis's clock against the JVM's). */
    @Test
    void waitingTheReportedWaitAdmits() {
        RedisGCRA gcra = limiter(freshKey()).rate(20).burst(0).build();
        Take refused = gcra.take();
        for (int tries = 0; refused.ok() && tries < 100; tries++) {
            refused = gcra.take(); // a stalled machine may see the budget refill between two calls
        }
        assertFalse(refused.ok());
        assertTrue(refused.retryAfterNanos() > 0 && refused.retryAfterNanos() <= 50_000_000L,
                refused.toString());
        sleepAtLeast(refused.retryAfterNanos() + TimeUnit.MILLISECONDS.toNanos(1));
        assertTrue(gcra.take().ok());
    }

    /** The key expires when the TAT falls back to now: its TTL is the TAT's lead, rounded up, plus 1 ms. */
    @Test
    void keyExpiresWhenIdle() throws Exception {
        String key = freshKey();
        RedisGCRA gcra = limiter(key).rate(1).per(Duration.ofHours(1)).build();
        RedisGCRA.Reply r = gcra.rawCall("T", 1);
        assertTrue(r.ok());
        long pttl = jedis.pttl(key);
        assertTrue(pttl > 3_600_000 - 5_000 && pttl <= 3_600_001, "pttl " + pttl);

        String fast = freshKey();
        RedisGCRA quick = limiter(fast).rate(100).build();
        assertTrue(quick.tryConsume());
        long quickTtl = jedis.pttl(fast);
        // -2: already expired (a slow machine); -1 would mean no expiry at all.
        assertTrue(quickTtl == -2 || (quickTtl > 0 && quickTtl <= 11), "pttl " + quickTtl);
        sleepAtLeast(TimeUnit.MILLISECONDS.toNanos(50));
        assertNull(jedis.get(fast));
    }

    /** reset() deletes the shared key: the limit is idle again. */
    @Test
    void resetDeletesTheKey() {
        String key = freshKey();
        RedisGCRA gcra = limiter(key).rate(1).per(Duration.ofHours(1)).burst(2).build();
        assertTrue(gcra.tryConsume(3));
        assertEquals(0, gcra.available());
        gcra.reset();
        assertNull(jedis.get(key));
        assertEquals(3, gcra.available());
    }

    /** Two instances on separate connections share one budget through the key. */
    @Test
    void instancesOnSeparateConnectionsShareOneBudget() {
        String key = freshKey();
        try (JedisPooled other = RedisTestServer.shared().client(30_000)) {
            RedisGCRA a = limiter(key).rate(1).per(Duration.ofHours(1)).burst(2).build();
            RedisGCRA b = RedisGCRA.builder().redis(JedisBridge.of(other)).key(key).rate(1)
                    .per(Duration.ofHours(1)).burst(2).timeout(Duration.ofSeconds(60)).build();
            assertTrue(a.tryConsume(2));
            assertEquals(1, b.available());
            assertTrue(b.tryConsume());
            assertFalse(a.tryConsume());
            assertEquals(0, a.available());
        }
    }

    /** setRate keeps the shared TAT: what was consumed stays consumed at the new rate. */
    @Test
    void setRateKeepsTheTat() {
        String key = freshKey();
        RedisGCRA gcra = limiter(key).rate(1).per(Duration.ofHours(1)).burst(1).build();
        assertTrue(gcra.tryConsume(2));
        long tat = storedTatNanos(key);
        gcra.setRate(2);
        assertEquals(tat, storedTatNanos(key));
        assertFalse(gcra.tryConsume());
    }

    private static void sleepAtLeast(long nanos) {
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
