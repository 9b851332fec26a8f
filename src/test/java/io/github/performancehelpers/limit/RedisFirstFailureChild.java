package io.github.performancehelpers.limit;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * The fresh JVM of {@link RedisGCRATimeoutTest#firstFailureInAFreshJvmAnswersWithinTheTimeout}:
 * builds one limiter on a bridge that fails at once or never answers, times its first call, and
 * prints {@code ELAPSED_NANOS <nanos> ANSWER <true|false>}.
 *
 * <p>Arguments: {@code fail} or {@code hang}, the timeout in milliseconds.
 */
public final class RedisFirstFailureChild {

    private RedisFirstFailureChild() {
    }

    /**
     * Runs the child.
     *
     * @param args {@code fail} or {@code hang}, timeout in milliseconds
     * @throws Exception on any failure, which the parent sees as a non-zero exit
     */
    public static void main(String[] args) throws Exception {
        boolean hang = args[0].equals("hang");
        Duration timeout = Duration.ofMillis(Long.parseLong(args[1]));
        CountDownLatch never = new CountDownLatch(1);
        RedisScriptExecutor.ScriptCall call = (script, keys, argv) -> {
            if (hang) {
                never.await();
            }
            throw new IllegalStateException("connection refused (test bridge)");
        };
        RedisGCRA gcra = RedisGCRA.builder().redis(RedisScriptExecutor.of(call, call)).key("k")
                .rate(10).timeout(timeout).failClosed().build();
        long start = System.nanoTime();
        boolean answer = gcra.tryConsume();
        long elapsed = System.nanoTime() - start;
        System.out.println("ELAPSED_NANOS " + elapsed + " ANSWER " + answer);
        System.out.flush();
        System.exit(0); // the hanging call's virtual thread must not matter
    }
}
