package io.github.performancehelpers;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * A Generic Cell Rate Algorithm (GCRA) rate limiter: the cell scheduler of the ATM Forum and the
 * algorithm behind {@code golang.org/x/time/rate} and {@code redis-cell}. It shapes traffic like a
 * token bucket but keeps its whole state in one number, the <em>theoretical arrival time</em>
 * (TAT), so every call is O(1) with no token accumulator.
 *
 * <pre>{@code
 * PowerGCRA limiter = PowerGCRA.builder().rate(100).per(Duration.ofSeconds(1)).burst(20).build();
 * Take t = limiter.take();
 * if (t.ok()) doWork(); else scheduler.schedule(this::doWork, t.retryAfterNanos(), NANOSECONDS);
 * }</pre>
 *
 * <h2>How it works</h2>
 * With {@code emissionInterval = per / rate} and {@code delayTolerance = burst * emissionInterval}:
 * <pre>
 *   accept n    iff  available() &gt;= n            (checked once per batch, against the pre-update TAT)
 *   on accept        tat = max(now, tat) + n * emissionInterval
 *   retryAfter(n)  = (n - 1) * emissionInterval - (delayTolerance - (tat - now)), at least 0
 * </pre>
 * Checking the pre-update TAT matters: checking the post-update value would reserve the cost
 * before deciding, and the very first operation would be refused.
 *
 * <h2>Batches</h2>
 * A batch of {@code n} spans {@code (n - 1)} emission intervals (the first operation is free), so
 * it can only ever be admitted if {@code n <= burst + 1}. {@link #tryConsume(long)} returns
 * {@code false} for a larger batch; {@link #retryAfterNanos(long)}, {@link #retryAfter(long)} and
 * {@link #take(long)} throw {@link IllegalArgumentException} for it, because no wait could ever
 * admit it and a finite answer would send a retry loop round forever. Split the batch or raise
 * {@code burst}. {@code retryAfter(n)} grows with {@code n}, by {@code (n - 1) * emissionInterval}
 * beyond the single-operation wait.
 *
 * <h2>Request counts</h2>
 * Counts are {@code long}, so the original library's "not a number", {@code NaN}, {@code ±Infinity}
 * and fractional counts cannot be expressed at all: the compiler rejects them. A count of
 * {@code 0} or below is a no-op that succeeds ({@code tryConsume} returns {@code true} and
 * consumes nothing, {@code retryAfterNanos} returns {@code 0}).
 *
 * <h2>Lateness</h2>
 * GCRA forgets lateness by design: on admission the TAT advances from {@code max(now, tat)}, so
 * time that passed while nobody asked is not banked beyond {@code burst}. With {@code burst 0},
 * anything that polls the limiter late (a thread woken by the OS some microseconds after the
 * instant it asked for) therefore runs slower than {@code rate}. Give such a poller a
 * {@code burst} of at least 1, or (inside this package) use the pacing hook
 * {@code tryConsumeCatchingUp}.
 *
 * <h2>Clock</h2>
 * The injected {@link Ticker} is the only clock this limiter reads. If a reading is lower than one
 * the limiter has already seen (a hand-driven test clock moved backwards), the limiter treats the
 * step as "time stood still": it shifts its state back by the same step, so it neither grants
 * extra capacity nor locks callers out until the clock catches up, and then reports the step once:
 * to {@code onError} with the offending reading if one was set (the call then proceeds normally),
 * otherwise by throwing {@link IllegalStateException} naming both readings (the call that
 * detected it has no effect). Either way the limiter stays usable. {@code onError} is never called
 * for a refusal: refusing is what a rate limiter is for.
 *
 * <h2>Thread safety</h2>
 * All methods are thread-safe and lock-free: the TAT is one atomic value updated by a
 * compare-and-set loop. Under any contention the limiter never admits more than
 * {@code burst + 1 + elapsed / emissionInterval} operations over any interval of length
 * {@code elapsed}.
 *
 * <h2>No drift</h2>
 * The TAT is kept in fixed point with up to 24 fractional bits per nanosecond, so rates whose
 * emission interval is not a whole number of nanoseconds (3/s, 7/s, 300000/7 per second) hold
 * their rate over long runs: the per-operation rounding error is below 2<sup>-24</sup> ns.
 */
public final class PowerGCRA implements RateLimiter, AutoCloseable {

    /**
     * Returns a new builder. {@link Builder#rate(double)} is required.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Builder for {@link PowerGCRA}. Setters validate eagerly and {@link #build()} validates the
     * combination; an invalid value throws {@link IllegalArgumentException} naming the option and
     * the value, a {@code null} throws {@link NullPointerException} naming the parameter. Not
     * thread-safe.
     */
    public static final class Builder {
        private double rate = Double.NaN;
        private Duration per = Duration.ofSeconds(1);
        private double burst;
        private Ticker ticker = Ticker.system();
        private LongConsumer onError;

        private Builder() {
        }

        /**
         * Sets the sustained rate, in operations per {@link #per(Duration) per}. Required.
         *
         * @param opsPerPer operations per {@code per}; finite and {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code opsPerPer} is NaN, infinite, zero or negative
         */
        public Builder rate(double opsPerPer) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Sets the unit {@code rate} is measured against. Default one second.
         *
         * @param per the period; {@code > 0}
         * @return this builder
         * @throws NullPointerException     if {@code per} is null
         * @throws IllegalArgumentException if {@code per} is zero or negative
         */
        public Builder per(Duration per) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Sets the extra tolerance above the steady rate, in operations. Default 0. Fractional
         * values floor ({@code 2.9} means 2). A batch of up to {@code burst + 1} operations can be
         * admitted back to back.
         *
         * @param burst the tolerance in operations; finite and {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code burst} is NaN, infinite or negative
         */
        public Builder burst(double burst) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Sets the clock. Default {@link Ticker#system()}. It is the only clock the limiter reads.
         *
         * @param ticker the clock
         * @return this builder
         * @throws NullPointerException if {@code ticker} is null
         */
        public Builder ticker(Ticker ticker) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Sets the callback for a clock that moved backwards, called instead of throwing with the
         * offending reading (nanoseconds, on the ticker's scale). It is never called for a
         * refusal. If it throws, the failure is logged and counted, and the call proceeds.
         * Default: none, in which case a backwards step throws {@link IllegalStateException}.
         *
         * @param onClockError the callback
         * @return this builder
         * @throws NullPointerException if {@code onClockError} is null
         */
        public Builder onError(LongConsumer onClockError) {
            throw new UnsupportedOperationException("not yet implemented");
        }

        /**
         * Builds the limiter. The first reading of the ticker is taken here.
         *
         * @return a new limiter, idle: {@code available() == burst + 1}
         * @throws IllegalArgumentException if {@code rate} was not set, or if the combination is
         *                                  out of range ({@code (burst + 1) * per / rate} must be
         *                                  at most 2<sup>60</sup> ns, about 36 years, and
         *                                  {@code per / rate} at least 2<sup>-20</sup> ns)
         */
        public PowerGCRA build() {
            throw new UnsupportedOperationException("not yet implemented");
        }
    }

    private PowerGCRA() {
    }

    /**
     * Admits a batch of {@code n} operations if {@code available() >= n} at this instant,
     * consuming it; otherwise consumes nothing and leaves the TAT where it was.
     *
     * @param n the number of operations; {@code n <= 0} is a no-op returning {@code true};
     *          {@code n > burst + 1} is always refused
     * @return {@code true} if the batch was admitted
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    @Override
    public boolean tryConsume(long n) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Admits one operation if the budget allows it. Same as {@code tryConsume(1)}.
     *
     * @return {@code true} if the operation was admitted
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    @Override
    public boolean tryConsume() {
        return tryConsume(1);
    }

    /**
     * Returns the exact wait, in nanoseconds, after which {@code tryConsume(n)} would succeed if
     * nothing else consumed meanwhile: waiting exactly that long and retrying succeeds, waiting
     * one nanosecond less does not. {@code 0} when it would succeed now.
     *
     * @param n the number of operations; {@code n <= 0} returns {@code 0}
     * @return the wait in nanoseconds, {@code >= 0}
     * @throws IllegalArgumentException if {@code n > burst + 1}: no wait could ever admit it
     * @throws IllegalStateException    if the clock moved backwards and no {@code onError} was set
     */
    public long retryAfterNanos(long n) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns {@code retryAfterNanos(1)}.
     *
     * @return the wait in nanoseconds before one operation would be admitted, {@code >= 0}
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    public long retryAfterNanos() {
        return retryAfterNanos(1);
    }

    /**
     * Returns {@link #retryAfterNanos(long)} as a {@link Duration}.
     *
     * @param n the number of operations; {@code n <= 0} returns {@link Duration#ZERO}
     * @return the exact wait
     * @throws IllegalArgumentException if {@code n > burst + 1}
     * @throws IllegalStateException    if the clock moved backwards and no {@code onError} was set
     */
    public Duration retryAfter(long n) {
        return Duration.ofNanos(retryAfterNanos(n));
    }

    /**
     * Returns {@code retryAfter(1)}.
     *
     * @return the exact wait before one operation would be admitted
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    public Duration retryAfter() {
        return retryAfter(1);
    }

    /**
     * Tries to admit {@code n} operations and, if refused, reports the exact wait, decided in one
     * atomic step (the wait describes the same instant as the refusal).
     *
     * @param n the number of operations; {@code n <= 0} is admitted and consumes nothing
     * @return {@link Take#admitted()} or a refusal carrying {@code retryAfterNanos(n)}
     * @throws IllegalArgumentException if {@code n > burst + 1}
     * @throws IllegalStateException    if the clock moved backwards and no {@code onError} was set
     */
    public Take take(long n) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns {@code take(1)}.
     *
     * @return {@link Take#admitted()} or a refusal carrying the exact wait
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    public Take take() {
        return take(1);
    }

    /**
     * Returns how many operations could be consumed at this instant: {@code burst + 1} when idle,
     * for every rate, because it is answered from {@code burst} in whole emission intervals rather
     * than by dividing the delay tolerance back (which does not round-trip in floating point).
     * {@code tryConsume(n)} at the same instant succeeds exactly when {@code available() >= n}:
     * both come from one shared integer computation.
     *
     * @return the operations available now, {@code 0 .. burst + 1}
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    @Override
    public long available() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns whether one operation would be admitted right now ({@code available() >= 1}).
     *
     * @return {@code true} if a single operation would be admitted
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    @Override
    public boolean hasCapacity() {
        return available() >= 1;
    }

    /**
     * Hard clear: forgets every admission, so the limiter is idle ({@code available() == burst +
     * 1}) at the current reading. Not a partial refill; it takes no count.
     */
    public void reset() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns a snapshot of the configuration and state.
     *
     * @return an immutable snapshot
     */
    public Stats stats() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Clears state, exactly like {@link #reset()}: the limiter holds no thread, timer or other
     * resource, so there is nothing else to release, and it stays usable after closing.
     */
    @Override
    public void close() {
        reset();
    }

    /**
     * Changes the rate at runtime (the flow controller's actuator); {@code per} and {@code burst}
     * stay as they are.
     *
     * <p>Rule for the TAT: the outstanding backlog {@code tat - now}, if any, is rescaled by
     * {@code newInterval / oldInterval}, so that it stays the same number of emission intervals and
     * the new rate takes effect at once; {@code available()} is unchanged by the call. An idle
     * limiter stays idle.
     *
     * @param opsPerPer the new rate in operations per {@code per}; finite and {@code > 0}
     * @throws IllegalArgumentException if {@code opsPerPer} is NaN, infinite, zero, negative or
     *                                  out of range for {@code per} and {@code burst} (see
     *                                  {@link Builder#build()}); nothing changes
     * @throws IllegalStateException    if the clock moved backwards and no {@code onError} was set
     */
    public void setRate(double opsPerPer) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the current rate.
     *
     * @return operations per {@link #per()}
     */
    public double rate() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the unit the rate is measured against.
     *
     * @return the period
     */
    public Duration per() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns the burst tolerance, floored to a whole number of operations.
     *
     * @return the burst, {@code >= 0}
     */
    public long burst() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns how many backwards clock steps this limiter has detected.
     *
     * @return the count since construction
     */
    public long clockErrors() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Returns how many times the {@code onError} callback threw (each was logged and swallowed).
     *
     * @return the count since construction
     */
    public long callbackFailures() {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Package-private pacing hook for the executor's dispatcher. Makes the same admission check
     * as {@code tryConsume(n)} at the current reading, but on admission advances the TAT from
     * {@code max(now - maxCatchUpNanos, tat)} instead of {@code max(now, tat)}.
     *
     * <p>Why: a dispatcher that waited continuously for the limiter and was woken by the OS some
     * microseconds late must not lose that lateness; plain GCRA forgets it, so a late poller runs
     * slow. With this hook the dispatcher can admit several due operations per wake-up and hold
     * the long-run rate exactly. Only use it when work was waiting the whole time: it lets the
     * limiter admit up to {@code maxCatchUpNanos / emissionInterval} operations beyond the usual
     * bound. {@code maxCatchUpNanos} is clamped to {@code [0, 2^30]} ns (about one second).
     *
     * @param n               the number of operations; {@code n <= 0} is a no-op returning true
     * @param maxCatchUpNanos how much lateness may be made up, in nanoseconds
     * @return {@code true} if the batch was admitted
     */
    boolean tryConsumeCatchingUp(long n, long maxCatchUpNanos) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * Package-private refund hook for {@link PowerRateLimit}: returns capacity charged by an
     * admitted {@code tryConsume(n)} that the caller could not use. The TAT moves back by
     * {@code n} emission intervals but never below the current reading, so a refund cannot raise
     * {@code available()} above {@code burst + 1} nor bank credit.
     *
     * @param n the number of operations to give back; {@code n <= 0} does nothing
     */
    void refund(long n) {
        throw new UnsupportedOperationException("not yet implemented");
    }

    /**
     * A snapshot of a {@link PowerGCRA}.
     *
     * @param rate                  operations per {@code per}
     * @param per                   the unit the rate is measured against
     * @param burst                 the burst tolerance, in whole operations
     * @param emissionIntervalNanos {@code per / rate}, in nanoseconds (fractional)
     * @param delayToleranceNanos   {@code burst * emissionIntervalNanos}, in nanoseconds
     * @param tatNanos              the theoretical arrival time, as a (fractional) reading on the
     *                              limiter's {@link Ticker} scale; at or before the reading of the
     *                              snapshot when idle
     */
    public record Stats(double rate, Duration per, long burst, double emissionIntervalNanos,
                        double delayToleranceNanos, double tatNanos) {

        /**
         * Validates the components.
         *
         * @param rate                  operations per {@code per}
         * @param per                   the unit the rate is measured against
         * @param burst                 the burst tolerance
         * @param emissionIntervalNanos the emission interval in nanoseconds
         * @param delayToleranceNanos   the delay tolerance in nanoseconds
         * @param tatNanos              the TAT as a ticker reading
         * @throws NullPointerException if {@code per} is null
         */
        public Stats {
            Objects.requireNonNull(per, "per");
        }
    }
}
