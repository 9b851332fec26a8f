package io.github.performancehelpers.bench;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import io.github.performancehelpers.PowerExecutors;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.limit.PowerGCRA;

/**
 * The closed loop, side by side: the same open-loop offered load, above capacity, on the same
 * simulated downstream, whose capacity is halved mid-run, in front of four contenders running at
 * the same time on separate downstream instances (same seed, so the same service times):
 *
 * <ul>
 * <li>{@code fixedPool}: {@code Executors.newFixedThreadPool(threads)}: no admission control.</li>
 * <li>{@code netflix}: Netflix concurrency-limits {@code Gradient2Limit} (defaults) in a
 *     {@code SimpleLimiter} (a task is shed when no permit is free) in front of the same pool.</li>
 * <li>{@code flowPool}: {@code PowerExecutors.newFixedFlowPool(threads, target)}: the one-line
 *     factory (the knee-aware law from an open rate, the cap on the tasks in flight, shedding by
 *     the wait budget).</li>
 * <li>{@code flowDefaults}: {@code PowerFlowExecutor.builder()} with rate and maxRate at
 *     {@code threads / target}, minRate a hundredth of it, and targetP99, in front of the same
 *     pool: the builder's other defaults (the same law, cap and shedding) under a ceiling.</li>
 * <li>optionally, {@code constant<rate>}: one fixed admission rate (see
 *     {@link #run(Config, double...)}), the yardstick of what holding a rate can do.</li>
 * </ul>
 *
 * <p>The downstream: {@code slots} concurrent slots, lognormal service time (median, sigma); a
 * call waits for a free slot (FIFO) and then sleeps its service time. A task's latency is the
 * downstream call's (slot wait + service): what the flow executor measures as run time and holds
 * at its target. The end-to-end latency (submit to completion, including queueing in the
 * executor) is reported too.
 *
 * <p>Per contender: p99 over the last half of each phase; the time after the step from which at
 * least 90% of the remaining one-second windows have p99 within 10% of the target (at most
 * 1.1 × target); goodput
 * (tasks per second completed with latency ≤ target) in phase 2; tasks shed (refused at submit).
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.ClosedLoopBench -Dtool.args="120 210 215 220"}
 * (seconds per phase, default 120; the constant rates are optional).
 */
public final class ClosedLoopBench {

    private ClosedLoopBench() {
    }

    /**
     * The experiment's parameters.
     *
     * @param phaseSeconds each phase's length
     * @param slots        downstream slots in phase 1 (halved in phase 2)
     * @param medianMs     service-time median, ms
     * @param sigma        service-time lognormal shape
     * @param targetMs     the p99 target, ms
     * @param threads      the pool size of every contender
     * @param overload     offered load as a multiple of phase-1 capacity
     */
    public record Config(double phaseSeconds, int slots, double medianMs, double sigma, double targetMs,
            int threads, double overload) {

        /**
         * The published configuration: 8 slots, 15 ms median, sigma 0.5 (capacity 470/s, then
         * 235/s), target 60 ms, pools of 64 threads, 1.5× the phase-1 capacity offered.
         *
         * @param phaseSeconds each phase's length
         * @return the configuration
         */
        public static Config standard(double phaseSeconds) {
            return new Config(phaseSeconds, 8, 15, 0.5, 60, 64, 1.5);
        }

        /**
         * Returns the downstream's capacity with {@code slots} slots.
         *
         * @param slots the slots
         * @return calls per second
         */
        public double capacity(int slots) {
            return slots / (medianMs * Math.exp(sigma * sigma / 2) / 1000);
        }

        /**
         * Returns the offered load.
         *
         * @return tasks per second
         */
        public double offered() {
            return overload * capacity(slots);
        }
    }

    /** A downstream with resizable FIFO slots and a seeded lognormal service time. */
    static final class Downstream {
        private final ReentrantLock lock = new ReentrantLock(true);
        private final Condition free = lock.newCondition();
        private int slots;
        private int inUse;
        private final long medianNanos;
        private final double sigma;
        private final AtomicLong next = new AtomicLong();

        Downstream(int slots, double medianMs, double sigma) {
            this.slots = slots;
            this.medianNanos = (long) (medianMs * 1e6);
            this.sigma = sigma;
        }

        void setSlots(int n) {
            lock.lock();
            try {
                slots = n;
                free.signalAll();
            } finally {
                lock.unlock();
            }
        }

        /** Waits for a slot, holds it for one service time; returns the latency in nanoseconds. */
        long call() throws InterruptedException {
            long start = System.nanoTime();
            lock.lockInterruptibly();
            try {
                while (inUse >= slots) {
                    free.await();
                }
                inUse++;
            } finally {
                lock.unlock();
            }
            try {
                long i = next.getAndIncrement();
                double z = new SplittableRandom(42 ^ (i * 0x9E3779B97F4A7C15L)).nextGaussian();
                Thread.sleep(Duration.ofNanos(Math.round(medianNanos * Math.exp(sigma * z))));
            } finally {
                lock.lock();
                try {
                    inUse--;
                    free.signal();
                } finally {
                    lock.unlock();
                }
            }
            return System.nanoTime() - start;
        }
    }

    /** One contender: submits a task or sheds it. */
    interface Contender extends AutoCloseable {
        boolean submit(Runnable task);

        /** The admission rate in force, tasks per second; NaN for a contender without one. */
        default double rate() {
            return Double.NaN;
        }

        /** Pauses of the process the contender's control law excused so far; -1 for one without. */
        default long pausesExcused() {
            return -1;
        }

        @Override
        void close() throws InterruptedException;
    }

    /** Everything recorded for one contender, in one-second windows by completion time. */
    static final class Record {
        final String name;
        final Downstream downstream;
        final Contender contender;
        final ConcurrentHistogram[] latency;
        final ConcurrentHistogram[] endToEnd;
        final AtomicLongArray good;
        final AtomicLongArray done;
        final AtomicLongArray shed;
        final long targetNanos;
        final AtomicLong failed = new AtomicLong();
        final double[] rate;
        /** {@link Contender#pausesExcused()} at the end of every window; -1 where not sampled. */
        final long[] pauses;

        Record(String name, Downstream downstream, Contender contender, int windows, long targetNanos) {
            this.name = name;
            this.downstream = downstream;
            this.contender = contender;
            this.latency = new ConcurrentHistogram[windows];
            this.endToEnd = new ConcurrentHistogram[windows];
            for (int i = 0; i < windows; i++) {
                latency[i] = new ConcurrentHistogram(3_600_000_000_000L, 2);
                endToEnd[i] = new ConcurrentHistogram(3_600_000_000_000L, 2);
            }
            this.good = new AtomicLongArray(windows);
            this.done = new AtomicLongArray(windows);
            this.shed = new AtomicLongArray(windows);
            this.targetNanos = targetNanos;
            this.rate = new double[windows];
            java.util.Arrays.fill(rate, Double.NaN);
            this.pauses = new long[windows];
            java.util.Arrays.fill(pauses, -1);
        }

        /** The contender's rate and excused pauses at the end of window {@code i}. */
        void sample(int i) {
            rate[i] = contender.rate();
            pauses[i] = contender.pausesExcused();
        }
    }

    /**
     * One contender's figures.
     *
     * @param name          the contender
     * @param p99Before     latency p99 over the last half of phase 1, ms
     * @param p99After      latency p99 over the last half of phase 2 ("after settling"), ms
     * @param settleSeconds seconds after the step until at least 90% of the later one-second
     *                      windows have p99 within 1.1 × target; NaN if never
     * @param goodput       phase-2 tasks per second completed within the target
     * @param completed     phase-2 tasks per second completed
     * @param shedPerSecond phase-2 tasks per second refused at submit
     * @param shedTotal     tasks refused over the run
     * @param e2eP99After   end-to-end (submit to completion) p99 over the last half of phase 2, ms
     * @param windowP99     every one-second window's latency p99, ms
     * @param windowRate    the admission rate in force at the end of every one-second window
     *                      (NaN for a contender without one; the configured rate for a
     *                      constant-rate contender, which admits less if offers run short)
     * @param blockP99      the latency p99 of every whole {@value #BLOCK}-window block of phase 2
     *                      after its first {@value #BLOCK} windows (the settling allowance), ms
     * @param e2eBlockP99   the end-to-end p99 of the same blocks, ms: what the issue's "every settled
     *                      10-s block" bound is about
     * @param minuteP99     the latency p99 of every whole {@value #MINUTE}-window span of phase 2
     *                      after its first {@value #MINUTE} windows, ms: the settled minutes a long
     *                      phase holds (a 120-s phase holds one, its "p99 after")
     * @param windowPauses  the pauses of the process the contender's law had excused by the end of
     *                      every one-second window (-1 for a contender without a law, and for the
     *                      extra window of completions after the run, which is not sampled)
     */
    public record Result(String name, double p99Before, double p99After, double settleSeconds, double goodput,
            double completed, double shedPerSecond, long shedTotal, double e2eP99After, double[] windowP99,
            double[] windowRate, double[] blockP99, double[] e2eBlockP99, double[] minuteP99, long[] windowPauses) {
    }

    /**
     * The span of a settled minute, in one-second windows: the "p99 after" of the default 120-s
     * phases; phases of 180 s and more are also reported minute by minute after their first.
     */
    public static final int MINUTE = 60;

    /**
     * The length of a block, in one-second windows: the span of the "p99 after" of 20-s runs, over
     * which a steady state is judged (see {@link #blocks}).
     */
    public static final int BLOCK = 10;

    /**
     * The p99 of each whole block of {@code block} consecutive windows in {@code [from, to)}.
     *
     * @param hs    one histogram per window
     * @param from  the first window
     * @param to    the end of the windows (exclusive)
     * @param block the windows per block ({@link #BLOCK} in the bench)
     * @return one p99 per block, ms
     */
    static double[] blocks(ConcurrentHistogram[] hs, int from, int to, int block) {
        double[] out = new double[Math.max(0, (to - from) / block)];
        for (int b = 0; b < out.length; b++) {
            out[b] = p99(hs, from + b * block, from + (b + 1) * block);
        }
        return out;
    }

    /**
     * Where a p99 falls against the band of ±10 % around the target.
     *
     * @param p99      the p99, ms; NaN (no completion: a stall) counts as over
     * @param targetMs the target, ms
     * @return 1 over the band, 0 within it, -1 under it
     */
    static int band(double p99, double targetMs) {
        if (Double.isNaN(p99) || p99 > 1.1 * targetMs) {
            return 1;
        }
        return p99 >= 0.9 * targetMs ? 0 : -1;
    }

    /**
     * Counts p99s against the band of ±10 % around the target ({@link #band}).
     *
     * @param p99s     the p99s, ms
     * @param targetMs the target, ms
     * @return {within, over, under}
     */
    static int[] tally(double[] p99s, double targetMs) {
        int[] t = new int[3];
        for (double p : p99s) {
            int where = band(p, targetMs);
            t[where == 0 ? 0 : where > 0 ? 1 : 2]++;
        }
        return t;
    }

    /**
     * Formats block p99s with how many are within ±10 % of the target, and how many above and below.
     * A block without a completion (NaN: a stall) counts as over ({@link #band}).
     *
     * @param blocks   the blocks' p99, ms
     * @param targetMs the target, ms
     * @return e.g. {@code "58 61 70 | within ±10 %: 2/3, over: 1, under: 0"}
     */
    public static String describeBlocks(double[] blocks, double targetMs) {
        StringBuilder sb = new StringBuilder();
        for (double b : blocks) {
            sb.append(String.format(Locale.ROOT, " %5.1f", b));
        }
        int[] t = tally(blocks, targetMs);
        return sb.append(String.format(Locale.ROOT, " | within ±10 %%: %d/%d, over: %d, under: %d", t[0], blocks.length,
                t[1], t[2])).toString();
    }

    /**
     * Runs the experiment.
     *
     * @param config the parameters
     * @return one result per contender
     * @throws Exception if a contender fails to close
     */
    public static List<Result> run(Config config) throws Exception {
        return run(config, new double[0]);
    }

    /**
     * Runs the experiment with extra constant-rate contenders: each admits at one fixed rate
     * (a {@code PowerGCRA}, burst 1, in front of {@code newFixedThreadPool(threads)}) and sheds the
     * rest. Such a rate, chosen with hindsight, is what no controller beats by holding a rate.
     *
     * @param config        the parameters
     * @param constantRates the rates of the constant-rate contenders, per second
     * @return one result per contender, the constant-rate ones ({@code "constant<rate>"}) last
     * @throws Exception if a contender fails to close
     */
    public static List<Result> run(Config config, double... constantRates) throws Exception {
        int phaseWindows = (int) Math.max(2, Math.round(config.phaseSeconds()));
        double windowNanos = config.phaseSeconds() * 1e9 / phaseWindows;
        int windows = 2 * phaseWindows;
        long target = (long) (config.targetMs() * 1e6);
        List<Record> records = new ArrayList<>();
        for (String name : List.of("fixedPool", "netflix", "flowPool", "flowDefaults")) {
            Downstream d = new Downstream(config.slots(), config.medianMs(), config.sigma());
            records.add(new Record(name, d, contender(name, config), windows + 1, target));
        }
        for (double rate : constantRates) {
            Downstream d = new Downstream(config.slots(), config.medianMs(), config.sigma());
            records.add(new Record(String.format(Locale.ROOT, "constant%.0f", rate), d, constant(rate, config.threads()),
                    windows + 1, target));
        }
        double offered = config.offered();
        long start = System.nanoTime();
        long end = start + (long) (2 * phaseWindows * windowNanos);
        long step = start + (long) (phaseWindows * windowNanos);
        boolean stepped = false;
        long sent = 0;
        int sampled = 0;
        for (;;) {
            long now = System.nanoTime();
            if (now - end >= 0) {
                break;
            }
            if (!stepped && now - step >= 0) {
                for (Record r : records) {
                    r.downstream.setSlots(config.slots() / 2);
                }
                stepped = true;
            }
            for (; sampled < windows && now - start >= (sampled + 1) * windowNanos; sampled++) {
                for (Record r : records) {
                    r.sample(sampled);
                }
            }
            long due = (long) ((now - start) / 1e9 * offered);
            for (; sent < due; sent++) {
                for (Record r : records) {
                    submit(r, start, windowNanos, windows);
                }
            }
            LockSupport.parkNanos(500_000L);
        }
        for (; sampled < windows; sampled++) { // the last window(s) end with the run
            for (Record r : records) {
                r.sample(sampled);
            }
        }
        for (Record r : records) {
            r.contender.close();
        }
        List<Result> results = new ArrayList<>();
        for (Record r : records) {
            results.add(summarize(r, config, phaseWindows, windowNanos));
        }
        return results;
    }

    private static void submit(Record r, long start, double windowNanos, int windows) {
        long submitted = System.nanoTime();
        Runnable task = () -> {
            long latency;
            try {
                latency = r.downstream.call();
            } catch (InterruptedException e) {
                r.failed.incrementAndGet();
                return;
            }
            long now = System.nanoTime();
            int w = (int) Math.min(windows, (now - start) / windowNanos);
            r.latency[w].recordValue(latency);
            r.endToEnd[w].recordValue(now - submitted);
            r.done.incrementAndGet(w);
            if (latency <= r.targetNanos) {
                r.good.incrementAndGet(w);
            }
        };
        if (!r.contender.submit(task)) {
            int w = (int) Math.min(windows, (submitted - start) / windowNanos);
            r.shed.incrementAndGet(w);
        }
    }

    static Contender contender(String name, Config c) {
        double maxRate = c.threads() / (c.targetMs() / 1000);
        return switch (name) {
            case "fixedPool" -> executor(Executors.newFixedThreadPool(c.threads()));
            case "flowPool" -> flow(PowerExecutors.newFixedFlowPool(c.threads(), Duration.ofNanos((long) (c.targetMs() * 1e6))));
            case "flowDefaults" -> flow(PowerFlowExecutor.builder().rate(maxRate).minRate(maxRate / 100)
                    .maxRate(maxRate).targetP99(c.targetMs())
                    .delegate(Executors.newFixedThreadPool(c.threads())).ownsDelegate(true).build());
            case "netflix" -> netflix(c.threads(), Gradient2Limit.newDefault());
            default -> throw new IllegalArgumentException("contender: " + name);
        };
    }

    private static Contender constant(double rate, int threads) {
        // A burst of one: the bench offers this contender a task every 1/706 s (about 1.4 ms), so
        // an admission falls due between two offers and waits for the next one; without the
        // tolerance that lost time would lower the rate (to 176/s at a nominal 215/s), with it
        // the next admission makes it up.
        PowerGCRA limiter = PowerGCRA.builder().rate(rate).burst(1).build();
        Contender inner = executor(Executors.newFixedThreadPool(threads));
        return new Contender() {
            @Override
            public boolean submit(Runnable task) {
                return limiter.tryConsume() && inner.submit(task);
            }

            @Override
            public double rate() {
                return rate;
            }

            @Override
            public void close() throws InterruptedException {
                inner.close();
            }
        };
    }

    private static Contender flow(PowerFlowExecutor e) {
        Contender inner = executor(e);
        return new Contender() {
            @Override
            public boolean submit(Runnable task) {
                return inner.submit(task);
            }

            @Override
            public double rate() {
                return e.stats().rate();
            }

            @Override
            public long pausesExcused() {
                return e.stats().pausesExcused();
            }

            @Override
            public void close() throws InterruptedException {
                inner.close();
            }
        };
    }

    private static Contender executor(ExecutorService e) {
        return new Contender() {
            @Override
            public boolean submit(Runnable task) {
                try {
                    e.execute(task);
                    return true;
                } catch (RejectedExecutionException x) {
                    return false;
                }
            }

            @Override
            public void close() throws InterruptedException {
                e.shutdownNow();
                e.awaitTermination(30, TimeUnit.SECONDS);
            }
        };
    }

    /**
     * A Netflix concurrency-limits {@code SimpleLimiter} with {@code limit} in front of a fixed pool
     * of {@code threads}: acquire at submit, {@code onSuccess} when the task ends, {@code onIgnore}
     * when it throws or the pool refuses it. Also the field trial's Gradient2 and Vegas.
     */
    static Contender netflix(int threads, com.netflix.concurrency.limits.Limit limit) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        SimpleLimiter<Void> limiter = SimpleLimiter.newBuilder().limit(limit).build();
        Contender inner = executor(pool);
        return new Contender() {
            @Override
            public boolean submit(Runnable task) {
                Optional<Limiter.Listener> permit = limiter.acquire(null);
                if (permit.isEmpty()) {
                    return false;
                }
                Limiter.Listener listener = permit.get();
                boolean ok = inner.submit(() -> {
                    try {
                        task.run();
                        listener.onSuccess();
                    } catch (RuntimeException | Error e) {
                        listener.onIgnore();
                        throw e;
                    }
                });
                if (!ok) {
                    listener.onIgnore();
                }
                return ok;
            }

            @Override
            public void close() throws InterruptedException {
                inner.close();
            }
        };
    }

    static double p99(ConcurrentHistogram[] hs, int from, int to) {
        Histogram sum = new Histogram(3_600_000_000_000L, 2);
        for (int i = from; i < to; i++) {
            sum.add(hs[i]);
        }
        return sum.getTotalCount() == 0 ? Double.NaN : sum.getValueAtPercentile(99) / 1e6;
    }

    private static Result summarize(Record r, Config c, int phaseWindows, double windowNanos) {
        int windows = 2 * phaseWindows;
        int half = phaseWindows / 2;
        double[] perWindow = new double[windows];
        for (int i = 0; i < windows; i++) {
            perWindow[i] = p99(r.latency, i, i + 1);
        }
        double limit = 1.1 * c.targetMs();
        // Settled from the first window after the step from which at least 90% of the remaining
        // windows (and the last) have p99 <= 1.1 x target: one noisy second on a loaded machine
        // does not unsettle a loop, a persistent excess does.
        int settledFrom = -1;
        for (int i = phaseWindows; i < windows && settledFrom < 0; i++) {
            int ok = 0;
            for (int j = i; j < windows; j++) {
                if (perWindow[j] <= limit) { // NaN (no completion) is not settled
                    ok++;
                }
            }
            if (ok >= 0.9 * (windows - i)) {
                settledFrom = i;
            }
        }
        double settle = settledFrom < 0 ? Double.NaN : (settledFrom - phaseWindows) * windowNanos / 1e9;
        long good = 0;
        long done = 0;
        long shedPhase2 = 0;
        long shedTotal = 0;
        for (int i = 0; i <= windows; i++) {
            shedTotal += r.shed.get(i);
            if (i >= phaseWindows && i < windows) {
                good += r.good.get(i);
                done += r.done.get(i);
                shedPhase2 += r.shed.get(i);
            }
        }
        double phase2Seconds = phaseWindows * windowNanos / 1e9;
        return new Result(r.name, p99(r.latency, phaseWindows - half, phaseWindows),
                p99(r.latency, windows - half, windows), settle, good / phase2Seconds, done / phase2Seconds,
                shedPhase2 / phase2Seconds, shedTotal, p99(r.endToEnd, windows - half, windows), perWindow,
                r.rate.clone(), blocks(r.latency, phaseWindows + BLOCK, windows, BLOCK),
                blocks(r.endToEnd, phaseWindows + BLOCK, windows, BLOCK),
                blocks(r.latency, phaseWindows + MINUTE, windows, MINUTE), r.pauses.clone());
    }

    /**
     * Formats the results as a markdown table plus the per-window p99 series.
     *
     * @param config  the parameters
     * @param results the results
     * @return the text
     */
    public static String table(Config config, List<Result> results) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT,
                "downstream: %d slots -> %d at %.0f s, lognormal median %.1f ms sigma %.2f; capacity %.0f/s -> %.0f/s; "
                        + "offered %.0f/s; target p99 %.0f ms; pools of %d threads%n%n",
                config.slots(), config.slots() / 2, config.phaseSeconds(), config.medianMs(), config.sigma(),
                config.capacity(config.slots()), config.capacity(config.slots() / 2), config.offered(),
                config.targetMs(), config.threads()));
        sb.append("| contender | p99 before step ms | p99 after step (settled) ms | vs target | time to settle s "
                + "| goodput /s (≤ target) | completed /s | shed /s | shed total | end-to-end p99 after ms |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Result r : results) {
            sb.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %+.0f%% | %s | %.0f | %.0f | %.0f | %,d | %.0f |%n",
                    r.name(), r.p99Before(), r.p99After(), 100 * (r.p99After() / config.targetMs() - 1),
                    Double.isNaN(r.settleSeconds()) ? "never" : String.format(Locale.ROOT, "%.0f", r.settleSeconds()),
                    r.goodput(), r.completed(), r.shedPerSecond(), r.shedTotal(), r.e2eP99After()));
        }
        sb.append("\nper-second latency p99, ms:\n");
        for (Result r : results) {
            sb.append(String.format(Locale.ROOT, "%-13s", r.name()));
            for (double v : r.windowP99()) {
                sb.append(String.format(Locale.ROOT, " %5.0f", v));
            }
            sb.append('\n');
        }
        if (results.get(0).blockP99().length > 0) {
            appendSpans(sb, config, results, "block", BLOCK, Result::blockP99);
            appendSpans(sb, config, results, "block (end to end)", BLOCK, Result::e2eBlockP99);
        }
        if (results.get(0).minuteP99().length > 1) {
            appendSpans(sb, config, results, "span", MINUTE, Result::minuteP99);
        }
        sb.append("\nadmission rate at the end of each second, tasks/s:\n");
        for (Result r : results) {
            if (Double.isNaN(r.windowRate()[0])) {
                continue;
            }
            sb.append(String.format(Locale.ROOT, "%-13s", r.name()));
            for (int i = 0; i < r.windowP99().length; i++) {
                sb.append(String.format(Locale.ROOT, " %5.0f", r.windowRate()[i]));
            }
            sb.append('\n');
        }
        sb.append("\npauses of the process the law excused, at the end of which seconds:\n");
        for (Result r : results) {
            long[] p = r.windowPauses();
            long total = java.util.Arrays.stream(p).max().orElse(-1);
            if (total < 0) {
                continue;
            }
            sb.append(String.format(Locale.ROOT, "%-13s %d:", r.name(), total));
            long seen = 0;
            for (int i = 0; i < p.length; i++) {
                if (p[i] > seen) {
                    seen = p[i];
                    sb.append(' ').append(i + 1);
                }
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** Appends one line per contender: the p99 of each span of phase 2 after its first, judged against the band. */
    private static void appendSpans(StringBuilder sb, Config config, List<Result> results, String span, int seconds,
            java.util.function.Function<Result, double[]> p99s) {
        sb.append(String.format(Locale.ROOT, "%nlatency p99 of each %d-s %s of phase 2 after its first %d s, ms:%n",
                seconds, span, seconds));
        for (Result r : results) {
            sb.append(String.format(Locale.ROOT, "%-13s", r.name())).append(describeBlocks(p99s.apply(r), config.targetMs()))
                    .append('\n');
        }
    }

    /**
     * Runs the standard configuration and prints the table.
     *
     * @param args optional: seconds per phase (default 120: the last 60 s of phase 2 are the
     *             "p99 after", long enough that one second of slow calls does not decide it), then
     *             the rates of constant-rate contenders to run beside the four (none by default)
     * @throws Exception if a contender fails
     */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 && !args[0].startsWith("${") ? Double.parseDouble(args[0]) : 120;
        Config config = Config.standard(seconds);
        double[] constants = args.length > 1
                ? java.util.Arrays.stream(args, 1, args.length).mapToDouble(Double::parseDouble).toArray()
                : new double[0];
        String start = Jmx.machineLine();
        List<Result> results = run(config, constants);
        System.out.println(start + " (at the start)");
        System.out.println(Jmx.machineLine() + " (at the end)");
        System.out.print(table(config, results));
    }
}
