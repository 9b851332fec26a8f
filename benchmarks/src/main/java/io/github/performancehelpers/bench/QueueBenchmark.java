package io.github.performancehelpers.bench;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import io.github.performancehelpers.loop.PowerQueue;

/**
 * PowerQueue against ArrayBlockingQueue and LinkedBlockingQueue (all bounded, non-blocking
 * offer/poll), side by side in one run:
 *
 * <ul>
 *   <li>{@code p1} / {@code p2}: 1 or 2 producer threads offering and 1 consumer thread polling,
 *       concurrently. The figure to compare is the consumer's {@code polled} counter: elements
 *       actually transferred per microsecond. {@code offerFull} and {@code pollEmpty} count the
 *       attempts that found the queue full or empty; such an attempt yields the CPU before the
 *       next one. (Without the yield, on a 2-core machine with other load the producer and the
 *       consumer rarely run at the same moment: one fills the queue and spins on "full" for its
 *       whole time slice, the other drains it and spins on "empty", and the benchmark measures
 *       the OS scheduler rather than the queue. JMH's primary score for a group adds the failed
 *       attempts in, so read {@code polled}, not the group score.)</li>
 *   <li>{@code offerPoll}: one thread, offer then poll: the uncontended cost of a pair.</li>
 * </ul>
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@bench -Dbench.args="QueueBenchmark -f 1 -wi 3 -w 1
 * -i 5 -r 1"}.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class QueueBenchmark {

    private static final Integer ELEMENT = 42;

    /** The queue under test. */
    @Param({"PowerQueue", "ArrayBlockingQueue", "LinkedBlockingQueue"})
    public String impl;

    /** The bound of every queue. */
    @Param({"1024"})
    public int capacity;

    private Q queue;

    /** The two operations, so one benchmark body serves all three queues (monomorphic per fork). */
    abstract static class Q {
        abstract boolean offer(Integer e);

        abstract Integer poll();
    }

    static final class PowerQ extends Q {
        private final PowerQueue<Integer> q;

        PowerQ(int capacity) {
            q = new PowerQueue<>(capacity);
        }

        @Override
        boolean offer(Integer e) {
            return q.offer(e);
        }

        @Override
        Integer poll() {
            return q.poll();
        }
    }

    static final class JdkQ extends Q {
        private final BlockingQueue<Integer> q;

        JdkQ(BlockingQueue<Integer> q) {
            this.q = q;
        }

        @Override
        boolean offer(Integer e) {
            return q.offer(e);
        }

        @Override
        Integer poll() {
            return q.poll();
        }
    }

    /** Creates the queue for this trial. */
    @Setup(Level.Trial)
    public void setUp() {
        queue = switch (impl) {
            case "PowerQueue" -> new PowerQ(capacity);
            case "ArrayBlockingQueue" -> new JdkQ(new ArrayBlockingQueue<>(capacity));
            case "LinkedBlockingQueue" -> new JdkQ(new LinkedBlockingQueue<>(capacity));
            default -> throw new IllegalArgumentException("impl: " + impl);
        };
    }

    /** Per-producer counters. */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class OfferCounters {
        /** Offers accepted. */
        public long offered;
        /** Offers refused because the queue was full. */
        public long offerFull;

        /** Resets the counters for each iteration. */
        @Setup(Level.Iteration)
        public void reset() {
            offered = 0;
            offerFull = 0;
        }
    }

    /** Per-consumer counters. */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class PollCounters {
        /** Elements taken: the transfer rate. */
        public long polled;
        /** Polls that found the queue empty. */
        public long pollEmpty;

        /** Resets the counters for each iteration. */
        @Setup(Level.Iteration)
        public void reset() {
            polled = 0;
            pollEmpty = 0;
        }
    }

    private void offer(OfferCounters c) {
        if (queue.offer(ELEMENT)) {
            c.offered++;
        } else {
            c.offerFull++;
            Thread.yield(); // let the consumer run: see the class note on oversubscription
        }
    }

    private Integer poll(PollCounters c) {
        Integer e = queue.poll();
        if (e != null) {
            c.polled++;
        } else {
            c.pollEmpty++;
            Thread.yield();
        }
        return e;
    }

    /**
     * One producer.
     *
     * @param c the producer's counters
     */
    @Benchmark
    @Group("p1")
    @GroupThreads(1)
    public void p1Offer(OfferCounters c) {
        offer(c);
    }

    /**
     * The consumer beside one producer.
     *
     * @param c the consumer's counters
     * @return the element, for the blackhole
     */
    @Benchmark
    @Group("p1")
    @GroupThreads(1)
    public Integer p1Poll(PollCounters c) {
        return poll(c);
    }

    /**
     * Two producers.
     *
     * @param c the producer's counters
     */
    @Benchmark
    @Group("p2")
    @GroupThreads(2)
    public void p2Offer(OfferCounters c) {
        offer(c);
    }

    /**
     * The consumer beside two producers.
     *
     * @param c the consumer's counters
     * @return the element, for the blackhole
     */
    @Benchmark
    @Group("p2")
    @GroupThreads(1)
    public Integer p2Poll(PollCounters c) {
        return poll(c);
    }

    /**
     * Offer then poll on one thread: the uncontended cost of a pair.
     *
     * @return the element, for the blackhole
     */
    @Benchmark
    @Group("offerPoll")
    @GroupThreads(1)
    public Integer offerPoll() {
        queue.offer(ELEMENT);
        return queue.poll();
    }
}
