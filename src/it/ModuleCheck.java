import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The build's check that the packaged jar works for Java users, run by {@code mvn verify} in the
 * {@code integration-test} phase (exec-maven-plugin, execution {@code module-check}) with the
 * toolchain's JDK, as a single-file program: {@code java src/it/ModuleCheck.java JAR SRC_IT WORK}.
 *
 * <ol>
 * <li>The jar's module descriptor, read with {@link ModuleFinder} and with
 *     {@code jar --describe-module}: an explicit (not automatic, not open) module
 *     {@code io.github.performancehelpers} that exports exactly its API packages, unqualified,
 *     opens nothing and requires exactly {@link #EXPECTED_REQUIRES}.</li>
 * <li>{@code src/it/consumer} (the named module {@code com.example.consumer}) compiles against the
 *     jar on the module path and runs there: exit status 0 within the time limit.</li>
 * <li>{@code src/it/internal-access} (a named module importing
 *     {@code io.github.performancehelpers.internal}) does NOT compile, and javac says why:
 *     the package "is not visible" because the library "does not export" it.</li>
 * <li>The consumer's code, without its module-info, compiles and runs on the class path.</li>
 * </ol>
 * Any failed check exits with status 1 and fails the build.
 */
public final class ModuleCheck {

    /** The library's module name. */
    static final String MODULE = "io.github.performancehelpers";
    /** The exported packages: the API, one package per concern. */
    static final Set<String> API_PACKAGES = Set.of("io.github.performancehelpers",
            "io.github.performancehelpers.limit", "io.github.performancehelpers.loop",
            "io.github.performancehelpers.backpressure", "io.github.performancehelpers.metrics");
    /** The package that must exist in the jar but stay unexported. */
    static final String INTERNAL_PACKAGE = "io.github.performancehelpers.internal";
    /**
     * The modules the library requires. Changing module-info's requires means changing this set,
     * and the JPMS section of the README (docs/release.md) with it.
     */
    static final Set<String> EXPECTED_REQUIRES = Set.of("java.base", "java.management", "jdk.jfr");
    /** A consumer that has not exited by then is a failure (a thread kept the JVM alive). */
    static final long RUN_TIMEOUT_SECONDS = 120;

    private static int checks;

    private ModuleCheck() {
    }

    /** What each check saw: printed when one fails, written beside the scratch files when all hold. */
    private static final StringBuilder REPORT = new StringBuilder();

    /**
     * Runs every check.
     *
     * @param args the library jar, the {@code src/it} folder, a scratch folder under target
     * @throws Exception if a check could not be carried out
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: ModuleCheck LIBRARY_JAR SRC_IT_DIR WORK_DIR");
        }
        Path jar = Path.of(args[0]).toAbsolutePath();
        Path srcIt = Path.of(args[1]).toAbsolutePath();
        Path work = Path.of(args[2]).toAbsolutePath();
        check(Files.isRegularFile(jar), "library jar missing: " + jar);
        deleteRecursively(work);
        Files.createDirectories(work);
        try {
            descriptor(jar);
            describeModule(jar);
            modulePathConsumer(jar, srcIt.resolve("consumer"), work);
            internalPackageIsNotVisible(jar, srcIt.resolve("internal-access"), work);
            classPathConsumer(jar, srcIt.resolve("consumer"), work);
        } catch (CheckFailed e) {
            System.err.print(REPORT);
            System.err.println("[module-check] FAILED: " + e.getMessage());
            System.exit(1);
        }
        // One line on success (mvn -q install stays quiet); what each check saw is in the report.
        Path report = work.resolve("module-check.txt");
        Files.writeString(report, REPORT);
        System.out.println("[module-check] OK: all " + checks + " checks hold for " + jar.getFileName() + " (" + report + ")");
    }

    /** The descriptor as the module system reads it. */
    static void descriptor(Path jar) {
        List<ModuleReference> found = new ArrayList<>(ModuleFinder.of(jar).findAll());
        check(found.size() == 1, "expected one module in the jar, found " + found.size());
        ModuleDescriptor d = found.get(0).descriptor();
        check(MODULE.equals(d.name()), "module name: " + d.name());
        check(!d.isAutomatic(), "the jar is an automatic module (module-info.class missing?)");
        check(!d.isOpen(), "the module is declared open");
        Set<String> exports = d.exports().stream().map(e -> e.source() + (e.isQualified() ? " to " + e.targets() : ""))
                .collect(Collectors.toCollection(TreeSet::new));
        check(exports.equals(API_PACKAGES), "exports: expected exactly " + API_PACKAGES + ", got " + exports);
        check(d.opens().isEmpty(), "opens: expected none, got " + d.opens());
        Set<String> requires = d.requires().stream().map(ModuleDescriptor.Requires::name)
                .collect(Collectors.toCollection(TreeSet::new));
        check(requires.equals(EXPECTED_REQUIRES), "requires: expected " + EXPECTED_REQUIRES + ", got " + requires
                + " (update ModuleCheck.EXPECTED_REQUIRES and the README's JPMS section together)");
        check(d.packages().contains(INTERNAL_PACKAGE),
                INTERNAL_PACKAGE + " is not in the jar, so the encapsulation check would prove nothing");
        check(d.uses().isEmpty() && d.provides().isEmpty(), "unexpected uses/provides: " + d.uses() + " " + d.provides());
        REPORT.append("[module-check] descriptor: " + d.toNameAndVersion() + " exports " + exports
                + ", requires " + requires + ", opens nothing, not automatic\n");
    }

    /** What {@code jar --describe-module} prints for the jar. */
    static void describeModule(Path jar) {
        Tool jarTool = Tool.run("jar", "--describe-module", "--file", jar.toString());
        check(jarTool.status == 0, "jar --describe-module failed:\n" + jarTool.output);
        String out = jarTool.output;
        REPORT.append("[module-check] jar --describe-module:\n" + out.indent(4));
        List<String> lines = out.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        check(lines.get(0).startsWith(MODULE + "@") || lines.get(0).startsWith(MODULE + " "),
                "first line names another module: " + lines.get(0));
        check(!out.contains("automatic"), "the jar tool calls the module automatic");
        for (String api : API_PACKAGES) {
            check(lines.contains("exports " + api), "no 'exports " + api + "' line");
        }
        check(lines.stream().filter(l -> l.startsWith("exports ")).count() == API_PACKAGES.size(),
                "an exports line for a package that is not API");
        check(lines.stream().noneMatch(l -> l.startsWith("opens ") || l.startsWith("open ")), "an opens line");
        check(lines.contains("contains " + INTERNAL_PACKAGE), "no 'contains " + INTERNAL_PACKAGE + "' line");
        check(lines.contains("requires java.base mandated"), "no 'requires java.base mandated' line");
    }

    /** The named consumer compiles and runs on the module path. */
    static void modulePathConsumer(Path jar, Path src, Path work) throws IOException, InterruptedException {
        Path classes = work.resolve("consumer-module");
        Tool javac = Tool.run("javac", concat(List.of("-Xlint:all", "-Werror", "-d", classes.toString(),
                "--module-path", jar.toString()), sources(src, true)));
        check(javac.status == 0, "the module-path consumer does not compile:\n" + javac.output);
        String modulePath = jar + java.io.File.pathSeparator + classes;
        String out = runJava(work, "consumer-module.log",
                "--module-path", modulePath, "-m", "com.example.consumer/com.example.consumer.Main");
        check(out.contains("consumer ok: named module com.example.consumer"), "unexpected output:\n" + out);
        REPORT.append("[module-check] module path: java --module-path " + modulePath
                + " -m com.example.consumer/com.example.consumer.Main\n" + out.indent(4));
    }

    /** A named module importing the internal package must not compile, for the right reason. */
    static void internalPackageIsNotVisible(Path jar, Path src, Path work) throws IOException {
        Tool javac = Tool.run("javac", concat(List.of("-d", work.resolve("internal-access").toString(),
                "--module-path", jar.toString()), sources(src, true)));
        check(javac.status != 0, "a module importing " + INTERNAL_PACKAGE + " compiled: it is exported or opened");
        check(javac.output.contains("package " + INTERNAL_PACKAGE + " is not visible"),
                "javac failed, but not with 'is not visible':\n" + javac.output);
        check(javac.output.contains("does not export it"),
                "javac failed, but not with 'does not export it':\n" + javac.output);
        REPORT.append("[module-check] internal package refused as expected (javac exit " + javac.status + "):\n"
                + javac.output.lines().filter(l -> l.contains("not visible") || l.contains("does not export"))
                        .collect(Collectors.joining("\n")).indent(4));
    }

    /** The same consumer code, without module-info, compiles and runs on the class path. */
    static void classPathConsumer(Path jar, Path src, Path work) throws IOException, InterruptedException {
        Path classes = work.resolve("consumer-classpath");
        Tool javac = Tool.run("javac", concat(List.of("-Xlint:all", "-Werror", "-d", classes.toString(),
                "-cp", jar.toString()), sources(src, false)));
        check(javac.status == 0, "the class-path consumer does not compile:\n" + javac.output);
        String classPath = jar + java.io.File.pathSeparator + classes;
        String out = runJava(work, "consumer-classpath.log", "-cp", classPath, "com.example.consumer.Main");
        check(out.contains("consumer ok: unnamed module (class path)"), "unexpected output:\n" + out);
        REPORT.append("[module-check] class path: java -cp " + classPath + " com.example.consumer.Main\n"
                + out.indent(4));
    }

    /** Runs this JDK's {@code java} launcher; it must exit 0 within the time limit. */
    static String runJava(Path work, String logName, String... args) throws IOException, InterruptedException {
        Path log = work.resolve(logName);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new CheckFailed("did not exit within " + RUN_TIMEOUT_SECONDS + " s (a non-daemon thread left running?): "
                    + command + "\n" + Files.readString(log, StandardCharsets.UTF_8));
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        check(p.exitValue() == 0, "exit status " + p.exitValue() + ": " + command + "\n" + out);
        checks++;
        return out;
    }

    static List<String> sources(Path dir, boolean withModuleInfo) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            List<String> list = files.filter(f -> f.toString().endsWith(".java"))
                    .filter(f -> withModuleInfo || !f.getFileName().toString().equals("module-info.java"))
                    .map(Path::toString).sorted().toList();
            check(!list.isEmpty(), "no sources in " + dir);
            return list;
        }
    }

    static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted((x, y) -> y.getNameCount() - x.getNameCount()).toList()) {
                Files.delete(f);
            }
        }
    }

    static void check(boolean condition, String message) {
        checks++;
        if (!condition) {
            throw new CheckFailed(message);
        }
    }

    /** A failed check. */
    static final class CheckFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CheckFailed(String message) {
            super(message, null, false, false);
        }
    }

    /** One in-process run of a JDK tool (javac, jar) and what it printed. */
    record Tool(int status, String output) {
        static Tool run(String name, String... args) {
            return run(name, List.of(args));
        }

        static Tool run(String name, List<String> args) {
            ToolProvider tool = ToolProvider.findFirst(name)
                    .orElseThrow(() -> new CheckFailed("no " + name + " in " + System.getProperty("java.home")));
            StringWriter out = new StringWriter();
            try (PrintWriter w = new PrintWriter(out)) {
                int status = tool.run(w, w, args.toArray(String[]::new));
                w.flush();
                return new Tool(status, out.toString());
            }
        }
    }
}
