package io.github.performancehelpers.bench;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.limit.RateLimiter;

/**
 * Non-blocking single-permit acquisition, PowerGCRA against Guava, Bucket4j and resilience4j, each
 * on the system clock, uncontended and with 2, 4 and 8 threads sharing one limiter (the method's
 * suffix is its thread count: {@code gcra1}, {@code gcra2}, {@code gcra4}, {@code gcra8}), so one
 * run gives the whole scaling table.
 *
 * <p>{@code regime=admit}: 10^9 per second with a burst of 1000, far above what any caller can ask
 * for, so essentially every call is admitted (the CAS path). {@code regime=refuse}: 1000 per
 * second, so essentially every call is refused (the read-only path). {@code GcraBenchmarkRegimeTest}
 * checks that each limiter admits, or refuses, at least 99 % of its calls in its regime: Bucket4j
 * runs with nanosecond precision, for its default millisecond clock admits at most a burst's worth
 * a millisecond.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="GcraBenchmark -f 1 -wi 3 -w 1 -i 5 -r 1"};
 * the scaling table alone: {@code -Dbench.args="GcraBenchmark.(gcra|bucket4j|resilience4j|guava)[1248]$ -f 3 -wi 3 -w 1 -i 5 -r 1"}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GcraBenchmark {

    /** Which side of the limit the calls fall on. */
    @Param({"admit", "refuse"})
    public String regime;

    private PowerGCRA gcra;
    private PowerGCRA gcraCheapClock;
    private long cheapNanos;
    private com.google.common.util.concurrent.RateLimiter guava;
    private Bucket bucket4j;
    private AtomicRateLimiter resilience4j;

    /** Builds the four limiters at the regime's rate. */
    @Setup
    public void setup() {
        boolean admit = regime.equals("admit");
        double perSecond = admit ? 1e9 : 1e3;
        long burst = admit ? 1000 : 1;
        gcra = PowerGCRA.builder().rate(perSecond).per(Duration.ofSeconds(1)).burst(burst).build();
        // The same limiter on a clock that costs ~nothing (a plain field, +1 ns per read; single-thread
        // use only): isolates the limiter's own cost from System.nanoTime().
        gcraCheapClock = PowerGCRA.builder().rate(perSecond).burst(burst).ticker(() -> cheapNanos += 1).build();
        guava = com.google.common.util.concurrent.RateLimiter.create(perSecond);
        // Nanosecond precision: Bucket4j's default clock is System.currentTimeMillis(), which
        // refills once a millisecond, so at 10^9 per second with a burst of 1000 it admits at most
        // about 1,001 calls a millisecond (2.8-5.4 % of them here) and "admit" would time refusals.
        bucket4j = Bucket.builder().withNanosecondPrecision()
                .addLimit(Bandwidth.builder().capacity(burst + 1)
                        .refillGreedy((long) perSecond, Duration.ofSeconds(1)).build())
                .build();
        resilience4j = new AtomicRateLimiter("bench", RateLimiterConfig.custom()
                .limitForPeriod(admit ? 1_000_000 : 1)
                .limitRefreshPeriod(Duration.ofMillis(1))
                .timeoutDuration(Duration.ZERO)
                .build());
    }

    /** @return the clock read alone: the floor under every limiter here, which all read it once per call */
    @Benchmark
    @Threads(1)
    public long nanoTimeBaseline() {
        return System.nanoTime();
    }

    /** @return PowerGCRA.tryConsume() */
    @Benchmark
    @Threads(1)
    public boolean gcra1() {
        return gcra.tryConsume();
    }

    /** @return PowerGCRA.tryConsume() on the near-free clock (the algorithm's own cost) */
    @Benchmark
    @Threads(1)
    public boolean gcra1CheapClock() {
        return gcraCheapClock.tryConsume();
    }

    /** @return Guava RateLimiter.tryAcquire() */
    @Benchmark
    @Threads(1)
    public boolean guava1() {
        return guava.tryAcquire();
    }

    /** @return Bucket4j Bucket.tryConsume(1) */
    @Benchmark
    @Threads(1)
    public boolean bucket4j1() {
        return bucket4j.tryConsume(1);
    }

    /** @return resilience4j AtomicRateLimiter.acquirePermission() with a zero timeout */
    @Benchmark
    @Threads(1)
    public boolean resilience4j1() {
        return resilience4j.acquirePermission();
    }

    // ---------------------------------------------------------------- 2 threads on one limiter

    /** @return PowerGCRA.tryConsume(), two threads on one limiter */
    @Benchmark
    @Threads(2)
    public boolean gcra2() {
        return gcra.tryConsume();
    }

    /** @return Guava RateLimiter.tryAcquire(), two threads on one limiter */
    @Benchmark
    @Threads(2)
    public boolean guava2() {
        return guava.tryAcquire();
    }

    /** @return Bucket4j Bucket.tryConsume(1), two threads on one limiter */
    @Benchmark
    @Threads(2)
    public boolean bucket4j2() {
        return bucket4j.tryConsume(1);
    }

    /** @return resilience4j AtomicRateLimiter.acquirePermission(), two threads on one limiter */
    @Benchmark
    @Threads(2)
    public boolean resilience4j2() {
        return resilience4j.acquirePermission();
    }

    // ---------------------------------------------------------------- 4 threads on one limiter

    /** @return PowerGCRA.tryConsume(), four threads on one limiter */
    @Benchmark
    @Threads(4)
    public boolean gcra4() {
        return gcra.tryConsume();
    }

    /** @return Guava RateLimiter.tryAcquire(), four threads on one limiter */
    @Benchmark
    @Threads(4)
    public boolean guava4() {
        return guava.tryAcquire();
    }

    /** @return Bucket4j Bucket.tryConsume(1), four threads on one limiter */
    @Benchmark
    @Threads(4)
    public boolean bucket4j4() {
        return bucket4j.tryConsume(1);
    }

    /** @return resilience4j AtomicRateLimiter.acquirePermission(), four threads on one limiter */
    @Benchmark
    @Threads(4)
    public boolean resilience4j4() {
        return resilience4j.acquirePermission();
    }

    // ---------------------------------------------------------------- 8 threads on one limiter

    /** @return PowerGCRA.tryConsume(), eight threads on one limiter */
    @Benchmark
    @Threads(8)
    public boolean gcra8() {
        return gcra.tryConsume();
    }

    /** @return Guava RateLimiter.tryAcquire(), eight threads on one limiter */
    @Benchmark
    @Threads(8)
    public boolean guava8() {
        return guava.tryAcquire();
    }

    /** @return Bucket4j Bucket.tryConsume(1), eight threads on one limiter */
    @Benchmark
    @Threads(8)
    public boolean bucket4j8() {
        return bucket4j.tryConsume(1);
    }

    /** @return resilience4j AtomicRateLimiter.acquirePermission(), eight threads on one limiter */
    @Benchmark
    @Threads(8)
    public boolean resilience4j8() {
        return resilience4j.acquirePermission();
    }
}
