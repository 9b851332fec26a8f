package io.github.performancehelpers.limit;

import java.util.List;
import java.util.Objects;

/**
 * The bridge between {@link RedisGCRA} and the Redis client an application already uses (Jedis,
 * Lettuce, Redisson, ...): two methods that run a Lua script, one by its SHA-1 digest
 * ({@code EVALSHA}) and one by its source ({@code EVAL}). The library itself contains no Redis
 * client, so it has no runtime dependency.
 *
 * <p>With Jedis the whole bridge is one line:
 * <pre>{@code
 * JedisPooled jedis = new JedisPooled("localhost", 6379);
 * RedisScriptExecutor redis = RedisScriptExecutor.of(jedis::evalsha, jedis::eval);
 * }</pre>
 *
 * <p><b>Replies.</b> A method returns the client's reply unchanged: a {@link List} whose elements
 * are integers as the client represents them ({@link Number}, a decimal {@link String} or its
 * UTF-8 {@code byte[]} are all understood).
 *
 * <p><b>{@code NOSCRIPT}.</b> When Redis does not have the script cached (after a restart, a
 * fail-over or {@code SCRIPT FLUSH}), {@code EVALSHA} fails with an error whose message starts
 * with {@code NOSCRIPT}. A bridge just lets the client's exception propagate: {@link RedisGCRA}
 * recognises any exception whose message, or whose cause's message, starts with {@code NOSCRIPT}
 * (Jedis, Lettuce and Redisson all keep Redis's message), as well as {@link RedisNoScriptException}
 * for a client that words it differently, and then retries the same call once with
 * {@link #eval}, which also caches the script again.
 *
 * <p><b>Failures.</b> Whatever a method throws, an {@link Error} included, is a failed call that
 * {@link RedisGCRA}'s failure mode answers; only a {@link VirtualMachineError} raised on the
 * caller's own thread (with {@code enforceTimeout(false)}) propagates to the caller.
 *
 * <p><b>Timeouts.</b> Configure the client's own command timeout as well as
 * {@link RedisGCRA.Builder#timeout(java.time.Duration)}: RedisGCRA stops waiting at its timeout,
 * but only the client can abandon the call itself.
 *
 * <p><b>Thread safety.</b> Implementations must be safe for concurrent use by any number of
 * threads: {@link RedisGCRA} calls them from many threads at once (a pooled or multiplexed client,
 * not a single Jedis connection).
 *
 * @since 0.1.0
 */
public interface RedisScriptExecutor {

    /**
     * Runs {@code EVALSHA sha1 numkeys keys... args...}.
     *
     * @param sha1 the script's SHA-1 digest, 40 lowercase hexadecimal characters
     * @param keys the script's keys ({@code KEYS}); RedisGCRA passes exactly one
     * @param args the script's arguments ({@code ARGV})
     * @return the client's reply, a list of integers
     * @throws Exception whatever the client throws; an error starting with {@code NOSCRIPT} makes
     *                   RedisGCRA fall back to {@link #eval}
     */
    Object evalsha(String sha1, List<String> keys, List<String> args) throws Exception;

    /**
     * Runs {@code EVAL script numkeys keys... args...}.
     *
     * @param script the Lua source
     * @param keys   the script's keys ({@code KEYS}); RedisGCRA passes exactly one
     * @param args   the script's arguments ({@code ARGV})
     * @return the client's reply, a list of integers
     * @throws Exception whatever the client throws
     */
    Object eval(String script, List<String> keys, List<String> args) throws Exception;

    /**
     * Builds an executor from two method references or lambdas, typically
     * {@code RedisScriptExecutor.of(jedis::evalsha, jedis::eval)}.
     *
     * @param evalsha runs {@code EVALSHA}: called with the SHA-1 digest, the keys and the arguments
     * @param eval    runs {@code EVAL}: called with the Lua source, the keys and the arguments
     * @return an executor delegating to the two functions
     * @throws NullPointerException if either argument is null
     */
    static RedisScriptExecutor of(ScriptCall evalsha, ScriptCall eval) {
        Objects.requireNonNull(evalsha, "evalsha");
        Objects.requireNonNull(eval, "eval");
        return new RedisScriptExecutor() {
            @Override
            public Object evalsha(String sha1, List<String> keys, List<String> args) throws Exception {
                return evalsha.call(sha1, keys, args);
            }

            @Override
            public Object eval(String script, List<String> keys, List<String> args) throws Exception {
                return eval.call(script, keys, args);
            }
        };
    }

    /**
     * One scripting command of a Redis client, in the shape Jedis's
     * {@code evalsha(String, List, List)} and {@code eval(String, List, List)} already have.
     *
     * <p><b>Thread safety.</b> Implementations must be safe for concurrent use by any number of
     * threads, as the {@link RedisScriptExecutor} built from them is called concurrently.
     */
    @FunctionalInterface
    interface ScriptCall {

        /**
         * Runs the command.
         *
         * @param shaOrScript the SHA-1 digest ({@code EVALSHA}) or the Lua source ({@code EVAL})
         * @param keys        the script's keys
         * @param args        the script's arguments
         * @return the client's reply
         * @throws Exception whatever the client throws
         */
        Object call(String shaOrScript, List<String> keys, List<String> args) throws Exception;
    }
}
