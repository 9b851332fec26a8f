package io.github.performancehelpers.snippets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.limit.PowerGCRA;

/**
 * The markdown copies of the Javadoc snippets cannot drift: every fenced code block that follows a
 * {@code <!-- snippet: NAME -->} line in docs/release.md (and in README.md, wherever it carries the
 * marker) must equal the region NAME of {@link DocSnippetsTest}, which is compiled and run.
 * Surefire runs with the project directory as working directory.
 */
class DocsMatchSnippetsTest {

    private static final Path SNIPPETS =
            Path.of("src/test/java/io/github/performancehelpers/snippets/DocSnippetsTest.java");

    /** docs/release.md carries every snippet, each identical to its tested region. */
    @Test
    void releaseDocsBlocksEqualTheTestedRegions() throws IOException {
        Map<String, String> blocks = markedBlocks(Path.of("docs/release.md"));
        assertEquals(List.of("quickstart", "fixedpool", "gcra"), List.copyOf(blocks.keySet()));
        blocks.forEach((name, block) -> assertEquals(region(name), block, "docs/release.md, snippet " + name));
    }

    /** Every marked block of README.md (none is required) is identical to its tested region. */
    @Test
    void readmeMarkedBlocksEqualTheTestedRegions() throws IOException {
        markedBlocks(Path.of("README.md"))
                .forEach((name, block) -> assertEquals(region(name), block, "README.md, snippet " + name));
    }

    /** The region reader finds both regions, without markup lines and with the indentation removed. */
    @Test
    void regionsAreReadWithoutMarkupAndIndentation() {
        String quickstart = region("quickstart");
        assertTrue(quickstart.startsWith("try (PowerFlowExecutor executor"), quickstart);
        assertFalse(quickstart.contains("@start") || quickstart.contains("@end"), quickstart);
        assertTrue(region("gcra").startsWith("PowerGCRA limiter"));
    }

    /** The text of region {@code name}: the lines between its start and end markers, dedented. */
    static String region(String name) {
        List<String> lines;
        try {
            lines = Files.readAllLines(SNIPPETS, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int start = lines.indexOf(lines.stream()
                .filter(l -> l.strip().equals("// @start region=\"" + name + "\"")).findFirst()
                .orElseThrow(() -> new AssertionError("no region " + name + " in " + SNIPPETS)));
        List<String> body = new ArrayList<>();
        for (String l : lines.subList(start + 1, lines.size())) {
            if (l.strip().equals("// @end")) {
                return dedent(body);
            }
            body.add(l);
        }
        throw new AssertionError("region " + name + " has no // @end");
    }

    /** The fenced blocks that follow a snippet marker, by name, in file order. */
    static Map<String, String> markedBlocks(Path markdown) throws IOException {
        Map<String, String> blocks = new LinkedHashMap<>();
        if (!Files.exists(markdown)) {
            return blocks;
        }
        List<String> lines = Files.readAllLines(markdown, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).strip();
            if (l.startsWith("<!-- snippet:") && l.endsWith("-->")) {
                String name = l.substring("<!-- snippet:".length(), l.length() - "-->".length()).strip();
                int open = i + 1;
                assertTrue(open < lines.size() && lines.get(open).startsWith("```"),
                        markdown + ":" + (i + 1) + ": marker " + name + " not followed by a code fence");
                int close = open + 1;
                while (close < lines.size() && !lines.get(close).startsWith("```")) {
                    close++;
                }
                blocks.put(name, String.join("\n", lines.subList(open + 1, close)));
            }
        }
        return blocks;
    }

    static String dedent(List<String> lines) {
        int indent = lines.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).collect(Collectors.joining("\n"));
    }
}
