package io.github.performancehelpers.demo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import io.github.performancehelpers.PowerFlowExecutor;

/**
 * The README's demo, run for 3 seconds with small numbers: it must complete work on both
 * contenders, print its lines and summary, write the chart, and leave no thread behind.
 * Assertions are deliberately generous: this proves the demo works, not how well the loop does.
 */
class DemoSmokeTest {

    /** A short run serves both contenders, prints a line per second and a summary, and writes a well-formed SVG. */
    @Test
    void aShortRunPrintsItsLinesAndWritesTheChart(@TempDir Path dir) throws Exception {
        Path svg = dir.resolve("sub").resolve("demo.svg");
        Demo.Config c = Demo.parse(new String[] {
            "--seconds", "3", "--offered", "100", "--slots", "4", "--median-ms", "5",
            "--target-ms", "50", "--tick-ms", "250", "--svg", svg.toString()});
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Demo.Result r;
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            r = Demo.run(c, out);
        }
        String printed = bytes.toString(StandardCharsets.UTF_8);

        assertTrue(r.offered() > 0, "offered");
        assertTrue(r.flowRun().completed() > 0, "PowerFlowExecutor completed some tasks");
        assertTrue(r.fixedRun().completed() > 0, "the fixed pool completed some tasks");
        assertEquals(12, r.ticks().size(), "one chart sample per 250 ms tick");
        long lines = printed.lines().filter(l -> l.matches("\\s+\\d+(\\.\\d+)?s .*")).count();
        assertTrue(lines >= 3, "a line per second (and one at the step):\n" + printed);
        assertTrue(printed.contains("loses half its slots"), printed);
        assertTrue(printed.contains("Summary"), printed);
        assertTrue(printed.contains("chart: " + svg.toAbsolutePath()), printed);

        String chart = Files.readString(svg);
        assertTrue(chart.startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""), "an SVG document");
        assertTrue(chart.strip().endsWith("</svg>"), "complete");
        assertTrue(chart.contains("<polyline"), "has data series");
        assertTrue(chart.contains("capacity halves"), "has the step marker");
        assertTrue(chart.contains("refused/s") && chart.contains("p99 e2e") && chart.contains("target p99"),
                "plots refusals and the end-to-end p99 beside the target");
        assertTrue(chart.contains("knee-aware law"), "says which law it runs");
        assertTrue(printed.contains("knee-aware law"), printed);
        assertTrue(!chart.contains("NaN"), "no NaN coordinates");
    }

    /** After run() returns, no thread the demo started is alive, so the demo's JVM exits by itself. */
    @Test
    void noDemoThreadOutlivesTheRun(@TempDir Path dir) throws Exception {
        Demo.Config c = Demo.parse(new String[] {
            "--seconds", "1", "--offered", "50", "--slots", "2", "--median-ms", "5",
            "--tick-ms", "250", "--svg", dir.resolve("demo.svg").toString()});
        Demo.run(c, new PrintStream(PrintStream.nullOutputStream(), true, StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (demoThreadAlive() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(!demoThreadAlive(), () -> "alive: " + Thread.getAllStackTraces().keySet());
    }

    /** Options parse into the config; --help gives null; a bad or unknown option names itself. */
    @Test
    void optionsParse() {
        Demo.Config c = Demo.parse(new String[] {"--seconds", "20", "--offered", "250", "--svg", "x.svg"});
        assertEquals(20, c.seconds());
        assertEquals(250, c.offered());
        assertEquals(Path.of("x.svg"), c.svg());
        assertEquals(Demo.Config.defaults().slots(), c.slots());
        assertEquals(Demo.Config.defaults(), Demo.parse(new String[] {""}), "an empty -Ddemo.args is the defaults");
        assertNull(Demo.parse(new String[] {"--help"}));
        assertEquals("knee", Demo.Config.defaults().law(), "the executor's defaults");
        assertEquals(1000, Demo.Config.defaults().tickMs());
        Demo.Config pi = Demo.parse(new String[] {"--law", "pi"});
        assertTrue(pi.pi());
        assertEquals(500, pi.tickMs(), "the PI gains' window");
        assertEquals("--law must be knee or pi: x",
                assertThrows(IllegalArgumentException.class, () -> Demo.parse(new String[] {"--law", "x"})).getMessage());
        assertEquals("--seconds must be finite and > 0: -1.0",
                assertThrows(IllegalArgumentException.class, () -> Demo.parse(new String[] {"--seconds", "-1"}))
                        .getMessage());
        assertEquals("unknown option: --nope",
                assertThrows(IllegalArgumentException.class, () -> Demo.parse(new String[] {"--nope", "1"}))
                        .getMessage());
    }

    private static boolean demoThreadAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().startsWith("demo-"));
    }
}
