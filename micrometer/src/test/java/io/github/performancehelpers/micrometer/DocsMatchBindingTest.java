package io.github.performancehelpers.micrometer;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The documentation shows the binding's tested code: every fenced block that follows a
 * {@code <!-- micrometer-snippet: NAME -->} line in {@code docs/observability.md} (which must have
 * one) and in {@code README.md} (wherever it carries the marker) equals the region NAME of
 * {@link MicrometerMetricsCollectorTest}, which is compiled and run. (The library's own
 * {@code <!-- snippet: NAME -->} markers are checked by the library's build against its own
 * snippets; this marker is a different one, so neither build reads the other's.) Surefire runs
 * with this module's directory as working directory; the repository's root is its parent.
 */
class DocsMatchBindingTest {

    private static final Path ROOT = Path.of("..");
    private static final Path TEST =
            Path.of("src/test/java/io/github/performancehelpers/micrometer/MicrometerMetricsCollectorTest.java");
    private static final String MARKER = "<!-- micrometer-snippet:";

    /** docs/observability.md shows the binding, identical to the tested region. */
    @Test
    void observabilityDocsShowTheTestedBinding() throws IOException {
        List<String[]> blocks = markedBlocks(ROOT.resolve("docs/observability.md"));
        assertFalse(blocks.isEmpty(), "docs/observability.md has no " + MARKER + " block");
        for (String[] b : blocks) {
            assertEquals(region(b[0]), b[1], "docs/observability.md, snippet " + b[0]);
        }
    }

    /** Every marked block of README.md (none is required) is identical to its tested region. */
    @Test
    void readmeMarkedBlocksEqualTheTestedRegions() throws IOException {
        for (String[] b : markedBlocks(ROOT.resolve("README.md"))) {
            assertEquals(region(b[0]), b[1], "README.md, snippet " + b[0]);
        }
    }

    /** The text of region {@code name}: the lines between its start and end markers, dedented. */
    static String region(String name) throws IOException {
        List<String> lines = Files.readAllLines(TEST, StandardCharsets.UTF_8);
        int start = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).strip().equals("// @start region=\"" + name + "\"")) {
                start = i;
                break;
            }
        }
        assertTrue(start >= 0, "no region " + name + " in " + TEST);
        List<String> body = new ArrayList<>();
        for (String l : lines.subList(start + 1, lines.size())) {
            if (l.strip().equals("// @end")) {
                int indent = body.stream().filter(b -> !b.isBlank())
                        .mapToInt(b -> b.length() - b.stripLeading().length()).min().orElse(0);
                return body.stream().map(b -> b.isBlank() ? "" : b.substring(indent)).collect(Collectors.joining("\n"));
            }
            body.add(l);
        }
        throw new AssertionError("region " + name + " has no // @end");
    }

    /** The fenced blocks that follow a marker, as {name, text}, in file order. */
    static List<String[]> markedBlocks(Path markdown) throws IOException {
        List<String[]> blocks = new ArrayList<>();
        if (!Files.exists(markdown)) {
            return blocks;
        }
        List<String> lines = Files.readAllLines(markdown, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).strip();
            if (l.startsWith(MARKER) && l.endsWith("-->")) {
                String name = l.substring(MARKER.length(), l.length() - "-->".length()).strip();
                int open = i + 1;
                assertTrue(open < lines.size() && lines.get(open).startsWith("```"),
                        markdown + ":" + (i + 1) + ": marker " + name + " not followed by a code fence");
                int close = open + 1;
                while (close < lines.size() && !lines.get(close).startsWith("```")) {
                    close++;
                }
                blocks.add(new String[] {name, String.join("\n", lines.subList(open + 1, close))});
            }
        }
        return blocks;
    }
}
