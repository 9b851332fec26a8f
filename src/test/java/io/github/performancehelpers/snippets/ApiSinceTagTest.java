package io.github.performancehelpers.snippets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.limit.Take;

/**
 * Every public top-level type of the exported packages says in its Javadoc since which version it
 * exists ({@code @since}), as the versioning policy (CHANGELOG.md) promises. A new public type
 * gets {@code @since} with the version it first ships in.
 */
class ApiSinceTagTest {

    private static final Path API = Path.of("src/main/java/io/github/performancehelpers");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^public (?:final |abstract |sealed |non-sealed )*(?:class|interface|enum|record|@interface) ",
            Pattern.MULTILINE);

    /** Each public top-level type's class Javadoc has an @since tag. */
    @Test
    void everyPublicApiTypeHasSince() throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(API)) {
            // Every exported package: all but the internal one, which is not API.
            sources = files.filter(f -> f.toString().endsWith(".java"))
                    .filter(f -> !API.relativize(f).startsWith("internal")).sorted().toList();
        }
        int publicTypes = 0;
        for (Path source : sources) {
            String text = Files.readString(source, StandardCharsets.UTF_8);
            Matcher m = PUBLIC_TYPE.matcher(text);
            if (source.getFileName().toString().equals("package-info.java")) {
                assertTrue(text.contains("@since"), source + " has no @since");
                continue;
            }
            if (!m.find()) {
                continue; // package-private: not API
            }
            publicTypes++;
            String head = text.substring(0, m.start());
            int docStart = head.lastIndexOf("/**");
            assertTrue(docStart >= 0, source + ": no class Javadoc");
            String doc = head.substring(docStart, head.indexOf("*/", docStart));
            assertTrue(doc.contains("@since "), source + ": class Javadoc has no @since tag");
        }
        assertTrue(publicTypes >= 20, "found only " + publicTypes + " public types in " + API);
    }

    /** The pattern sees a public top-level type and ignores a package-private one. */
    @Test
    void patternRecognisesPublicTopLevelTypesOnly() {
        assertTrue(PUBLIC_TYPE.matcher("/** x */\npublic final class A {").find());
        assertTrue(PUBLIC_TYPE.matcher("public record Take(boolean ok) {").find());
        assertEquals(false, PUBLIC_TYPE.matcher("final class ConcurrencyLimit {\n    public static class B {").find());
    }
}
