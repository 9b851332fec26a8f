package io.github.performancehelpers.demo;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import io.github.performancehelpers.Ticker;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.limit.Take;

/**
 * A small PowerGCRA demonstration: admission at 100/s with a burst of 20, and an exact
 * retryAfter. Runs on a hand-driven clock so its output is the same on every machine.
 *
 * <p>Run: {@code mvn -q -f benchmarks/pom.xml compile exec:exec@tool -Dtool.main=io.github.performancehelpers.demo.GcraDemo}
 */
public final class GcraDemo {

    private GcraDemo() {
    }

    /**
     * Prints the demonstration.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        AtomicLong now = new AtomicLong();
        Ticker clock = now::get;
        PowerGCRA limiter = PowerGCRA.builder().rate(100).per(Duration.ofSeconds(1)).burst(20).ticker(clock).build();
        System.out.println(limiter + ": available at idle = " + limiter.available());
        int admitted = 0;
        for (int i = 0; i < 25; i++) {
            if (limiter.tryConsume()) {
                admitted++;
            }
        }
        System.out.println("25 requests at t=0 ms: " + admitted + " admitted (burst 20 + the free first one)");
        Take t = limiter.take();
        System.out.println("take() -> ok=" + t.ok() + ", retryAfter=" + t.retryAfter() + " (exact: one interval of 10 ms)");
        now.addAndGet(t.retryAfterNanos());
        System.out.println("after waiting exactly that long: tryConsume() = " + limiter.tryConsume());
        System.out.println("tryConsume(22) = " + limiter.tryConsume(22) + " (one past the ceiling of burst + 1 = 21)");
        try {
            limiter.retryAfter(22);
        } catch (IllegalArgumentException e) {
            System.out.println("retryAfter(22) throws: " + e.getMessage());
        }
        PowerGCRA seven = PowerGCRA.builder().rate(7).ticker(clock).build();
        seven.tryConsume();
        System.out.println("at 7/s, retryAfter() = " + seven.retryAfterNanos() + " ns (142.857142857 ms, rounded up)");
    }
}
