package io.github.performancehelpers.limit;

import redis.clients.jedis.UnifiedJedis;

/** The README's Jedis bridge: all a Jedis user writes to give RedisGCRA their client. */
final class JedisBridge {

    private JedisBridge() {
    }

    /** Works for {@code JedisPooled}, {@code JedisCluster} and any other {@link UnifiedJedis}. */
    static RedisScriptExecutor of(UnifiedJedis jedis) {
        return RedisScriptExecutor.of(jedis::evalsha, jedis::eval);
    }
}
