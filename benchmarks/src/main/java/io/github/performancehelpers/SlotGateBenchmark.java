package io.github.performancehelpers;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
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
 * <p>{@code handOff}: as in the executor, where a task ends on another thread than the one that
 * submitted it, one thread takes slots and another gives them back to the stripe the first took
 * from, each as fast as it can (so the slots in use drift; the limit is far above them). Each
 * side's time per call is the cost of the line traffic between a submitter and the tasks' ends.
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

    /** The stripe the {@code handOff} taker takes from, written when it changes (once). */
    private volatile int takerStripe;

    @Setup
    public void setUp() {
        gate = new ConcurrencyLimit(Integer.MAX_VALUE, stripes); // never full, even as handOff drifts
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

    /** {@code handOff}'s submitter side: takes a slot. */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public long take() {
        long claim = gate.tryAcquireTicket();
        int s = ConcurrencyLimit.stripe(claim);
        if (claim >= 0 && s != takerStripe) {
            takerStripe = s;
        }
        return claim;
    }

    /** {@code handOff}'s other side: gives a slot back to the taker's stripe. */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public void giveBack() {
        gate.release(takerStripe);
    }
}
