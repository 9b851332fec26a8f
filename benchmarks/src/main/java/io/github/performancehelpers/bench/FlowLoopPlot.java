package io.github.performancehelpers.bench;

import io.github.performancehelpers.bench.FlowLoopSimulation.Config;
import io.github.performancehelpers.bench.FlowLoopSimulation.Result;
import io.github.performancehelpers.bench.FlowLoopSimulation.Tick;
import java.util.List;
import java.util.Locale;
import io.github.performancehelpers.loop.PowerFlowController;

/**
 * Renders the flowloop runs as a self-contained SVG (no dependency): two stacked panels sharing
 * the time axis — the rate in force (ops/s, log scale) and the p99 of each tick's window (ms, log
 * scale) — with the equilibrium and target lines, the capacity-step marker and a legend.
 */
final class FlowLoopPlot {

    private static final String[] COLORS = {
        "#555555", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#d62728", "#8c564b", "#e377c2",
    };

    private static final int WIDTH = 1200;
    private static final int LEFT = 80;
    private static final int PLOT_W = 760;
    private static final int PANEL_H = 300;
    private static final int TOP1 = 70;
    private static final int TOP2 = TOP1 + PANEL_H + 70;
    private static final int HEIGHT = TOP2 + PANEL_H + 70;

    private FlowLoopPlot() {
    }

    static String render(Config c, List<Result> results) {
        StringBuilder s = new StringBuilder(64 * 1024);
        double tMax = 2 * c.ticksPerHalf() * c.dtMs() / 1000;
        s.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">%n",
                WIDTH, HEIGHT, WIDTH, HEIGHT));
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        text(s, LEFT, 28, String.format(Locale.ROOT,
                "PowerFlowController on the seed's plant: latency = %.0f ms + (rate / cap) × %.0f ms, target %.0f ms",
                c.baseMs(), c.slopeMs(), c.targetMs()), "start", 16, "bold");
        text(s, LEFT, 48, String.format(Locale.ROOT,
                "cap %.0f for %d s, then %.0f; dt %.0f ms; minRate %.0f, maxRate %.0f; deterministic (fake clock)",
                c.capBefore(), Math.round(c.ticksPerHalf() * c.dtMs() / 1000), c.capAfter(), c.dtMs(), c.minRate(),
                c.maxRate()), "start", 12, "normal");

        // Panel 1: the rate in force.
        Axis rate = new Axis(TOP1, 3, 1000);
        panel(s, rate, tMax, "rate in force (ops/s, log scale)", new double[] {5, 10, 20, 50, 100, 200, 500, 1000});
        double eq1 = c.equilibrium(c.capBefore());
        double eq2 = c.equilibrium(c.capAfter());
        double tDrop = c.ticksPerHalf() * c.dtMs() / 1000;
        refLine(s, x(0, tMax), rate.y(eq1), x(tDrop, tMax), rate.y(eq1),
                String.format(Locale.ROOT, "equilibrium %.1f/s", eq1), "#000", true);
        refLine(s, x(tDrop, tMax), rate.y(eq2), x(tMax, tMax), rate.y(eq2),
                String.format(Locale.ROOT, "equilibrium %.1f/s", eq2), "#000", false);
        refLine(s, x(0, tMax), rate.y(c.maxRate()), x(tMax, tMax), rate.y(c.maxRate()), "maxRate", "#999", false);
        refLine(s, x(0, tMax), rate.y(c.minRate()), x(tMax, tMax), rate.y(c.minRate()), "minRate", "#999", false);

        // Panel 2: the p99 of each tick's window.
        Axis p99 = new Axis(TOP2, 4, 700);
        panel(s, p99, tMax, "p99 of each tick's window (ms, log scale)", new double[] {5, 10, 20, 30, 50, 100, 200, 500});
        refLine(s, x(0, tMax), p99.y(c.targetMs()), x(tMax, tMax), p99.y(c.targetMs()),
                String.format(Locale.ROOT, "target %.0f ms", c.targetMs()), "#000", false);

        // The capacity step, across both panels.
        double xd = x(tDrop, tMax);
        s.append(String.format(Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\" stroke-width=\"1.2\" stroke-dasharray=\"2,3\"/>%n",
                xd, TOP1 - 6, xd, TOP2 + PANEL_H));
        text(s, xd + 5, TOP1 + 14, String.format(Locale.ROOT, "capacity %.0f → %.0f", c.capBefore(), c.capAfter()),
                "start", 12, "bold");

        // Series: unstable arms first, so the stable ones are drawn on top.
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < results.size(); i++) {
                Result r = results.get(i);
                boolean emphasised = emphasised(r);
                if ((pass == 1) != emphasised) {
                    continue;
                }
                String color = COLORS[i % COLORS.length];
                double width = emphasised ? 2.4 : 1.2;
                String dash = r.arm().fixed() ? " stroke-dasharray=\"7,4\"" : "";
                String opacity = emphasised ? "1" : "0.75";
                StringBuilder pr = new StringBuilder();
                StringBuilder pp = new StringBuilder();
                double dt = c.dtMs() / 1000;
                for (Tick t : r.ticks()) {
                    double t0 = t.index() * dt;
                    double t1 = t0 + dt;
                    pr.append(String.format(Locale.ROOT, "%.1f,%.1f %.1f,%.1f ", x(t0, tMax), rate.y(t.rateBefore()),
                            x(t1, tMax), rate.y(t.rateBefore())));
                    if (!Double.isNaN(t.p99())) {
                        pp.append(String.format(Locale.ROOT, "%.1f,%.1f %.1f,%.1f ", x(t0, tMax), p99.y(t.p99()),
                                x(t1, tMax), p99.y(t.p99())));
                    }
                }
                for (StringBuilder pts : new StringBuilder[] {pr, pp}) {
                    s.append(String.format(Locale.ROOT,
                            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" stroke-opacity=\"%s\"%s"
                                    + " stroke-linejoin=\"round\" points=\"%s\"/>%n",
                            color, width, opacity, dash, pts.toString().trim()));
                }
            }
        }

        // Legend.
        int lx = LEFT + PLOT_W + 30;
        int ly = TOP1 + 10;
        text(s, lx, ly, "arms (kp, ki)", "start", 13, "bold");
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            int yy = ly + 24 + i * 38;
            String dash = r.arm().fixed() ? " stroke-dasharray=\"7,4\"" : "";
            s.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>%n",
                    lx, yy - 4, lx + 28, yy - 4, COLORS[i % COLORS.length], emphasised(r) ? 2.4 : 1.4, dash));
            text(s, lx + 36, yy, r.arm().label(), "start", 12, emphasised(r) ? "bold" : "normal");
            text(s, lx + 36, yy + 15, legendNote(r, c), "start", 11, "normal");
        }
        text(s, lx, ly + 24 + results.size() * 38 + 6, "bold: reaches the new equilibrium", "start", 11, "normal");
        s.append("</svg>\n");
        return s.toString();
    }

    private static boolean emphasised(Result r) {
        return r.arm().fixed() || r.eqError() < 0.1;
    }

    private static String legendNote(Result r, Config c) {
        if (r.arm().fixed()) {
            return String.format(Locale.ROOT, "fixed %.1f/s, p99 %.1f ms after the drop", r.finalRate(), r.meanP99());
        }
        return String.format(Locale.ROOT, "ends %.1f/s, settles %s", r.finalRate(),
                r.settles().isPresent() ? "at tick " + r.settles().getAsInt() : "never");
    }

    private static double x(double t, double tMax) {
        return LEFT + t / tMax * PLOT_W;
    }

    /** A log-scale vertical axis for one panel. */
    private record Axis(int top, double lo, double hi) {
        double y(double v) {
            double clamped = Math.max(lo, Math.min(hi, v));
            double f = (Math.log(clamped) - Math.log(lo)) / (Math.log(hi) - Math.log(lo));
            return top + PANEL_H - f * PANEL_H;
        }
    }

    private static void panel(StringBuilder s, Axis a, double tMax, String label, double[] ticks) {
        s.append(String.format(Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>%n",
                LEFT, a.top(), PLOT_W, PANEL_H));
        for (double v : ticks) {
            double yy = a.y(v);
            s.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>%n", LEFT, yy, LEFT + PLOT_W, yy));
            text(s, LEFT - 6, yy + 4, fmt(v), "end", 11, "normal");
        }
        for (int t = 0; t <= (int) tMax; t += 10) {
            double xx = x(t, tMax);
            s.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>%n", xx, a.top(), xx,
                    a.top() + PANEL_H));
            text(s, xx, a.top() + PANEL_H + 16, Integer.toString(t), "middle", 11, "normal");
        }
        text(s, LEFT + PLOT_W / 2.0, a.top() + PANEL_H + 34, "time (s)", "middle", 12, "normal");
        double cy = a.top() + PANEL_H / 2.0;
        s.append(String.format(Locale.ROOT,
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 %d %.1f)\">%s</text>%n",
                LEFT - 50, cy, LEFT - 50, cy, label));
    }

    private static void refLine(StringBuilder s, double x1, double y1, double x2, double y2, String label,
            String color, boolean labelLeft) {
        s.append(String.format(Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\""
                        + " stroke-dasharray=\"5,4\"/>%n",
                x1, y1, x2, y2, color));
        text(s, labelLeft ? x1 + 4 : x2 - 4, y1 - 4, label, labelLeft ? "start" : "end", 11, "normal");
    }

    private static void text(StringBuilder s, double x, double y, String t, String anchor, int size, String weight) {
        s.append(String.format(Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\" font-weight=\"%s\">%s</text>%n",
                x, y, anchor, size, weight, escape(t)));
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String escape(String t) {
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
