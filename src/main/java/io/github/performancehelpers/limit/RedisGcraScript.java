package io.github.performancehelpers.limit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The Redis side of {@link RedisGCRA}: the Lua script that makes one GCRA decision atomically on
 * Redis's clock, its SHA-1 digest for {@code EVALSHA}, the recognition of a {@code NOSCRIPT}
 * error, and the decoding of the script's reply. The representation of the key's value and the
 * precision rules are described in {@link RedisGCRA}'s class Javadoc.
 *
 * <p><b>Thread safety.</b> Stateless: every member is a constant or a pure function, safe for
 * concurrent use by any number of threads.
 */
final class RedisGcraScript {

    /** The Lua side of every call. See {@link RedisGCRA}'s class Javadoc for the representation. */
    static final String SCRIPT = """
            -- RedisGCRA: one GCRA decision per call, atomic, on Redis's own clock.
            -- KEYS[1]: the limit's key, holding the TAT as 'S:N' (N ns after second S of TIME).
            -- ARGV: mode ('T' take, 'P' peek, 'R' reset), emission interval ns, delay tolerance ns, n.
            -- Reply: {admitted 0|1, retry-after ns, available, TIME seconds, TIME microseconds}.
            -- Every number stays a whole number below 2^53, exact in Lua's doubles.
            if redis.replicate_commands then redis.replicate_commands() end
            local t = redis.call('TIME')
            local sec, usec = tonumber(t[1]), tonumber(t[2])
            if ARGV[1] == 'R' then
              redis.call('DEL', KEYS[1])
              return {1, 0, 0, sec, usec}
            end
            local interval, tolerance, n = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
            local now = usec * 1000
            local d = 0
            local v = redis.call('GET', KEYS[1])
            if v then
              local s, ns = string.match(v, '^(%d+):(%d+)$')
              if s then
                d = (tonumber(s) - sec) * 1000000000 + tonumber(ns) - now
                if d < 0 then d = 0 end
              end
            end
            local available = 0
            if d <= tolerance then available = math.floor((tolerance - d) / interval) + 1 end
            local wait = d + (n - 1) * interval - tolerance
            if wait < 0 then wait = 0 end
            local ok = 0
            if wait == 0 then
              ok = 1
              if ARGV[1] == 'T' then
                local ahead = d + n * interval
                redis.call('SET', KEYS[1], string.format('%d:%d', sec, now + ahead),
                           'PX', string.format('%d', math.ceil(ahead / 1000000) + 1))
              end
            end
            return {ok, wait, available, sec, usec}
            """;

    /** The script's SHA-1 digest, as {@code EVALSHA} wants it. */
    static final String SCRIPT_SHA1 = sha1(SCRIPT);

    private RedisGcraScript() {
    }

    /**
     * Returns whether {@code e}, or any of its causes, is Redis's {@code NOSCRIPT} error: a
     * {@link RedisNoScriptException}, or a message that starts with {@code NOSCRIPT}.
     */
    static boolean isNoScript(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisNoScriptException) {
                return true;
            }
            String message = t.getMessage();
            if (message != null && message.startsWith("NOSCRIPT")) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /**
     * Decodes the script's reply, {@code {admitted, retry-after ns, available, TIME seconds, TIME
     * microseconds}}; each element may be a number, a decimal string or its UTF-8 bytes.
     *
     * @throws IllegalStateException if the reply does not have that shape or contradicts itself
     */
    static RedisGCRA.Reply decode(Object reply) {
        if (!(reply instanceof List<?> list) || list.size() < 5) {
            throw new IllegalStateException("unexpected reply from the RedisGCRA script: " + reply);
        }
        long ok = number(list.get(0));
        long wait = number(list.get(1));
        long available = number(list.get(2));
        long micros = Math.addExact(Math.multiplyExact(number(list.get(3)), 1_000_000L),
                number(list.get(4)));
        if ((ok != 0 && ok != 1) || wait < 0 || available < 0 || (ok == 0) == (wait == 0)) {
            throw new IllegalStateException("unexpected reply from the RedisGCRA script: " + reply);
        }
        return new RedisGCRA.Reply(ok == 1, wait, available, micros);
    }

    private static long number(Object o) {
        if (o instanceof Number n) {
            return n.longValue();
        }
        if (o instanceof CharSequence s) {
            return Long.parseLong(s.toString());
        }
        if (o instanceof byte[] bytes) {
            return Long.parseLong(new String(bytes, StandardCharsets.UTF_8));
        }
        throw new IllegalStateException("unexpected element in the RedisGCRA script's reply: " + o);
    }

    private static String sha1(String script) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1")
                    .digest(script.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
