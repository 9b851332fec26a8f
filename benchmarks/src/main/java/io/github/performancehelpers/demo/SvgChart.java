package io.github.performancehelpers.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import io.github.performancehelpers.PowerFlowExecutor;

/**
 * Draws the demo's chart as a self-contained SVG (no dependency): the top panel shows rates
 * (the executor's rate limit, what each contender completed per second, what the executor
 * refused per second, the offered load and the downstream's capacity), the bottom panel p99
 * latencies on a log scale (the loop's window p99, both contenders' end-to-end p99, the target). A dashed vertical line marks the capacity
 * step in both.
 */
final class SvgChart {

    private static final String FLOW = "#1f6fb4";
    private static final String FIXED = "#e8710a";
    private static final String TARGET = "#c62828";
    private static final String REFUSED = "#8e24aa";
    private static final String GRID = "#e6e6e6";
    private static final String INK = "#333333";
    private static final String MUTED = "#777777";

    private static final int WIDTH = 1080;
    private static final int LEFT = 80;
    private static final int RIGHT = 250;
    private static final int PLOT_W = WIDTH - LEFT - RIGHT;
    private static final int TOP1 = 100;
    private static final int H1 = 230;
    private static final int TOP2 = TOP1 + H1 + 70;
    private static final int H2 = 250;
    private static final int HEIGHT = TOP2 + H2 + 60;

    private final StringBuilder svg = new StringBuilder(32 * 1024);
    private final Demo.Result r;
    private final double xMax;

    private SvgChart(Demo.Result r) {
        this.r = r;
        this.xMax = r.config().ticks() * r.config().tickMs() / 1000.0;
    }

    static void write(Demo.Result result, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, render(result), StandardCharsets.UTF_8);
    }

    static String render(Demo.Result result) {
        return new SvgChart(result).draw();
    }

    private String draw() {
        Demo.Config c = r.config();
        List<Demo.Tick> ticks = r.ticks();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">%n",
                WIDTH, HEIGHT, WIDTH, HEIGHT, WIDTH, HEIGHT));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        text(LEFT, 30, "start", 19, INK, "bold", "PowerFlowExecutor vs newFixedThreadPool(" + c.slots()
                + "): the downstream loses half its capacity");
        text(LEFT, 72, "start", 13, MUTED, "normal", "executor: " + c.lawLabel());
        text(LEFT, 54, "start", 13, MUTED, "normal", String.format(Locale.ROOT,
                "%s calls/s offered to each; downstream: %d slots x %s ms median service (~%.0f/s),"
                        + " %d slots (~%.0f/s) from t=%s s; target p99 %s ms",
                Demo.fmt(c.offered()), c.slots(), Demo.fmt(c.medianMs()), r.capacityBefore(), c.slotsAfterStep(),
                r.capacityAfter(), Demo.fmt(r.stepAt()), Demo.fmt(c.targetMs())));

        // ---- top panel: rates, linear
        double rateMax = Math.max(c.offered(), r.capacityBefore());
        for (Demo.Tick t : ticks) {
            rateMax = Math.max(rateMax, Math.max(Math.min(t.rate(), 2 * c.offered()),
                    Math.max(t.flowDonePerSec(), Math.max(t.fixedDonePerSec(), t.refusedPerSec()))));
        }
        rateMax = niceCeil(rateMax * 1.05);
        Axis rates = new Axis(TOP1, H1, 0, rateMax, false);
        frame(TOP1, H1, "calls per second");
        for (double v : niceTicks(rateMax)) {
            gridY(rates.y(v), String.format(Locale.ROOT, "%.0f", v));
        }
        // capacity: a shaded step
        double yBefore = rates.y(r.capacityBefore());
        double yAfter = rates.y(r.capacityAfter());
        svg.append(String.format(Locale.ROOT,
                "<path d=\"M%.1f %.1f V%.1f H%.1f V%.1f H%.1f V%.1f Z\" fill=\"#f1f1f1\" stroke=\"none\"/>%n",
                x(0), (double) TOP1 + H1, yBefore, x(r.stepAt()), yAfter, x(xMax), (double) TOP1 + H1));
        svg.append(String.format(Locale.ROOT,
                "<path d=\"M%.1f %.1f H%.1f V%.1f H%.1f\" fill=\"none\" stroke=\"#9e9e9e\" stroke-width=\"1.5\"/>%n",
                x(0), yBefore, x(r.stepAt()), yAfter, x(xMax)));
        hline(rates.y(c.offered()), "#555555", "6 4", 1.5);
        series(ticks, Demo.Tick::fixedDonePerSec, rates, FIXED, 1.8, null, 0.9);
        series(ticks, Demo.Tick::flowDonePerSec, rates, FLOW, 1.8, "2 3", 0.9);
        // An open rate (no limit in force) is drawn at the panel's top edge.
        double rateTop = rateMax;
        series(ticks, t -> Math.min(t.rate(), rateTop), rates, FLOW, 3, null, 1);
        series(ticks, Demo.Tick::refusedPerSec, rates, REFUSED, 1.8, null, 0.9);
        stepMarker(TOP1, H1, "capacity halves");
        legend(TOP1, new String[][] {
            {FLOW, "", "3", "PowerFlowExecutor: rate"},
            {FLOW, "2 3", "1.8", "PowerFlowExecutor: done/s"},
            {REFUSED, "", "1.8", "PowerFlowExecutor: refused/s"},
            {FIXED, "", "1.8", "fixed pool: done/s"},
            {"#555555", "6 4", "1.5", "offered load"},
            {"#9e9e9e", "", "1.5", "downstream capacity"},
        });

        // ---- bottom panel: p99 latency, log scale
        double latMin = 10;
        double latMax = Math.max(c.targetMs() * 2, 100);
        for (Demo.Tick t : ticks) {
            for (double v : new double[] {t.loopP99(), t.flowE2eP99(), t.fixedE2eP99()}) {
                if (!Double.isNaN(v)) {
                    latMax = Math.max(latMax, v);
                    latMin = Math.min(latMin, v);
                }
            }
        }
        latMin = Math.pow(10, Math.floor(Math.log10(Math.max(latMin, 0.1))));
        latMax = Math.pow(10, Math.ceil(Math.log10(latMax)));
        Axis lat = new Axis(TOP2, H2, latMin, latMax, true);
        frame(TOP2, H2, "p99 latency (log scale)");
        for (double v = latMin; v <= latMax * 1.0001; v *= 10) {
            gridY(lat.y(v), v < 1000 ? Demo.fmt(v) + " ms" : Demo.fmt(v / 1000) + " s");
            for (int m = 2; m < 10 && v * m < latMax; m++) {
                double y = lat.y(v * m);
                svg.append(String.format(Locale.ROOT,
                        "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#f4f4f4\"/>%n",
                        LEFT, LEFT + PLOT_W, y, y));
            }
        }
        hline(lat.y(c.targetMs()), TARGET, "7 4", 1.8);
        series(ticks, Demo.Tick::fixedE2eP99, lat, FIXED, 3, null, 1);
        series(ticks, Demo.Tick::flowE2eP99, lat, FLOW, 1.8, "2 3", 0.9);
        series(ticks, Demo.Tick::loopP99, lat, FLOW, 3, null, 1);
        stepMarker(TOP2, H2, "capacity halves");
        legend(TOP2, new String[][] {
            {FLOW, "", "3", "PowerFlowExecutor: p99 run"},
            {FLOW, "2 3", "1.8", "PowerFlowExecutor: p99 e2e"},
            {FIXED, "", "3", "fixed pool: p99 e2e"},
            {TARGET, "7 4", "1.8", "target p99 " + Demo.fmt(c.targetMs()) + " ms"},
        });

        // ---- x axis, under each panel
        for (int top : new int[] {TOP1 + H1, TOP2 + H2}) {
            for (double v : niceTicks(xMax)) {
                svg.append(String.format(Locale.ROOT,
                        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\"/>%n", x(v), x(v), top, top + 5,
                        MUTED));
                text(x(v), top + 19, "middle", 12, MUTED, "normal", Demo.fmt(v) + " s");
            }
        }
        text(LEFT + PLOT_W / 2.0, HEIGHT - 14, "middle", 13, MUTED, "normal", "time since the load started");
        text(LEFT + PLOT_W + 18, TOP2 + H2 - 30, "start", 11, MUTED, "normal", "run: the task on the pool, what the");
        text(LEFT + PLOT_W + 18, TOP2 + H2 - 16, "start", 11, MUTED, "normal", "loop acts on; e2e: submit to done");
        svg.append("</svg>\n");
        return svg.toString();
    }

    // ---------------------------------------------------------------- pieces

    private record Axis(int top, int height, double min, double max, boolean log) {
        double y(double v) {
            double f = log ? (Math.log10(Math.max(v, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))
                    : (v - min) / (max - min);
            f = Math.max(0, Math.min(1, f));
            return top + height - f * height;
        }
    }

    private double x(double t) {
        return LEFT + PLOT_W * Math.max(0, Math.min(1, t / xMax));
    }

    private void frame(int top, int height, String title) {
        svg.append(String.format(Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#cccccc\"/>%n",
                LEFT, top, PLOT_W, height));
        text(LEFT, top - 10, "start", 14, INK, "bold", title);
    }

    private void gridY(double y, String label) {
        svg.append(String.format(Locale.ROOT,
                "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>%n", LEFT, LEFT + PLOT_W, y, y, GRID));
        text(LEFT - 8, y + 4, "end", 12, MUTED, "normal", label);
    }

    private void hline(double y, String color, String dash, double width) {
        svg.append(String.format(Locale.ROOT,
                "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\""
                        + " stroke-dasharray=\"%s\"/>%n", LEFT, LEFT + PLOT_W, y, y, color, width, dash));
    }

    private void stepMarker(int top, int height, String label) {
        double sx = x(r.stepAt());
        svg.append(String.format(Locale.ROOT,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#555555\" stroke-width=\"1.2\""
                        + " stroke-dasharray=\"3 3\"/>%n", sx, sx, top, top + height));
        text(sx + 5, top + 15, "start", 12, "#555555", "normal", label);
    }

    /** One polyline per run of defined (non-NaN) points. */
    private void series(List<Demo.Tick> ticks, ToDoubleFunction<Demo.Tick> f, Axis axis, String color, double width,
            String dash, double opacity) {
        StringBuilder points = new StringBuilder();
        for (Demo.Tick t : ticks) {
            double v = f.applyAsDouble(t);
            if (Double.isNaN(v)) {
                polyline(points, color, width, dash, opacity);
                points.setLength(0);
                continue;
            }
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(t.t()), axis.y(v)));
        }
        polyline(points, color, width, dash, opacity);
    }

    private void polyline(CharSequence points, String color, double width, String dash, double opacity) {
        if (points.isEmpty()) {
            return;
        }
        svg.append(String.format(Locale.ROOT,
                "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-opacity=\"%s\""
                        + " stroke-linejoin=\"round\" stroke-linecap=\"round\"%s/>%n",
                points.toString().trim(), color, width, opacity,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\""));
    }

    /** Entries: {color, dash ("" for solid), width, label}. */
    private void legend(int top, String[][] entries) {
        int lx = LEFT + PLOT_W + 18;
        int y = top + 12;
        for (String[] e : entries) {
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\"%s/>%n",
                    lx, lx + 26, y - 4, y - 4, e[0], e[2],
                    e[1].isEmpty() ? "" : " stroke-dasharray=\"" + e[1] + "\""));
            text(lx + 32, y, "start", 12, INK, "normal", e[3]);
            y += 22;
        }
    }

    private void text(double x, double y, String anchor, int size, String color, String weight, String s) {
        svg.append(String.format(Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\" fill=\"%s\" font-weight=\"%s\">%s</text>%n",
                x, y, anchor, size, color, weight, escape(s)));
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    /** 1, 2 or 5 times a power of ten, at or above v. */
    private static double niceCeil(double v) {
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    /** About five round ticks from 0 to max. */
    private static double[] niceTicks(double max) {
        double raw = max / 5;
        double p = Math.pow(10, Math.floor(Math.log10(raw)));
        double step = raw / p < 1.5 ? p : raw / p < 3.5 ? 2 * p : raw / p < 7.5 ? 5 * p : 10 * p;
        int n = (int) Math.floor(max / step + 1e-9);
        double[] out = new double[n + 1];
        for (int i = 0; i <= n; i++) {
            out[i] = i * step;
        }
        return out;
    }
}
