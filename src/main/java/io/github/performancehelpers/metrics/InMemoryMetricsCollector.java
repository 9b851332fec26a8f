package io.github.performancehelpers.metrics;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A {@link MetricsCollector} that keeps its suppliers in memory and reads them on demand: the
 * shared default ({@link MetricsCollector#shared()}) and a test double.
 *
 * <p>Each metric is identified by its key, the name followed by its tags sorted by tag name:
 * {@code power.flow.rate{name=orders,type=executor}}. A second registration under a live key is
 * refused with {@link IllegalStateException} (never a silent overwrite); the key is free again
 * once the first registration is closed.
 *
 * <p><b>Thread safety.</b> Instances are safe for concurrent use by any number of threads;
 * registering, closing and reading never block one another beyond a {@link ConcurrentHashMap}
 * operation.
 *
 * @since 0.1.0
 */
public final class InMemoryMetricsCollector implements MetricsCollector {

    static final InMemoryMetricsCollector SHARED = new InMemoryMetricsCollector();

    private final Map<String, Supplier<Number>> metrics = new ConcurrentHashMap<>();

    InMemoryMetricsCollector() {
    }

    @Override
    public Registration registerGauge(String name, Map<String, String> tags, DoubleSupplier value) {
        Objects.requireNonNull(value, "value");
        return register(key(name, tags), value::getAsDouble);
    }

    @Override
    public Registration registerCounter(String name, Map<String, String> tags, LongSupplier value) {
        Objects.requireNonNull(value, "value");
        return register(key(name, tags), value::getAsLong);
    }

    private Registration register(String key, Supplier<Number> reader) {
        if (metrics.putIfAbsent(key, reader) != null) {
            throw new IllegalStateException("metric already registered: " + key
                    + " (another live instance has this name; give each a unique name)");
        }
        return () -> metrics.remove(key, reader);
    }

    /**
     * Reads every registered metric now.
     *
     * @return an unmodifiable map from key ({@code name{tag=value,...}}) to value, sorted by key;
     *     gauges are {@link Double}, counters {@link Long}
     */
    public Map<String, Number> snapshot() {
        Map<String, Number> out = new TreeMap<>();
        metrics.forEach((k, v) -> out.put(k, v.get()));
        return Collections.unmodifiableMap(out);
    }

    /**
     * Reads one metric now.
     *
     * @param name the metric name
     * @param tags its tags
     * @return the value, or {@code null} if no such metric is registered
     * @throws NullPointerException if an argument is null
     */
    public Number value(String name, Map<String, String> tags) {
        Supplier<Number> s = metrics.get(key(name, tags));
        return s == null ? null : s.get();
    }

    /**
     * Returns the key a metric is stored under: the name, then the tags sorted by tag name in
     * braces, as {@code power.flow.rate{name=orders,type=executor}}.
     *
     * @param name the metric name
     * @param tags its tags
     * @return the key
     * @throws NullPointerException if an argument is null
     */
    public static String key(String name, Map<String, String> tags) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tags, "tags");
        StringBuilder sb = new StringBuilder(name).append('{');
        boolean first = true;
        for (Map.Entry<String, String> e : new TreeMap<>(tags).entrySet()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
        return sb.append('}').toString();
    }

    /**
     * Returns the number of registered metrics.
     *
     * @return the count
     */
    public int size() {
        return metrics.size();
    }
}
