package io.github.performancehelpers.limit;

import java.io.Serial;

/**
 * Thrown by a {@link RedisScriptExecutor} bridge to say that Redis answered {@code NOSCRIPT} to an
 * {@code EVALSHA}: the script is not in Redis's script cache, so {@link RedisGCRA} should send it
 * again with {@code EVAL}.
 *
 * <p>Most bridges never need it: RedisGCRA also recognises any exception whose message (or whose
 * cause's message) starts with {@code NOSCRIPT}, which is how Jedis, Lettuce and Redisson report
 * it. Throw this one from a bridge whose client words the error differently.
 *
 * <p><b>Thread safety.</b> An instance holds only the message and cause set at construction,
 * and may be passed between threads like any exception.
 *
 * @since 0.1.0
 */
public class RedisNoScriptException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the client's description of the error
     */
    public RedisNoScriptException(String message) {
        super(message);
    }
}
