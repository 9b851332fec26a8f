package com.example.consumer;

import io.github.performancehelpers.PowerGCRA;
import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;

/**
 * A consumer of performance-helpers, compiled and run twice by the build: as the named module
 * {@code com.example.consumer} on the module path, and on the class path. It exits with status 0
 * only if every check below holds; any failure throws, which exits with status 1.
 */
public final class Main {

    private Main() {
    }

    /**
     * Runs the checks.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        int admitted = 0;
        try (PowerGCRA limiter = PowerGCRA.builder().rate(10).per(Duration.ofSeconds(1)).burst(4).build()) {
            for (int i = 0; i < 20; i++) {
                if (limiter.tryConsume()) {
                    admitted++;
                }
            }
        }
        // burst + 1 at once, plus at most one more if 100 ms passed during the loop.
        check(admitted >= 5 && admitted <= 6, "admitted " + admitted + " of 20, expected 5 (burst + 1)");

        Module library = PowerGCRA.class.getModule();
        Module self = Main.class.getModule();
        if (self.isNamed()) {
            check(library.isNamed(), "the library is not a named module on the module path");
            check("io.github.performancehelpers".equals(library.getName()), "library module: " + library.getName());
            check(!library.getDescriptor().isAutomatic(), "the library is an automatic module");
            check(self.canRead(library), self.getName() + " does not read " + library.getName());
            check(!library.isOpen("io.github.performancehelpers", self), "the API package is opened to " + self);
            check(deepReflectionRefused(), "setAccessible on a private field of PowerGCRA succeeded");
            System.out.println("consumer ok: named module " + self.getName() + " reads " + library.getName()
                    + "; admitted " + admitted + " of 20; nothing opened");
        } else {
            check(!library.isNamed(), "the library is a named module but the consumer is not");
            System.out.println("consumer ok: unnamed module (class path); admitted " + admitted + " of 20");
        }
    }

    /** Deep reflection into the library must be refused: the module opens nothing. */
    private static boolean deepReflectionRefused() {
        Field secret = Arrays.stream(PowerGCRA.class.getDeclaredFields())
                .filter(f -> Modifier.isPrivate(f.getModifiers()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("PowerGCRA has no private field to try"));
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
