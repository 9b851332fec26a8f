package com.example.consumer;

import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.backpressure.Permit;
import io.github.performancehelpers.backpressure.PowerBackpressure;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.loop.PowerHistogram;
import io.github.performancehelpers.metrics.InMemoryMetricsCollector;
import io.github.performancehelpers.metrics.MetricsCollector;

/**
 * A consumer of performance-helpers, compiled and run twice by the build (src/it/ModuleCheck.java):
 * as the named module {@code com.example.consumer} on the module path, and on the class path. It
 * runs tasks on a {@link PowerFlowExecutor} in try-with-resources and returns from {@code main}
 * without calling {@code System.exit}: the JVM exits (status 0) only if the executor left no
 * non-daemon thread behind and every check below holds; a failed check throws (status 1).
 */
public final class Main {

    private Main() {
    }

    /**
     * Runs the checks.
     *
     * @param args ignored
     * @throws InterruptedException if interrupted while waiting for a result
     * @throws ExecutionException if a task failed
     */
    public static void main(String[] args) throws InterruptedException, ExecutionException {
        int tasks = 50;
        long sum = 0;
        PowerFlowExecutor used;
        try (PowerFlowExecutor executor = PowerFlowExecutor.builder()
                .targetP99(Duration.ofMillis(50))
                .build()) {
            used = executor;
            List<Future<Integer>> results = new ArrayList<>();
            for (int i = 1; i <= tasks; i++) {
                int n = i;
                results.add(executor.submit(() -> n * n));
            }
            for (Future<Integer> f : results) {
                sum += f.get();
            }
        }
        long expected = (long) tasks * (tasks + 1) * (2L * tasks + 1) / 6;
        check(sum == expected, "sum of squares " + sum + ", expected " + expected);
        check(used.isTerminated(), "close() returned but the executor is not terminated");
        check(used.stats().completed() == tasks, "completed " + used.stats().completed() + " of " + tasks);

        // One type of each other exported package, so that each export is used from this module.
        PowerGCRA gcra = PowerGCRA.builder().rate(10).burst(1).build();
        check(gcra.tryConsume(1), "PowerGCRA refused its first call");
        PowerHistogram histogram = PowerHistogram.builder().build();
        histogram.record(5);
        check(histogram.count() == 1, "histogram count " + histogram.count());
        try (PowerBackpressure pool = PowerBackpressure.builder().capacity(1).build()) {
            Permit permit = pool.tryAcquire().orElseThrow();
            check(pool.tryAcquire().isEmpty(), "a second permit from a pool of 1");
            permit.close();
        }
        InMemoryMetricsCollector metrics = MetricsCollector.inMemory();
        check(metrics.size() == 0, "a new collector holds " + metrics.size() + " metrics");

        Module library = PowerFlowExecutor.class.getModule();
        Module self = Main.class.getModule();
        String summary = tasks + " tasks completed, executor terminated";
        if (self.isNamed()) {
            check(library.isNamed(), "the library is not a named module on the module path");
            check("io.github.performancehelpers".equals(library.getName()), "library module: " + library.getName());
            check(!library.getDescriptor().isAutomatic(), "the library is an automatic module");
            check(self.canRead(library), self.getName() + " does not read " + library.getName());
            check(!library.isOpen("io.github.performancehelpers", self), "the API package is opened to " + self);
            check(deepReflectionRefused(), "setAccessible on a private field of PowerFlowExecutor succeeded");
            System.out.println("consumer ok: named module " + self.getName() + " reads " + library.getName()
                    + "; " + summary + "; deep reflection refused (nothing opened)");
        } else {
            check(!library.isNamed(), "the library is a named module but the consumer is not");
            System.out.println("consumer ok: unnamed module (class path); " + summary);
        }
    }

    /** Deep reflection into the library must be refused: the module opens nothing. */
    private static boolean deepReflectionRefused() {
        Field secret = Arrays.stream(PowerFlowExecutor.class.getDeclaredFields())
                .filter(f -> Modifier.isPrivate(f.getModifiers()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("PowerFlowExecutor has no private field to try"));
        try {
            secret.setAccessible(true);
            return false;
        } catch (InaccessibleObjectException expected) {
            return true;
        }
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }
}
