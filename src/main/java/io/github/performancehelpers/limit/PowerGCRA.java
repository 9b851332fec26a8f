// Over 800 lines (about 1,200) because about 500 of them are Javadoc and comments stating the
// exact-accounting contract (integer ticks, the epoch carried across setRate and clock steps, the
// contended path), and the public nested Builder and Stats live here (their names are API). The
// epoch and its padding classes (about 170 lines) are the seam to split if the file grows.
package io.github.performancehelpers.limit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import io.github.performancehelpers.Ticker;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.internal.Preconditions;

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
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads, and
 * every method is lock-free: the TAT is one atomic value updated by a compare-and-set loop. Under
 * any contention the limiter never admits more than
 * {@code burst + 1 + elapsed / emissionInterval} operations over any interval of length
 * {@code elapsed} (of the readings the admissions were decided at). A refusal writes nothing, and
 * an admission that loses a race to another thread is decided again at the reading it already
 * has, without reading the clock a second time.
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
 * Counts are {@code long}, so a count that is not a number ({@code NaN}), infinite
 * ({@code ±Infinity}) or fractional cannot be expressed at all: the compiler rejects it. A count of
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
 * detected it has no effect). Either way the limiter stays usable. The limiter records a reading
 * as seen about once a millisecond, so a step back of less than about a millisecond may go
 * unreported; the reading is then treated as an old one, which can only make a decision
 * stricter. {@code onError} is never called for a refusal: refusing is what a rate limiter is for.
 *
 * <h2>No drift</h2>
 * The TAT is kept in fixed point with up to 24 fractional bits per nanosecond, so rates whose
 * emission interval is not a whole number of nanoseconds (3/s, 7/s, 300000/7 per second) hold
 * their rate over long runs: the per-operation rounding error is below 2<sup>-24</sup> ns.
 *
 * @since 0.1.0
 */
public final class PowerGCRA implements RateLimiter, AutoCloseable {

    /*
     * Implementation notes.
     *
     * Length. This file is about 1,200 lines because the admission methods, the epoch switch
     * protocol and the fixed-point Config and Epoch types they share are one lock-free algorithm,
     * reviewed as a unit; each admission method keeps its own short read-check-CAS loop inline so
     * that the hot path (tryConsume) is one flat loop with no indirection.
     *
     * State. The TAT lives in an Epoch: a fixed-point value "ticks since epoch.base", with
     * 2^epoch.shift ticks per nanosecond, in the epoch's volatile long `tat`. Everything else in
     * an Epoch is final (rate, interval in ticks, limit = (burst + 1) * interval, base), so the
     * hot path is: read tat, read the clock, one integer comparison, one CAS on `tat`. Keeping the
     * interval in sub-nanosecond ticks is what stops drift: 7/s is 142857142.857... ns, which
     * whole nanoseconds would round by 0.14 ns on every admission.
     *
     * Admission is integer arithmetic on ticks, shared by every method (see headroom()):
     *   backlog  = max(tat - nowTicks, 0)
     *   headroom = limit - backlog
     *   admit n  iff n * interval <= headroom;   available = floor(headroom / interval)
     * so tryConsume(n) succeeds exactly when available() >= n, and available() is burst + 1 at an
     * idle instant for every rate (limit / interval == burst + 1 exactly, no floating point).
     *
     * Epoch switches. The fixed point has a bounded range, and setRate changes the interval, so
     * occasionally the whole configuration must change together with the TAT:
     *   REBASE   when a reading is more than REBASE_NANOS past base (about once a minute of use),
     *   RESCALE  on setRate,
     *   SHIFT    when the clock moved backwards (base moves back by the step, ticks unchanged).
     * A switch is lock-free: the proposer CASes its new epoch into old.next (one winner), then
     * anyone (proposer or any thread that finds the old epoch sealed) completes it:
     *   1. seal old: CAS old.tat from t to (t | SEALED_BIT); a sealed epoch never changes again,
     *      so every admission made in it is in the sealed value;
     *   2. CAS new.tat from UNINIT to new.carry(sealed value) -- deterministic, so helpers agree;
     *   3. CAS this.epoch from old to new.
     * Normal tat values are in [0, 2^62), so "t < 0" is the one test for "sealed or uninitialised"
     * on the hot path.
     *
     * Clock. Each epoch records a recent reading in lastSeen. A thread reads lastSeen BEFORE it
     * reads the clock, so with a monotonic clock its reading is never below the lastSeen it read:
     * no false alarms under concurrency. Writes to lastSeen are racy (setRelease, only when the
     * reading is at least LAST_SEEN_GRANULARITY, about a millisecond, newer); a lost write only
     * makes detection less sensitive. A step back shorter than the granularity may go unseen; such
     * a reading is then only an old one, which can make a decision stricter, never looser. The
     * granularity is coarse on purpose: lastSeen is read by every call, and each write of it
     * invalidates that line in every other core (at 1 us it cost two threads' refusals about 20
     * ns a call; benchmarks/gcra.md, "Contention"). Every reading is >= base +
     * CATCH_UP_LIMIT_NANOS, so nowTicks - catchUpTicks >= 0.
     *
     * Layout. tat is the one field every admission writes; the padding classes (EpochPadBefore,
     * EpochPadAfter) keep it on cache lines of its own, so that a CAS by one core does not make
     * another core miss on the final fields it reads after its clock read.
     *
     * Linearization. A thread reads tat, then lastSeen, then the clock, then tat again. If tat is
     * unchanged across the clock read, the call describes that instant: an admission CASes from
     * that value (and linearizes at the clock read), a refusal or read-only answer returns with no
     * write at all.
     *
     * Retries. An admission whose CAS loses, or whose second read of tat differs from the first,
     * is decided again with the witness TAT at the SAME reading: it does not read the clock again.
     * Re-reading it put a 25 ns clock read inside every retry's read-CAS window, so under two
     * threads nearly every CAS lost and was repeated (0.85 lost CASes per admission, about a third
     * of Bucket4j's throughput; benchmarks/gcra.md, "Contention"). Why that is still exact:
     *   - no over-admission: every admission, first try or retry, writes
     *     max(witness, nowTicks) + n * interval with a backlog of at most limit at its own
     *     reading, and tat only grows by admissions; so the admissions whose readings lie in any
     *     window [a, b] number at most burst + 1 + (b - a) / emissionInterval, whatever order
     *     their CASes land in (the first leaves tat >= a + interval, the last needs
     *     tat <= b + limit) -- the bound the class Javadoc states;
     *   - linearizable whenever the witness TAT is not behind the clock (a backlogged limiter, the
     *     state in which admissions are contended for), or the clock has not moved since the
     *     reading: the result is then the one a fresh reading would give. Otherwise (a limiter
     *     running below its rate, where the TAT trails the clock) the admission is placed as if
     *     made at its own reading, up to one lost CAS round (tens of ns) earlier than a fresh
     *     reading would place it, as a caller delayed between its clock read and its CAS is;
     *   - a refusal is never decided on a stale reading: if the retry at the old reading would
     *     refuse, the call starts over with fresh reads, so a refusal always describes an instant
     *     at which tat held (and refusing stays a pure read).
     */

    /** Readings more than this past an epoch's base force a REBASE, bounding fixed-point range. */
    static final long REBASE_NANOS = 1L << 36;
    /** How much lateness tryConsumeCatchingUp may make up at most; also each epoch's base margin. */
    static final long CATCH_UP_LIMIT_NANOS = 1L << 30;
    /** lastSeen is only rewritten when a reading is at least this much newer (about 1 ms). */
    static final long LAST_SEEN_GRANULARITY = 1L << 20;
    /** Most fractional bits per nanosecond an epoch uses. */
    static final int MAX_SHIFT = 24;
    /** Largest (burst + 1) * per / rate accepted, in nanoseconds. */
    static final double MAX_SPAN_NANOS = 0x1p60;
    /** Smallest per / rate accepted, in nanoseconds. */
    static final double MIN_INTERVAL_NANOS = 0x1p-20;

    /**
     * The emission interval at or under which the limiter is open to the loop's direct path: one
     * admission a nanosecond, faster than any caller can ask (a clock read alone costs more).
     */
    static final double OPEN_INTERVAL_NANOS = 1.0;

    static final long SEALED_BIT = Long.MIN_VALUE;
    static final long UNINIT = -1L;

    static {
        // The loop's pacing operations, for the controller in another package (see Access).
        Access.register(new Access.GcraAccess() {
            @Override
            public boolean tryConsumeCatchingUp(PowerGCRA limiter, long n, long maxCatchUpNanos) {
                return limiter.tryConsumeCatchingUp(n, maxCatchUpNanos);
            }

            @Override
            public boolean tryConsumeCatchingUpAt(PowerGCRA limiter, long n, long maxCatchUpNanos, long reading) {
                return limiter.tryConsumeCatchingUpAt(n, maxCatchUpNanos, reading);
            }

            @Override
            public void refund(PowerGCRA limiter, long n) {
                limiter.refund(n);
            }

            @Override
            public boolean isOpen(PowerGCRA limiter) {
                return limiter.epoch.config.intervalNanos <= OPEN_INTERVAL_NANOS;
            }
        });
    }

    private static final System.Logger LOGGER = System.getLogger(PowerGCRA.class.getName());
    private static final VarHandle EPOCH;
    private static final VarHandle TAT;
    private static final VarHandle LAST_SEEN;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            EPOCH = lookup.findVarHandle(PowerGCRA.class, "epoch", Epoch.class);
            TAT = lookup.findVarHandle(EpochTat.class, "tat", long.class);
            LAST_SEEN = lookup.findVarHandle(EpochHead.class, "lastSeen", long.class);
            NEXT = lookup.findVarHandle(EpochHead.class, "next", Epoch.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Ticker ticker;
    private final LongConsumer onError;
    private final long burst;
    private final long burstPlusOne;
    private final AtomicLong clockErrors = new AtomicLong();
    private final AtomicLong callbackFailures = new AtomicLong();
    /** The current epoch; may lag by a switch in progress (then its tat is sealed). */
    private volatile Epoch epoch;

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
     * the value, a {@code null} throws {@link NullPointerException} naming the parameter.
     *
     * <p><b>Thread safety.</b> Not safe for concurrent use: confine a builder to one thread at a
     * time. The limiter it builds is safe for concurrent use.
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
            this.rate = checkRate(opsPerPer);
            return this;
        }

        /**
         * Sets the unit {@code rate} is measured against. Default one second.
         *
         * @param per the period; {@code > 0} and representable in nanoseconds as a {@code long}
         * @return this builder
         * @throws NullPointerException     if {@code per} is null
         * @throws IllegalArgumentException if {@code per} is zero, negative or longer than about
         *                                  292 years
         */
        public Builder per(Duration per) {
            Objects.requireNonNull(per, "per");
            perNanos(per);
            this.per = per;
            return this;
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
            this.burst = Preconditions.requireFiniteNonNegative("burst", burst);
            return this;
        }

        /**
         * Sets the clock. Default {@link Ticker#system()}. It is the only clock the limiter reads.
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
            this.onError = Objects.requireNonNull(onClockError, "onClockError");
            return this;
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
            if (Double.isNaN(rate)) {
                throw new IllegalArgumentException("rate is required: NaN (not set)");
            }
            long b = (long) Math.floor(burst);
            long pn = perNanos(per);
            Config.validate(rate, pn, b);
            return new PowerGCRA(this, b, pn);
        }
    }

    static double checkRate(double opsPerPer) {
        return Preconditions.requireFinitePositive("rate", opsPerPer);
    }

    static long perNanos(Duration per) {
        Preconditions.requirePositive("per", per);
        try {
            return per.toNanos();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("per must be at most Long.MAX_VALUE ns (~292 years): " + per, e);
        }
    }

    private PowerGCRA(Builder b, long burst, long perNanos) {
        this.ticker = b.ticker;
        this.onError = b.onError;
        this.burst = burst;
        this.burstPlusOne = burst + 1;
        long now = ticker.read();
        Epoch first = new Epoch(new Config(b.rate, perNanos, burstPlusOne), now - CATCH_UP_LIMIT_NANOS, now,
                Epoch.CARRY_NONE, 0L, 0, 0L);
        first.tat = CATCH_UP_LIMIT_NANOS << first.shift; // idle at the first reading, no credit
        this.epoch = first;
    }

    // ---------------------------------------------------------------------------------------------
    // Admission

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
        if (n <= 0) {
            return true;
        }
        Epoch e = epoch;
        read:
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            long rel = now - e.base;
            if (t < 0 || now - seen < 0 || rel > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            if (now - seen >= LAST_SEEN_GRANULARITY) {
                LAST_SEEN.setRelease(e, now);
            }
            // The TAT again, after the clock: unchanged, it held across the reading (the instant the
            // answer describes); changed, an admission is still decided at this reading (see
            // "Retries"), and the CAS follows the read at once, so it rarely loses.
            long w = e.tat;
            if (n <= burstPlusOne) {
                long nowTicks = rel << e.shift;
                long cost = n * e.interval;
                for (;;) {
                    long newTat = Math.max(w, nowTicks) + cost;
                    if (w < 0 || newTat - nowTicks > e.limit) {
                        break; // sealed (a switch is under way), or no room
                    }
                    long witness = (long) TAT.compareAndExchange(e, w, newTat);
                    if (witness == w) {
                        return true;
                    }
                    w = witness;
                }
            }
            if (w == t) {
                return false; // refused at a reading the TAT held across: a pure read
            }
            // refused on a TAT read after the clock, or sealed: decide again on fresh readings
        }
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
     * Package-private pacing hook for the executor's dispatcher. Makes the same admission check
     * as {@code tryConsume(n)} at the current reading, but on admission advances the TAT from
     * {@code max(now - maxCatchUpNanos, tat)} instead of {@code max(now, tat)}.
     *
     * <p>Why: a dispatcher that waited continuously for the limiter and was woken by the OS some
     * microseconds late must not lose that lateness; plain GCRA forgets it, so a late poller runs
     * slow. With this hook the dispatcher can admit several due operations per wake-up and hold
     * the long-run rate exactly. Only use it when work was waiting the whole time: it lets the
     * limiter admit up to {@code maxCatchUpNanos / emissionInterval} operations beyond the usual
     * bound. {@code maxCatchUpNanos} is clamped to {@code [0, 2^30]} ns (about one second); with
     * {@code 0} this is exactly {@code tryConsume(n)}.
     *
     * @param n               the number of operations; {@code n <= 0} is a no-op returning true
     * @param maxCatchUpNanos how much lateness may be made up, in nanoseconds
     * @return {@code true} if the batch was admitted
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    boolean tryConsumeCatchingUp(long n, long maxCatchUpNanos) {
        return consumeCatchingUp(n, maxCatchUpNanos, true, 0L);
    }

    /**
     * As {@link #tryConsumeCatchingUp(long, long)}, at a reading of this limiter's ticker that the
     * caller has just taken, which saves the clock read: the executor's workers pass the end time
     * of the task they have just finished when they admit the next one.
     *
     * <p>A reading older than the newest one this limiter has seen (another thread read the clock
     * and admitted in between) is taken as that newer reading: it is stale, not a clock that moved
     * backwards, and a reading the limiter has already seen is a valid admission instant. Other
     * than that, a stale reading can only make this decision stricter (less headroom); on an idle
     * limiter it places the new TAT as an admission at that earlier instant would have (so a
     * caller stalled between its reading and this call may leave later callers one admission
     * more, as a caller descheduled between its own clock read and its CAS does). The reading is
     * not recorded as seen (a reading from before a backwards clock step would otherwise raise a
     * second, false report), and an epoch switch is decided on a fresh clock read.
     *
     * @param n               the number of operations; {@code n <= 0} is a no-op returning true
     * @param maxCatchUpNanos how much lateness may be made up, in nanoseconds
     * @param reading         a reading of this limiter's ticker, taken by the caller
     * @return {@code true} if the batch was admitted
     * @throws IllegalStateException if a backwards clock is found and no {@code onError} was set
     */
    boolean tryConsumeCatchingUpAt(long n, long maxCatchUpNanos, long reading) {
        return consumeCatchingUp(n, maxCatchUpNanos, false, reading);
    }

    private boolean consumeCatchingUp(long n, long maxCatchUpNanos, boolean readClock, long reading) {
        if (n <= 0) {
            return true;
        }
        long catchUp = Math.min(Math.max(maxCatchUpNanos, 0L), CATCH_UP_LIMIT_NANOS);
        Epoch e = epoch;
        read:
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now;
            boolean fresh = readClock;
            if (readClock) {
                now = ticker.read();
            } else {
                now = reading - seen < 0 ? seen : reading;
                if (now - e.base > REBASE_NANOS) {
                    now = ticker.read(); // an epoch switch is decided on a fresh reading only
                    fresh = true;
                }
            }
            long rel = now - e.base;
            if (t < 0 || now - seen < 0 || rel > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            // Only a fresh reading is recorded as seen: a caller's reading taken before a
            // backwards step of the clock lies ahead of the shifted timeline, and recorded it
            // would make the next ordinary reading look like a second backwards step.
            if (fresh && now - seen >= LAST_SEEN_GRANULARITY) {
                LAST_SEEN.setRelease(e, now);
            }
            if (n <= burstPlusOne) {
                long nowTicks = rel << e.shift;
                long cost = n * e.interval;
                long floor = nowTicks - (catchUp << e.shift);
                for (long w = t;;) {
                    if (cost > headroom(e, w, nowTicks)) {
                        if (w != t) {
                            continue read; // refuse only on a reading taken after its TAT
                        }
                        break;
                    }
                    long witness = (long) TAT.compareAndExchange(e, w, Math.max(w, floor) + cost);
                    if (witness == w) {
                        return true;
                    }
                    if (witness < 0) {
                        continue read;
                    }
                    w = witness;
                }
            }
            if (e.tat == t) {
                return false;
            }
        }
    }

    /**
     * Returns the exact wait, in nanoseconds, after which {@code tryConsume(n)} would succeed if
     * nothing else consumed meanwhile: waiting exactly that long and retrying succeeds, waiting
     * one nanosecond less does not. {@code 0} when it would succeed now. The wait is the TAT
     * arithmetic rounded up to a whole nanosecond (for example {@code 142857143} ns at 7/s), so it
     * is never early.
     *
     * @param n the number of operations; {@code n <= 0} returns {@code 0}
     * @return the wait in nanoseconds, {@code >= 0}
     * @throws IllegalArgumentException if {@code n > burst + 1}: no wait could ever admit it
     * @throws IllegalStateException    if the clock moved backwards and no {@code onError} was set
     */
    public long retryAfterNanos(long n) {
        if (n <= 0) {
            return 0L;
        }
        checkCeiling(n);
        Epoch e = epoch;
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            long rel = now - e.base;
            if (t < 0 || now - seen < 0 || rel > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            long wait = waitNanos(e, t, rel << e.shift, n);
            if (e.tat == t) {
                return wait;
            }
        }
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
        if (n <= 0) {
            return Take.admitted();
        }
        checkCeiling(n);
        Epoch e = epoch;
        read:
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            long rel = now - e.base;
            if (t < 0 || now - seen < 0 || rel > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            if (now - seen >= LAST_SEEN_GRANULARITY) {
                LAST_SEEN.setRelease(e, now);
            }
            long nowTicks = rel << e.shift;
            long cost = n * e.interval;
            for (long w = t;;) {
                long wait = waitNanos(e, w, nowTicks, n);
                if (wait != 0) {
                    if (w == t && e.tat == t) {
                        return Take.refused(wait);
                    }
                    continue read; // refuse only on a reading taken after its TAT
                }
                long witness = (long) TAT.compareAndExchange(e, w, Math.max(w, nowTicks) + cost);
                if (witness == w) {
                    return Take.admitted();
                }
                if (witness < 0) {
                    continue read;
                }
                w = witness;
            }
        }
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
     * than by dividing the delay tolerance back (which does not round-trip in floating point: at
     * rate 3, burst 7 that reads 6.999999999999999 and would under-report by one). {@code
     * tryConsume(n)} at the same instant succeeds exactly when {@code available() >= n}: both come
     * from one shared integer computation.
     *
     * @return the operations available now, {@code 0 .. burst + 1}
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    @Override
    public long available() {
        Epoch e = epoch;
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            long rel = now - e.base;
            if (t < 0 || now - seen < 0 || rel > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            long h = headroom(e, t, rel << e.shift);
            if (e.tat == t) {
                return h <= 0 ? 0L : h / e.interval;
            }
        }
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
     * The one admission computation every method shares: the ticks of budget left at
     * {@code nowTicks}, {@code limit - max(tat - nowTicks, 0)}. A batch of {@code n} fits iff
     * {@code n * interval <= headroom}; {@code available()} is {@code floor(headroom / interval)}.
     */
    private static long headroom(Epoch e, long t, long nowTicks) {
        long backlog = t - nowTicks;
        return backlog > 0 ? e.limit - backlog : e.limit;
    }

    /** Exact wait in whole nanoseconds (rounded up) until n fits; 0 if it fits now. */
    private static long waitNanos(Epoch e, long t, long nowTicks, long n) {
        long need = n * e.interval - headroom(e, t, nowTicks);
        return need <= 0 ? 0L : ((need - 1) >> e.shift) + 1;
    }

    private void checkCeiling(long n) {
        if (n > burstPlusOne) {
            throw new IllegalArgumentException("n must be at most burst + 1 = " + burstPlusOne
                    + " (no wait could ever admit a larger batch; split it or raise burst): " + n);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // State changes

    /**
     * Hard clear: forgets every admission, so the limiter is idle ({@code available() == burst +
     * 1}) at the current reading. Not a partial refill; it takes no count.
     *
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    public void reset() {
        Epoch e = epoch;
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            long rel = now - e.base;
            if (t < 0 || now - seen < 0 || rel > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            if (TAT.compareAndSet(e, t, rel << e.shift)) {
                return;
            }
        }
    }

    /**
     * Package-private refund hook for {@link PowerRateLimit}: returns capacity charged by an
     * admitted {@code tryConsume(n)} that the caller could not use. The TAT moves back by
     * {@code n} emission intervals but never below the current reading, so a refund cannot raise
     * {@code available()} above {@code burst + 1} nor bank credit.
     *
     * @param n the number of operations to give back; {@code n <= 0} does nothing
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    void refund(long n) {
        if (n <= 0) {
            return;
        }
        long k = Math.min(n, burstPlusOne);
        Epoch e = epoch;
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            long rel = now - e.base;
            if (t < 0 || now - seen < 0 || rel > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            long nowTicks = rel << e.shift;
            if (t <= nowTicks || TAT.compareAndSet(e, t, Math.max(nowTicks, t - k * e.interval))) {
                return;
            }
        }
    }

    /**
     * Changes the rate at runtime (the flow controller's actuator); {@code per} and {@code burst}
     * stay as they are.
     *
     * <p>Rule for the TAT: the outstanding backlog {@code tat - now}, if any, is rescaled by
     * {@code newInterval / oldInterval}, so that it stays the same number of emission intervals
     * and the new rate takes effect at once: {@code available()} is unchanged by the call (up to
     * sub-nanosecond rounding at the exact instant a slot frees), and the wait for the next slot
     * scales with the new interval. An idle limiter stays idle.
     *
     * @param opsPerPer the new rate in operations per {@code per}; finite and {@code > 0}
     * @throws IllegalArgumentException if {@code opsPerPer} is NaN, infinite, zero, negative or
     *                                  out of range for {@code per} and {@code burst} (see
     *                                  {@link Builder#build()}); nothing changes
     * @throws IllegalStateException    if the clock moved backwards and no {@code onError} was set
     */
    public void setRate(double opsPerPer) {
        checkRate(opsPerPer);
        Epoch e = epoch;
        Config c = new Config(opsPerPer, e.config.perNanos, burstPlusOne); // validates the range
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            if (t < 0 || now - seen < 0) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            Epoch proposal = new Epoch(c, now - CATCH_UP_LIMIT_NANOS, now, Epoch.CARRY_RESCALE,
                    e.base, e.shift, e.interval);
            if (propose(e, proposal)) {
                return;
            }
            e = epoch;
        }
    }

    /**
     * Clears state, exactly like {@link #reset()}: the limiter holds no thread, timer or other
     * resource, so there is nothing else to release, and it stays usable after closing.
     *
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    @Override
    public void close() {
        reset();
    }

    // ---------------------------------------------------------------------------------------------
    // Epoch switches (see the implementation notes at the top)

    /** Handles a sealed epoch, a backwards clock or a reading past the rebase threshold. */
    private Epoch slowPath(Epoch e, long t, long seen, long now) {
        if (t < 0) {
            Epoch next = e.next; // set before e was sealed
            complete(e, next);
            return next;
        }
        if (now - seen < 0) {
            Epoch shifted = new Epoch(e.config, e.base + (now - seen), now, Epoch.CARRY_SAME, 0L, 0, 0L);
            if (propose(e, shifted)) {
                clockMovedBackwards(now, seen);
            }
            return epoch;
        }
        // rel > REBASE_NANOS: move the base up to this reading, keeping the TAT where it is in time.
        propose(e, new Epoch(e.config, now - CATCH_UP_LIMIT_NANOS, now, Epoch.CARRY_REBASE, e.base, e.shift, 0L));
        return epoch;
    }

    /** Offers {@code proposal} as e's successor and completes whichever switch won; true if ours. */
    private boolean propose(Epoch e, Epoch proposal) {
        boolean won = NEXT.compareAndSet(e, (Epoch) null, proposal);
        complete(e, e.next);
        return won;
    }

    /** Seals e, initialises its successor from the sealed TAT and publishes it. Idempotent. */
    private void complete(Epoch e, Epoch next) {
        long t;
        for (;;) {
            t = e.tat;
            if (t < 0) {
                break;
            }
            if (TAT.compareAndSet(e, t, t | SEALED_BIT)) {
                t |= SEALED_BIT;
                break;
            }
        }
        TAT.compareAndSet(next, UNINIT, next.carry(t & ~SEALED_BIT));
        EPOCH.compareAndSet(this, e, next);
    }

    private void clockMovedBackwards(long reading, long previous) {
        clockErrors.incrementAndGet();
        LongConsumer callback = onError;
        if (callback == null) {
            throw new IllegalStateException("clock moved backwards: reading " + reading
                    + " ns is before an earlier reading " + previous + " ns (by " + (previous - reading)
                    + " ns); the limiter treated the step as time standing still");
        }
        try {
            callback.accept(reading);
        } catch (RuntimeException ex) {
            callbackFailures.incrementAndGet();
            LOGGER.log(System.Logger.Level.WARNING, "onError callback threw; ignored", ex);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Inspection

    /**
     * Returns a snapshot of the configuration and state.
     *
     * @return an immutable snapshot
     * @throws IllegalStateException if the clock moved backwards and no {@code onError} was set
     */
    public Stats stats() {
        Epoch e = epoch;
        for (;;) {
            long t = e.tat;
            long seen = e.lastSeen;
            long now = ticker.read();
            if (t < 0 || now - seen < 0 || now - e.base > REBASE_NANOS) {
                e = slowPath(e, t, seen, now);
                continue;
            }
            Config c = e.config;
            double tatNanos = e.base + Math.scalb((double) t, -e.shift);
            return new Stats(c.rate, Duration.ofNanos(c.perNanos), burst, c.intervalNanos,
                    burst * c.intervalNanos, tatNanos);
        }
    }

    /**
     * Returns the current rate.
     *
     * @return operations per {@link #per()}
     */
    public double rate() {
        return epoch.config.rate;
    }

    /**
     * Returns the unit the rate is measured against.
     *
     * @return the period
     */
    public Duration per() {
        return Duration.ofNanos(epoch.config.perNanos);
    }

    /**
     * Returns the burst tolerance, floored to a whole number of operations.
     *
     * @return the burst, {@code >= 0}
     */
    public long burst() {
        return burst;
    }

    /**
     * Returns how many backwards clock steps this limiter has detected.
     *
     * @return the count since construction
     */
    public long clockErrors() {
        return clockErrors.get();
    }

    /**
     * Returns how many times the {@code onError} callback threw (each was logged and swallowed).
     *
     * @return the count since construction
     */
    public long callbackFailures() {
        return callbackFailures.get();
    }

    /**
     * Returns a short description of the configuration.
     *
     * @return for example {@code PowerGCRA[rate=100.0 per PT1S, burst=20]}
     */
    @Override
    public String toString() {
        Config c = epoch.config;
        return "PowerGCRA[rate=" + c.rate + " per " + Duration.ofNanos(c.perNanos) + ", burst=" + burst + "]";
    }

    /**
     * A snapshot of a {@link PowerGCRA}.
     *
     * <p><b>Thread safety.</b> Instances are immutable and safe for concurrent use by any number
     * of threads.
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

    /** Rate configuration with its fixed-point scale; immutable. */
    static final class Config {
        final double rate;
        final long perNanos;
        final double intervalNanos;
        /** Fractional bits per nanosecond. */
        final int shift;
        /** Emission interval in ticks (2^shift per ns), rounded to nearest, >= 1. */
        final long interval;
        /** (burst + 1) * interval: the headroom of an idle limiter. */
        final long limit;

        Config(double rate, long perNanos, long burstPlusOne) {
            validate(rate, perNanos, burstPlusOne - 1);
            this.rate = rate;
            this.perNanos = perNanos;
            this.intervalNanos = perNanos / rate;
            double span = burstPlusOne * intervalNanos;
            int bits = 64 - Long.numberOfLeadingZeros(REBASE_NANOS + (long) Math.ceil(span));
            this.shift = Math.min(MAX_SHIFT, 61 - bits);
            this.interval = Math.max(1L, Math.round(Math.scalb(intervalNanos, shift)));
            this.limit = Math.multiplyExact(burstPlusOne, interval);
        }

        static void validate(double rate, long perNanos, long burst) {
            double intervalNanos = perNanos / rate;
            if (!(intervalNanos >= MIN_INTERVAL_NANOS)) {
                throw new IllegalArgumentException("rate must be finite and > 0 with per / rate >= 2^-20 ns: "
                        + rate + " per " + Duration.ofNanos(perNanos));
            }
            if (!((burst + 1.0) * intervalNanos <= MAX_SPAN_NANOS) || burst == Long.MAX_VALUE) {
                throw new IllegalArgumentException("burst too large for rate: (burst + 1) * per / rate must be"
                        + " at most 2^60 ns (~36 years): burst " + burst + ", rate " + rate + " per "
                        + Duration.ofNanos(perNanos));
            }
        }
    }

    /**
     * The read-mostly part of an {@link Epoch}: its final configuration, {@code lastSeen}
     * (rewritten at most about once a millisecond) and {@code next} (written once). The TAT, which
     * every admission writes, is kept off these cache lines by the padding classes below.
     */
    abstract static class EpochHead {
        final Config config;
        final long base;
        final int shift;
        final long interval;
        final long limit;
        /** How to derive this epoch's TAT from the predecessor's sealed one. */
        final int carryKind;
        final long predBase;
        final int predShift;
        final long predInterval;

        volatile long lastSeen;
        volatile Epoch next;

        EpochHead(Config config, long base, long lastSeen, int carryKind, long predBase, int predShift,
                  long predInterval) {
            this.config = config;
            this.base = base;
            this.shift = config.shift;
            this.interval = config.interval;
            this.limit = config.limit;
            this.carryKind = carryKind;
            this.predBase = predBase;
            this.predShift = predShift;
            this.predInterval = predInterval;
            this.lastSeen = lastSeen;
        }
    }

    /*
     * Padding by class layout (HotSpot places a superclass's fields before its subclass's): 128
     * bytes on each side of tat, two cache lines as the adjacent-line prefetcher pairs them, so
     * that a CAS on tat never invalidates the line of the fields every call reads after its clock
     * read (base, shift, interval, limit, lastSeen), nor anything allocated after the epoch.
     * Measured in benchmarks/gcra.md ("Contention").
     */
    abstract static class EpochPadBefore extends EpochHead {
        long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;

        EpochPadBefore(Config config, long base, long lastSeen, int carryKind, long predBase, int predShift,
                       long predInterval) {
            super(config, base, lastSeen, carryKind, predBase, predShift, predInterval);
        }
    }

    /** The TAT: ticks since {@code base}; once sealed (sign bit set) it never changes again. */
    abstract static class EpochTat extends EpochPadBefore {
        volatile long tat;

        EpochTat(Config config, long base, long lastSeen, int carryKind, long predBase, int predShift,
                 long predInterval) {
            super(config, base, lastSeen, carryKind, predBase, predShift, predInterval);
        }
    }

    abstract static class EpochPadAfter extends EpochTat {
        long q00, q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;

        EpochPadAfter(Config config, long base, long lastSeen, int carryKind, long predBase, int predShift,
                      long predInterval) {
            super(config, base, lastSeen, carryKind, predBase, predShift, predInterval);
        }
    }

    /**
     * One configuration and the TAT that goes with it (fields in the superclasses, for the
     * layout). {@code tat} is ticks since {@code base}; once sealed (sign bit set) it never
     * changes again.
     */
    static final class Epoch extends EpochPadAfter {
        static final int CARRY_NONE = 0;
        /** Same ticks: the clock stepped back and base moved back with it. */
        static final int CARRY_SAME = 1;
        /** Same scale, later base: subtract the base difference. */
        static final int CARRY_REBASE = 2;
        /** New rate: rescale the backlog by the interval ratio (setRate). */
        static final int CARRY_RESCALE = 3;

        Epoch(Config config, long base, long lastSeen, int carryKind, long predBase, int predShift,
              long predInterval) {
            super(config, base, lastSeen, carryKind, predBase, predShift, predInterval);
            this.tat = UNINIT;
        }

        /**
         * CARRY_RESCALE (setRate), in integer arithmetic: the predecessor's backlog at this
         * epoch's switch reading ({@code base + CATCH_UP_LIMIT_NANOS}) is {@code q} whole intervals
         * and a remainder {@code r}; the new backlog is {@code q} new intervals plus the remainder
         * scaled up to the next tick, at least one tick when {@code r > 0}. So the number of
         * intervals the backlog occupies, rounded up, is the same before and after, and with it
         * {@code available()} at the switch instant: exactly, never one admission lost to rounding
         * (the double arithmetic this replaces rounded the backlog to the nearest tick, and one
         * tick above q whole intervals refused an admission on a frozen clock) nor one created.
         */
        private long rescale(long t) {
            long nowTicks = CATCH_UP_LIMIT_NANOS << shift;
            long predRel = base - predBase + CATCH_UP_LIMIT_NANOS; // the switch reading, ns past predBase
            if (predRel > (Long.MAX_VALUE >> predShift)) {
                return 0L; // far past the predecessor's range: idle, and further back than any credit
            }
            long backlog = t - (predRel << predShift); // in the predecessor's ticks
            if (backlog <= 0) {
                if (backlog <= -(CATCH_UP_LIMIT_NANOS << predShift)) {
                    return 0L; // idle for longer than any catch-up credit reaches
                }
                // idle: keep the (bounded) catch-up credit where it is in time, at the new scale
                long credit = predShift <= shift ? backlog << (shift - predShift) : backlog >> (predShift - shift);
                return Math.max(0L, nowTicks + credit);
            }
            long q = Math.min(backlog / predInterval, limit / interval); // limit / interval == burst + 1
            long r = backlog % predInterval;
            long scaled = 0L;
            if (r > 0) {
                scaled = r <= Long.MAX_VALUE / interval
                        ? Math.ceilDiv(r * interval, predInterval)
                        : (long) Math.ceil((double) r / predInterval * interval);
                scaled = Math.min(Math.max(scaled, 1L), interval);
            }
            return nowTicks + Math.min(limit, q * interval + scaled);
        }

        /** This epoch's TAT from the predecessor's sealed TAT; deterministic, so helpers agree. */
        long carry(long t) {
            switch (carryKind) {
                case CARRY_SAME:
                    return t;
                case CARRY_REBASE: {
                    long d = base - predBase; // > 0
                    if (d > (Long.MAX_VALUE >> shift)) {
                        return 0L;
                    }
                    return Math.max(0L, t - (d << shift));
                }
                case CARRY_RESCALE:
                    return rescale(t);
                default:
                    throw new AssertionError(carryKind);
            }
        }
    }
}
