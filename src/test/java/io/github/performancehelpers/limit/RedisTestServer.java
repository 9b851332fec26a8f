package io.github.performancehelpers.limit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;

/**
 * A Redis server on loopback for the RedisGCRA tests.
 *
 * <p>{@link #shared()} finds one, in this order: the port in the environment variable
 * {@code REDIS_TEST_PORT} (what {@code .ci/run} exports after starting a server); otherwise a
 * {@code redis-server} this JVM starts itself on a free port (stopped when the JVM exits), if the
 * binary is installed. When neither works the calling test is skipped with the reason, unless
 * the environment variable {@code CI} is {@code "true"}: on CI a missing server fails the test.
 *
 * <p>{@link #startOwn()} always starts a private server, which a test may stop and restart.
 */
final class RedisTestServer implements AutoCloseable {

    private static final String HOST = "127.0.0.1";
    private static RedisTestServer shared;
    private static String sharedProblem;

    final int port;
    /** Null for a server this class did not start. */
    private final Path binary;
    private Process process;
    private Path log;

    private RedisTestServer(int port, Path binary) {
        this.port = port;
        this.binary = binary;
    }

    /** The server shared by all tests of this JVM; skips (or fails on CI) when there is none. */
    static synchronized RedisTestServer shared() {
        if (shared == null && sharedProblem == null) {
            try {
                shared = findOrStartShared();
            } catch (Exception e) {
                sharedProblem = e.getMessage();
            }
        }
        if (shared == null) {
            unavailable(sharedProblem);
        }
        return shared;
    }

    /** A server of the caller's own, on its own port; skips (or fails on CI) without the binary. */
    static RedisTestServer startOwn() throws IOException, InterruptedException {
        Optional<Path> binary = redisServerBinary();
        if (binary.isEmpty()) {
            unavailable("redis-server is not installed (not on PATH); install it, e.g. "
                    + "apt-get install -y redis-server");
        }
        RedisTestServer server = new RedisTestServer(freePort(), binary.get());
        server.start();
        return server;
    }

    private static RedisTestServer findOrStartShared() throws IOException, InterruptedException {
        String env = System.getenv("REDIS_TEST_PORT");
        if (env != null && !env.isBlank()) {
            int port = Integer.parseInt(env.trim());
            RedisTestServer external = new RedisTestServer(port, null);
            if (!external.awaitPing(5_000)) {
                throw new IllegalStateException("REDIS_TEST_PORT=" + env
                        + " but no Redis answers PING on " + HOST + ":" + port);
            }
            return external;
        }
        Optional<Path> binary = redisServerBinary();
        if (binary.isEmpty()) {
            throw new IllegalStateException("no Redis server for the RedisGCRA tests: set "
                    + "REDIS_TEST_PORT to a running server's port, or install redis-server "
                    + "(e.g. apt-get install -y redis-server) so the tests can start one");
        }
        RedisTestServer own = new RedisTestServer(freePort(), binary.get());
        own.start();
        Runtime.getRuntime().addShutdownHook(new Thread(own::stop, "redis-test-server-stop"));
        return own;
    }

    static void unavailable(String why) {
        if ("true".equals(System.getenv("CI"))) {
            fail("CI=true and no Redis server is available: " + why);
        }
        String message = "Skipping: no Redis server is available (" + why + ")";
        System.err.println("RedisGCRA tests: " + message);
        Assumptions.abort(message);
    }

    /** Starts (or restarts, on the same port) a server this class owns. */
    synchronized void start() throws IOException, InterruptedException {
        if (binary == null) {
            throw new IllegalStateException("not a server this test started");
        }
        if (process != null && process.isAlive()) {
            return;
        }
        if (log == null) {
            log = Files.createTempFile("redis-test-" + port + "-", ".log");
        }
        process = new ProcessBuilder(binary.toString(), "--port", Integer.toString(port),
                "--bind", HOST, "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--protected-mode", "yes", "--loglevel", "warning")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        if (!awaitPing(10_000)) {
            stop();
            throw new IllegalStateException("redis-server on port " + port
                    + " did not answer PING; log: " + Files.readString(log, StandardCharsets.UTF_8));
        }
    }

    /** Stops a server this class owns, abruptly (as a crash would), and waits until it is gone. */
    synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
    }

    /** A pooled client with short timeouts, so calls to a dead server fail fast. */
    JedisPooled client() {
        return client(500);
    }

    JedisPooled client(int timeoutMillis) {
        return new JedisPooled(new HostAndPort(HOST, port), DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(timeoutMillis).socketTimeoutMillis(timeoutMillis).build());
    }

    /** Redis's TIME, in microseconds. */
    static long timeMicros(UnifiedJedis jedis) {
        List<?> t = (List<?>) jedis.sendCommand(Protocol.Command.TIME);
        return Long.parseLong(text(t.get(0))) * 1_000_000L + Long.parseLong(text(t.get(1)));
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : o.toString();
    }

    private boolean awaitPing(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - deadline < 0) {
            try (JedisPooled jedis = client(300)) {
                if ("PONG".equals(jedis.ping())) {
                    return true;
                }
            } catch (RuntimeException notYet) {
                // not accepting connections yet
            }
            Thread.sleep(50);
        }
        return false;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }

    static Optional<Path> redisServerBinary() {
        String path = System.getenv("PATH");
        List<String> dirs = new java.util.ArrayList<>(path == null ? List.of()
                : List.of(path.split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/bin", "/usr/sbin", "/usr/local/bin", "/opt/homebrew/bin"));
        for (String dir : dirs) {
            Path candidate = Path.of(dir, "redis-server");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
