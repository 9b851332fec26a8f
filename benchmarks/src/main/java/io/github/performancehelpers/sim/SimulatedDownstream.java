package io.github.performancehelpers.sim;


import java.time.Duration;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import io.github.performancehelpers.Ticker;

/**
 * A downstream service to put an executor in front of: a fixed number of concurrent slots and a
 * lognormal service-time distribution, so that, like a real database or partner API, its latency
 * is flat at low load and climbs steeply near capacity, because calls queue for a free slot.
 *
 * <p>A {@link #call()} blocks the calling thread: it waits for a slot (first come, first served),
 * then holds it for one service time drawn from the distribution, then releases it. The latency
 * it reports is the slot wait plus the service time. Sleeping is cheap on a virtual thread, so a
 * caller may run thousands of calls at once.
 *
 * <p>Capacity, in calls per second, is {@code slots / mean service time}; the mean of a lognormal
 * with median {@code m} and shape {@code sigma} is {@code m * exp(sigma^2 / 2)}. {@link
 * #setSlots(int)} changes the slot count while calls are running: a shrink takes effect as
 * in-flight calls finish (none is cut short), a growth at once.
 *
 * <p>Service times are reproducible: call number {@code i} (counted from 0 in the order calls
 * take a slot) gets a service time that depends only on the seed and {@code i}. Two instances
 * built with the same seed therefore draw the same sequence, which is what makes two contenders
 * running side by side comparable.
 *
 * <p>Thread-safe. Time comes from a {@link Ticker} and sleeping goes through a {@link Sleeper},
 * both injectable, so tests can drive it without real time.
 */
public final class SimulatedDownstream {

    /** How a call spends its service time; {@link #system()} sleeps the calling thread. */
    @FunctionalInterface
    public interface Sleeper {
        /**
         * Blocks the calling thread for about {@code nanos}.
         *
         * @param nanos how long, in nanoseconds, {@code >= 0}
         * @throws InterruptedException if the thread is interrupted while sleeping
         */
        void sleepNanos(long nanos) throws InterruptedException;

        /**
         * Returns a sleeper that calls {@link Thread#sleep(Duration)}.
         *
         * @return the real-time sleeper
         */
        static Sleeper system() {
            return nanos -> Thread.sleep(Duration.ofNanos(nanos));
        }
    }

    /**
     * One finished call.
     *
     * @param slotWaitNanos time spent waiting for a free slot
     * @param serviceNanos  time spent holding the slot
     */
    public record Call(long slotWaitNanos, long serviceNanos) {
        /**
         * Returns what the caller saw: slot wait plus service time.
         *
         * @return the call's latency, in nanoseconds
         */
        public long latencyNanos() {
            return slotWaitNanos + serviceNanos;
        }
    }

    private final Slots slots;
    private final ReentrantLock resizeLock = new ReentrantLock();
    private volatile int slotCount;
    private final long medianNanos;
    private final double sigma;
    private final long seed;
    private final Ticker ticker;
    private final Sleeper sleeper;
    private final AtomicLong nextIndex = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicInteger inService = new AtomicInteger();

    private SimulatedDownstream(Builder b) {
        this.slotCount = b.slots;
        this.slots = new Slots(b.slots);
        this.medianNanos = b.median.toNanos();
        this.sigma = b.sigma;
        this.seed = b.seed;
        this.ticker = b.ticker;
        this.sleeper = b.sleeper;
    }

    /**
     * Returns a builder; every option has a default (8 slots, 20 ms median, sigma 0.4, seed 42,
     * the system ticker and the real sleeper).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Makes one call: waits for a slot, holds it for one service time, releases it.
     *
     * @return how long the call waited and how long it was served
     * @throws InterruptedException if interrupted while waiting or being served (the slot, if
     *                              taken, is released)
     */
    public Call call() throws InterruptedException {
        long start = ticker.read();
        slots.acquire();
        long acquired = ticker.read();
        long index = nextIndex.getAndIncrement();
        inService.incrementAndGet();
        try {
            sleeper.sleepNanos(serviceTimeNanos(index));
            long done = ticker.read();
            completed.incrementAndGet();
            return new Call(acquired - start, done - acquired);
        } finally {
            inService.decrementAndGet();
            slots.release();
        }
    }

    /**
     * Returns the service time that call number {@code index} gets: {@code median *
     * exp(sigma * z)} with {@code z} a standard normal drawn from a generator seeded by the
     * seed and {@code index} alone.
     *
     * @param index the call's number, from 0
     * @return the service time, in nanoseconds
     */
    public long serviceTimeNanos(long index) {
        if (sigma == 0) {
            return medianNanos;
        }
        double z = new SplittableRandom(seed ^ (index * 0x9E3779B97F4A7C15L)).nextGaussian();
        return Math.round(medianNanos * Math.exp(sigma * z));
    }

    /**
     * Changes the number of slots. Shrinking never interrupts a call in service: the slots come
     * back out of use as those calls finish, and no new call starts until fewer than {@code
     * slots} are in service.
     *
     * @param slots the new slot count, {@code > 0}
     * @throws IllegalArgumentException if {@code slots <= 0}
     */
    public void setSlots(int slots) {
        if (slots <= 0) {
            throw new IllegalArgumentException("slots must be > 0: " + slots);
        }
        resizeLock.lock();
        try {
            int delta = slots - slotCount;
            if (delta > 0) {
                this.slots.release(delta);
            } else if (delta < 0) {
                this.slots.shrink(-delta);
            }
            slotCount = slots;
        } finally {
            resizeLock.unlock();
        }
    }

    /**
     * Returns the current slot count.
     *
     * @return the slot count
     */
    public int slots() {
        return slotCount;
    }

    /**
     * Returns the mean service time, {@code median * exp(sigma^2 / 2)}.
     *
     * @return the mean service time, in milliseconds
     */
    public double meanServiceMillis() {
        return medianNanos / 1e6 * Math.exp(sigma * sigma / 2);
    }

    /**
     * Returns the throughput the downstream sustains with every slot busy: {@code slots / mean
     * service time}. Latency grows without bound as the offered load approaches it.
     *
     * @return the capacity, in calls per second
     */
    public double capacityPerSecond() {
        return slotCount * 1000.0 / meanServiceMillis();
    }

    /**
     * Returns the number of calls holding a slot now.
     *
     * @return calls in service
     */
    public int inService() {
        return inService.get();
    }

    /**
     * Returns an estimate of the number of calls waiting for a slot.
     *
     * @return calls waiting
     */
    public int waiting() {
        return slots.getQueueLength();
    }

    /**
     * Returns the number of calls that finished their service.
     *
     * @return completed calls
     */
    public long completed() {
        return completed.get();
    }

    /** A fair semaphore whose permits can be withdrawn while they are held. */
    private static final class Slots extends Semaphore {
        private static final long serialVersionUID = 1L;

        Slots(int permits) {
            super(permits, true);
        }

        void shrink(int by) {
            reducePermits(by);
        }
    }

    /** Builder for {@link SimulatedDownstream}. */
    public static final class Builder {
        private int slots = 8;
        private Duration median = Duration.ofMillis(20);
        private double sigma = 0.4;
        private long seed = 42;
        private Ticker ticker = Ticker.system();
        private Sleeper sleeper = Sleeper.system();

        private Builder() {
        }

        /**
         * Sets the number of concurrent slots.
         *
         * @param slots the slot count, {@code > 0}
         * @return this builder
         */
        public Builder slots(int slots) {
            this.slots = slots;
            return this;
        }

        /**
         * Sets the median service time.
         *
         * @param median the median, {@code > 0}
         * @return this builder
         */
        public Builder medianServiceTime(Duration median) {
            this.median = Objects.requireNonNull(median, "median");
            return this;
        }

        /**
         * Sets the lognormal shape: the standard deviation of the log of the service time. 0
         * makes every service time equal the median; 0.4 puts the p99 at 2.5x the median.
         *
         * @param sigma the shape, finite and {@code >= 0}
         * @return this builder
         */
        public Builder sigma(double sigma) {
            this.sigma = sigma;
            return this;
        }

        /**
         * Sets the seed of the service-time sequence.
         *
         * @param seed the seed
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Sets the time source for the reported wait and service times.
         *
         * @param ticker the ticker
         * @return this builder
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /**
         * Sets how service time is spent.
         *
         * @param sleeper the sleeper
         * @return this builder
         */
        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
            return this;
        }

        /**
         * Builds the downstream.
         *
         * @return a new downstream
         * @throws IllegalArgumentException if an option is out of range
         */
        public SimulatedDownstream build() {
            if (slots <= 0) {
                throw new IllegalArgumentException("slots must be > 0: " + slots);
            }
            if (median.isZero() || median.isNegative()) {
                throw new IllegalArgumentException("medianServiceTime must be > 0: " + median);
            }
            if (!(sigma >= 0) || !Double.isFinite(sigma)) {
                throw new IllegalArgumentException("sigma must be finite and >= 0: " + sigma);
            }
            return new SimulatedDownstream(this);
        }
    }
}
