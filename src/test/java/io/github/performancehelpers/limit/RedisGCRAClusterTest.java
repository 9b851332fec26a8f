package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * The fleet-wide guarantee: limiters on separate connections, in this JVM and in a second JVM
 * process, hammering one key, never admit more than GCRA's arithmetic bound
 * {@code floor(burst) + 1 + elapsed / interval}, with {@code elapsed} measured by Redis's
 * {@code TIME} before the first and after the last call.
 */
@Tag("redis")
class RedisGCRAClusterTest {

    private static final double RATE = 200;
    private static final double BURST = 10;
    private static final long DURATION_MILLIS = 1_500;

    /** Three in-JVM limiters (own connection pools, 2 threads each) plus a child JVM (2 threads) stay within the bound. */
    @Test
    void limitersAcrossConnectionsAndProcessesNeverExceedTheGlobalBound() throws Exception {
        RedisTestServer server = RedisTestServer.shared();
        String key = "ph-test:cluster:" + UUID.randomUUID();
        List<JedisPooled> clients = new ArrayList<>();
        Process child = startChild(server.port, key);
        try (JedisPooled clock = server.client(30_000)) {
            BufferedReader childOut = new BufferedReader(
                    new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String ready = childOut.readLine();
            assertEquals("READY", ready, "child JVM did not start");

            List<RedisGCRA> limiters = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                JedisPooled jedis = server.client(30_000);
                clients.add(jedis);
                RedisGCRA gcra = RedisGCRA.builder().redis(JedisBridge.of(jedis)).key(key).rate(RATE)
                        .burst(BURST).timeout(Duration.ofSeconds(60)).build();
                gcra.available(); // connect before the clock starts
                limiters.add(gcra);
            }
            long interval = limiters.get(0).stats().emissionIntervalNanos();

            long startMicros = RedisTestServer.timeMicros(clock);
            Writer toChild = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
            toChild.write("GO\n");
            toChild.flush();
            AtomicLong admitted = new AtomicLong();
            List<Thread> workers = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DURATION_MILLIS);
            for (RedisGCRA gcra : limiters) {
                for (int t = 0; t < 2; t++) {
                    workers.add(Thread.ofPlatform().start(
                            () -> RedisHammerChild.hammer(gcra, deadline, admitted)));
                }
            }
            for (Thread t : workers) {
                t.join();
            }
            String result = childOut.readLine(); // printed after the child's last call
            long endMicros = RedisTestServer.timeMicros(clock);
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child JVM did not exit");
            assertEquals(0, child.exitValue(), "child JVM failed");
            assertTrue(result != null && result.startsWith("ADMITTED "), "child said: " + result);
            String[] words = result.split(" ");
            long childAdmitted = Long.parseLong(words[1]);
            assertEquals("0", words[3], "child saw Redis failures: its refusals would not test the bound");
            for (RedisGCRA gcra : limiters) {
                assertEquals(0, gcra.stats().failures(), "Redis failures: refusals would not test the bound");
            }

            long total = admitted.get() + childAdmitted;
            long elapsedNanos = (endMicros - startMicros) * 1_000;
            long bound = (long) Math.floor(BURST) + 1 + elapsedNanos / interval;
            System.out.printf("RedisGCRAClusterTest: admitted %d (this JVM %d, child %d) of bound %d over %s%n",
                    total, admitted.get(), childAdmitted, bound, Duration.ofNanos(elapsedNanos));
            assertTrue(total <= bound, "admitted " + total + " > bound " + bound
                    + " over " + Duration.ofNanos(elapsedNanos));
            assertTrue(childAdmitted > 0, "the second JVM admitted nothing: it did not take part");
            assertTrue(admitted.get() > 0, "this JVM admitted nothing");
            // Saturated callers take most of what the rate allows even on two loaded cores; a far
            // lower total would mean the limiter refuses what it should admit.
            long floor = (long) BURST + 1 + (long) (RATE * DURATION_MILLIS / 1000 / 4);
            assertTrue(total >= floor, "admitted only " + total + " (expected >= " + floor + ")");
        } finally {
            child.destroyForcibly();
            clients.forEach(JedisPooled::close);
        }
    }

    private static Process startChild(int port, String key) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return new ProcessBuilder(java, "-cp", classPath, RedisHammerChild.class.getName(),
                Integer.toString(port), key, Double.toString(RATE), Double.toString(BURST),
                Long.toString(DURATION_MILLIS), "2")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }
}
