// Over 800 lines (about 970) because about 440 of them are Javadoc stating the contract (the
// script's decision, the failure modes, each call's deadline), and the public nested FailureMode,
// Stats and Builder live here (their names are API). The script, its executor and the reporter
// are already their own files (RedisGcraScript, RedisScriptExecutor, RedisGcraReporter).
package io.github.performancehelpers.limit;

import java.lang.System.Logger;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import io.github.performancehelpers.Ticker;
import io.github.performancehelpers.internal.Preconditions;

/**
 * A cluster-wide GCRA (Generic Cell Rate Algorithm) rate limiter whose state lives in Redis: every
 * instance of a service that builds a {@code RedisGCRA} on the same {@linkplain Builder#key key}
 * shares one budget, for example a partner API's 500 requests per second across the whole fleet.
 *
 * <p>It keeps {@code PowerGCRA}'s contract exactly: {@code emissionInterval = per / rate},
 * {@code delayTolerance = burst * emissionInterval}, a batch of {@code n} is admitted iff
 * {@link #available()} {@code >= n} computed against the <em>pre-update</em> theoretical arrival
 * time (TAT), the TAT then moves to {@code max(now, tat) + n * emissionInterval}, a refused
 * attempt leaves the TAT untouched, {@link #retryAfterNanos(long)} is exact and grows with
 * {@code n}, {@code available()} is {@code burst + 1} at an idle instant, and a batch above
 * {@code burst + 1} can never be admitted: {@link #tryConsume(long)} refuses it and
 * {@link #retryAfterNanos(long)} and {@link #take(long)} throw {@link IllegalArgumentException}.
 * A fractional {@code burst} floors. Counts {@code n <= 0} are a no-op that succeeds and never
 * reach Redis.
 *
 * <p><b>One script, atomic, on Redis's clock.</b> Each call is one {@code EVALSHA} of a small Lua
 * script ({@code EVAL} once more after {@code NOSCRIPT}), which reads {@code TIME}, the key and
 * decides in one atomic step. The clock is Redis's {@code TIME}, never the caller's, so instances
 * whose clocks disagree still share one timeline. The user's Redis client runs the script through
 * a {@link RedisScriptExecutor}; the library contains no client.
 *
 * <p><b>Precision.</b> The TAT is stored as whole nanoseconds (the key's value is
 * {@code "S:N"}, N nanoseconds after second S of {@code TIME}) and all arithmetic in Lua is on
 * whole nanoseconds below 2<sup>53</sup>, which Lua's double-precision numbers hold exactly:
 * there is no drift and no rounding in a decision. Two roundings happen in Java, both in the
 * direction that can only under-admit: the emission interval is {@code per / rate} rounded
 * <em>up</em> to a whole nanosecond (at 3 per second: 333,333,334 ns, a rate lower by 2 parts in
 * 10<sup>9</sup>), and {@code TIME} itself ticks in microseconds. Hence two limits:
 * {@code per / rate} must be at least 1 ns, and {@code (floor(burst) + 1) * emissionInterval}
 * must be at most 2<sup>52</sup> ns (about 52 days).
 *
 * <p><b>Key expiry.</b> Only an admission writes the key, with a time-to-live of the time until
 * the TAT falls back to "now" (rounded up to a millisecond, plus one): from that instant an absent
 * key and the stored TAT mean the same thing ({@code max(now, tat) == now}), so idle limits cost
 * no memory. {@link #reset()} deletes the key.
 *
 * <p><b>Failures.</b> Each call waits at most {@link Builder#timeout(Duration) timeout} for
 * Redis. A call that fails or times out is counted ({@link Stats#failures()},
 * {@link Stats#timeouts()}), reported (below) and answered by the {@link FailureMode}:
 * {@link FailureMode#FAIL_CLOSED} refuses, {@link FailureMode#FAIL_OPEN} asks the local fallback
 * limiter. While degraded the limiter does not wait on Redis at every call: calls are answered by
 * the failure mode at once, and one call per {@link Builder#probeInterval(Duration) probeInterval}
 * tries Redis again; the first success ends the degraded state, with nothing for the caller to do.
 *
 * <p><b>Errors.</b> Whatever the bridge throws is a failure of that call, answered by the
 * failure mode, counted and reported: every {@link Exception}, and every {@link Error} too (a
 * {@code NoClassDefFoundError} from a missing client jar, a {@code StackOverflowError} inside the
 * client), since the bridge runs on the call's own thread, whose error says nothing about the
 * caller's, and a caller such as an executor's dispatcher needs an answer. The one exception is
 * a {@link VirtualMachineError} the bridge raises with
 * {@link Builder#enforceTimeout(boolean) enforceTimeout(false)}, where it runs on the caller's
 * own thread: it propagates, uncounted, as it does from the library's other callbacks, since it
 * is the caller's stack or heap that failed.
 *
 * <p><b>The bound.</b> With the timeout enforced (the default), every call returns within
 * {@code timeout} plus an allowance of 100 ms, the first call of an instance and of a JVM
 * included. The timeout counts the whole call from its start, starting the call's thread
 * included (building the first limiter of a JVM starts the virtual-thread scheduler, so that no
 * call pays for it). What may follow the deadline is bookkeeping: counting the failure, handing
 * its report to the reporter thread and asking the failure mode, which takes microseconds to a
 * few milliseconds in a fresh JVM; the allowance is for that and for a loaded machine's scheduler
 * waking the caller late, and it is what the library's tests assert on two loaded cores. With
 * {@link Builder#enforceTimeout(boolean) enforceTimeout(false)} the bound is the client's own.
 *
 * <p><b>Over-charge.</b> A call the limiter stopped waiting for at its timeout is still sent, and
 * Redis may run and grant it after the caller was answered: budget spent without an admission,
 * which can only make the fleet admit less, never more. Each is a call counted in
 * {@link Stats#timeouts()}, charging its {@code n}. A call holds its caller until answered, so a
 * calling thread has at most one in flight, given up on at most once per {@code timeout}; once
 * the limiter has seen Redis fail only probes are sent, one per {@code probeInterval} (every call
 * when it is zero). So a stall of length {@code D} leaves at most the calls in flight at the
 * first failure (one per calling thread) plus {@code D / probeInterval} probes; and, since the
 * script still enforces the limit on them, they never take more than {@code burst + 1} plus
 * what the rate grants over the time Redis takes to run them.
 *
 * <p><b>Reports.</b> Failures and recoveries are reported through {@link System.Logger} (logger
 * name {@code io.github.performancehelpers.limit.RedisGCRA}), never on the calling thread: one
 * daemon thread shared by all limiters formats and writes the records, so a slow logging backend,
 * or its initialisation on the first record of a JVM, delays no call. Per limiter, at most one
 * failure is reported per 10 s of its {@link Builder#ticker(Ticker) ticker}, and the next report
 * says how many were left out: a {@code WARNING}, with the failure's stack trace, when the limiter
 * becomes degraded (or when it still is and that was left out), {@code DEBUG} for later failures,
 * and an {@code INFO} when Redis answers again after a {@code WARNING}. The counters in
 * {@link #stats()} are the exact record.
 *
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads; the
 * limiter holds no lock (the atomicity is Redis's). All instances sharing a key must be built with
 * the same {@code rate}, {@code per} and {@code burst}.
 *
 * <p><b>Note:</b> unlike the in-process {@code PowerGCRA}, each of {@link #tryConsume(long)},
 * {@link #take(long)}, {@link #available()} and {@link #retryAfterNanos(long)} is a round trip to
 * Redis, and other instances may consume between two calls. Prefer {@link #take(long)}, which
 * decides and reports the wait in one atomic step, over {@code available()} followed by
 * {@code tryConsume()}.
 *
 * @since 0.1.0
 */
public final class RedisGCRA implements RateLimiter {

    /*
     * Implementation notes.
     *
     * State in Java is only configuration and health. `config` is one immutable snapshot (rate,
     * interval, tolerance) so a call never mixes an old interval with a new tolerance after
     * setRate(). Health is `degraded` plus `nextProbeAt` (a Ticker reading): while degraded, the
     * caller that wins the CAS on `nextProbeAt` (moving it one probeInterval on) is the only one
     * that goes to Redis; every other caller is answered by the failure mode immediately. Any
     * failure moves `nextProbeAt` to one probeInterval after itself; any success clears
     * `degraded`. A call abandoned at its timeout may still reach Redis later and consume there:
     * that can only over-charge the shared budget, never over-admit.
     *
     * After a call's deadline nothing slow may happen on the caller's thread: no string is built
     * (the timeout's message is built once), no call site is linked (Call is a class, not a
     * lambda), and no logger is touched (RedisGcraReporter hands records to its own thread).
     *
     * Length. About 900 lines, most of them Javadoc of the contract and the Builder's options;
     * the Lua script and its reply format live in RedisGcraScript, the reporting in
     * RedisGcraReporter.
     */

    /**
     * What a call answers when Redis cannot: refuse, or ask a local limiter.
     *
     * <p><b>Thread safety.</b> The constants are immutable and safe for concurrent use by any
     * number of threads.
     */
    public enum FailureMode {
        /** Refuse every request while Redis is unreachable or slow: the shared limit is never exceeded. */
        FAIL_CLOSED,
        /** Admit what a local fallback limiter admits while Redis is unreachable or slow. */
        FAIL_OPEN
    }

    /**
     * A snapshot of a limiter's configuration and counters.
     *
     * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number
     * of threads.
     *
     * @param key                   the Redis key holding the shared TAT
     * @param rate                  operations per {@code per}
     * @param per                   the period {@code rate} is measured against
     * @param burst                 the configured burst (fractional values floor when used)
     * @param emissionIntervalNanos {@code per / rate}, rounded up to a whole nanosecond
     * @param delayToleranceNanos   {@code floor(burst) * emissionIntervalNanos}
     * @param failureMode           what a call answers when Redis cannot
     * @param degraded              whether the limiter is currently answering by its failure mode
     * @param redisCalls            script calls Redis answered
     * @param failures              script calls that failed (errors and timeouts together)
     * @param timeouts              script calls abandoned at the timeout (a subset of failures)
     * @param degradedAnswers       calls answered by the failure mode instead of Redis
     * @param scriptLoads           times the script was sent with {@code EVAL} after {@code NOSCRIPT}
     */
    public record Stats(String key, double rate, Duration per, double burst,
                        long emissionIntervalNanos, long delayToleranceNanos,
                        FailureMode failureMode, boolean degraded, long redisCalls, long failures,
                        long timeouts, long degradedAnswers, long scriptLoads) {

        /**
         * Validates the snapshot.
         *
         * @param key                   the Redis key
         * @param rate                  operations per {@code per}
         * @param per                   the period
         * @param burst                 the burst
         * @param emissionIntervalNanos the emission interval in nanoseconds
         * @param delayToleranceNanos   the delay tolerance in nanoseconds
         * @param failureMode           the failure mode
         * @param degraded              whether degraded
         * @param redisCalls            calls Redis answered
         * @param failures              failed calls
         * @param timeouts              timed-out calls
         * @param degradedAnswers       calls answered by the failure mode
         * @param scriptLoads           {@code EVAL} fallbacks after {@code NOSCRIPT}
         * @throws NullPointerException if {@code key}, {@code per} or {@code failureMode} is null
         */
        public Stats {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(per, "per");
            Objects.requireNonNull(failureMode, "failureMode");
        }
    }

    /** The Lua script every call runs; see {@link RedisGcraScript}. */
    static final String SCRIPT = RedisGcraScript.SCRIPT;

    /** The script's SHA-1 digest, as {@code EVALSHA} wants it. */
    static final String SCRIPT_SHA1 = RedisGcraScript.SCRIPT_SHA1;

    /** The largest span in nanoseconds the script's exact arithmetic allows. */
    static final long MAX_SPAN_NANOS = 1L << 52;

    private final RedisScriptExecutor redis;
    private final String key;
    private final List<String> keys;
    private final Duration per;
    private final long perNanos;
    private final double burst;
    /** {@code floor(burst)}: the batch ceiling is this plus one. */
    private final long burstFloor;
    private final long timeoutNanos;
    private final boolean enforceTimeout;
    /** Runs each script call when the timeout is enforced; null means a new virtual thread. */
    private final Executor callExecutor;
    private final long probeIntervalNanos;
    private final Ticker ticker;
    private final FailureMode failureMode;
    /** The local limiter of {@link FailureMode#FAIL_OPEN}; null for {@link FailureMode#FAIL_CLOSED}. */
    private final RateLimiter fallback;
    /** Reports failures and recoveries off the calling thread. */
    private final RedisGcraReporter reporter;
    /** Built once, so that a timed-out call builds no string after its deadline. */
    private final String timeoutMessage;

    /** The rate and what derives from it; replaced whole by {@link #setRate(double)}. */
    private volatile Config config;

    private final AtomicBoolean degraded = new AtomicBoolean();
    /** The {@link Ticker} reading from which a degraded limiter may try Redis again. */
    private final AtomicLong nextProbeAt = new AtomicLong();

    private final LongAdder redisCalls = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final LongAdder timeouts = new LongAdder();
    private final LongAdder degradedAnswers = new LongAdder();
    private final LongAdder scriptLoads = new LongAdder();

    private record Config(double rate, long intervalNanos, long toleranceNanos) {}

    /** One decoded script reply; {@code redisMicros} is the {@code TIME} the script read. */
    record Reply(boolean ok, long retryAfterNanos, long available, long redisMicros) {}

    private RedisGCRA(Builder b) {
        this.redis = b.redis;
        this.key = b.key;
        this.keys = List.of(b.key);
        this.per = b.per;
        this.perNanos = b.per.toNanos();
        this.burst = b.burst;
        this.burstFloor = (long) Math.floor(b.burst);
        this.timeoutNanos = b.timeout.toNanos();
        this.enforceTimeout = b.enforceTimeout;
        this.callExecutor = b.callExecutor;
        this.probeIntervalNanos = b.probeInterval.toNanos();
        this.ticker = b.ticker;
        this.failureMode = b.failureMode;
        this.fallback = b.fallback;
        this.reporter = new RedisGcraReporter(b.key, b.failureMode, b.probeInterval, b.ticker,
                b.logger != null ? b.logger : RedisGcraReporter.LOGGER);
        this.timeoutMessage = "Redis did not answer within " + b.timeout;
        if (enforceTimeout && callExecutor == null) {
            VirtualThreadsStarted.ensure();
        }
        this.config = configFor(b.rate, perNanos, burst, per);
    }

    /**
     * Returns a builder. {@link Builder#redis}, {@link Builder#key} and {@link Builder#rate} are
     * required.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------------------ operations

    /**
     * Admits a batch of {@code n} operations if the shared budget covers all of it at Redis's
     * current instant, consuming it; otherwise consumes nothing and leaves the TAT untouched.
     * A batch above {@code burst + 1} is refused without a call to Redis, since no wait could
     * ever admit it. When Redis fails, the {@link FailureMode} answers.
     *
     * @param n the number of operations; {@code n <= 0} is a no-op returning {@code true}
     * @return {@code true} if the batch was admitted
     */
    @Override
    public boolean tryConsume(long n) {
        if (n <= 0) {
            return true;
        }
        if (n > burstFloor + 1) {
            return false;
        }
        Reply r = evaluate("T", n);
        if (r != null) {
            return r.ok();
        }
        return failureMode == FailureMode.FAIL_OPEN && fallback.tryConsume(n);
    }

    /**
     * Admits a batch of {@code n} if the budget covers it, or reports the exact wait after which
     * it would be admitted, in one atomic step.
     *
     * <p>When Redis fails: under {@link FailureMode#FAIL_CLOSED} the refusal's wait is the time
     * until the limiter next tries Redis; under {@link FailureMode#FAIL_OPEN} a refusal by the
     * fallback carries {@code n * emissionInterval}, an estimate (the fallback's own state is not
     * visible through {@link RateLimiter}).
     *
     * @param n the number of operations; {@code n <= 0} is admitted without a call
     * @return the admission, or the refusal with its wait
     * @throws IllegalArgumentException if {@code n > burst + 1}: no wait could ever admit it
     */
    public Take take(long n) {
        if (n <= 0) {
            return Take.admitted();
        }
        checkCeiling(n);
        Reply r = evaluate("T", n);
        if (r != null) {
            return r.ok() ? Take.admitted() : Take.refused(Math.max(1, r.retryAfterNanos()));
        }
        if (failureMode == FailureMode.FAIL_OPEN) {
            return fallback.tryConsume(n) ? Take.admitted() : Take.refused(estimateNanos(n));
        }
        return Take.refused(nanosUntilProbe());
    }

    /**
     * {@code take(1)}.
     *
     * @return the admission, or the refusal with its wait
     */
    public Take take() {
        return take(1);
    }

    /**
     * Returns the exact nanoseconds until {@code tryConsume(n)} would succeed, assuming nothing
     * else consumes meanwhile; {@code 0} when it would succeed now. Grows with {@code n} by
     * {@code (n - 1) * emissionInterval}. Consumes nothing.
     *
     * <p>When Redis fails: {@link FailureMode#FAIL_CLOSED} answers the time until the limiter
     * next tries Redis; {@link FailureMode#FAIL_OPEN} answers {@code 0} if the fallback has
     * {@code n} available and {@code n * emissionInterval} (an estimate) otherwise.
     *
     * @param n the number of operations; {@code n <= 0} answers {@code 0} without a call
     * @return the wait in nanoseconds, never negative
     * @throws IllegalArgumentException if {@code n > burst + 1}: no wait could ever admit it
     */
    public long retryAfterNanos(long n) {
        if (n <= 0) {
            return 0;
        }
        checkCeiling(n);
        Reply r = evaluate("P", n);
        if (r != null) {
            return r.retryAfterNanos();
        }
        if (failureMode == FailureMode.FAIL_OPEN) {
            return fallback.available() >= n ? 0 : estimateNanos(n);
        }
        return nanosUntilProbe();
    }

    /**
     * {@link #retryAfterNanos(long)} as a {@link Duration}.
     *
     * @param n the number of operations; {@code n <= 0} answers {@link Duration#ZERO}
     * @return the wait
     * @throws IllegalArgumentException if {@code n > burst + 1}
     */
    public Duration retryAfter(long n) {
        return Duration.ofNanos(retryAfterNanos(n));
    }

    /**
     * {@code retryAfter(1)}.
     *
     * @return the wait before a single operation would be admitted
     */
    public Duration retryAfter() {
        return retryAfter(1);
    }

    /**
     * Returns how many operations the shared budget covers at Redis's current instant:
     * {@code burst + 1} when the key is idle, counted from {@code floor(burst)} directly rather
     * than by dividing the delay tolerance back by the interval, so it never under-reports by
     * one. Consumes nothing. When Redis fails: {@code 0} under {@link FailureMode#FAIL_CLOSED},
     * the fallback's {@code available()} under {@link FailureMode#FAIL_OPEN}.
     *
     * @return the operations available now, never negative
     */
    @Override
    public long available() {
        Reply r = evaluate("P", 1);
        if (r != null) {
            return r.available();
        }
        return failureMode == FailureMode.FAIL_OPEN ? fallback.available() : 0;
    }

    /**
     * Deletes the shared key: every instance using it sees an idle limit. Always tries Redis,
     * even while degraded.
     *
     * @throws IllegalStateException if Redis failed or did not answer within the timeout (the
     *                               failure is counted and reported like any other)
     */
    public void reset() {
        long start = System.nanoTime();
        try {
            rawCall(argsFor("R", 0, config), start);
            redisCalls.increment();
            recovered();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failures.increment();
            throw new IllegalStateException("reset of Redis key " + key + " interrupted", e);
        } catch (Throwable t) {
            rethrowIfOwnThreadsVmError(t);
            failed(t);
            throw new IllegalStateException("reset of Redis key " + key + " failed", t);
        }
    }

    /**
     * Changes the rate for this instance's subsequent calls; the shared TAT is kept, so budget
     * already consumed stays consumed. Other instances sharing the key keep their own rate until
     * they are changed too.
     *
     * @param rate operations per {@code per}, finite and {@code > 0}
     * @throws IllegalArgumentException if {@code rate} is invalid, or too high or too low for the
     *                                  precision limits in the class Javadoc (nothing changes)
     */
    public void setRate(double rate) {
        this.config = configFor(rate, perNanos, burst, per);
    }

    /**
     * Returns a snapshot of the configuration and counters.
     *
     * @return the snapshot
     */
    public Stats stats() {
        Config c = config;
        return new Stats(key, c.rate(), per, burst, c.intervalNanos(), c.toleranceNanos(),
                failureMode, degraded.get(), redisCalls.sum(), failures.sum(), timeouts.sum(),
                degradedAnswers.sum(), scriptLoads.sum());
    }

    @Override
    public String toString() {
        Config c = config;
        return "RedisGCRA[key=" + key + ", rate=" + c.rate() + " per " + per + ", burst=" + burst
                + ", " + failureMode + (degraded.get() ? ", degraded" : "") + "]";
    }

    // ------------------------------------------------------------------------------ internals

    private void checkCeiling(long n) {
        if (n > burstFloor + 1) {
            throw new IllegalArgumentException("n must be <= burst + 1 (" + (burstFloor + 1)
                    + "): " + n + "; no wait could ever admit it, split the batch or raise burst");
        }
    }

    private long estimateNanos(long n) {
        return Math.max(1, n * config.intervalNanos());
    }

    private long nanosUntilProbe() {
        return Math.max(1, nextProbeAt.get() - ticker.read());
    }

    /**
     * Runs the script, or returns {@code null} when the failure mode must answer: Redis failed
     * now, or the limiter is degraded and it is not this call's turn to probe.
     */
    private Reply evaluate(String mode, long n) {
        long start = System.nanoTime();
        if (degraded.get()) {
            long now = ticker.read();
            long probeAt = nextProbeAt.get();
            if (now - probeAt < 0 || !nextProbeAt.compareAndSet(probeAt, now + probeIntervalNanos)) {
                degradedAnswers.increment();
                return null;
            }
        }
        try {
            Reply r = rawCall(argsFor(mode, n, config), start);
            redisCalls.increment();
            recovered();
            return r;
        } catch (InterruptedException e) {
            // Not Redis's fault: answer by the failure mode without changing health.
            Thread.currentThread().interrupt();
            failures.increment();
        } catch (Throwable t) {
            rethrowIfOwnThreadsVmError(t);
            failed(t);
        }
        degradedAnswers.increment();
        return null;
    }

    private static List<String> argsFor(String mode, long n, Config c) {
        return List.of(mode, Long.toString(c.intervalNanos()), Long.toString(c.toleranceNanos()),
                Long.toString(n));
    }

    private void recovered() {
        if (degraded.get() && degraded.compareAndSet(true, false)) {
            reporter.recovery();
        }
    }

    /**
     * Rethrows a {@link VirtualMachineError} the bridge raised on the caller's own thread
     * ({@code enforceTimeout(false)}): the caller's stack or heap is what failed, not Redis, and
     * the library's callbacks let such errors through too. One from the call's own thread, or any
     * other {@link Error}, is the bridge failing: a failure like any exception.
     */
    private void rethrowIfOwnThreadsVmError(Throwable t) {
        if (!enforceTimeout && t instanceof VirtualMachineError vme) {
            throw vme;
        }
    }

    private void failed(Throwable t) {
        failures.increment();
        if (t instanceof TimeoutException) {
            timeouts.increment();
        }
        nextProbeAt.set(ticker.read() + probeIntervalNanos);
        degraded.set(true);
        reporter.failure(t);
    }

    /**
     * One script call, within the timeout when it is enforced, the timeout counted from
     * {@code startNanos} (a {@link System#nanoTime()} reading taken as the operation began).
     * Package-private so tests can read a raw reply (with the {@code TIME} the script saw).
     *
     * @throws Throwable what the bridge threw (an error raised on the call's own thread is
     *                   rethrown here, unwrapped), or a {@link TimeoutException}
     */
    Reply rawCall(List<String> args, long startNanos) throws Throwable {
        if (!enforceTimeout) {
            return callRedis(args);
        }
        Call call = new Call(this, args);
        if (callExecutor == null) {
            Thread.ofVirtual().name("RedisGCRA-call").start(call);
        } else {
            callExecutor.execute(call);
        }
        try {
            // The whole call counts, starting its thread included: a cold JVM's first one is slow.
            return call.result.get(timeoutNanos - (System.nanoTime() - startNanos), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            // The call thread's interrupt is not the caller's: keep it wrapped, a plain failure.
            throw cause == null || cause instanceof InterruptedException ? e : cause;
        } catch (TimeoutException e) {
            throw new TimeoutException(timeoutMessage);
        }
    }

    /**
     * Starts one virtual thread when first used, so that the JVM's virtual-thread scheduler is
     * running before a limiter's first call, whose timeout counts starting its thread (tens of
     * milliseconds in a fresh JVM, microseconds after).
     */
    private static final class VirtualThreadsStarted {
        static {
            Thread.ofVirtual().name("RedisGCRA-warm-up").start(() -> { });
        }

        static void ensure() {
            // Initialising this class is the work.
        }
    }

    /**
     * A script call run on another thread. A class rather than a lambda, so that no call site is
     * linked on a call's way.
     */
    private static final class Call implements Runnable {
        final CompletableFuture<Reply> result = new CompletableFuture<>();
        private final RedisGCRA owner;
        private final List<String> args;

        Call(RedisGCRA owner, List<String> args) {
            this.owner = owner;
            this.args = args;
        }

        @Override
        public void run() {
            try {
                result.complete(owner.callRedis(args));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        }
    }

    /** Test access: a raw script call for this limiter's config. */
    Reply rawCall(String mode, long n) throws Exception {
        try {
            return rawCall(argsFor(mode, n, config), System.nanoTime());
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new ExecutionException(t);
        }
    }

    /** Runs the script by its digest, sending the source once more after {@code NOSCRIPT}. */
    private Reply callRedis(List<String> args) throws Exception {
        Object reply;
        try {
            reply = redis.evalsha(SCRIPT_SHA1, keys, args);
        } catch (Exception e) {
            if (!RedisGcraScript.isNoScript(e)) {
                throw e;
            }
            scriptLoads.increment();
            reply = redis.eval(SCRIPT, keys, args);
        }
        return RedisGcraScript.decode(reply);
    }

    /** {@link RedisGcraScript#isNoScript(Throwable)}, under the name the tests use. */
    static boolean isNoScript(Throwable e) {
        return RedisGcraScript.isNoScript(e);
    }

    /** {@link RedisGcraScript#decode(Object)}, under the name the tests use. */
    static Reply decode(Object reply) {
        return RedisGcraScript.decode(reply);
    }

    private static Config configFor(double rate, long perNanos, double burst, Duration per) {
        checkRate(rate);
        double exact = perNanos / rate;
        if (exact < 1) {
            throw new IllegalArgumentException("rate must be at most one operation per nanosecond"
                    + " (per / rate >= 1 ns): " + rate + " per " + per);
        }
        if (Math.ceil(exact) > MAX_SPAN_NANOS) {
            // Too long even at burst 0: a rate problem, not a burst one.
            throw new IllegalArgumentException("rate must keep per / rate <= 2^52 ns (about 52 days): "
                    + rate + " per " + per);
        }
        double ceiling = Math.floor(burst) + 1;
        if (Math.ceil(exact) * ceiling > MAX_SPAN_NANOS) {
            throw new IllegalArgumentException("burst must keep (burst + 1) * per / rate <= 2^52 ns"
                    + " (about 52 days): burst " + burst + " at " + rate + " per " + per);
        }
        long interval = (long) Math.ceil(exact);
        return new Config(rate, interval, (long) Math.floor(burst) * interval);
    }

    private static void checkRate(double rate) {
        Preconditions.requireFinitePositive("rate", rate);
    }

    // ------------------------------------------------------------------------------ builder

    /**
     * Builds a {@link RedisGCRA}. Setters validate eagerly and {@link #build()} checks what is
     * required and the combinations; nothing is half-applied on a bad input.
     *
     * <p><b>Thread safety.</b> Not safe for concurrent use: confine a builder to one thread at a
     * time. The limiter it builds is safe for concurrent use.
     */
    public static final class Builder {
        /** The longest duration a {@code long} of nanoseconds holds. */
        private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

        private RedisScriptExecutor redis;
        private String key;
        private double rate = Double.NaN;
        private boolean rateSet;
        private Duration per = Duration.ofSeconds(1);
        private double burst;
        private Duration timeout = Duration.ofMillis(100);
        private boolean enforceTimeout = true;
        private Executor callExecutor;
        private Duration probeInterval = Duration.ofMillis(500);
        private Ticker ticker = Ticker.system();
        private FailureMode failureMode = FailureMode.FAIL_CLOSED;
        private RateLimiter fallback;
        private double fallbackShare = Double.NaN;
        /** Null: {@link RedisGcraReporter#LOGGER}. */
        private Logger logger;

        private Builder() {
        }

        /** Test access: where the limiter's reports go, instead of its class's System.Logger. */
        Builder logger(Logger logger) {
            this.logger = Objects.requireNonNull(logger, "logger");
            return this;
        }

        /**
         * Sets the bridge to the application's Redis client. Required.
         *
         * @param redis runs the script; see {@link RedisScriptExecutor}
         * @return this builder
         * @throws NullPointerException if {@code redis} is null
         */
        public Builder redis(RedisScriptExecutor redis) {
            this.redis = Objects.requireNonNull(redis, "redis");
            return this;
        }

        /**
         * Sets the Redis key that holds this limit's state; every instance using the same key
         * shares one budget. Required. Choose a prefix of your own (e.g. {@code "rl:partner-api"}).
         *
         * @param key the key, not empty
         * @return this builder
         * @throws NullPointerException     if {@code key} is null
         * @throws IllegalArgumentException if {@code key} is empty
         */
        public Builder key(String key) {
            Objects.requireNonNull(key, "key");
            if (key.isEmpty()) {
                throw new IllegalArgumentException("key must not be empty: \"\"");
            }
            this.key = key;
            return this;
        }

        /**
         * Sets the sustained rate, in operations per {@link #per(Duration)}. Required.
         *
         * @param rate finite and {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code rate} is NaN, infinite or {@code <= 0}
         */
        public Builder rate(double rate) {
            checkRate(rate);
            this.rate = rate;
            this.rateSet = true;
            return this;
        }

        /**
         * Sets the period the rate is measured against. Default one second.
         *
         * @param per positive
         * @return this builder
         * @throws NullPointerException     if {@code per} is null
         * @throws IllegalArgumentException if {@code per} is zero, negative or above
         *                                  {@code Long.MAX_VALUE} nanoseconds (about 292 years)
         */
        public Builder per(Duration per) {
            this.per = requireNanos("per", Preconditions.requirePositive("per", per));
            return this;
        }

        /**
         * Sets the burst: operations tolerated above the steady rate; a batch of up to
         * {@code burst + 1} can be admitted at once. Fractional values floor. Default 0.
         *
         * @param burst finite and {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code burst} is NaN, infinite or negative
         */
        public Builder burst(double burst) {
            this.burst = Preconditions.requireFiniteNonNegative("burst", burst);
            return this;
        }

        /**
         * Sets how long a call waits for Redis before the {@link FailureMode} answers, counted
         * from the call's start; the call returns within it plus the allowance stated in the
         * class Javadoc. Default 100 ms. Configure the client's own command timeout too (see
         * {@link RedisScriptExecutor}).
         *
         * @param timeout positive
         * @return this builder
         * @throws NullPointerException     if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is zero, negative or above
         *                                  {@code Long.MAX_VALUE} nanoseconds (about 292 years)
         */
        public Builder timeout(Duration timeout) {
            this.timeout = requireNanos("timeout", Preconditions.requirePositive("timeout", timeout));
            return this;
        }

        /**
         * Chooses how the timeout is enforced. {@code true} (the default): each script call runs
         * on another thread (a new virtual thread, or the {@link #callExecutor(Executor)}) and
         * the caller stops waiting at the timeout, whatever the client does. {@code false}: the
         * call runs on the caller's thread, saving a thread hand-off, and the bound is only as
         * good as the client's own command timeout, which must then be set at or below
         * {@link #timeout(Duration)}.
         *
         * @param enforce whether RedisGCRA enforces the timeout itself
         * @return this builder
         */
        public Builder enforceTimeout(boolean enforce) {
            this.enforceTimeout = enforce;
            return this;
        }

        /**
         * Sets the executor that runs script calls when the timeout is enforced. Default: a new
         * virtual thread per call. A rejected task counts as a Redis failure.
         *
         * @param callExecutor runs each script call
         * @return this builder
         * @throws NullPointerException if {@code callExecutor} is null
         */
        public Builder callExecutor(Executor callExecutor) {
            this.callExecutor = Objects.requireNonNull(callExecutor, "callExecutor");
            return this;
        }

        /**
         * Sets how often a degraded limiter tries Redis again (one call per interval goes to
         * Redis; the others are answered by the failure mode at once). Default 500 ms; zero
         * tries Redis at every call.
         *
         * @param probeInterval zero or positive
         * @return this builder
         * @throws NullPointerException     if {@code probeInterval} is null
         * @throws IllegalArgumentException if {@code probeInterval} is negative or above
         *                                  {@code Long.MAX_VALUE} nanoseconds (about 292 years)
         */
        public Builder probeInterval(Duration probeInterval) {
            Objects.requireNonNull(probeInterval, "probeInterval");
            if (probeInterval.isNegative()) {
                throw new IllegalArgumentException("probeInterval must be >= 0: " + probeInterval);
            }
            this.probeInterval = requireNanos("probeInterval", probeInterval);
            return this;
        }

        /**
         * Sets the local clock used only to schedule probes while degraded and to space failure
         * reports (decisions use Redis's {@code TIME}; the timeout is real time). Default
         * {@link Ticker#system()}.
         *
         * @param ticker the clock
         * @return this builder
         * @throws NullPointerException if {@code ticker} is null
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /**
         * Fails closed (the default): while Redis is unreachable or slow, every request is
         * refused, so the shared limit is never exceeded.
         *
         * @return this builder
         */
        public Builder failClosed() {
            this.failureMode = FailureMode.FAIL_CLOSED;
            this.fallback = null;
            this.fallbackShare = Double.NaN;
            return this;
        }

        /**
         * Fails open: while Redis is unreachable or slow, requests are admitted by a local
         * limiter, typically an in-process GCRA at this instance's share of the global rate
         * (with {@code k} instances, {@code rate / k}), so the fleet stays near the shared limit
         * without Redis.
         *
         * @param fallback the local limiter, consulted only while Redis fails
         * @return this builder
         * @throws NullPointerException if {@code fallback} is null
         */
        public Builder failOpen(RateLimiter fallback) {
            this.fallback = Objects.requireNonNull(fallback, "fallback");
            this.fallbackShare = Double.NaN;
            this.failureMode = FailureMode.FAIL_OPEN;
            return this;
        }

        /**
         * Fails open onto a local {@link PowerGCRA} at {@code share} of the global rate, with
         * the same {@code per}, the same {@code burst} scaled by {@code share} (floored), and this
         * builder's ticker. With {@code k} instances sharing the key, {@code 1.0 / k} keeps the
         * fleet at the shared limit while Redis is away. The local limiter is built in
         * {@link #build()}, from the values set by then.
         *
         * @param share the fraction of {@code rate} this instance may admit without Redis, in
         *              {@code (0, 1]}
         * @return this builder
         * @throws IllegalArgumentException if {@code share} is outside {@code (0, 1]}
         */
        public Builder failOpen(double share) {
            if (!(share > 0 && share <= 1)) {
                throw new IllegalArgumentException("share must be in (0, 1]: " + share);
            }
            this.fallback = null;
            this.fallbackShare = share;
            this.failureMode = FailureMode.FAIL_OPEN;
            return this;
        }

        /**
         * Builds the limiter. Does not contact Redis.
         *
         * @return the limiter
         * @throws IllegalStateException    if {@code redis}, {@code key} or {@code rate} was not set
         * @throws IllegalArgumentException if {@code rate}, {@code per} and {@code burst}
         *                                  together exceed the precision limits in the class
         *                                  Javadoc, or if {@link #failOpen(double)}'s share gives a
         *                                  local rate that {@link PowerGCRA} refuses
         */
        public RedisGCRA build() {
            if (redis == null) {
                throw new IllegalStateException("redis is required: call redis(RedisScriptExecutor)");
            }
            if (key == null) {
                throw new IllegalStateException("key is required: call key(String)");
            }
            if (!rateSet) {
                throw new IllegalStateException("rate is required: call rate(double)");
            }
            configFor(rate, per.toNanos(), burst, per); // this limiter's own limits come first
            if (!Double.isNaN(fallbackShare)) {
                double localRate = rate * fallbackShare;
                try {
                    fallback = PowerGCRA.builder().rate(localRate).per(per)
                            .burst(Math.floor(burst * fallbackShare)).ticker(ticker).build();
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("failOpen share " + fallbackShare + " of rate "
                            + rate + " per " + per + " gives a local rate of " + localRate + " per "
                            + per + ", which the local PowerGCRA refuses: " + e.getMessage(), e);
                }
            }
            return new RedisGCRA(this);
        }

        /** Checks that {@code value} fits a {@code long} of nanoseconds, as every use needs. */
        private static Duration requireNanos(String name, Duration value) {
            if (value.compareTo(MAX_NANOS) > 0) {
                throw new IllegalArgumentException(name
                        + " must be at most Long.MAX_VALUE ns (~292 years): " + value);
            }
            return value;
        }
    }
}
