/**
 * The entry point of performance-helpers: {@link PowerFlowExecutor}, the closed loop as an
 * {@link java.util.concurrent.ExecutorService}, and {@link PowerExecutors}, its one-line
 * factories. Admission control, queueing and latency feedback are each usable alone, in one
 * package per concern:
 * <ul>
 * <li>{@code io.github.performancehelpers} (this package): the executor, its factories and
 *     options, and {@link Ticker}, the clock every time-reading type takes;</li>
 * <li>{@link io.github.performancehelpers.limit}: rate limiters;</li>
 * <li>{@link io.github.performancehelpers.loop}: the loop's parts, its control laws, and the
 *     loop without an executor ({@link PowerFlowController});</li>
 * <li>{@link io.github.performancehelpers.backpressure}: permits held while work is in flight;</li>
 * <li>{@link io.github.performancehelpers.metrics}: metrics, MXBeans.</li>
 * </ul>
 * {@code ARCHITECTURE.md} in the repository follows one task through the executor, file by file.
 *
 * <h2>Which type</h2>
 * <table class="striped">
 * <caption>What each type is for, and what to use instead when it is not the right tool</caption>
 * <thead><tr><th>Type</th><th>Use it when</th><th>Use instead</th></tr></thead>
 * <tbody>
 * <tr><td>{@link PowerFlowExecutor}, {@link PowerExecutors}</td>
 *     <td>an {@link java.util.concurrent.ExecutorService} in front of a downstream with a latency
 *         target but no known capacity: the executor finds and holds the rate for you</td>
 *     <td>a fixed concurrency and no target: {@link java.util.concurrent.Executors}; a fixed rate
 *         you have measured: {@link PowerGCRA} in front of your own pool</td></tr>
 * <tr><td>{@link PowerFlowController}</td>
 *     <td>you run the work yourself and want the loop (queue, pacing, latency feedback) to pick
 *         the rate</td>
 *     <td>a fixed rate you already know: {@link PowerGCRA} alone</td></tr>
 * <tr><td>{@link PowerGCRA}</td>
 *     <td>a known rate with a burst, in one process, thread-safe and lock-free; a refusal tells
 *         the caller how long to wait</td>
 *     <td>a budget shared by several processes: {@link RedisGCRA}</td></tr>
 * <tr><td>{@link RedisGCRA}</td>
 *     <td>one rate across a fleet (a partner API's quota), state in Redis, through your own
 *         Redis client ({@link RedisScriptExecutor})</td>
 *     <td>a per-process limit: {@link PowerGCRA} (no network round trip)</td></tr>
 * <tr><td>{@link PowerRateLimit}</td>
 *     <td>several limits at once (global and per tenant): all admit or none is charged</td>
 *     <td>one limit: the limiter itself</td></tr>
 * <tr><td>{@link PowerBackpressure}, {@link Permit}</td>
 *     <td>producers must hold a permit while work is in flight downstream, with a pool that
 *         refills on a timer and optionally adapts (AIMD)</td>
 *     <td>a fixed number of permits and nothing more: {@link java.util.concurrent.Semaphore}</td></tr>
 * <tr><td>{@link PowerQueue}</td>
 *     <td>a bounded FIFO that refuses and counts what does not fit instead of blocking the
 *         producer</td>
 *     <td>a producer that should block: {@link java.util.concurrent.ArrayBlockingQueue}</td></tr>
 * <tr><td>{@link PowerHistogram}</td>
 *     <td>quantiles of latencies with a guaranteed relative error, recorded concurrently and read
 *         per interval</td>
 *     <td>a full-resolution histogram for reports: HdrHistogram</td></tr>
 * <tr><td>{@link PowerServo}</td>
 *     <td>a PI(D) control law with an output clamp and anti-windup, for a loop of your own</td>
 *     <td>the whole loop: {@link PowerFlowController}</td></tr>
 * </tbody>
 * </table>
 *
 * <p>Supporting types: {@link PoolSizer} and {@link RejectionPolicy} (executor options),
 * {@link RateLimiter} (the limiter shape shared by {@link PowerGCRA},
 * {@link RedisGCRA} and {@link PowerRateLimit}), {@link Take} (an admission or the exact wait),
 * {@link Ticker} (the injected nanosecond clock), {@link RateChangeListener},
 * {@link QueueFullException} (a {@link java.util.concurrent.RejectedExecutionException}) and
 * {@link RedisNoScriptException}.
 *
 * <h2>Conventions</h2>
 * <ul>
 * <li>Builders: {@code Type.builder()...build()}; options are validated by {@code build()} (some
 *     setters validate eagerly too) and nothing is half-applied on a bad input.</li>
 * <li>A bad value throws {@link IllegalArgumentException} whose message names the option and the
 *     value ({@code "rate must be finite and > 0: NaN"}); a null throws
 *     {@link NullPointerException} naming the parameter.</li>
 * <li>Times go in and out as {@link java.time.Duration} (with a {@code long ...Nanos} form where
 *     it matters); rates are {@code double} operations per second; the control loop's latencies
 *     are milliseconds as {@code double}.</li>
 * <li>Every type that reads time takes a {@link Ticker}, so tests drive time by hand.</li>
 * <li>A callback that throws never breaks the loop that called it: it is reported through
 *     {@link System.Logger} and counted.</li>
 * <li>{@code stats()} returns an immutable record.</li>
 * </ul>
 *
 * <h2>Examples</h2>
 * The executor, in try-with-resources:
 * {@snippet class=io.github.performancehelpers.snippets.DocSnippetsTest region=quickstart}
 * A rate limiter alone:
 * {@snippet class=io.github.performancehelpers.snippets.DocSnippetsTest region=gcra}
 *
 * @since 0.1.0
 */
package io.github.performancehelpers;

import io.github.performancehelpers.backpressure.Permit;
import io.github.performancehelpers.backpressure.PowerBackpressure;
import io.github.performancehelpers.limit.PowerGCRA;
import io.github.performancehelpers.limit.PowerRateLimit;
import io.github.performancehelpers.limit.RateLimiter;
import io.github.performancehelpers.limit.RedisGCRA;
import io.github.performancehelpers.limit.RedisNoScriptException;
import io.github.performancehelpers.limit.RedisScriptExecutor;
import io.github.performancehelpers.limit.Take;
import io.github.performancehelpers.loop.PowerFlowController;
import io.github.performancehelpers.loop.PowerHistogram;
import io.github.performancehelpers.loop.PowerQueue;
import io.github.performancehelpers.loop.PowerServo;
import io.github.performancehelpers.loop.RateChangeListener;
