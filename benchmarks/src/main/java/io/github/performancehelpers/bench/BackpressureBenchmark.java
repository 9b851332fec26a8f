package io.github.performancehelpers.bench;

import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import io.github.performancehelpers.backpressure.Permit;
import io.github.performancehelpers.backpressure.PowerBackpressure;

/**
 * Uncontended cost of one permit round trip: {@code tryAcquire} + release on
 * {@link PowerBackpressure} against {@link Semaphore#tryAcquire()} + {@link Semaphore#release()},
 * in the same run. One thread; the pool is large enough that pressure never goes high, so no
 * refill tick is ever scheduled. Also the {@code acquire()} future path, which on the fast path
 * returns an already-completed future.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="BackpressureBenchmark -f 1 -wi 3 -w 1 -i 5 -r 1"}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Threads(1)
public class BackpressureBenchmark {

    private PowerBackpressure backpressure;
    private Semaphore semaphore;

    /** Builds both with 1000 permits. */
    @Setup(Level.Trial)
    public void setUp() {
        backpressure = PowerBackpressure.builder().capacity(1000).build();
        semaphore = new Semaphore(1000);
    }

    /** Closes the controller. */
    @TearDown(Level.Trial)
    public void tearDown() {
        backpressure.close();
    }

    /**
     * PowerBackpressure: tryAcquire, then release the permit.
     *
     * @return whether a permit was obtained
     */
    @Benchmark
    public boolean powerBackpressureTryAcquireRelease() {
        Optional<Permit> p = backpressure.tryAcquire();
        if (p.isPresent()) {
            p.get().release();
            return true;
        }
        return false;
    }

    /**
     * java.util.concurrent.Semaphore (non-fair, the default): tryAcquire, then release.
     *
     * @return whether a permit was obtained
     */
    @Benchmark
    public boolean semaphoreTryAcquireRelease() {
        if (semaphore.tryAcquire()) {
            semaphore.release();
            return true;
        }
        return false;
    }

    /**
     * PowerBackpressure: acquire() (already complete on the fast path), join, release.
     *
     * @return the permit, released
     */
    @Benchmark
    public Permit powerBackpressureAcquireFutureRelease() {
        Permit p = backpressure.acquire().join();
        p.release();
        return p;
    }
}
