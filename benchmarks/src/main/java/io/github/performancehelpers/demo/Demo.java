package io.github.performancehelpers.demo;

import io.github.performancehelpers.sim.SimulatedDownstream;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import io.github.performancehelpers.PoolSizer;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.loop.PowerFlowController;

/**
 * The live demo behind the README's "run the demo" command:
 *
 * <pre>{@code mvn -q -f benchmarks/pom.xml compile exec:exec@demo [-Ddemo.args="--seconds 20"]}</pre>
 *
 * <p>Two contenders face the same open-loop offered load, each in front of its own, identical
 * {@link SimulatedDownstream} (same slots, same seeded service times), whose capacity halves
 * halfway through the run:
 * <ul>
 *   <li>a {@link PowerFlowExecutor} with a p99 target and its defaults (the knee-aware law, no
 *       rate limit until the run time calls for one; {@code --law pi} runs the PI law with the
 *       gains below instead), which must find the rate the downstream sustains at that target,
 *       then find it again after the step;</li>
 *   <li>{@code Executors.newFixedThreadPool(n)} with {@code n} = the downstream's slot count, the
 *       usual way to "match the pool to the downstream", with its unbounded queue.</li>
 * </ul>
 * One line per tick shows the loop at work; a summary compares the two; an SVG chart of rates,
 * refusals and p99s over time, beside the target, is written (default {@code target/demo.svg}).
 *
 * <p>Everything is owned by try-with-resources blocks: the JVM exits by itself.
 */
public final class Demo {

    private Demo() {
    }

    /**
     * The demo's settings; {@link #defaults()} are the README's numbers.
     *
     * @param law           {@code "knee"}: the executor's defaults (knee-aware law, open rate);
     *                      {@code "pi"}: the PI law with {@code kp}, {@code ki}, the rate bounds
     *                      and a Little's-law pool
     * @param seconds       run length; the capacity step is at half of it
     * @param offered       offered load, calls per second (Poisson arrivals)
     * @param slots         the downstream's slots before the step (halved at the step); also
     *                      the fixed pool's thread count
     * @param medianMs      median service time, ms
     * @param sigma         lognormal shape of the service time
     * @param targetMs      the executor's p99 target, ms
     * @param startRate     the PI executor's starting rate
     * @param minRate       the PI executor's rate floor
     * @param maxRate       the PI executor's rate ceiling
     * @param kp            the PI executor's proportional gain, (ops/s) per ms
     * @param ki            the PI executor's integral gain, (ops/s) per ms per ms
     * @param queueCapacity the executor's queue bound
     * @param tickMs        observe interval of the loop, and the sample interval (one second by
     *                      default; 500 ms for the PI law, whose gains were chosen for it)
     * @param seed          seed of the arrivals and the service times
     * @param svg           where the chart goes
     */
    record Config(String law, double seconds, double offered, int slots, double medianMs, double sigma,
            double targetMs, double startRate, double minRate, double maxRate, double kp, double ki, int queueCapacity,
            long tickMs, long seed, Path svg) {

        static Config defaults() {
            return new Config("knee", 40, 300, 8, 20, 0.4, 100, 100, 10, 500, 0.5, 0.0005, 100, 1000, 42,
                    Path.of("target", "demo.svg"));
        }

        boolean pi() {
            return law.equals("pi");
        }

        /** What the header and the chart say the executor runs. */
        String lawLabel() {
            return pi() ? "PI law (kp " + fmt(kp) + ", ki " + fmt(ki) + "), rate in [" + fmt(minRate) + ", "
                    + fmt(maxRate) + "]" : "the defaults: knee-aware law, no rate limit until the run time calls for one";
        }

        int ticks() {
            return (int) Math.max(2, Math.round(seconds * 1000 / tickMs));
        }

        int stepTick() {
            return ticks() / 2;
        }

        /** Print one line every this many ticks: about once a second. */
        int printEvery() {
            return (int) Math.max(1, Math.round(1000.0 / tickMs));
        }

        int slotsAfterStep() {
            return Math.max(1, slots / 2);
        }
    }

    /**
     * One sample of both contenders, taken every tick. Latencies in ms (NaN: no sample); {@code pool}
     * is the bound on the executor's tasks in flight (its pool's size, or the cap where lower).
     */
    record Tick(double t, double capacity, double rate, int pool, int depth, long refused, double refusedPerSec,
            double loopP99,
            double flowE2eP99, double flowCallP99, double flowDonePerSec, double fixedE2eP99, double fixedCallP99,
            double fixedDonePerSec, int fixedBacklog) {
    }

    /** What a run produced; the summary and the chart are drawn from it. */
    record Result(Config config, double capacityBefore, double capacityAfter, double stepAt, List<Tick> ticks,
            long offered, LatencyRecorder.Totals flowRun, LatencyRecorder.Totals flowAfter, long flowRefused, long flowShed,
            long flowRejectedOther, int flowQueuedAtEnd, LatencyRecorder.Totals fixedRun,
            LatencyRecorder.Totals fixedAfter, int fixedBacklogAtEnd, double fixedOldestQueuedMs, Path svg) {
    }

    /**
     * Runs the demo.
     *
     * @param args options, see {@code --help}
     * @throws Exception if the run fails
     */
    public static void main(String[] args) throws Exception {
        Config config;
        try {
            config = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(usage());
            System.exit(2);
            return;
        }
        if (config == null) {
            System.out.println(usage());
            return;
        }
        run(config, System.out);
    }

    static String usage() {
        Config d = Config.defaults();
        return String.format(Locale.ROOT, """
                usage: mvn -q -f benchmarks/pom.xml compile exec:exec@demo -Ddemo.args="[options]"
                  --law knee|pi   the executor's defaults, or the PI law          (default %s)
                  --seconds N     run length, capacity halves at N/2            (default %s)
                  --offered R     offered load, calls/s                           (default %s)
                  --slots N       downstream slots before the step                (default %d)
                  --median-ms M   median service time                             (default %s)
                  --sigma S       lognormal shape of the service time             (default %s)
                  --target-ms T   the executor's p99 target                       (default %s)
                  --max-rate R    the PI executor's rate ceiling                  (default %s)
                  --min-rate R    the PI executor's rate floor                    (default %s)
                  --start-rate R  the PI executor's starting rate                 (default %s)
                  --kp G          the PI executor's proportional gain             (default %s)
                  --ki G          the PI executor's integral gain                 (default %s)
                  --queue N       the executor's queue capacity                   (default %d)
                  --tick-ms T     observe/sample interval            (default %d; 500 with --law pi)
                  --seed N        seed of arrivals and service times              (default %d)
                  --svg PATH      where to write the chart                        (default %s)""",
                d.law(), fmt(d.seconds()), fmt(d.offered()), d.slots(), fmt(d.medianMs()), fmt(d.sigma()), fmt(d.targetMs()),
                fmt(d.maxRate()), fmt(d.minRate()), fmt(d.startRate()), fmt(d.kp()), fmt(d.ki()), d.queueCapacity(), d.tickMs(), d.seed(), d.svg());
    }

    /** Parses the options; returns null for {@code --help}. */
    static Config parse(String[] args) {
        Config d = Config.defaults();
        double seconds = d.seconds(), offered = d.offered(), medianMs = d.medianMs(), sigma = d.sigma();
        double targetMs = d.targetMs(), maxRate = d.maxRate(), minRate = d.minRate(), startRate = d.startRate();
        double kp = d.kp(), ki = d.ki();
        int slots = d.slots(), queue = d.queueCapacity();
        long tickMs = -1, seed = d.seed();
        String law = d.law();
        Path svg = d.svg();
        for (int i = 0; i < args.length; i++) {
            String opt = args[i];
            if (opt.isBlank()) {
                continue;
            }
            if (opt.equals("--help") || opt.equals("-h")) {
                return null;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value for " + opt);
            }
            String v = args[++i];
            try {
                switch (opt) {
                    case "--law" -> law = law(v);
                    case "--seconds" -> seconds = positive(opt, Double.parseDouble(v));
                    case "--offered" -> offered = positive(opt, Double.parseDouble(v));
                    case "--slots" -> slots = (int) positive(opt, Integer.parseInt(v));
                    case "--median-ms" -> medianMs = positive(opt, Double.parseDouble(v));
                    case "--sigma" -> sigma = Double.parseDouble(v);
                    case "--target-ms" -> targetMs = positive(opt, Double.parseDouble(v));
                    case "--max-rate" -> maxRate = positive(opt, Double.parseDouble(v));
                    case "--min-rate" -> minRate = positive(opt, Double.parseDouble(v));
                    case "--start-rate" -> startRate = positive(opt, Double.parseDouble(v));
                    case "--kp" -> kp = Double.parseDouble(v);
                    case "--ki" -> ki = Double.parseDouble(v);
                    case "--queue" -> queue = (int) positive(opt, Integer.parseInt(v));
                    case "--tick-ms" -> tickMs = (long) positive(opt, Long.parseLong(v));
                    case "--seed" -> seed = Long.parseLong(v);
                    case "--svg" -> svg = Path.of(v);
                    default -> throw new IllegalArgumentException("unknown option: " + opt);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(opt + " needs a number: " + v, e);
            }
        }
        if (!(sigma >= 0) || !Double.isFinite(sigma)) {
            throw new IllegalArgumentException("--sigma must be finite and >= 0: " + sigma);
        }
        if (minRate > maxRate) {
            throw new IllegalArgumentException("--min-rate must be <= --max-rate: " + minRate + " > " + maxRate);
        }
        startRate = Math.max(minRate, Math.min(startRate, maxRate));
        if (tickMs < 0) {
            tickMs = law.equals("pi") ? 500 : d.tickMs();
        }
        return new Config(law, seconds, offered, slots, medianMs, sigma, targetMs, startRate, minRate, maxRate, kp,
                ki, queue, tickMs, seed, svg);
    }

    private static String law(String v) {
        if (!v.equals("knee") && !v.equals("pi")) {
            throw new IllegalArgumentException("--law must be knee or pi: " + v);
        }
        return v;
    }

    /** The executor under test: the builder's defaults with the target, or the PI law as configured. */
    private static PowerFlowExecutor flowExecutor(Config c) {
        PowerFlowExecutor.Builder b = PowerFlowExecutor.builder()
                .name("demo-flow")
                .targetP99(Duration.ofNanos(Math.round(c.targetMs() * 1e6)))
                .queueCapacity(c.queueCapacity())
                .observeInterval(Duration.ofMillis(c.tickMs()))
                // Watch it live: jconsole (MBean io.github.performancehelpers:type=PowerFlowExecutor,
                // name=demo-flow) or jcmd <pid> JFR.start; see docs/observability.md.
                .jmx(true).observability(true);
        if (c.pi()) {
            b.rate(c.startRate()).minRate(c.minRate()).maxRate(c.maxRate())
                    .controlLaw(PowerFlowController.ControlLaw.PI) // the gains are PI's
                    .kp(c.kp()).ki(c.ki())
                    .poolSizer(littlesLawWithoutHeadroom(c.targetMs()));
        }
        return b.build();
    }

    private static double positive(String opt, double v) {
        if (!(v > 0) || !Double.isFinite(v)) {
            throw new IllegalArgumentException(opt + " must be finite and > 0: " + v);
        }
        return v;
    }

    /**
     * Runs both contenders for {@code config.seconds()}, printing to {@code out}, and writes the
     * chart.
     */
    static Result run(Config c, PrintStream out) throws InterruptedException, IOException {
        SimulatedDownstream flowDownstream = downstream(c);
        SimulatedDownstream fixedDownstream = downstream(c);
        double capacityBefore = flowDownstream.capacityPerSecond();
        double capacityAfter = capacityBefore * c.slotsAfterStep() / c.slots();
        LatencyRecorder flowRec = new LatencyRecorder();
        LatencyRecorder fixedRec = new LatencyRecorder();
        List<Tick> ticks = new ArrayList<>();
        long tickNanos = TimeUnit.MILLISECONDS.toNanos(c.tickMs());
        double tickSeconds = c.tickMs() / 1000.0;
        int n = c.slots();

        printHeader(c, out, flowDownstream, capacityBefore, capacityAfter);

        LoadGenerator load;
        int fixedBacklogAtEnd;
        double fixedOldestMs;
        int flowQueuedAtEnd;
        long flowRefused;
        long flowShed;
        try (PowerFlowExecutor flow = flowExecutor(c);
             ExecutorService fixedPool = Executors.newFixedThreadPool(n, namedThreads("demo-fixed-"))) {
            ThreadPoolExecutor fixed = (ThreadPoolExecutor) fixedPool;
            // Sample halfway between two of the loop's observations, so each printed line shows
            // the window the loop has just acted on, never a race with it.
            Thread.sleep(c.tickMs() / 2);
            long t0 = System.nanoTime();
            load = new LoadGenerator(c, t0, flow, fixed, flowDownstream, fixedDownstream, flowRec, fixedRec);
            Thread loadThread = Thread.ofPlatform().name("demo-load").start(load);
            try {
                int lastPrinted = 0;
                long chartRefused = 0;
                long printRefused = 0;
                for (int k = 1; k <= c.ticks(); k++) {
                    sleepUntil(t0 + k * tickNanos);
                    PowerFlowExecutor.Stats s = flow.stats();
                    int backlog = fixed.getQueue().size();
                    double capacity = flowDownstream.capacityPerSecond();
                    Tick charted = sample(k * tickSeconds, tickSeconds, capacity, s, chartRefused, flowRec, fixedRec,
                            backlog, LatencyRecorder.CHART);
                    ticks.add(charted);
                    chartRefused = charted.refused();
                    if (k % c.printEvery() == 0 || k == c.stepTick()) {
                        double printed = (k - lastPrinted) * tickSeconds;
                        lastPrinted = k;
                        Tick shown = sample(k * tickSeconds, printed, capacity, s, printRefused, flowRec, fixedRec,
                                backlog, LatencyRecorder.PRINT);
                        printTick(out, shown, c);
                        printRefused = shown.refused();
                    }
                    if (k == c.stepTick()) {
                        flowDownstream.setSlots(c.slotsAfterStep());
                        fixedDownstream.setSlots(c.slotsAfterStep());
                        flowRec.markStep();
                        fixedRec.markStep();
                        out.printf(Locale.ROOT, "  ---- t=%s s: the downstream loses half its slots (%d -> %d): "
                                + "capacity ~%.0f/s -> ~%.0f/s ----%n", fmt(k * tickSeconds), c.slots(),
                                c.slotsAfterStep(), capacityBefore, capacityAfter);
                    }
                }
            } finally {
                load.stop();
                loadThread.join();
            }
            fixedBacklogAtEnd = fixed.getQueue().size();
            Runnable oldest = fixed.getQueue().peek();
            fixedOldestMs = oldest instanceof Job j ? (System.nanoTime() - j.submittedNanos()) / 1e6 : Double.NaN;
            PowerFlowExecutor.Stats end = flow.stats();
            flowQueuedAtEnd = end.depth();
            flowRefused = end.rejected();
            flowShed = end.shed();
            // The run is over: what is still queued is abandoned, what is running is interrupted.
            fixedPool.shutdownNow();
            flow.shutdownNow();
        }
        double stepAt = c.stepTick() * tickSeconds;
        Result result = new Result(c, capacityBefore, capacityAfter, stepAt, List.copyOf(ticks), load.offered(),
                flowRec.run(), flowRec.afterStep(), flowRefused, flowShed, load.flowRejected() - flowRefused,
                flowQueuedAtEnd, fixedRec.run(), fixedRec.afterStep(), fixedBacklogAtEnd, fixedOldestMs,
                c.svg().toAbsolutePath());
        printSummary(out, result);
        SvgChart.write(result, result.svg());
        out.println();
        out.println("chart: " + result.svg());
        return result;
    }

    private static Tick sample(double t, double windowSeconds, double capacity, PowerFlowExecutor.Stats s,
            long refusedBefore, LatencyRecorder flowRec, LatencyRecorder fixedRec, int fixedBacklog, int channel) {
        LatencyRecorder.Window fw = flowRec.drainWindow(channel);
        LatencyRecorder.Window xw = fixedRec.drainWindow(channel);
        long refused = s.rejected() + s.shed(); // refused at submit, or shed from the queue
        // The bound in force on the tasks in flight: the pool's size, or the cap where that is lower.
        int bound = s.inFlightLimit() >= 0 ? Math.min(s.poolSize(), s.inFlightLimit()) : s.poolSize();
        return new Tick(t, capacity, s.rate(), bound, s.depth(), refused,
                (refused - refusedBefore) / windowSeconds, s.lastObservedP99(),
                fw.e2eP99(), fw.callP99(), fw.completed() / windowSeconds,
                xw.e2eP99(), xw.callP99(), xw.completed() / windowSeconds, fixedBacklog);
    }

    /**
     * Little's law, {@code in flight = rate x latency}, with the target as the latency and none
     * of the default sizer's 2x headroom. The bound is far above the downstream's slots at any
     * settled rate, so it never throttles; what it does is cap how many calls can pile up in the
     * downstream's slot queue in the moment the capacity drops and the rate is still high, which
     * is what sets the size of the transient.
     */
    static PoolSizer littlesLawWithoutHeadroom(double targetMs) {
        return rate -> (int) Math.min(1024, Math.max(1, Math.ceil(rate * targetMs / 1000)));
    }

    private static ThreadFactory namedThreads(String prefix) {
        AtomicLong count = new AtomicLong();
        return r -> Thread.ofPlatform().name(prefix + count.incrementAndGet()).unstarted(r);
    }

    private static SimulatedDownstream downstream(Config c) {
        return SimulatedDownstream.builder()
                .slots(c.slots())
                .medianServiceTime(Duration.ofNanos(Math.round(c.medianMs() * 1e6)))
                .sigma(c.sigma())
                .seed(c.seed())
                .build();
    }

    static void sleepUntil(long deadline) throws InterruptedException {
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    // ---------------------------------------------------------------- output

    private static void printHeader(Config c, PrintStream out, SimulatedDownstream d, double before, double after) {
        out.printf(Locale.ROOT, "PowerFlowExecutor vs Executors.newFixedThreadPool(%d), %s s, side by side%n",
                c.slots(), fmt(c.seconds()));
        out.printf(Locale.ROOT, "  downstream   %d slots x lognormal service time (median %s ms, sigma %s, mean %.1f ms)"
                + " = ~%.0f calls/s;%n", c.slots(), fmt(c.medianMs()), fmt(c.sigma()), d.meanServiceMillis(), before);
        out.printf(Locale.ROOT, "               at t=%s s it loses half its slots: %d slots = ~%.0f calls/s."
                + " Each contender has its own copy.%n", fmt(c.stepTick() * c.tickMs() / 1000.0), c.slotsAfterStep(),
                after);
        out.printf(Locale.ROOT, "  load         %s calls/s offered to both (open loop, Poisson arrivals, seed %d)%n",
                fmt(c.offered()), c.seed());
        out.printf(Locale.ROOT, "  flow         PowerFlowExecutor: targetP99 %s ms (submit to done), queueCapacity %d,"
                + " observeInterval %d ms;%n               %s%n", fmt(c.targetMs()), c.queueCapacity(), c.tickMs(),
                c.lawLabel() + (c.pi() ? "; pool = ceil(rate x " + fmt(c.targetMs()) + " ms) virtual threads" : ""));
        out.printf(Locale.ROOT, "  fixed        newFixedThreadPool(%d): one thread per downstream slot, unbounded queue%n",
                c.slots());
        out.println();
        out.printf(Locale.ROOT, "         %-53s   %s%n", "------------------- PowerFlowExecutor -------------------",
                "--- fixed pool (" + c.slots() + ") ---");
        out.printf(Locale.ROOT, "%7s %7s %5s %9s %6s %8s %9s %7s   %9s %8s %7s%n",
                "t", "rate/s", "pool", "run p99", "queue", "refused", "e2e p99", "done/s",
                "e2e p99", "backlog", "done/s");
    }

    private static void printTick(PrintStream out, Tick t, Config c) {
        String loop = Double.isNaN(t.loopP99()) ? "-" : ms(t.loopP99()) + (t.loopP99() > c.targetMs() ? "!" : " ");
        String rate = t.rate() >= PowerFlowExecutor.OPEN_RATE ? "open" : String.format(Locale.ROOT, "%.1f", t.rate());
        out.printf(Locale.ROOT, "%6ss %7s %5d %9s %6d %8d %9s %7.0f   %9s %8d %7.0f%n",
                fmt(t.t()), rate, t.pool(), loop, t.depth(), t.refused(), ms(t.flowE2eP99()) + " ",
                t.flowDonePerSec(), ms(t.fixedE2eP99()) + " ", t.fixedBacklog(), t.fixedDonePerSec());
    }

    private static void printSummary(PrintStream out, Result r) {
        Config c = r.config();
        double after = c.seconds() - r.stepAt();
        out.println();
        out.printf(Locale.ROOT, "Summary: %d calls offered in %s s (%s/s); \"!\" above marks a run-time p99 over the"
                + " %s ms target%n", r.offered(), fmt(c.seconds()), fmt(c.offered()), fmt(c.targetMs()));
        String fixedName = "newFixedThreadPool(" + c.slots() + ")";
        out.printf(Locale.ROOT, "  %-44s %18s %22s%n", "", "PowerFlowExecutor", fixedName);
        row(out, "completed", count(r.flowRun().completed()), count(r.fixedRun().completed()));
        row(out, "  per second after the step", rate(r.flowAfter().completed() / after),
                rate(r.fixedAfter().completed() / after));
        row(out, "refused at submit (late, or queue full)", count(r.flowRefused()), "0 (queue unbounded)");
        row(out, "shed from the queue (waited past the budget)", count(r.flowShed()), "0");
        row(out, "still queued at the end", count(r.flowQueuedAtEnd()), count(r.fixedBacklogAtEnd()));
        row(out, "  oldest queued task's age at the end", "-", ms(r.fixedOldestQueuedMs()));
        row(out, "end-to-end p99 (submit to done), whole run", ms(r.flowRun().e2eP99()), ms(r.fixedRun().e2eP99()));
        row(out, "  after the step", ms(r.flowAfter().e2eP99()), ms(r.fixedAfter().e2eP99()));
        row(out, "  after the step, p50", ms(r.flowAfter().e2eP50()), ms(r.fixedAfter().e2eP50()));
        row(out, "downstream call p99 (slot wait + service)", ms(r.flowRun().callP99()), ms(r.fixedRun().callP99()));
        row(out, "  after the step", ms(r.flowAfter().callP99()), ms(r.fixedAfter().callP99()));
        if (r.flowRejectedOther() > 0) {
            out.printf(Locale.ROOT, "  (%d further submissions were refused by the executor for another reason)%n",
                    r.flowRejectedOther());
        }
    }

    private static void row(PrintStream out, String label, String flow, String fixed) {
        out.printf(Locale.ROOT, "  %-44s %18s %22s%n", label, flow, fixed);
    }

    private static String count(long v) {
        return Long.toString(v);
    }

    private static String rate(double v) {
        return String.format(Locale.ROOT, "%.0f/s", v);
    }

    /** A latency in ms, compact: "83 ms", "1.24 s", "12.3 s"; "-" for NaN. */
    static String ms(double millis) {
        if (Double.isNaN(millis)) {
            return "-";
        }
        if (millis < 10) {
            return String.format(Locale.ROOT, "%.1f ms", millis);
        }
        if (millis < 1000) {
            return String.format(Locale.ROOT, "%.0f ms", millis);
        }
        if (millis < 10_000) {
            return String.format(Locale.ROOT, "%.2f s", millis / 1000);
        }
        return String.format(Locale.ROOT, "%.1f s", millis / 1000);
    }

    /** A number without a trailing ".0". */
    static String fmt(double v) {
        return Double.isFinite(v) ? new java.math.BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString()
                : Double.toString(v);
    }

    // ---------------------------------------------------------------- load

    /** A task: one downstream call, timed from its submission. */
    record Job(long submittedNanos, SimulatedDownstream downstream, LatencyRecorder recorder) implements Runnable {
        @Override
        public void run() {
            try {
                SimulatedDownstream.Call call = downstream.call();
                recorder.record(System.nanoTime() - submittedNanos, call.latencyNanos());
            } catch (InterruptedException e) {
                // The run is over (shutdownNow): the call is abandoned and not counted.
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Open-loop Poisson arrivals at {@code config.offered()}, paced by its own clock (not by
     * either executor): an arrival that is due is submitted to both contenders at once, and a
     * late wake-up submits every arrival that fell due meanwhile, so the offered rate holds even
     * when the thread is scheduled late.
     */
    static final class LoadGenerator implements Runnable {
        private final SplittableRandom random;
        private final double meanGapNanos;
        private final long t0;
        private final long end;
        private final PowerFlowExecutor flow;
        private final ExecutorService fixed;
        private final SimulatedDownstream flowDownstream;
        private final SimulatedDownstream fixedDownstream;
        private final LatencyRecorder flowRec;
        private final LatencyRecorder fixedRec;
        private final AtomicLong offered = new AtomicLong();
        private final AtomicLong flowRejected = new AtomicLong();
        private volatile boolean stopped;

        LoadGenerator(Config c, long t0, PowerFlowExecutor flow, ExecutorService fixed,
                SimulatedDownstream flowDownstream, SimulatedDownstream fixedDownstream,
                LatencyRecorder flowRec, LatencyRecorder fixedRec) {
            this.random = new SplittableRandom(c.seed());
            this.meanGapNanos = 1e9 / c.offered();
            this.t0 = t0;
            this.end = t0 + TimeUnit.MILLISECONDS.toNanos(c.tickMs()) * c.ticks();
            this.flow = flow;
            this.fixed = fixed;
            this.flowDownstream = flowDownstream;
            this.fixedDownstream = fixedDownstream;
            this.flowRec = flowRec;
            this.fixedRec = fixedRec;
        }

        @Override
        public void run() {
            double next = t0;
            while (!stopped) {
                long due = (long) next;
                if (due - end >= 0) {
                    return;
                }
                long now = System.nanoTime();
                if (due - now > 0) {
                    LockSupport.parkNanos(due - now);
                    continue;
                }
                offered.incrementAndGet();
                try {
                    // submit(), as a caller that waits for a Future would: a task that waited past
                    // the budget is shed from the queue (its Future fails with ShedException).
                    flow.submit(new Job(due, flowDownstream, flowRec));
                } catch (RejectedExecutionException e) {
                    flowRejected.incrementAndGet();
                }
                fixed.execute(new Job(due, fixedDownstream, fixedRec));
                next += random.nextExponential() * meanGapNanos;
            }
        }

        void stop() {
            stopped = true;
        }

        long offered() {
            return offered.get();
        }

        long flowRejected() {
            return flowRejected.get();
        }
    }
}
