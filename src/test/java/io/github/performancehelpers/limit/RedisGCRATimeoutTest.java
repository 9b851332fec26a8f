package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.text.MessageFormat;
import java.time.Duration;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * Every call answers within {@code timeout} plus the allowance RedisGCRA's Javadoc documents, the
 * first failure of an instance and of a JVM included, however slow the logging backend; failures
 * are reported off the calling thread and rate-limited. Real time, with generous bounds: the
 * limiter's logger (injected) is made to block for seconds, so a report written on the caller's
 * thread would exceed the bound by far; the fresh-JVM test runs with the JDK's own backend.
 */
class RedisGCRATimeoutTest {

    private static final Duration TIMEOUT = Duration.ofMillis(200);
    /** The allowance RedisGCRA's class Javadoc states for the work after the deadline. */
    private static final Duration ALLOWANCE = Duration.ofMillis(100);
    /** How long the test's logging backend blocks each record: far beyond the allowance. */
    private static final long SLOW_LOG_SECONDS = 5;
    /** How long a test waits for a record the reporter thread writes. */
    private static final long RECORD_WAIT_SECONDS = 30;

    /** A logger that records each record with the thread that wrote it, and can be made slow. */
    static final class Capture implements System.Logger {
        record Logged(Level level, String message, Throwable thrown, Thread thread) {}

        final BlockingQueue<Logged> logged = new LinkedBlockingQueue<>();
        final CountDownLatch release = new CountDownLatch(1);
        volatile boolean slow;
        volatile Level threshold = Level.INFO;

        @Override
        public String getName() {
            return RedisGCRA.class.getName();
        }

        @Override
        public boolean isLoggable(Level level) {
            return level.getSeverity() >= threshold.getSeverity();
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
            if (!isLoggable(level)) {
                return;
            }
            logged.add(new Logged(level, message, thrown, Thread.currentThread()));
            if (slow) {
                try {
                    release.await(SLOW_LOG_SECONDS, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            log(level, bundle, params == null || params.length == 0 ? format
                    : MessageFormat.format(format, params), (Throwable) null);
        }

        /** The next record, or null after the wait. */
        Logged next() throws InterruptedException {
            return logged.poll(RECORD_WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    private final Capture capture = new Capture();
    private final CountDownLatch never = new CountDownLatch(1);

    @AfterEach
    void release() {
        capture.release.countDown();
        never.countDown();
    }

    private RedisGCRA.Builder limiter(RedisScriptExecutor.ScriptCall call) {
        return RedisGCRA.builder().redis(RedisScriptExecutor.of(call, call)).key("k").rate(10)
                .timeout(TIMEOUT).failClosed().logger(capture);
    }

    private static RedisScriptExecutor.ScriptCall failsAtOnce() {
        return (script, keys, args) -> {
            throw new IllegalStateException("connection refused (test bridge)");
        };
    }

    private RedisScriptExecutor.ScriptCall hangs() {
        return (script, keys, args) -> {
            never.await();
            throw new IllegalStateException("released (test bridge)");
        };
    }

    /** The first call of a fresh instance on a bridge that fails at once answers within the allowance, the logging backend blocking meanwhile. */
    @Test
    void firstFailureOfAnInstantlyFailingBridgeAnswersWithinTheAllowance() throws Exception {
        capture.slow = true;
        RedisGCRA gcra = limiter(failsAtOnce()).build();
        long start = System.nanoTime();
        assertFalse(gcra.tryConsume());
        long elapsed = System.nanoTime() - start;
        assertTrue(elapsed < TIMEOUT.plus(ALLOWANCE).toNanos(), "first failing call took "
                + Duration.ofNanos(elapsed) + ", bound " + TIMEOUT.plus(ALLOWANCE));
        assertEquals(1, gcra.stats().failures());
        assertNotNull(capture.next(), "the failure is still reported");
    }

    /** The first call of a fresh instance on a bridge that never answers returns at the timeout, within the allowance, the logging backend blocking meanwhile. */
    @Test
    void firstFailureOfAHangingBridgeAnswersWithinTheTimeoutAndTheAllowance() throws Exception {
        capture.slow = true;
        RedisGCRA gcra = limiter(hangs()).build();
        long start = System.nanoTime();
        assertFalse(gcra.tryConsume());
        long elapsed = System.nanoTime() - start;
        assertTrue(elapsed >= TIMEOUT.toNanos(), "returned before the timeout: " + Duration.ofNanos(elapsed));
        assertTrue(elapsed < TIMEOUT.plus(ALLOWANCE).toNanos(), "first hanging call took "
                + Duration.ofNanos(elapsed) + ", bound " + TIMEOUT.plus(ALLOWANCE));
        assertEquals(1, gcra.stats().timeouts());
        assertNotNull(capture.next(), "the timeout is still reported");
    }

    /** In a fresh JVM, where the logging backend and the virtual-thread scheduler are not yet initialised, the first failing call answers within the timeout and the allowance. */
    @Test
    void firstFailureInAFreshJvmAnswersWithinTheTimeout() throws Exception {
        for (String mode : List.of("fail", "hang")) {
            long elapsed = firstCallInAFreshJvm(mode);
            assertTrue(elapsed < TIMEOUT.plus(ALLOWANCE).toNanos(), "first " + mode + " call in a fresh JVM took "
                    + Duration.ofNanos(elapsed) + ", bound " + TIMEOUT.plus(ALLOWANCE));
            if (mode.equals("hang")) {
                assertTrue(elapsed >= TIMEOUT.toNanos(), "returned before the timeout: " + Duration.ofNanos(elapsed));
            }
        }
    }

    /** The failure's record is written by the reporter thread, never by the caller's. */
    @Test
    void failuresAndRecoveriesAreLoggedOffTheCallersThread() throws Exception {
        FakeTicker ticker = new FakeTicker();
        AtomicBoolean down = new AtomicBoolean(true);
        RedisGCRA gcra = limiter((script, keys, args) -> {
            if (down.get()) {
                throw new IllegalStateException("connection refused (test bridge)");
            }
            return List.of(1L, 0L, 0L, 1_700_000_000L, 0L);
        }).ticker(ticker).probeInterval(Duration.ofMillis(100)).build();
        assertFalse(gcra.tryConsume());
        Capture.Logged warning = capture.next();
        assertNotNull(warning);
        assertEquals(Level.WARNING, warning.level());
        assertNotNull(warning.thrown(), "the failure's stack trace is logged");
        assertNotEquals(Thread.currentThread(), warning.thread());
        assertEquals("RedisGCRA-reporter", warning.thread().getName());

        down.set(false);
        ticker.advanceMillis(100);
        assertTrue(gcra.tryConsume());
        Capture.Logged info = capture.next();
        assertNotNull(info);
        assertEquals(Level.INFO, info.level());
        assertNotEquals(Thread.currentThread(), info.thread());
    }

    /** Failures are reported at most once per ten seconds of the limiter's ticker; the next report counts those left out. */
    @Test
    void failureReportsAreRateLimitedAndCountTheOnesLeftOut() throws Exception {
        capture.threshold = Level.DEBUG;
        FakeTicker ticker = new FakeTicker(-5_000_000_000L); // any origin, negative included
        RedisGCRA gcra = limiter(failsAtOnce()).ticker(ticker).probeInterval(Duration.ZERO).build();
        for (int i = 0; i < 5; i++) {
            assertFalse(gcra.tryConsume());
        }
        Capture.Logged first = capture.next();
        assertEquals(Level.WARNING, first.level());
        ticker.advance(Duration.ofSeconds(10).minusNanos(1));
        assertFalse(gcra.tryConsume());
        ticker.advanceNanos(1);
        assertFalse(gcra.tryConsume());
        Capture.Logged second = capture.next();
        assertEquals(Level.DEBUG, second.level(), "still degraded: a DEBUG record");
        assertTrue(second.message().contains("5 more failures since the last report"),
                second.message());
        assertEquals(7, gcra.stats().failures());
        assertNull(capture.logged.poll(200, TimeUnit.MILLISECONDS), "no other record: " + capture.logged);
    }

    private static long firstCallInAFreshJvm(String mode) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(java, "-cp", classPath,
                RedisFirstFailureChild.class.getName(), mode, Long.toString(TIMEOUT.toMillis()))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String line;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8))) {
            line = out.readLine();
        }
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child did not exit");
        assertEquals(0, child.exitValue(), "child failed; its output: " + line);
        assertNotNull(line, "child printed nothing");
        String[] parts = line.split(" ");
        assertEquals("ELAPSED_NANOS", parts[0], line);
        assertEquals("false", parts[3], "fail closed refuses: " + line);
        return Long.parseLong(parts[1]);
    }
}
