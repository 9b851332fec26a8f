package io.github.performancehelpers.snippets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import io.github.performancehelpers.PowerExecutors;
import io.github.performancehelpers.PowerFlowExecutor;
import io.github.performancehelpers.QueueFullException;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.limit.Take;

/**
 * The code samples of the Javadoc (overview and package documentation), included there with
 * {@code {@snippet class=io.github.performancehelpers.snippets.DocSnippetsTest region=...}}: each
 * region compiles here and runs as a test, so the documentation cannot show code that does not
 * work. This package uses only the public API, as a user's code would. Edit a region and its
 * assertions together.
 */
class DocSnippetsTest {

    /** A request of the examples. */
    record Request(int id) {
    }

    /** A reply of the examples. */
    record Response(String body) {
    }

    /** The downstream of the examples: a database or partner API client. */
    interface Client {
        Response call(Request request) throws InterruptedException;
    }

    private final List<Request> handled = new ArrayList<>();
    private final List<Duration> retryAfters = new ArrayList<>();
    private final List<String> used = new ArrayList<>();

    private static String callDownstream(Request request) throws InterruptedException {
        Thread.sleep(2); // a call to a database or a partner API
        return "reply " + request.id();
    }

    private void use(String reply) {
        used.add(reply);
    }

    private void use(Response response) {
        used.add(response.body());
    }

    /**
     * Region "fixedpool": the one-line replacement for a fixed thread pool runs the task on one of
     * its own worker threads and hands its result back through the Future.
     */
    @Test
    void fixedFlowPoolReplacesAFixedThreadPoolInOneLine() throws InterruptedException, ExecutionException {
        Request request = new Request(7);
        Client client = r -> new Response("reply " + r.id() + " from " + Thread.currentThread().getName());
        // @start region="fixedpool"
        // Before: ExecutorService executor = Executors.newFixedThreadPool(8);
        try (PowerFlowExecutor executor = PowerExecutors.newFixedFlowPool(8, Duration.ofMillis(50))) {
            Future<Response> f = executor.submit(() -> client.call(request)); // refused: ShedException, QueueFullException
            use(f.get());
        } // close(): waits for queued and running tasks, as ExecutorService.close() does
        // @end
        assertEquals(1, used.size());
        assertTrue(used.get(0).startsWith("reply 7 from power-flow-"), used.get(0));
    }

    /**
     * Region "quickstart": every task submitted to the executor runs and its result comes back
     * through its Future. (That close() leaves no thread behind is proved by the module-path
     * consumer, src/it, whose JVM must exit by itself.)
     */
    @Test
    void quickStartRunsEveryTaskAndReturnsEveryResult() throws InterruptedException, ExecutionException {
        List<Request> requests = IntStream.range(0, 30).mapToObj(Request::new).toList();
        // @start region="quickstart"
        try (PowerFlowExecutor executor = PowerFlowExecutor.builder()
                .targetP99(Duration.ofMillis(50))   // callers wait at most 50 ms at the p99, submit to end:
                .build()) {                         // no rate limit until the run time calls for one
            List<Future<String>> replies = new ArrayList<>();
            for (Request request : requests) {
                replies.add(executor.submit(() -> callDownstream(request)));
            }
            for (Future<String> reply : replies) {
                use(reply.get());
            }
        } // close(): waits for the tasks still queued or running, then stops the executor's threads
        // @end
        assertEquals(IntStream.range(0, 30).mapToObj(i -> "reply " + i).toList(), used);
    }

    private void handle(Request request) {
        handled.add(request);
    }

    private void reject(Request request, Duration retryAfter) {
        retryAfters.add(retryAfter);
    }

    /**
     * Region "gcra": a fresh limiter of 100/s with burst 20 admits 21 requests at once (more only
     * as real time passes, at most one per 10 ms) and refuses the rest with a wait of at most one
     * emission interval.
     */
    @Test
    void gcraAdmitsTheBurstAndRefusesTheRestWithARetryAfter() {
        List<Request> requests = IntStream.range(0, 30).mapToObj(Request::new).toList();
        long start = System.nanoTime();
        // @start region="gcra"
        PowerGCRA limiter = PowerGCRA.builder()
                .rate(100).per(Duration.ofSeconds(1)) // 100 requests per second, sustained,
                .burst(20)                            // and up to 20 more at once
                .build();
        for (Request request : requests) {
            Take take = limiter.take();
            if (take.ok()) {
                handle(request);
            } else {
                reject(request, take.retryAfter()); // e.g. HTTP 429 with a Retry-After header
            }
        }
        // @end
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertEquals(30, handled.size() + retryAfters.size());
        assertTrue(handled.size() >= 21 && handled.size() <= 21 + elapsedMs / 10 + 1,
                "admitted " + handled.size() + " in " + elapsedMs + " ms");
        assertEquals(requests.subList(0, 21), handled.subList(0, 21), "the first burst + 1 requests are all admitted");
        for (Duration wait : retryAfters) {
            assertTrue(wait.compareTo(Duration.ZERO) > 0 && wait.compareTo(Duration.ofMillis(10)) <= 0,
                    "retryAfter " + wait + " outside (0, 10 ms]");
        }
    }
}
