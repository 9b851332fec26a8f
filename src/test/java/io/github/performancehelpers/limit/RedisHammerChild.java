package io.github.performancehelpers.limit;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;

/**
 * The second JVM of {@link RedisGCRAClusterTest}: hammers one key from its own process.
 *
 * <p>Protocol: prints {@code READY} once connected, waits for a line {@code GO} on stdin, hammers
 * for the given time, then prints {@code ADMITTED <operations> FAILURES <count>} and exits.
 *
 * <p>Arguments: port, key, rate (per second), burst, duration in milliseconds, threads.
 */
public final class RedisHammerChild {

    private RedisHammerChild() {
    }

    /**
     * Runs the child.
     *
     * @param args port, key, rate, burst, durationMillis, threads
     * @throws Exception on any failure, which the parent sees as a non-zero exit
     */
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String key = args[1];
        double rate = Double.parseDouble(args[2]);
        double burst = Double.parseDouble(args[3]);
        long durationNanos = Duration.ofMillis(Long.parseLong(args[4])).toNanos();
        int threads = Integer.parseInt(args[5]);
        try (JedisPooled jedis = new JedisPooled(new HostAndPort("127.0.0.1", port),
                DefaultJedisClientConfig.builder().socketTimeoutMillis(30_000).build())) {
            RedisGCRA gcra = RedisGCRA.builder().redis(JedisBridge.of(jedis)).key(key).rate(rate)
                    .burst(burst).timeout(Duration.ofSeconds(60)).failClosed().build();
            gcra.available(); // connect and cache the script before the clock starts
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"GO".equals(in.readLine())) {
                throw new IllegalStateException("expected GO");
            }
            AtomicLong admitted = new AtomicLong();
            List<Thread> workers = new ArrayList<>();
            long deadline = System.nanoTime() + durationNanos;
            for (int i = 0; i < threads; i++) {
                workers.add(Thread.ofPlatform().start(() -> hammer(gcra, deadline, admitted)));
            }
            for (Thread t : workers) {
                t.join();
            }
            System.out.println("ADMITTED " + admitted.get() + " FAILURES " + gcra.stats().failures());
            System.out.flush();
        }
    }

    /** Consumes random batches of 1 to 3 until the deadline, adding each admitted batch. */
    static void hammer(RedisGCRA gcra, long deadline, AtomicLong admitted) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (System.nanoTime() - deadline < 0) {
            int n = 1 + random.nextInt(3);
            if (gcra.tryConsume(n)) {
                admitted.addAndGet(n);
            }
        }
    }
}
