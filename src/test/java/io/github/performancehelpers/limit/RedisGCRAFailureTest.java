package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * The failure modes, the timeout, the recovery probe and the NOSCRIPT fallback, driven by a fake
 * bridge and a {@link FakeTicker}: no Redis server and no sleeping.
 */
class RedisGCRAFailureTest {

    private static final List<Long> ADMITTED = List.of(1L, 0L, 3L, 1_700_000_000L, 0L);
    private static final List<Long> REFUSED = List.of(0L, 40_000_000L, 0L, 1_700_000_000L, 0L);

    /** A bridge whose behaviour the test switches: answer a reply, throw, or block. */
    static final class FakeRedis implements RedisScriptExecutor {
        final AtomicReference<Object> reply = new AtomicReference<>(ADMITTED);
        final AtomicReference<RuntimeException> failure = new AtomicReference<>();
        final AtomicReference<Error> error = new AtomicReference<>();
        final AtomicReference<RuntimeException> evalshaOnlyFailure = new AtomicReference<>();
        final CountDownLatch unblock = new CountDownLatch(1);
        volatile boolean block;
        final AtomicInteger evalshaCalls = new AtomicInteger();
        final AtomicInteger evalCalls = new AtomicInteger();
        final AtomicReference<Thread> lastThread = new AtomicReference<>();

        @Override
        public Object evalsha(String sha1, List<String> keys, List<String> args) throws Exception {
            evalshaCalls.incrementAndGet();
            RuntimeException once = evalshaOnlyFailure.getAndSet(null);
            if (once != null) {
                throw once;
            }
            return answer();
        }

        @Override
        public Object eval(String script, List<String> keys, List<String> args) throws Exception {
            evalCalls.incrementAndGet();
            assertEquals(RedisGCRA.SCRIPT, script);
            return answer();
        }

        private Object answer() throws InterruptedException {
            lastThread.set(Thread.currentThread());
            if (block) {
                unblock.await();
            }
            Error err = error.get();
            if (err != null) {
                throw err;
            }
            RuntimeException f = failure.get();
            if (f != null) {
                throw f;
            }
            return reply.get();
        }
    }

    /** A fallback that admits while its budget lasts and counts what it is asked. */
    static final class CountingFallback implements RateLimiter {
        final AtomicLong budget;
        final AtomicInteger asked = new AtomicInteger();

        CountingFallback(long budget) {
            this.budget = new AtomicLong(budget);
        }

        @Override
        public boolean tryConsume(long n) {
            asked.incrementAndGet();
            long b = budget.get();
            return b >= n && budget.compareAndSet(b, b - n);
        }

        @Override
        public long available() {
            return budget.get();
        }
    }

    private final FakeRedis redis = new FakeRedis();
    private final FakeTicker ticker = new FakeTicker();

    @AfterEach
    void release() {
        redis.unblock.countDown();
    }

    private RedisGCRA.Builder builder() {
        return RedisGCRA.builder().redis(redis).key("k").rate(25).burst(2).ticker(ticker)
                .probeInterval(Duration.ofMillis(500)).timeout(Duration.ofSeconds(60));
    }

    /** The script's answer is passed through: admitted, or refused with the Lua side's wait. */
    @Test
    void redisAnswersAreReturnedAsIs() {
        RedisGCRA limiter = builder().build();
        assertTrue(limiter.tryConsume());
        assertEquals(3, limiter.available());
        redis.reply.set(REFUSED);
        assertFalse(limiter.tryConsume());
        assertEquals(Take.refused(40_000_000L), limiter.take());
        assertEquals(40_000_000L, limiter.retryAfterNanos(1));
        assertEquals(Duration.ofMillis(40), limiter.retryAfter());
        assertEquals(6, limiter.stats().redisCalls());
        assertEquals(0, limiter.stats().failures());
    }

    /** Fail closed: a failed call refuses, is counted, and marks the limiter degraded. */
    @Test
    void failClosedRefusesAndCountsTheFailure() {
        RedisGCRA limiter = builder().failClosed().build();
        redis.failure.set(new UncheckedIOException(new IOException("connection refused")));
        assertFalse(limiter.tryConsume());
        RedisGCRA.Stats s = limiter.stats();
        assertEquals(1, s.failures());
        assertEquals(0, s.timeouts());
        assertTrue(s.degraded());
        assertEquals(1, s.degradedAnswers());
        assertEquals(RedisGCRA.FailureMode.FAIL_CLOSED, s.failureMode());
    }

    /** Fail closed, degraded: available() is 0, and a refusal's wait is the time until the next probe. */
    @Test
    void failClosedWaitIsTheTimeUntilRedisIsTriedAgain() {
        RedisGCRA limiter = builder().build();
        redis.failure.set(new IllegalStateException("down"));
        assertFalse(limiter.tryConsume());
        ticker.advanceMillis(200);
        assertEquals(Take.refused(300_000_000L), limiter.take());
        assertEquals(300_000_000L, limiter.retryAfterNanos(1));
        assertEquals(0, limiter.available());
        assertFalse(limiter.hasCapacity());
    }

    /** Fail open: a failed call is answered by the fallback, which really consumes. */
    @Test
    void failOpenAsksTheFallback() {
        CountingFallback fallback = new CountingFallback(2);
        RedisGCRA limiter = builder().failOpen(fallback).build();
        redis.failure.set(new IllegalStateException("down"));
        assertTrue(limiter.tryConsume());
        assertTrue(limiter.tryConsume());
        assertFalse(limiter.tryConsume());
        assertEquals(0, fallback.available());
        assertEquals(3, fallback.asked.get());
        assertEquals(RedisGCRA.FailureMode.FAIL_OPEN, limiter.stats().failureMode());
    }

    /** Fail open, degraded: available() is the fallback's, and a fallback refusal's wait is n intervals. */
    @Test
    void failOpenAvailableAndWaitComeFromTheFallback() {
        CountingFallback fallback = new CountingFallback(1);
        RedisGCRA limiter = builder().failOpen(fallback).build();
        redis.failure.set(new IllegalStateException("down"));
        assertEquals(1, limiter.available());
        assertEquals(0, limiter.retryAfterNanos(1));
        assertEquals(Take.admitted(), limiter.take(1));
        assertEquals(Take.refused(2 * 40_000_000L), limiter.take(2));
        assertEquals(2 * 40_000_000L, limiter.retryAfterNanos(2));
    }

    /** failOpen(share): while Redis is down, a local GCRA at that share of the global rate decides (25/s × 0.2 = 5/s, burst 2 × 0.2 floors to 0). */
    @Test
    void failOpenAtAShareUsesALocalGcraAtThatRate() {
        RedisGCRA limiter = builder().failOpen(0.2).build();
        redis.failure.set(new IllegalStateException("down"));
        assertTrue(limiter.tryConsume());
        assertFalse(limiter.tryConsume(), "5/s with burst 0: one at a time");
        ticker.advanceMillis(199);
        assertFalse(limiter.tryConsume());
        ticker.advanceMillis(1);
        assertTrue(limiter.tryConsume(), "the next one is due 200 ms later");
        assertEquals(RedisGCRA.FailureMode.FAIL_OPEN, limiter.stats().failureMode());
    }

    /** failOpen(share) refuses a share outside (0, 1], naming it. */
    @Test
    void failOpenShareIsValidated() {
        for (double bad : new double[] {0, -0.5, 1.5, Double.NaN}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RedisGCRA.builder().failOpen(bad));
            assertEquals("share must be in (0, 1]: " + bad, e.getMessage());
        }
    }

    /** Degraded, the limiter does not call Redis until the probe interval has passed. */
    @Test
    void degradedLimiterCallsRedisOnlyOncePerProbeInterval() {
        RedisGCRA limiter = builder().build();
        redis.failure.set(new IllegalStateException("down"));
        assertFalse(limiter.tryConsume());
        int callsAfterFailure = redis.evalshaCalls.get();
        for (int i = 0; i < 10; i++) {
            assertFalse(limiter.tryConsume());
        }
        assertEquals(callsAfterFailure, redis.evalshaCalls.get());
        ticker.advanceMillis(500);
        assertFalse(limiter.tryConsume()); // the probe: Redis still down
        assertEquals(callsAfterFailure + 1, redis.evalshaCalls.get());
        assertFalse(limiter.tryConsume());
        assertEquals(callsAfterFailure + 1, redis.evalshaCalls.get());
        assertEquals(2, limiter.stats().failures());
        assertEquals(13, limiter.stats().degradedAnswers());
    }

    /** The first probe that Redis answers ends the degraded state by itself. */
    @Test
    void limiterRecoversByItselfWhenRedisReturns() {
        RedisGCRA limiter = builder().build();
        redis.failure.set(new IllegalStateException("down"));
        assertFalse(limiter.tryConsume());
        redis.failure.set(null);
        assertFalse(limiter.tryConsume()); // not yet time to probe
        ticker.advanceMillis(500);
        assertTrue(limiter.tryConsume());
        assertFalse(limiter.stats().degraded());
        assertTrue(limiter.tryConsume());
        assertEquals(2, limiter.stats().redisCalls());
    }

    /** A zero probe interval tries Redis at every call. */
    @Test
    void zeroProbeIntervalTriesRedisEveryCall() {
        RedisGCRA limiter = builder().probeInterval(Duration.ZERO).build();
        redis.failure.set(new IllegalStateException("down"));
        limiter.tryConsume();
        limiter.tryConsume();
        limiter.tryConsume();
        assertEquals(3, redis.evalshaCalls.get());
        assertEquals(3, limiter.stats().failures());
    }

    /** A Redis that does not answer is abandoned at the timeout: the caller gets the failure mode's answer. */
    @Test
    void slowRedisIsAbandonedAtTheTimeout() {
        RedisGCRA limiter = builder().timeout(Duration.ofMillis(50)).build();
        redis.block = true;
        assertFalse(limiter.tryConsume()); // would hang forever without the deadline
        assertEquals(1, limiter.stats().timeouts());
        assertEquals(1, limiter.stats().failures());
        assertTrue(limiter.stats().degraded());
    }

    /** With enforceTimeout(false) the script runs on the caller's own thread. */
    @Test
    void unenforcedTimeoutCallsOnTheCallersThread() {
        RedisGCRA limiter = builder().enforceTimeout(false).build();
        assertTrue(limiter.tryConsume());
        assertSame(Thread.currentThread(), redis.lastThread.get());
    }

    /** By default each call runs on a virtual thread, so the caller can stop waiting. */
    @Test
    void enforcedTimeoutCallsOnAVirtualThread() {
        RedisGCRA limiter = builder().build();
        assertTrue(limiter.tryConsume());
        assertTrue(redis.lastThread.get().isVirtual());
    }

    /** A call executor that rejects the call counts as a failure, answered by the failure mode. */
    @Test
    void rejectedCallIsAFailure() {
        RedisGCRA limiter = builder().callExecutor(task -> {
            throw new RejectedExecutionException("full");
        }).build();
        assertFalse(limiter.tryConsume());
        assertEquals(1, limiter.stats().failures());
    }

    /** NOSCRIPT from EVALSHA (as Jedis words it) is answered by one EVAL, not counted as a failure. */
    @Test
    void noScriptFallsBackToEval() {
        RedisGCRA limiter = builder().build();
        redis.evalshaOnlyFailure.set(new RuntimeException("NOSCRIPT No matching script. Please use EVAL."));
        assertTrue(limiter.tryConsume());
        assertEquals(1, redis.evalCalls.get());
        assertEquals(1, limiter.stats().scriptLoads());
        assertEquals(0, limiter.stats().failures());
        assertTrue(limiter.tryConsume());
        assertEquals(1, redis.evalCalls.get());
    }

    /** NOSCRIPT is recognised as our own exception type, or anywhere in the cause chain. */
    @Test
    void noScriptIsRecognisedByTypeOrInTheCauseChain() {
        assertTrue(RedisGCRA.isNoScript(new RedisNoScriptException("script missing")));
        assertTrue(RedisGCRA.isNoScript(new RuntimeException("wrapped",
                new RuntimeException("NOSCRIPT No matching script"))));
        assertFalse(RedisGCRA.isNoScript(new RuntimeException("ERR something else")));
        assertFalse(RedisGCRA.isNoScript(new RuntimeException((String) null)));
    }

    /** An Error the bridge throws on the call's thread (a StackOverflowError, a missing client class) is a failure, answered by the failure mode, never rethrown on the caller. */
    @Test
    void errorFromTheBridgeIsAFailureAnsweredByTheFailureMode() {
        RedisGCRA closed = builder().build();
        redis.error.set(new StackOverflowError());
        assertFalse(closed.tryConsume());
        assertEquals(1, closed.stats().failures());
        assertTrue(closed.stats().degraded());
        var e = assertThrows(IllegalStateException.class, closed::reset);
        assertTrue(e.getCause() instanceof StackOverflowError, String.valueOf(e.getCause()));

        CountingFallback fallback = new CountingFallback(1);
        RedisGCRA open = builder().failOpen(fallback).build();
        redis.error.set(new NoClassDefFoundError("redis/clients/jedis/Connection"));
        assertTrue(open.tryConsume(), "the fallback admits");
        assertEquals(1, fallback.asked.get());
        assertEquals(1, open.stats().failures());
    }

    /** On the caller's own thread (enforceTimeout(false)) a VirtualMachineError propagates, uncounted; any other Error is a failure. */
    @Test
    void virtualMachineErrorOnTheCallersOwnThreadPropagates() {
        RedisGCRA limiter = builder().enforceTimeout(false).build();
        redis.error.set(new StackOverflowError());
        assertThrows(StackOverflowError.class, limiter::tryConsume);
        assertEquals(0, limiter.stats().failures());
        assertFalse(limiter.stats().degraded());
        redis.error.set(new AssertionError("client invariant"));
        assertFalse(limiter.tryConsume());
        assertEquals(1, limiter.stats().failures());
        assertTrue(limiter.stats().degraded());
    }

    /** An error other than NOSCRIPT is not retried with EVAL: it is a failure. */
    @Test
    void otherErrorsAreNotRetriedWithEval() {
        RedisGCRA limiter = builder().build();
        redis.evalshaOnlyFailure.set(new RuntimeException("WRONGTYPE Operation against a key"));
        assertFalse(limiter.tryConsume());
        assertEquals(0, redis.evalCalls.get());
        assertEquals(1, limiter.stats().failures());
    }

    /** A reply that is not the script's shape is a failure, never a decision. */
    @Test
    void malformedReplyIsAFailure() {
        RedisGCRA limiter = builder().build();
        redis.reply.set("OK");
        assertFalse(limiter.tryConsume());
        assertEquals(1, limiter.stats().failures());
        redis.reply.set(List.of(1L, 5L, 0L, 0L, 0L)); // admitted with a wait: contradictory
        ticker.advanceMillis(500);
        assertFalse(limiter.tryConsume());
        assertEquals(2, limiter.stats().failures());
    }

    /** Replies as strings or bytes (as some clients return integers) decode the same. */
    @Test
    void repliesDecodeFromNumbersStringsAndBytes() {
        RedisGCRA.Reply r = RedisGCRA.decode(List.of("0", 7L, "0".getBytes(), 12, "34"));
        assertEquals(new RedisGCRA.Reply(false, 7, 0, 12_000_034L), r);
    }

    /** An interrupted caller gets the failure mode's answer, keeps its interrupt, and Redis is not marked down. */
    @Test
    void interruptedCallerIsAnsweredWithoutMarkingRedisDown() throws Exception {
        RedisGCRA limiter = builder().build();
        redis.block = true;
        AtomicReference<Boolean> answer = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            answer.set(limiter.tryConsume());
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        caller.start();
        while (redis.lastThread.get() == null) {
            Thread.onSpinWait();
        }
        caller.interrupt();
        caller.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(answer.get());
        assertTrue(stillInterrupted.get());
        assertFalse(limiter.stats().degraded());
        assertEquals(1, limiter.stats().failures());
    }

    /** reset() always tries Redis, even while degraded, and throws when it fails. */
    @Test
    void resetTriesRedisEvenWhileDegradedAndThrowsOnFailure() {
        RedisGCRA limiter = builder().build();
        redis.failure.set(new IllegalStateException("down"));
        assertFalse(limiter.tryConsume());
        var e = assertThrows(IllegalStateException.class, limiter::reset);
        assertEquals("reset of Redis key k failed", e.getMessage());
        redis.failure.set(null);
        limiter.reset();
        assertFalse(limiter.stats().degraded());
    }
}
