package io.github.performancehelpers.bench;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import io.github.performancehelpers.PowerExecutors;
import io.github.performancehelpers.PowerFlowExecutor;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * The field trial of the caller's latency: real threads, open-loop arrivals precomputed from a
 * seed, simulated downstreams whose capacity survives a noisy machine, and the contenders a user
 * would pick side by side in one JVM, each against its own identical downstream and the same
 * arrivals and service times. See {@code benchmarks/fieldtrial.md} and
 * {@code ../shared/FIELD-TRIAL.md}.
 *
 * <p>A downstream is a FIFO queue with {@code k} slots whose call's start and end are fixed when
 * it arrives ({@code start = max(arrival, earliest free slot)}, {@code end = start + service}, the
 * Kiefer–Wolfowitz recursion); the caller parks until {@code end}. So its capacity is exactly
 * {@code k / mean service time} however late the machine wakes threads. A fixed-rate server (a
 * partner's quota) is {@code k = 1} with a constant service time.
 *
 * <p>Each scenario runs four phases: underload (half the capacity offered), overload (1.5 ×), the
 * capacity halved under the same offered load, and the capacity restored. Per contender and phase
 * it reports offered/s, done/s, goodput/s (done within the target, submit to completion), shed
 * (refused at submit, or accepted and never run), the run-time and end-to-end p99 from the raw
 * samples, the end-to-end p99 of each settled 10-s block against 1.1 × the target, and the
 * seconds until done/s settled after the phase began.
 *
 * <p>Usage: {@code FieldTrial [quick|full] [scenario ...] [--trace=contender] [--phase=seconds]
 * [--contenders=a,b,...]}; {@code quick} runs 2-s phases (the CI smoke run, no figure checked),
 * {@code full} 20-s phases, or as {@code --phase} says. {@code --contenders} picks from
 * {@link #CONTENDERS}; {@code factory} gives the factory its tasks with {@code submit} (a task
 * queued past the wait budget is shed), {@code factory-execute} with {@code execute} (never shed
 * once queued: only the door bounds its wait).
 * Writes {@code target/fieldtrial.md}.
 */
public final class FieldTrial {

    private FieldTrial() {
    }

    /** What a downstream's calls take: lognormal around a median, with an optional fixed tail. */
    record Service(double medianMs, double sigma, double tailShare, double tailMs) {
        double meanMs() {
            double body = medianMs * Math.exp(sigma * sigma / 2);
            return (1 - tailShare) * body + tailShare * tailMs;
        }

        double sampleMs(SplittableRandom rnd) {
            if (tailShare > 0 && rnd.nextDouble() < tailShare) {
                return tailMs;
            }
            return sigma == 0 ? medianMs : medianMs * Math.exp(sigma * gaussian(rnd));
        }

        private static double gaussian(SplittableRandom rnd) {
            double u = 1 - rnd.nextDouble();
            double v = rnd.nextDouble();
            return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
        }
    }

    /**
     * A scenario: a downstream of {@code slots} slots and a service time, a pool of
     * {@code poolThreads} in front, a target, the offered load of the overload phases as a share of
     * the capacity, and how the phases move the capacity ({@code slotsStep}: halve the slots;
     * otherwise the service time doubles) and whether arrivals come in bursts or the service time
     * drifts.
     */
    record Scenario(String name, boolean heldOut, String what, int slots, Service service, int poolThreads,
            double targetMs, double overload, boolean slotsStep, boolean bursts, boolean drift) {
        /** Calls per second the downstream and the pool can do: the fewer of slots and threads, over the mean. */
        double capacity() {
            return Math.min(slots, poolThreads) * 1000.0 / service.meanMs();
        }
    }

    static final List<Scenario> SCENARIOS = List.of(
            new Scenario("pool", false, "the executor's pool is the bottleneck: 8 threads, 10-ms calls, no queueing "
                    + "downstream", 1_000_000, new Service(10, 0.3, 0, 0), 8, 50, 1.5, false, false, false),
            new Scenario("database", false, "a database of 16 slots, lognormal 10 ms (sigma 0.5), behind a pool of 64",
                    16, new Service(10, 0.5, 0, 0), 64, 60, 1.5, true, false, false),
            new Scenario("quota", false, "a partner's quota: a FIFO server of 400/s (2.5 ms each), pool of 32",
                    1, new Service(2.5, 0, 0, 0), 32, 100, 1.25, false, false, false),
            new Scenario("tail", false, "3 % of calls take 60 ms whatever the load, target 40 ms, pool of 64",
                    1_000_000, new Service(5, 0.3, 0.03, 60), 64, 40, 0.17, false, false, false),
            new Scenario("drift", false, "16 slots whose service time drifts from 8 to 16 ms over each phase",
                    16, new Service(8, 0.4, 0, 0), 64, 80, 1.3, true, false, true),
            new Scenario("bursts", false, "16 slots, 10 ms; arrivals alternate 1 s at 2.4x and 2 s at 0.3x the mean",
                    16, new Service(10, 0.4, 0, 0), 64, 80, 1.3, true, true, false),
            new Scenario("api", true, "a partner API of 4 FIFO slots, lognormal 5 ms (sigma 0.8), behind a pool of 48",
                    4, new Service(5, 0.8, 0, 0), 48, 120, 1.3, true, false, false),
            new Scenario("closedloop", false, "ClosedLoopBench's downstream: 8 slots, lognormal 15 ms (sigma 0.5; "
                    + "its own p99, 48 ms, near the target), behind a pool of 64",
                    8, new Service(15, 0.5, 0, 0), 64, 60, 1.5, true, false, false),
            // Added on 2026-12-06 (late) to tune the cap's low-rate rule on, with report kept held out:
            // slow calls whose windows hold a few dozen of them.
            new Scenario("batch", false, "a batch API of 4 slots, lognormal 100 ms (sigma 0.4; its own p99 "
                    + "about 250 ms), behind a pool of 32", 4, new Service(100, 0.4, 0, 0), 32, 600, 1.4, true,
                    false, false),
            // Written down on 2026-12-06 before its first run, and held out from then on.
            new Scenario("cache", true, "a store behind a cache: 8 slots, 90 % of calls hits (lognormal 2 ms, "
                    + "sigma 0.3), 10 % misses of 30 ms, behind a pool of 32",
                    8, new Service(2, 0.3, 0.1, 30), 32, 50, 1.4, true, false, false),
            // Written down on 2026-12-06 (evening) before its first run, and held out from then on:
            // slow calls at a low rate, where a window holds a few dozen of them.
            new Scenario("report", true, "a report service of 2 slots, lognormal 40 ms (sigma 0.7; its own p99 "
                    + "about 200 ms), behind a pool of 16",
                    2, new Service(40, 0.7, 0, 0), 16, 400, 1.4, true, false, false));

    static final String[] PHASES = {"underload", "overload", "capacity/2", "capacity back"};

    // ---------------------------------------------------------------- the downstream

    /** A FIFO queue of slots whose calls' ends are fixed at arrival (see the class description). */
    static final class Downstream {
        private final PriorityQueue<Long> free = new PriorityQueue<>();
        private int slots = -1;

        /** Returns the end of a call arriving at {@code now} that takes {@code serviceNanos}, with {@code k} slots. */
        synchronized long schedule(long now, long serviceNanos, int k) {
            if (k != slots) {
                resize(k, now);
            }
            long start = Math.max(now, free.poll());
            long end = start + serviceNanos;
            free.add(end);
            return end;
        }

        private void resize(int k, long now) {
            int keep = Math.min(k, 4096); // more slots than calls in flight never queue
            Long[] all = free.toArray(new Long[0]);
            Arrays.sort(all);
            free.clear();
            for (int i = 0; i < Math.min(keep, all.length); i++) {
                free.add(all[i]);
            }
            while (free.size() < keep) {
                free.add(now);
            }
            slots = k;
        }
    }

    // ---------------------------------------------------------------- the schedule

    /** The arrivals of one run: instants (ns from the start), service times (ns), slots in force. */
    record Schedule(long[] at, long[] service, int[] slots, int[] phase, double phaseSeconds) {
        int size() {
            return at.length;
        }

        /**
         * The p99 of phase {@code p}'s service times, ms: the downstream's own, without any queue.
         * A target under it cannot be reached by any admission (the trial's {@code tail}).
         */
        double ownP99Ms(int p) {
            Histogram h = new Histogram(3_600_000_000_000L, 3);
            for (int i = 0; i < at.length; i++) {
                if (phase[i] == p) {
                    h.recordValue(Math.max(0, service[i]));
                }
            }
            return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(99) / 1e6;
        }
    }

    static Schedule schedule(Scenario s, double phaseSeconds, long seed) {
        SplittableRandom arrivals = new SplittableRandom(seed);
        SplittableRandom services = new SplittableRandom(seed * 31 + 7);
        double c = s.capacity();
        List<long[]> rows = new ArrayList<>();
        double t = 0;
        for (int p = 0; p < PHASES.length; p++) {
            double end = (p + 1) * phaseSeconds;
            double mean = p == 0 ? 0.5 * c : s.overload * c;
            if (s.name.equals("tail")) {
                mean = s.overload * c * (p == 0 ? 0.5 : 1); // always under capacity: the tail is the point
            }
            while (true) {
                double local = t - p * phaseSeconds;
                double rate = mean;
                if (s.bursts && p > 0) {
                    rate = (local % 3) < 1 ? 2.4 * mean : 0.3 * mean; // 1 s at 2.4x, 2 s at 0.3x: mean 1.0x
                }
                t += -Math.log(1 - arrivals.nextDouble()) / rate;
                if (t >= end) {
                    t = end;
                    break;
                }
                double serviceMs = s.service.sampleMs(services);
                boolean halved = p == 2;
                int k = s.slots;
                if (halved) {
                    if (s.slotsStep) {
                        k = Math.max(1, s.slots / 2);
                    } else {
                        serviceMs *= 2;
                    }
                }
                if (s.drift && p > 0) {
                    serviceMs *= 1 + (t - p * phaseSeconds) / phaseSeconds; // 1x to 2x over the phase
                }
                rows.add(new long[] {(long) (t * 1e9), (long) (serviceMs * 1e6), k, p});
            }
        }
        int n = rows.size();
        long[] at = new long[n];
        long[] service = new long[n];
        int[] slots = new int[n];
        int[] phase = new int[n];
        for (int i = 0; i < n; i++) {
            long[] r = rows.get(i);
            at[i] = r[0];
            service[i] = r[1];
            slots[i] = (int) r[2];
            phase[i] = (int) r[3];
        }
        return new Schedule(at, service, slots, phase, phaseSeconds);
    }

    // ---------------------------------------------------------------- contenders

    /** A contender: submit refuses by returning false; close waits for what it accepted. */
    interface Contender extends AutoCloseable {
        boolean submit(Runnable task);

        @Override
        void close() throws InterruptedException;

        /** The flow executor behind this contender, for the trace; null for the others. */
        default PowerFlowExecutor flowExecutor() {
            return null;
        }
    }

    /** The contenders of a run unless {@code --contenders} says otherwise. */
    static final String[] CONTENDERS = {"fixed", "factory", "factory-execute", "builder", "builder-pi", "gradient2",
            "vegas"};

    static Contender contender(String name, Scenario s) {
        int n = s.poolThreads;
        Duration target = Duration.ofNanos((long) (s.targetMs * 1e6));
        return switch (name) {
            case "fixed" -> executor(Executors.newFixedThreadPool(n), false);
            case "factory" -> flow(PowerExecutors.newFixedFlowPool(n, target));
            case "factory-execute" -> executor(PowerExecutors.newFixedFlowPool(n, target), false);
            case "builder" -> flow(PowerFlowExecutor.builder().targetP99(target).rate(s.capacity() / 2)
                    .delegate(pool(n)).ownsDelegate(true).maxConcurrency(n).build());
            case "builder-pi" -> flow(PowerFlowExecutor.builder().targetP99(target).rate(s.capacity() / 2)
                    .minRate(s.capacity() / 100).maxRate(2 * s.capacity()).kp(s.capacity() / 1000)
                    .ki(s.capacity() / 10_000).delegate(pool(n)).ownsDelegate(true).maxConcurrency(n).build());
            case "gradient2" -> netflix(n, Gradient2Limit.newDefault());
            case "vegas" -> netflix(n, VegasLimit.newDefault());
            default -> throw new IllegalArgumentException("--contenders: no contender named '" + name
                    + "'; one of " + String.join(", ", CONTENDERS));
        };
    }

    private static ThreadPoolExecutor pool(int n) {
        return new ThreadPoolExecutor(n, n, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    }

    private static Contender executor(ExecutorService e, boolean useSubmit) {
        return new Contender() {
            @Override
            public boolean submit(Runnable task) {
                try {
                    if (useSubmit) {
                        e.submit(task); // a flow executor sheds a submit()'s task from the queue
                    } else {
                        e.execute(task);
                    }
                    return true;
                } catch (RejectedExecutionException x) {
                    return false;
                }
            }

            @Override
            public void close() throws InterruptedException {
                // A pool without a bound on its queue can hold minutes of backlog when the arrivals
                // end: what it has not run 10 s later counts as never run.
                e.shutdown();
                if (!e.awaitTermination(10, TimeUnit.SECONDS)) {
                    e.shutdownNow();
                    if (!e.awaitTermination(1, TimeUnit.MINUTES)) {
                        throw new IllegalStateException("did not terminate: " + e);
                    }
                }
            }

            @Override
            public PowerFlowExecutor flowExecutor() {
                return e instanceof PowerFlowExecutor f ? f : null;
            }
        };
    }

    private static Contender flow(PowerFlowExecutor e) {
        return executor(e, true);
    }

    /** The closed-loop bench's Netflix contender ({@link ClosedLoopBench#netflix}), as a field-trial one. */
    private static Contender netflix(int n, Limit limit) {
        ClosedLoopBench.Contender inner = ClosedLoopBench.netflix(n, limit);
        return new Contender() {
            @Override
            public boolean submit(Runnable task) {
                return inner.submit(task);
            }

            @Override
            public void close() throws InterruptedException {
                inner.close();
            }
        };
    }

    // ---------------------------------------------------------------- one run

    /** What one contender did with one schedule: per arrival, its run and end-to-end ns, and status. */
    static final class Run {
        final String contender;
        final long[] run;
        final long[] e2e;
        /** 0: accepted, never ran (shed from a queue); 1: done; 2: refused at submit. */
        final byte[] status;
        final Histogram lateness = new Histogram(60_000_000_000L, 3);

        Run(String contender, int n) {
            this.contender = contender;
            this.run = new long[n];
            this.e2e = new long[n];
            this.status = new byte[n];
        }
    }

    static List<Run> runAll(Scenario s, Schedule sched, String[] names) throws Exception {
        List<Run> runs = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        List<Contender> contenders = new ArrayList<>();
        for (String name : names) {
            contenders.add(contender(name, s));
            runs.add(new Run(name, sched.size()));
        }
        long start = System.nanoTime() + 200_000_000L;
        for (int c = 0; c < names.length; c++) {
            Contender contender = contenders.get(c);
            Run r = runs.get(c);
            Downstream d = new Downstream();
            threads.add(Thread.ofPlatform().name("arrivals-" + names[c]).start(() -> arrive(contender, r, d, sched, start)));
        }
        Thread tracer = trace(names, contenders, start);
        for (Thread t : threads) {
            t.join();
        }
        if (tracer != null) {
            tracer.interrupt();
        }
        for (int c = 0; c < names.length; c++) {
            contenders.get(c).close();
        }
        return runs;
    }

    /**
     * With {@code --trace=<contender>}, prints that flow executor's loop once a second (tasks
     * done in the second, rate, pool size, cap on the tasks in flight, run-time and end-to-end p99
     * of the last window, depth, shed, refused, the law's capacity estimate, unreachable, the pauses
     * the law excused so far), to stderr.
     */
    private static Thread trace(String[] names, List<Contender> contenders, long start) {
        String which = traced;
        int c = Arrays.asList(names).indexOf(which);
        PowerFlowExecutor e = c < 0 ? null : contenders.get(c).flowExecutor();
        if (e == null) {
            return null;
        }
        return Thread.ofPlatform().daemon().start(() -> {
            try {
                long lastDone = 0;
                while (true) {
                    Thread.sleep(1000);
                    PowerFlowExecutor.Stats st = e.stats();
                    var cs = e.controller().stats();
                    long done = st.tasks().completed();
                    System.err.printf(Locale.ROOT, "[trace %s] t=%5.1f done=%6d rate=%9.1f pool=%3d cap=%3d run=%6.1f e2e=%6.1f "
                            + "depth=%5d shed=%7d refused=%7d C=%8.1f unreachable=%s pauses=%d%n", which,
                            (System.nanoTime() - start) / 1e9, done - lastDone, st.rate(), st.poolSize(), st.inFlightLimit(),
                            st.lastObservedP99(), st.lastEndToEndP99(), st.depth(), st.shed(), st.rejected(),
                            cs.capacityEstimate(), st.targetUnreachable(), st.pausesExcused());
                    lastDone = done;
                }
            } catch (InterruptedException done) {
                // the run ended
            }
        });
    }

    private static void arrive(Contender c, Run r, Downstream d, Schedule s, long start) {
        for (int i = 0; i < s.size(); i++) {
            long due = start + s.at()[i];
            parkUntil(due); // the arrival threads are never interrupted
            long submitted = System.nanoTime();
            r.lateness.recordValue(Math.max(0, submitted - due));
            int idx = i;
            long service = s.service()[i];
            int k = s.slots()[i];
            boolean ok = c.submit(() -> {
                long began = System.nanoTime();
                long end = d.schedule(began, service, k);
                if (!parkUntil(end)) {
                    return; // stopped by the run's end (shutdownNow): counts as never run
                }
                long now = System.nanoTime();
                r.run[idx] = now - began;
                r.e2e[idx] = now - submitted;
                r.status[idx] = 1;
            });
            if (!ok) {
                r.status[i] = 2;
            }
        }
    }

    /** Parks until {@code deadline}; false if interrupted first. */
    private static boolean parkUntil(long deadline) {
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
            if (Thread.currentThread().isInterrupted()) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- the report

    /** One contender's figures over one phase. */
    record PhaseResult(double offered, double done, double goodput, long shed, double runP99, double e2eP99,
            int blocksOk, int blocks, double settleSeconds, double settledE2eP99) {
    }

    static PhaseResult phase(Run r, Schedule s, int p, double targetMs) {
        double secs = s.phaseSeconds();
        Histogram run = new Histogram(3_600_000_000_000L, 3);
        Histogram e2e = new Histogram(3_600_000_000_000L, 3);
        long offered = 0;
        long done = 0;
        long good = 0;
        long shed = 0;
        double blockSeconds = Math.min(10, secs / 2);
        int blocks = (int) Math.round(secs / blockSeconds);
        Histogram[] perBlock = new Histogram[blocks];
        for (int b = 0; b < blocks; b++) {
            perBlock[b] = new Histogram(3_600_000_000_000L, 3);
        }
        int seconds = (int) Math.ceil(secs);
        long[] donePerSecond = new long[seconds];
        long targetNanos = (long) (targetMs * 1e6);
        for (int i = 0; i < s.size(); i++) {
            if (s.phase()[i] != p) {
                continue;
            }
            offered++;
            double local = s.at()[i] / 1e9 - p * secs;
            if (r.status[i] == 1) {
                done++;
                run.recordValue(r.run[i]);
                e2e.recordValue(r.e2e[i]);
                perBlock[Math.min(blocks - 1, (int) (local / blockSeconds))].recordValue(r.e2e[i]);
                donePerSecond[Math.min(seconds - 1, (int) local)]++;
                if (r.e2e[i] <= targetNanos) {
                    good++;
                }
            } else {
                shed++;
            }
        }
        int ok = 0;
        int settled = 0;
        long worstSettled = 0;
        for (int b = 1; b < blocks; b++) { // the first block of a phase is the transition
            settled++;
            if (perBlock[b].getTotalCount() > 0) {
                worstSettled = Math.max(worstSettled, perBlock[b].getValueAtPercentile(99));
                if (perBlock[b].getValueAtPercentile(99) <= 1.1 * targetNanos) {
                    ok++;
                }
            }
        }
        // Settled: from the first second whose done/s is within 10 % of the phase's last half's mean, and stays.
        double tail = 0;
        for (int k = seconds / 2; k < seconds; k++) {
            tail += donePerSecond[k];
        }
        tail /= Math.max(1, seconds - seconds / 2);
        int settle = seconds;
        for (int k = seconds - 1; k >= 0; k--) {
            if (Math.abs(donePerSecond[k] - tail) > 0.1 * tail) {
                break;
            }
            settle = k;
        }
        return new PhaseResult(offered / secs, done / secs, good / secs, shed, ms(run.getValueAtPercentile(99)),
                ms(e2e.getValueAtPercentile(99)), ok, settled, settle, ms(worstSettled));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    static String report(Scenario s, Schedule sched, List<Run> runs) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%n### %s%s%n%n%s. Capacity %.0f/s, target %.0f ms, pool %d, "
                + "overload %.2f x capacity.%n%n", s.name, s.heldOut ? " (held out)" : " (tuned on)", s.what,
                s.capacity(), s.targetMs, s.poolThreads, s.overload));
        sb.append("| phase | contender | offered/s | done/s | goodput/s | shed | run p99 ms | e2e p99 ms "
                + "| settled blocks ≤ 1.1 × target | settle s |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int p = 0; p < PHASES.length; p++) {
            for (Run r : runs) {
                PhaseResult x = phase(r, sched, p, s.targetMs);
                sb.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.0f | %.0f | %d | %.1f | %.1f | %d/%d | %.0f |%n",
                        PHASES[p], r.contender, x.offered, x.done, x.goodput, x.shed, x.runP99, x.e2eP99, x.blocksOk,
                        x.blocks, x.settleSeconds));
            }
        }
        sb.append("\nSubmitter lateness p99 / max (ms): ");
        for (Run r : runs) {
            sb.append(String.format(Locale.ROOT, "%s %.2f / %.1f; ", r.contender,
                    ms(r.lateness.getValueAtPercentile(99)), ms(r.lateness.getMaxValue())));
        }
        sb.append("\n");
        return sb.toString();
    }

    /**
     * The contenders the summary sets side by side: the pool replaced, the factory (given tasks
     * with {@code submit}, then with {@code execute}), the two Netflix limits.
     */
    static final List<String> SUMMARY = List.of("fixed", "factory", "factory-execute", "gradient2", "vegas");

    /**
     * One row per scenario and phase: goodput of the pool replaced, the factory and the Netflix
     * limits side by side; what the factory refused or shed; its worst settled block's end-to-end
     * p99 against 1.1 × the target; the share of the offered load it served; and when its done/s
     * settled.
     */
    static String summary(List<String> rows) {
        StringBuilder sb = new StringBuilder("\n### Summary\n\n| scenario | phase | offered/s | goodput/s: fixed "
                + "| factory | factory-execute | gradient2 | vegas | factory shed | factory served | factory settled e2e "
                + "p99 ms (≤ 1.1 × target) | factory settle s | factory-execute settled e2e p99 ms |\n"
                + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n");
        rows.forEach(sb::append);
        return sb.toString();
    }

    static void summaryRows(Scenario s, Schedule sched, List<Run> runs, List<String> rows) {
        for (int p = 0; p < PHASES.length; p++) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %s%s | %s |", s.name,
                    s.heldOut ? " (held out)" : "", PHASES[p]));
            // Every contender sees the same arrivals: the offered load is any run's.
            row.append(String.format(Locale.ROOT, " %.0f |", phase(runs.get(0), sched, p, s.targetMs).offered));
            PhaseResult factory = null;
            PhaseResult viaExecute = null;
            for (String name : SUMMARY) {
                PhaseResult x = null;
                for (Run r : runs) {
                    if (r.contender.equals(name)) {
                        x = phase(r, sched, p, s.targetMs);
                    }
                }
                row.append(x == null ? " – |" : String.format(Locale.ROOT, " %.0f |", x.goodput));
                if (name.equals("factory")) {
                    factory = x;
                } else if (name.equals("factory-execute")) {
                    viaExecute = x;
                }
            }
            boolean reachable = sched.ownP99Ms(p) <= s.targetMs;
            if (factory != null) {
                row.append(String.format(Locale.ROOT, " %d | %.2f | %s | %.0f |", factory.shed,
                        factory.done / factory.offered, settled(factory, reachable), factory.settleSeconds));
            } else {
                row.append(" – | – | – | – |");
            }
            row.append(viaExecute == null ? " – |" : " " + settled(viaExecute, reachable) + " |");
            rows.add(row.append("\n").toString());
        }
    }

    /**
     * A summary's settled cell: the worst settled block's end-to-end p99 and whether every settled
     * block was within 1.1 × the target, or "(unreachable)" where the downstream's own p99 is over it.
     */
    static String settled(PhaseResult x, boolean reachable) {
        String verdict = !reachable ? "(unreachable)" : x.blocksOk == x.blocks ? "yes" : "**no**";
        return String.format(Locale.ROOT, "%.1f %s", x.settledE2eP99, verdict);
    }

    static String machine(long cpuStart, long wallStart) {
        var os = ManagementFactory.getOperatingSystemMXBean();
        long cpu = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() - cpuStart;
        double wall = (System.nanoTime() - wallStart) / 1e9;
        String load = "";
        try {
            load = Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (Exception ignored) {
            // not Linux
        }
        return String.format(Locale.ROOT, "Machine: %d CPUs, %s; load average %s; this run's CPU %.0f %% of %.0f s x %d cores.%n",
                os.getAvailableProcessors(), System.getProperty("java.vm.name") + " " + Runtime.version(), load,
                100.0 * cpu / 1e9 / wall / os.getAvailableProcessors(), wall, os.getAvailableProcessors());
    }

    /** The contender {@code --trace=NAME} names, or empty. */
    private static String traced = "";

    public static void main(String[] args) throws Exception {
        double phase = 20;
        String[] contenders = CONTENDERS;
        List<String> rest = new ArrayList<>();
        for (String a : args) {
            if (a.startsWith("--contenders=")) {
                contenders = a.substring("--contenders=".length()).split(",");
                for (String name : contenders) {
                    contender(name, SCENARIOS.get(0)).close(); // a bad name fails before the run
                }
            } else if (a.startsWith("--trace=")) {
                traced = a.substring("--trace=".length());
            } else if (a.startsWith("--phase=")) {
                try {
                    phase = Double.parseDouble(a.substring("--phase=".length()));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("--phase must be a number of seconds: " + a, e);
                }
                if (!(phase >= 2)) {
                    throw new IllegalArgumentException("--phase must be at least 2 seconds: " + a);
                }
            } else {
                rest.add(a);
            }
        }
        args = rest.toArray(new String[0]);
        boolean quick = args.length > 0 && args[0].equals("quick");
        double phaseSeconds = quick ? 2 : phase;
        List<String> only = new ArrayList<>(Arrays.asList(args).subList(Math.min(1, args.length), args.length));
        if (args.length > 0 && !args[0].equals("quick") && !args[0].equals("full")) {
            only = Arrays.asList(args);
        }
        long cpu0 = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        long wall0 = System.nanoTime();
        // Warm the JIT with throw-away contenders on a short run of the database scenario.
        Scenario warm = SCENARIOS.get(1);
        runAll(warm, schedule(warm, quick ? 0.5 : 3, 1), contenders);
        StringBuilder out = new StringBuilder("## Field trial (" + (quick ? "quick" : "full") + ", "
                + phaseSeconds + "-s phases)\n\n");
        List<String> rows = new ArrayList<>();
        for (Scenario s : SCENARIOS) {
            if (!only.isEmpty() && !only.contains(s.name)) {
                continue;
            }
            Schedule sched = schedule(s, phaseSeconds, 42);
            List<Run> runs = runAll(s, sched, contenders);
            String r = report(s, sched, runs);
            summaryRows(s, sched, runs, rows);
            System.out.print(r);
            System.out.flush();
            out.append(r);
        }
        String sum = summary(rows);
        System.out.print(sum);
        out.append(sum);
        String m = machine(cpu0, wall0);
        System.out.print("\n" + m);
        out.append("\n").append(m);
        Path path = Path.of("target", "fieldtrial.md");
        Files.createDirectories(path.getParent());
        Files.writeString(path, out.toString());
        System.out.println("wrote " + path.toAbsolutePath());
    }
}
