package io.github.performancehelpers.snippets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What the README claims about itself: its coordinates are the ones the build installs (its own
 * install step, {@code mvn install}, puts this version in the local repository), and every Java
 * block in it is a tested one (marked for {@link DocsMatchSnippetsTest}, or for the Micrometer
 * module's {@code DocsMatchBindingTest}).
 */
class ReadmeIsTrueTest {

    private static final Path README = Path.of("README.md");

    /** The project's own version, from pom.xml (the first version after its artifactId). */
    private static String projectVersion() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"));
        Matcher m = Pattern.compile("<artifactId>performance-helpers</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(pom);
        assertTrue(m.find(), "pom.xml names its version after its artifactId");
        return m.group(1);
    }

    @Test
    void theDependencyResolvesAfterTheReadmesInstallStep() throws IOException {
        String readme = Files.readString(README);
        String version = projectVersion();
        Matcher maven = Pattern.compile("<artifactId>performance-helpers</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(readme);
        assertTrue(maven.find(), "the README has a Maven dependency");
        assertEquals(version, maven.group(1), "the README's Maven version");
        Matcher gradle = Pattern.compile("io\\.github\\.performancehelpers:performance-helpers:([^\")]+)").matcher(readme);
        assertTrue(gradle.find(), "the README has a Gradle coordinate");
        assertEquals(version, gradle.group(1), "the README's Gradle version");
    }

    @Test
    void everyJavaBlockIsATestedOne() throws IOException {
        List<String> lines = Files.readAllLines(README);
        List<Integer> untested = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).strip().equals("```java")) {
                String before = i > 0 ? lines.get(i - 1).strip() : "";
                if (!before.startsWith("<!-- snippet:") && !before.startsWith("<!-- micrometer-snippet:")) {
                    untested.add(i + 1);
                }
            }
        }
        assertEquals(List.of(), untested, "README.md lines opening a Java block no test compiles");
    }
}
