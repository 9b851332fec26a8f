package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

/**
 * Redis stopped mid-run and restarted, or paused, is survived in both failure modes: every call
 * is answered within the timeout (plus scheduling slack on a loaded machine), by the failure
 * mode while Redis is away, failures are counted, and the limiter goes back to Redis by itself.
 * Uses a redis-server of its own, so it can stop and restart it.
 */
@Tag("redis")
class RedisGCRAOutageTest {

    /** Long enough for a round trip on two heavily loaded cores, shorter than the pause below. */
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** Generous scheduling slack for two loaded cores; a hung call would exceed it by far. */
    private static final long SLACK_NANOS = TimeUnit.SECONDS.toNanos(2);

    private static RedisTestServer server;
    private static JedisPooled jedis;

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    /** A running server and a fresh pool: the previous test's restart left stale connections. */
    @BeforeEach
    void serverRunning() throws Exception {
        if (server == null) {
            server = RedisTestServer.startOwn(); // skips, with the reason, without redis-server
        }
        server.start();
        jedis = server.client(5_000); // longer than TIMEOUT: RedisGCRA's deadline must be what answers
        jedis.scriptLoad(RedisGCRA.SCRIPT); // connected and cached: the first call is one round trip
    }

    @AfterEach
    void closeClient() {
        if (jedis != null) { // null when the test was skipped: no redis-server here
            jedis.close();
            jedis = null;
        }
    }

    private static RedisGCRA.Builder limiter() {
        // 1 per hour with burst 2: three operations, so every decision below is exact.
        return RedisGCRA.builder().redis(JedisBridge.of(jedis)).key("ph-test:outage:" + UUID.randomUUID())
                .rate(1).per(Duration.ofHours(1)).burst(2)
                .timeout(TIMEOUT).probeInterval(Duration.ofMillis(100));
    }

    /** Fail closed: while Redis is down every call refuses promptly; after the restart Redis decides again. */
    @Test
    void failClosedSurvivesRedisStoppedAndRestarted() throws Exception {
        RedisGCRA gcra = limiter().failClosed().build();
        assertTrue(gcra.tryConsume());
        assertEquals(2, gcra.available());

        server.stop();
        for (int i = 0; i < 20; i++) {
            assertFalse(answeredWithinTimeout(gcra::tryConsume));
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(15)); // spans several probe intervals
        }
        RedisGCRA.Stats down = gcra.stats();
        assertTrue(down.degraded());
        assertTrue(down.failures() >= 1, down.toString());
        assertEquals(20, down.degradedAnswers());

        server.start();
        awaitRecovery(gcra);
        // The restarted server kept nothing (no persistence): the key is idle, and Redis governs again.
        assertEquals(3, gcra.available());
        assertTrue(gcra.tryConsume(3));
        assertFalse(gcra.tryConsume());
    }

    /** Fail open: while Redis is down the fallback decides; after the restart Redis decides again. */
    @Test
    void failOpenSurvivesRedisStoppedAndRestarted() throws Exception {
        RedisGCRAFailureTest.CountingFallback fallback = new RedisGCRAFailureTest.CountingFallback(5);
        RedisGCRA gcra = limiter().failOpen(fallback).build();
        assertTrue(gcra.tryConsume());
        assertEquals(0, fallback.asked.get());

        server.stop();
        int admitted = 0;
        for (int i = 0; i < 20; i++) {
            if (answeredWithinTimeout(gcra::tryConsume)) {
                admitted++;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(15));
        }
        assertEquals(5, admitted, "the fallback's budget, no more");
        assertEquals(20, fallback.asked.get());
        assertTrue(gcra.stats().degraded());
        assertTrue(gcra.stats().failures() >= 1);

        server.start();
        awaitRecovery(gcra);
        assertEquals(3, gcra.available());
        assertTrue(gcra.tryConsume(3));
        assertFalse(gcra.tryConsume());
        assertEquals(20, fallback.asked.get(), "after recovery the fallback is not consulted");
    }

    /** A Redis that stops answering (CLIENT PAUSE) is abandoned at the timeout and recovered from. */
    @Test
    void pausedRedisIsAbandonedAtTheTimeoutAndRecoveredFrom() throws Exception {
        RedisGCRA gcra = limiter().failClosed().build();
        assertTrue(gcra.tryConsume());
        jedis.sendCommand(Protocol.Command.CLIENT, "PAUSE", "3000", "ALL");
        long start = System.nanoTime();
        assertFalse(answeredWithinTimeout(gcra::tryConsume));
        assertTrue(System.nanoTime() - start >= TIMEOUT.toNanos(), "it waited for the timeout");
        assertEquals(1, gcra.stats().timeouts());
        assertTrue(gcra.stats().degraded());
        awaitRecovery(gcra);
        assertFalse(gcra.stats().degraded());
    }

    /**
     * Calls given up on during a stall (CLIENT PAUSE, like DEBUG SLEEP) are run and charged by
     * Redis afterwards, and the over-charge stays within the documented bounds: each is a call
     * counted as a timeout; a calling thread gives up on at most one call per timeout; and after
     * the first failure only probes are sent, one per probeInterval.
     */
    @Test
    void callsGivenUpOnAreChargedWithinTheDocumentedBound() throws Exception {
        int callers = 4;
        long pauseMillis = 3_000;
        Duration probe = Duration.ofMillis(100);
        int budget = 201; // 1 per hour with burst 200: every call Redis runs is granted, one unit each
        String key = "ph-test:overcharge:" + UUID.randomUUID();
        RedisGCRA gcra = RedisGCRA.builder().redis(JedisBridge.of(jedis)).key(key).rate(1)
                .per(Duration.ofHours(1)).burst(budget - 1).timeout(TIMEOUT)
                .probeInterval(probe).failClosed().build();
        assertEquals(budget, gcra.available());

        AtomicBoolean calling = new AtomicBoolean(true);
        AtomicLong admitted = new AtomicLong();
        long pausedAt = System.nanoTime();
        jedis.sendCommand(Protocol.Command.CLIENT, "PAUSE", Long.toString(pauseMillis), "ALL");
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            threads.add(Thread.ofPlatform().start(() -> {
                while (calling.get()) {
                    if (gcra.tryConsume()) {
                        admitted.incrementAndGet();
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            }));
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pauseMillis - 500)); // stop inside the pause
        calling.set(false);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
        awaitRecovery(gcra); // the pause is over and Redis has run what was queued
        long stallNanos = System.nanoTime() - pausedAt;

        long charged = budget - gcra.available();
        long overCharge = charged - admitted.get();
        long timeouts = gcra.stats().timeouts();
        int threadsCalling = callers + 1; // and this one, in awaitRecovery
        long perThreadBound = threadsCalling * (stallNanos / TIMEOUT.toNanos() + 1);
        long probeBound = threadsCalling + stallNanos / probe.toNanos() + 1;
        String seen = "charged " + charged + ", admitted " + admitted + ", timeouts " + timeouts
                + ", bounds " + perThreadBound + " and " + probeBound + " over " + Duration.ofNanos(stallNanos);
        assertTrue(overCharge >= 1, "a call given up on was charged: " + seen);
        assertTrue(overCharge <= timeouts, "each over-charge is a call given up on: " + seen);
        assertTrue(timeouts <= perThreadBound, seen);
        assertTrue(timeouts <= probeBound, seen);
    }

    /** Runs one call and checks it answered within the timeout plus slack. */
    private static boolean answeredWithinTimeout(BooleanSupplier call) {
        long start = System.nanoTime();
        boolean answer = call.getAsBoolean();
        long took = System.nanoTime() - start;
        assertTrue(took <= TIMEOUT.toNanos() + SLACK_NANOS, "call took " + Duration.ofNanos(took));
        return answer;
    }

    /** Polls (without consuming) until a call has been answered by Redis again. */
    private static void awaitRecovery(RedisGCRA gcra) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (gcra.stats().degraded()) {
            assertTrue(System.nanoTime() - deadline < 0, "did not recover: " + gcra.stats());
            answeredWithinTimeout(() -> gcra.available() >= 0);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}
