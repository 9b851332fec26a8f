package io.github.performancehelpers.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import io.github.performancehelpers.internal.Access;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.PowerHistogram;
import io.github.performancehelpers.loop.PowerServo;
import io.github.performancehelpers.testsupport.FakeTicker;

/**
 * {@link ClosedLoopBench}'s plant as a discrete-event simulation on a fake clock, driving the real
 * {@link PowerFlowController}: seconds of CPU for minutes of simulated time, no machine noise, and
 * many seeds. It isolates what the loop itself does to the tail from what a loaded machine does.
 *
 * <p>The plant: admissions evenly spaced at the controller's rate (the queue is always full: the
 * offered load is above capacity), a pool of {@code ceil(2 × rate × target)} threads (the
 * executor's Little's-law sizer, at most {@code threads}), then {@code slots} FIFO downstream slots
 * with a lognormal service time (median, sigma); the slots halve at the step. A task's latency is
 * its run time (slot wait + service), recorded when it completes, as the executor records it. The
 * loop observes once per second with {@code dt = 1000}.
 *
 * <p>Two readings of the window's quantile are compared on the same servo settings: the
 * controller's ({@link PowerFlowController}, "Reading the quantile": the order statistic of rank
 * {@code ceil(q × (n + 1))}) and the histogram's lower quantile ({@code floor(q × (n − 1))},
 * 0-based), which the controller read before; the latter is replicated here with a bare
 * {@link PowerHistogram} and {@link PowerServo} configured as the controller configures them.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool
 * -Dtool.main=io.github.performancehelpers.bench.ClosedLoopSimulation -Dtool.args="20"} (seeds).
 */
public final class ClosedLoopSimulation {

    private ClosedLoopSimulation() {
    }

    /**
     * One run's figures, over phase 2.
     *
     * @param p99After  latency p99 over the last half of phase 2 (by completion), ms
     * @param goodput   phase-2 completions per second within the target
     * @param completed phase-2 completions per second
     * @param windowP99 every one-second window's p99, ms
     * @param rates     the rate after every observation
     * @param targetMs  the target p99, ms
     * @param blockP99  the p99 of every whole {@value ClosedLoopBench#BLOCK}-window block of phase 2
     *                  after its first {@value ClosedLoopBench#BLOCK} windows, as the bench reports them, ms
     */
    public record Run(double p99After, double goodput, double completed, double[] windowP99, double[] rates,
            double targetMs, double[] blockP99) {

        /**
         * The first observation (0-based, from the start of the run) from which three consecutive
         * one-second windows' p99 are within ±10 % of the target; -1 if never.
         *
         * @return the observation index
         */
        public int firstInBand() {
            return firstWithin(0.9);
        }

        /**
         * The first observation (0-based) from which three consecutive one-second windows' p99 are
         * within {@code [low × target, 1.1 × target]}; -1 if never.
         *
         * @param low the band's lower edge, as a share of the target (0 for "not over +10 %")
         * @return the observation index
         */
        public int firstWithin(double low) {
            for (int w = 0; w + 2 < windowP99.length; w++) {
                boolean ok = true;
                for (int k = w; k < w + 3; k++) {
                    ok &= windowP99[k] >= low * targetMs && windowP99[k] <= 1.1 * targetMs;
                }
                if (ok) {
                    return w;
                }
            }
            return -1;
        }
    }

    /**
     * Runs the bench's standard plant (8 → 4 slots, median 15 ms, sigma 0.5, target 60 ms, 64 threads)
     * for two phases of {@code phaseSeconds}.
     *
     * @param phaseSeconds each phase's length
     * @param seed         the service-time seed
     * @param gainScale    the gains' multiple of the seed's (1 for flowDefaults, 1.33 for flowPool)
     * @param lowerQuantile read the window with the histogram's lower quantile (the controller's
     *                     reading before) instead of the controller's
     * @return the figures
     */
    public static Run run(int phaseSeconds, long seed, double gainScale, boolean lowerQuantile) {
        return run(phaseSeconds, seed, gainScale, gainScale, lowerQuantile);
    }

    /**
     * As {@link #run(int, long, double, boolean)}, with separate multiples for the two gains.
     *
     * @param phaseSeconds  each phase's length
     * @param seed          the service-time seed
     * @param kpScale       kp's multiple of the seed's 0.05
     * @param kiScale       ki's multiple of the seed's 0.001
     * @param lowerQuantile read the window with the histogram's lower quantile
     * @return the figures
     */
    public static Run run(int phaseSeconds, long seed, double kpScale, double kiScale, boolean lowerQuantile) {
        return run(phaseSeconds, seed, kpScale, kiScale, lowerQuantile, PowerFlowController.ControlLaw.PI, 60);
    }

    /**
     * As {@link #run(int, long, double, double, boolean)}, with a control law and a target.
     *
     * @param phaseSeconds  each phase's length
     * @param seed          the service-time seed
     * @param kpScale       kp's multiple of the seed's 0.05 (PI only)
     * @param kiScale       ki's multiple of the seed's 0.001 (PI only)
     * @param lowerQuantile read the window with the histogram's lower quantile (PI only)
     * @param law           the controller's control law
     * @param targetMs      the target p99, ms (the pool's maxRate is {@code threads / target})
     * @return the figures
     */
    public static Run run(int phaseSeconds, long seed, double kpScale, double kiScale, boolean lowerQuantile,
            PowerFlowController.ControlLaw law, double targetMs) {
        ClosedLoopBench.Config c = ClosedLoopBench.Config.standard(phaseSeconds);
        double maxRate = c.threads() / (targetMs / 1000);
        FakeTicker ticker = new FakeTicker();
        Loop flow = lowerQuantile ? new LowerQuantileLoop(maxRate, targetMs, kpScale, kiScale)
                : new ControllerLoop(PowerFlowController.<Integer>builder()
                        .rate(maxRate).minRate(maxRate / 100).maxRate(maxRate).targetP99(targetMs)
                        .kp(0.05 * kpScale).ki(0.001 * kiScale).controlLaw(law).ticker(ticker).build());
        return simulate(phaseSeconds, seed, targetMs, ticker, flow);
    }

    /**
     * The plant at a fixed rate, no loop: what the best constant rate would give (an oracle no
     * controller beats by holding one rate).
     *
     * @param phaseSeconds each phase's length
     * @param seed         the service-time seed
     * @param rate         the rate, per second
     * @return the figures
     */
    public static Run runFixed(int phaseSeconds, long seed, double rate) {
        return simulate(phaseSeconds, seed, 60, new FakeTicker(), new FixedLoop(rate));
    }

    /**
     * How far into the first window of phase 2 the capacity halves, ns: 0 puts the step on an
     * observation boundary; in the real bench the executor's ticks fall anywhere, so the window
     * that straddles the step sees part of each capacity.
     */
    private static long stepOffsetNanos;
    /** One second in this many, on average, the machine pauses (0: never); the pause's length, ms. */
    private static final int pauseEvery = Integer.getInteger("sim.pauseEvery", 0);
    private static final long pauseMs = Long.getLong("sim.pauseMs", 500);
    /**
     * Whether a pause stops the whole process ({@code -Dsim.pauseKind=process}: a collector's
     * pause, the machine descheduled): nothing is admitted during it, and the dispatcher notes it
     * to the controller; otherwise ({@code downstream}) only the calls in flight are late, and
     * arrivals go on.
     */
    private static final boolean processPauses = "process".equals(System.getProperty("sim.pauseKind", "downstream"));
    /** Whether the dispatcher notes a process pause to the controller ({@code -Dsim.noteStalls=false}: not). */
    private static final boolean noteStalls = !"false".equals(System.getProperty("sim.noteStalls"));

    /** Every call in flight at {@code at}, and every call queued behind one, ends {@code d} later. */
    private static void pause(long at, long d, PriorityQueue<long[]> pending, long[] slotFree,
            PriorityQueue<Long> threads) {
        List<long[]> shifted = new ArrayList<>();
        while (!pending.isEmpty()) {
            long[] p = pending.poll();
            shifted.add(p[0] > at ? new long[] {p[0] + d, p[1] + d} : p);
        }
        pending.addAll(shifted);
        for (int i = 0; i < slotFree.length; i++) {
            slotFree[i] = slotFree[i] > at ? slotFree[i] + d : slotFree[i];
        }
        List<Long> freeAt = new ArrayList<>(threads);
        threads.clear();
        for (long f : freeAt) {
            threads.add(f > at ? f + d : f);
        }
    }
    /** The length of the blocks the runs report ({@link Run#blockP99()}), windows. */
    private static int blockWindows = ClosedLoopBench.BLOCK;

    private static Run simulate(int phaseSeconds, long seed, double targetMs, FakeTicker ticker, Loop flow) {
        ClosedLoopBench.Config c = ClosedLoopBench.Config.standard(phaseSeconds);
        SplittableRandom random = new SplittableRandom(seed);
        long ms = 1_000_000L;
        long second = 1_000_000_000L;
        int windows = 2 * phaseSeconds;
        PriorityQueue<long[]> pending = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        PriorityQueue<Long> threads = new PriorityQueue<>();
        long[] slotFree = new long[c.slots()];
        List<List<Double>> perWindow = new ArrayList<>();
        double[] rates = new double[windows];
        long[] good = new long[windows];
        long[] done = new long[windows];
        long nextArrival = 0;
        long stepAt = phaseSeconds * second + stepOffsetNanos;
        SplittableRandom pauses = new SplittableRandom(seed ^ 0x5DEECE66DL);
        for (int w = 0; w < windows; w++) {
            long pauseAt = -1;
            boolean stalled = false;
            if (pauseEvery > 0 && pauses.nextInt(pauseEvery) == 0) {
                // The machine pauses for pauseMs at a random point of this second (see pause()).
                pauseAt = w * second + pauses.nextLong(second);
                if (!processPauses) {
                    pause(pauseAt, pauseMs * ms, pending, slotFree, threads);
                    pauseAt = -1;
                }
            }
            perWindow.add(new ArrayList<>());
            long end = (w + 1) * second;
            double rate = flow.rate();
            long interval = (long) (1e9 / rate);
            int poolSize = (int) Math.min(c.threads(), Math.max(1, Math.ceil(2 * rate * targetMs / 1000)));
            while (threads.size() < poolSize) {
                threads.add(nextArrival);
            }
            while (threads.size() > poolSize) {
                // Retire the thread that frees up last.
                threads.remove(threads.stream().max(Long::compare).orElseThrow());
            }
            for (; nextArrival < end; nextArrival += interval) {
                if (pauseAt >= 0 && nextArrival >= pauseAt) {
                    // A pause of the whole process: the calls in flight end late, and nothing is
                    // admitted until it ends (the dispatcher catches up at most 20 ms of it).
                    pause(pauseAt, pauseMs * ms, pending, slotFree, threads);
                    nextArrival = Math.max(nextArrival, pauseAt + pauseMs * ms);
                    stalled = true;
                    pauseAt = -1;
                    if (nextArrival >= end) {
                        break;
                    }
                }
                long threadStart = Math.max(nextArrival, threads.poll());
                int slots = nextArrival < stepAt ? c.slots() : c.slots() / 2;
                int s = 0;
                for (int i = 1; i < slots; i++) {
                    if (slotFree[i] < slotFree[s]) {
                        s = i;
                    }
                }
                long slotStart = Math.max(threadStart, slotFree[s]);
                long service = Math.round(c.medianMs() * ms * Math.exp(c.sigma() * random.nextGaussian()));
                long finish = slotStart + service;
                slotFree[s] = finish;
                threads.add(finish);
                pending.add(new long[] {finish, finish - threadStart});
            }
            if (pauseAt >= 0) { // after the window's last arrival
                pause(pauseAt, pauseMs * ms, pending, slotFree, threads);
                nextArrival = Math.max(nextArrival, pauseAt + pauseMs * ms);
                stalled = true;
            }
            flow.offer(Math.round(c.offered())); // the bench's open-loop demand, this second
            if (stalled && noteStalls) {
                // The pause is noted in the window it began in: by the dispatcher if it ended
                // there, or else by the tick, held up by it past the window's end.
                flow.stall(pauseMs * ms);
            }
            ticker.set(end);
            while (!pending.isEmpty() && pending.peek()[0] <= end) {
                long[] p = pending.poll();
                double latencyMs = p[1] / 1e6;
                flow.record(latencyMs);
                perWindow.get(w).add(latencyMs);
                done[w]++;
                if (latencyMs <= targetMs) {
                    good[w]++;
                }
            }
            rates[w] = flow.observe(1000);
        }
        double[] windowP99 = new double[windows];
        for (int w = 0; w < windows; w++) {
            windowP99[w] = p99(perWindow.subList(w, w + 1));
        }
        long g = 0;
        long d = 0;
        for (int w = phaseSeconds; w < windows; w++) {
            g += good[w];
            d += done[w];
        }
        int block = blockWindows;
        double[] blocks = new double[Math.max(0, (phaseSeconds - block) / block)];
        for (int b = 0; b < blocks.length; b++) {
            int from = phaseSeconds + block * (b + 1);
            blocks[b] = p99(perWindow.subList(from, from + block));
        }
        return new Run(p99(perWindow.subList(windows - phaseSeconds / 2, windows)), (double) g / phaseSeconds,
                (double) d / phaseSeconds, windowP99, rates, targetMs, blocks);
    }

    /** The loop under test. */
    private interface Loop {
        double rate();

        /** Offers {@code n} items to the loop's queue (the demand it may count); none by default. */
        default void offer(long n) {
        }

        void record(double ms);

        /** The dispatcher woke {@code nanos} late (a pause of the process); ignored by default. */
        default void stall(long nanos) {
        }

        double observe(double dtMs);
    }

    private record ControllerLoop(PowerFlowController<Integer> flow) implements Loop {
        @Override
        public double rate() {
            return flow.rate();
        }

        @Override
        public void offer(long n) {
            for (long i = 0; i < n; i++) {
                flow.submit(0); // the queue fills; the rest is refused, and counts as demand
            }
        }

        @Override
        public void record(double ms) {
            flow.record(ms);
        }

        @Override
        public void stall(long nanos) {
            Access.controller().noteStall(flow, nanos);
        }

        @Override
        public double observe(double dtMs) {
            return flow.observe(dtMs);
        }
    }

    private record FixedLoop(double rate) implements Loop {
        @Override
        public void record(double ms) {
        }

        @Override
        public double observe(double dtMs) {
            return rate;
        }
    }

    /** The controller's loop as it was: the same servo, fed the histogram's lower quantile. */
    private static final class LowerQuantileLoop implements Loop {
        final PowerHistogram window = PowerHistogram.builder().build();
        final PowerServo servo;
        double rate;

        LowerQuantileLoop(double maxRate, double targetMs, double kpScale, double kiScale) {
            servo = PowerServo.builder().kp(0.05 * kpScale).ki(0.001 * kiScale).setpoint(targetMs)
                    .min(maxRate / 100).max(maxRate).dt(1).build();
            rate = maxRate;
        }

        @Override
        public double rate() {
            return rate;
        }

        @Override
        public void record(double ms) {
            window.record(ms);
        }

        @Override
        public double observe(double dtMs) {
            PowerHistogram.Snapshot s = window.snapshotAndReset();
            if (s.count() > 0) {
                rate = servo.step(s.quantile(0.99), dtMs);
            }
            return rate;
        }
    }

    /** The exact (nearest-rank) p99 of the windows' samples, as HdrHistogram's getValueAtPercentile gives it. */
    static double p99(List<List<Double>> windows) {
        double[] all = windows.stream().flatMap(List::stream).mapToDouble(Double::doubleValue).sorted().toArray();
        if (all.length == 0) {
            return Double.NaN;
        }
        return all[(int) Math.ceil(0.99 * all.length) - 1];
    }

    /**
     * Runs both readings and the factory's gains over seeds, for 20-s and 60-s phases, and prints
     * the mean, median and worst p99 over the last half of phase 2, and the goodput.
     *
     * @param args optional: number of seeds (default 20); how many ms into phase 2's first window
     *             the capacity halves (default 0); {@code knee} to run only the knee-aware rows
     *             and the trace, {@code blocks} to compare the law with constant rates block by
     *             block over 120-s phases, or {@code minutes} (then optionally the phase length,
     *             default 720 s) to compare them minute by minute over long phases
     */
    public static void main(String[] args) {
        int seeds = args.length > 0 && !args[0].startsWith("${") ? Integer.parseInt(args[0]) : 20;
        stepOffsetNanos = args.length > 1 ? (long) (Double.parseDouble(args[1]) * 1e6) : 0L;
        boolean kneeOnly = args.length > 2 && args[2].equals("knee");
        System.out.println("the capacity halves " + stepOffsetNanos / 1_000_000 + " ms into phase 2's first window");
        if (args.length > 2 && args[2].equals("minutes")) {
            minutes(seeds, args.length > 3 ? Integer.parseInt(args[3]) : 720);
            return;
        }
        if (args.length > 2 && args[2].equals("blocks")) {
            blocks(seeds);
            return;
        }
        double scale = (64 / 0.06 / 60) / (400.0 / 30); // the factory's rescaling for this plant
        PowerFlowController.ControlLaw pi = PowerFlowController.ControlLaw.PI;
        PowerFlowController.ControlLaw knee = PowerFlowController.ControlLaw.KNEE_AWARE;
        System.out.println("| phase s | arm | law | kp × | ki × | window quantile | p99 after, mean of seeds ms "
                + "| median ms | worst ms | seeds in ±10 % | seeds over +10 % | goodput /s | completed /s |");
        System.out.println("|---:|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|");
        Object[][] arms = {
            {"flowDefaults", 1.0, 1.0, true, pi}, {"flowDefaults", 1.0, 1.0, false, pi},
            {"flowPool (before)", scale, scale, true, pi}, {"flowPool (rescaled ki)", scale, scale, false, pi},
            {"flowPool (PI)", scale, scale / 4, false, pi},
            {"flowDefaults, flowPool (knee-aware)", 1.0, 1.0, false, knee},
        };
        for (int phase : new int[] {20, 60}) {
            for (Object[] arm : arms) {
                if (!kneeOnly || arm[4] == knee) {
                    row(seeds, phase, 60, (String) arm[0], (Double) arm[1], (Double) arm[2], (Boolean) arm[3],
                            (PowerFlowController.ControlLaw) arm[4]);
                }
            }
        }
        if (kneeOnly) {
            trace(20, 1000);
            return;
        }
        System.out.println();
        System.out.println("A fixed rate, no loop (the oracle constant rate; phase 2 as above, target 60 ms):");
        System.out.println();
        System.out.println("| phase s | rate /s | p99 after, mean ms | median ms | worst ms | seeds in ±10 % | seeds over +10 % |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        for (int phase : new int[] {20, 60}) {
            for (double fixed : new double[] {205, 210, 215, 220}) {
                double[] p = new double[seeds];
                int in = 0;
                int over = 0;
                for (int s = 0; s < seeds; s++) {
                    p[s] = runFixed(phase, 1000 + s, fixed).p99After();
                    over += p[s] > 66 ? 1 : 0;
                    in += p[s] >= 54 && p[s] <= 66 ? 1 : 0;
                }
                double[] sorted = p.clone();
                Arrays.sort(sorted);
                System.out.printf(Locale.ROOT, "| %d | %.0f | %.1f | %.1f | %.1f | %d/%d | %d/%d |%n", phase, fixed,
                        Arrays.stream(p).average().orElseThrow(), sorted[seeds / 2], sorted[seeds - 1], in, seeds,
                        over, seeds);
            }
        }
        System.out.println();
        System.out.println("Other targets (the same downstream, the pool's maxRate = 64 / target):");
        System.out.println();
        System.out.println("| phase s | target ms | law | p99 after, mean ms | median ms | worst ms | seeds in ±10 % "
                + "| seeds over +10 % | goodput /s | completed /s |");
        System.out.println("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|");
        for (double target : new double[] {50, 80}) {
            for (int phase : new int[] {20, 60}) {
                for (Object[] arm : new Object[][] {{"PI seed gains", 1.0, 1.0, pi}, {"PI factory gains", scale, scale / 4, pi},
                        {"knee-aware", 1.0, 1.0, knee}}) {
                    double s = (Double) arm[1] == 1.0 ? 1.0 : (64 / (target / 1000) / target) / (400.0 / 30);
                    double ki = (Double) arm[1] == 1.0 ? 1.0 : s / 4;
                    Stat st = stat(seeds, phase, target, s, ki, false, (PowerFlowController.ControlLaw) arm[3]);
                    System.out.printf(Locale.ROOT, "| %d | %.0f | %s | %.1f | %.1f | %.1f | %d/%d | %d/%d | %.0f | %.0f |%n",
                            phase, target, arm[0], st.mean, st.median, st.worst, st.in, seeds, st.over, seeds, st.goodput,
                            st.completed);
                }
            }
        }
        System.out.println();
        System.out.println("Cold start (rate = maxRate = 1,067/s under overload, 8 slots; first observation from which "
                + "three consecutive one-second windows are within ±10 % of 60 ms), 60-s phases:");
        for (Object[] arm : new Object[][] {{"PI seed gains", 1.0, 1.0, pi}, {"PI factory gains", scale, scale / 4, pi},
                {"knee-aware", 1.0, 1.0, knee}}) {
            int[] first = new int[seeds];
            int[] notOver = new int[seeds];
            int never = 0;
            int neverNotOver = 0;
            for (int s = 0; s < seeds; s++) {
                Run r = run(60, 1000 + s, (Double) arm[1], (Double) arm[2], false,
                        (PowerFlowController.ControlLaw) arm[3], 60);
                first[s] = r.firstInBand();
                notOver[s] = r.firstWithin(0);
                if (first[s] < 0 || first[s] >= 60) {
                    never++;
                    first[s] = Integer.MAX_VALUE;
                }
                if (notOver[s] < 0 || notOver[s] >= 60) {
                    neverNotOver++;
                    notOver[s] = Integer.MAX_VALUE;
                }
            }
            Arrays.sort(first);
            Arrays.sort(notOver);
            System.out.printf(Locale.ROOT, "  %-17s in ±10 %%: median %s, worst %s observations, not in phase 1: %d/%d;"
                    + " not over +10 %%: median %s, worst %s, not in phase 1: %d/%d%n", arm[0],
                    fmt(first[seeds / 2]), fmt(first[seeds - 1]), never, seeds, fmt(notOver[seeds / 2]),
                    fmt(notOver[seeds - 1]), neverNotOver, seeds);
        }
        System.out.println();
        System.out.println("Knee-aware law, seed 1000, 20-s phases (the step is after the 20th value):");
        trace(20, 1000);
    }

    /**
     * The steady state, block by block: 120-s phases, the p99 of each 10-s block of phase 2 after
     * its first 10 s (11 blocks per run), for the knee-aware law and for constant rates (no loop).
     */
    private static void blocks(int seeds) {
        System.out.println("| arm | blocks within ±10 % | over +10 % | under −10 % | runs with every block within ±10 % "
                + "| runs with the last 60 s within ±10 % / over / under | goodput /s |");
        System.out.println("|---|---:|---:|---:|---:|---|---:|");
        for (Object arm : List.of("knee-aware", 200.0, 205.0, 210.0, 215.0, 220.0, 225.0)) {
            Arm t = arm(arm, seeds, 120);
            System.out.printf(Locale.ROOT, "| %s | %d/%d | %d | %d | %d/%d | %d / %d / %d | %.0f |%n", t.label(),
                    t.spans()[0], t.all(), t.spans()[1], t.spans()[2], t.everySpan(), seeds, t.after()[0], t.after()[1],
                    t.after()[2], t.goodput());
        }
    }

    /**
     * Long runs, minute by minute: phases of {@code phase} seconds, the p99 of every minute of
     * phase 2 after its first (as {@link ClosedLoopBench} prints them for phases of two minutes or
     * more), for the knee-aware law and for constant rates (no loop).
     */
    private static void minutes(int seeds, int phase) {
        blockWindows = ClosedLoopBench.MINUTE;
        System.out.println("| arm | minutes within ±10 % / over / under | runs with every minute within | goodput /s |");
        System.out.println("|---|---|---:|---:|");
        for (Object arm : List.of("knee-aware", 205.0, 210.0, 215.0, 220.0)) {
            Arm t = arm(arm, seeds, phase);
            System.out.printf(Locale.ROOT, "| %s | %d / %d / %d | %d/%d | %.0f |%n", t.label(), t.spans()[0],
                    t.spans()[1], t.spans()[2], t.everySpan(), seeds, t.goodput());
        }
        blockWindows = ClosedLoopBench.BLOCK;
    }

    /**
     * One arm's sums over seeds.
     *
     * @param label     the arm's name
     * @param spans     the blocks ({@link Run#blockP99()}) within ±10 %, over, under
     * @param all       the blocks in all
     * @param everySpan the runs with every block within ±10 %
     * @param after     the runs whose p99 after ({@link Run#p99After()}) is within ±10 %, over, under
     * @param goodput   the mean goodput, per second
     */
    private record Arm(String label, int[] spans, int all, int everySpan, int[] after, double goodput) {
    }

    /** Runs {@code seeds} seeds of an arm: {@code "knee-aware"}, or a constant rate (a Double, no loop). */
    private static Arm arm(Object arm, int seeds, int phase) {
        int[] spans = new int[3];
        int[] after = new int[3];
        int all = 0;
        int everySpan = 0;
        double gp = 0;
        for (int s = 0; s < seeds; s++) {
            Run r = arm instanceof Double rate ? runFixed(phase, 1000 + s, rate)
                    : run(phase, 1000 + s, 1, 1, false, PowerFlowController.ControlLaw.KNEE_AWARE, 60);
            int[] t = ClosedLoopBench.tally(r.blockP99(), 60);
            int[] a = ClosedLoopBench.tally(new double[] {r.p99After()}, 60);
            for (int k = 0; k < 3; k++) {
                spans[k] += t[k];
                after[k] += a[k];
            }
            all += r.blockP99().length;
            everySpan += t[0] == r.blockP99().length ? 1 : 0;
            gp += r.goodput();
        }
        String label = arm instanceof Double rate ? String.format(Locale.ROOT, "constant %.0f/s", rate) : arm.toString();
        return new Arm(label, spans, all, everySpan, after, gp / seeds);
    }

    private static void trace(int phase, long seed) {
        Run r = run(phase, seed, 1, 1, false, PowerFlowController.ControlLaw.KNEE_AWARE, 60);
        StringBuilder p = new StringBuilder("window p99 ms ");
        StringBuilder q = new StringBuilder("rate /s       ");
        for (int w = 0; w < r.rates().length; w++) {
            p.append(String.format(Locale.ROOT, "%5.0f", r.windowP99()[w]));
            q.append(String.format(Locale.ROOT, "%5.0f", r.rates()[w]));
        }
        System.out.println(p);
        System.out.println(q);
    }

    private static String fmt(int observations) {
        return observations == Integer.MAX_VALUE ? "never" : Integer.toString(observations);
    }

    private record Stat(double mean, double median, double worst, int in, int over, double goodput, double completed) {
    }

    private static Stat stat(int seeds, int phase, double target, double kpScale, double kiScale, boolean lower,
            PowerFlowController.ControlLaw law) {
        double[] p = new double[seeds];
        double gp = 0;
        double cp = 0;
        int over = 0;
        int in = 0;
        for (int s = 0; s < seeds; s++) {
            Run r = run(phase, 1000 + s, kpScale, kiScale, lower, law, target);
            p[s] = r.p99After();
            gp += r.goodput();
            cp += r.completed();
            if (r.p99After() > 1.1 * target) {
                over++;
            } else if (r.p99After() >= 0.9 * target) {
                in++;
            }
        }
        double[] sorted = p.clone();
        Arrays.sort(sorted);
        return new Stat(Arrays.stream(p).average().orElseThrow(), sorted[seeds / 2], sorted[seeds - 1], in, over,
                gp / seeds, cp / seeds);
    }

    private static void row(int seeds, int phase, double target, String label, double kpScale, double kiScale,
            boolean lower, PowerFlowController.ControlLaw law) {
        Stat st = stat(seeds, phase, target, kpScale, kiScale, lower, law);
        boolean knee = law == PowerFlowController.ControlLaw.KNEE_AWARE;
        System.out.printf(Locale.ROOT, "| %d | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %d/%d | %d/%d | %.0f | %.0f |%n",
                phase, label, knee ? "knee-aware" : "PI", knee ? "–" : String.format(Locale.ROOT, "%.2f", kpScale),
                knee ? "–" : String.format(Locale.ROOT, "%.2f", kiScale),
                lower ? "lower, floor(q(n-1))" : "controller, ceil(q(n+1))", st.mean, st.median, st.worst, st.in,
                seeds, st.over, seeds, st.goodput, st.completed);
    }
}
