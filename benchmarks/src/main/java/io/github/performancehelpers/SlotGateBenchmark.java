package io.github.performancehelpers;

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

/**
 * The executor's slot gate ({@link ConcurrencyLimit}, package-private, hence this package) on its
 * own: each thread takes a slot and gives it back, as a submitter and its task do, with one
 * stripe (one atomic word, the pool delegate's gate) or with the virtual delegate's stripes. The
 * method's suffix is its thread count. A limit far above the threads, as on the virtual delegate
 * at an open rate: the cost measured is the shared line, not a full gate.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench
 * -Dbench.args="SlotGateBenchmark -f 3 -wi 3 -w 1 -i 5 -r 1"}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SlotGateBenchmark {

    /** 1: one word; 4: the stripes the virtual delegate has on two processors. */
    @Param({"1", "4"})
    public int stripes;

    private ConcurrencyLimit gate;

    @Setup
    public void setUp() {
        gate = new ConcurrencyLimit(10_000, stripes);
    }

    private long takeAndGiveBack() {
        long claim = gate.tryAcquireTicket();
        gate.release(ConcurrencyLimit.stripe(claim));
        return claim;
    }

    @Benchmark
    @Threads(1)
    public long slot1() {
        return takeAndGiveBack();
    }

    @Benchmark
    @Threads(2)
    public long slot2() {
        return takeAndGiveBack();
    }

    @Benchmark
    @Threads(8)
    public long slot8() {
        return takeAndGiveBack();
    }
}
