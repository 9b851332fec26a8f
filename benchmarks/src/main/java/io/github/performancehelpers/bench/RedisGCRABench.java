package io.github.performancehelpers.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;
import io.github.performancehelpers.limit.RedisGCRA;
import io.github.performancehelpers.limit.RedisScriptExecutor;

/**
 * Calls per second and call latency of {@link RedisGCRA#tryConsume()} against a Redis on
 * loopback, with 1 and 8 client threads, in both timeout modes. Not JMH: a network round trip
 * dominates, and the latency distribution (p99) is the figure wanted.
 *
 * <pre>
 * mvn -q -f benchmarks/pom.xml compile exec:exec@tool -Dtool.main=io.github.performancehelpers.bench.RedisGCRABench \
 *     -Dtool.args="PORT [warmupSeconds] [measureSeconds]"
 * </pre>
 */
public final class RedisGCRABench {

    private RedisGCRABench() {
    }

    /**
     * Runs the benchmark.
     *
     * @param args port, then optionally warm-up and measurement seconds (default 2 and 5)
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int measure = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        System.out.printf("%-38s %8s %12s %10s %10s %10s%n",
                "case", "threads", "calls/s", "p50 us", "p99 us", "p99.9 us");
        for (int threads : new int[] {1, 8}) {
            GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
            pool.setMaxTotal(threads + 2);
            pool.setMaxIdle(threads + 2);
            try (JedisPooled jedis = new JedisPooled(pool, "127.0.0.1", port, 2_000)) {
                RedisScriptExecutor redis = RedisScriptExecutor.of(jedis::evalsha, jedis::eval);
                run("PING (Jedis baseline)", threads, warmup, measure, () -> jedis.ping());
                for (boolean enforce : new boolean[] {false, true}) {
                    RedisGCRA gcra = RedisGCRA.builder().redis(redis).key("ph-bench:" + UUID.randomUUID())
                            .rate(1_000_000).burst(1_000).timeout(Duration.ofSeconds(1))
                            .enforceTimeout(enforce).build();
                    String name = enforce ? "tryConsume, timeout on virtual thread" : "tryConsume, caller thread";
                    run(name, threads, warmup, measure, gcra::tryConsume);
                    if (gcra.stats().failures() != 0) {
                        throw new IllegalStateException("failures during the run: " + gcra.stats());
                    }
                }
            }
        }
    }

    private static void run(String name, int threads, int warmupSeconds, int measureSeconds, Runnable call)
            throws InterruptedException {
        phase(threads, warmupSeconds, call);
        Result r = phase(threads, measureSeconds, call);
        Histogram h = r.histogram;
        System.out.printf("%-38s %8d %12.0f %10.1f %10.1f %10.1f%n", name, threads,
                r.calls / (double) measureSeconds,
                h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
                h.getValueAtPercentile(99.9) / 1e3);
    }

    private record Result(long calls, Histogram histogram) {}

    private static Result phase(int threads, int seconds, Runnable call) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        AtomicLong calls = new AtomicLong();
        List<Histogram> histograms = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Histogram h = new Histogram(3_600_000_000_000L, 3);
            histograms.add(h);
            workers.add(Thread.ofPlatform().start(() -> {
                long n = 0;
                long now = System.nanoTime();
                while (now - deadline < 0) {
                    call.run();
                    long end = System.nanoTime();
                    h.recordValue(end - now);
                    now = end;
                    n++;
                }
                calls.addAndGet(n);
            }));
        }
        Histogram all = new Histogram(3_600_000_000_000L, 3);
        for (int i = 0; i < threads; i++) {
            workers.get(i).join();
            all.add(histograms.get(i));
        }
        return new Result(calls.get(), all);
    }
}
