package io.github.performancehelpers.micrometer;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.github.performancehelpers.metrics.FlowMetric;
import io.github.performancehelpers.metrics.MetricsCollector;

/**
 * A {@link MetricsCollector} that registers the numbers of a {@code PowerFlowExecutor} or a
 * {@code PowerFlowController} in a Micrometer {@link MeterRegistry}: each gauge as a
 * {@link Gauge}, each counter as a {@link FunctionCounter}, removed from the registry when the
 * executor terminates or the controller is closed:
 *
 * {@snippet class=io.github.performancehelpers.micrometer.MicrometerMetricsCollectorTest region=binding}
 *
 * <h2>Names, tags, units</h2>
 * Names are the library's ({@link FlowMetric}): dotted and lower case, as Micrometer's convention
 * wants ({@code power.flow.rate}; a registry's naming convention renders them,
 * {@code power_flow_rate} for Prometheus). Tags are the library's two, {@code name} (the
 * instance's name) and {@code type} ({@code executor} or {@code controller}). Each meter's
 * description is the metric's {@link FlowMetric#description()}. Units follow Micrometer's base
 * units:
 * <ul>
 *   <li>a latency (the library's milliseconds, {@link FlowMetric.Unit#MILLISECONDS}) is a
 *       {@link TimeGauge}, which the registry states in its base time unit, <b>seconds</b> for
 *       most registries (the simple, Prometheus and OTLP ones): {@code power.flow.last.observed.p99}
 *       reads {@code 0.05} for the 50 ms that {@code stats().lastObservedP99()} gives, with base
 *       unit {@code seconds} (Prometheus: {@code power_flow_last_observed_p99_seconds});</li>
 *   <li>the rates ({@code power.flow.rate}, operations per second) carry no base unit, Micrometer
 *       having none for a rate; the description says per second;</li>
 *   <li>counts, counters and 0/1 flags carry none.</li>
 * </ul>
 *
 * <h2>Who holds what</h2>
 * Micrometer holds a gauge's and a function counter's object weakly; the library holds every
 * supplier it registers strongly for as long as the registration lives (see
 * {@link MetricsCollector}), so the meters keep reading after a garbage collection, and stop
 * (NaN, the counter frozen) only once the instance is unreachable, which it is not before it is
 * closed.
 *
 * <h2>Duplicates</h2>
 * A meter of the same name and tags already in the registry is refused with
 * {@link IllegalStateException}, as the in-memory collector does, rather than bound silently to
 * the existing meter (Micrometer's {@code register} returns the meter it already has, which would
 * read another instance's numbers and be removed by this one's close). The check is of the id
 * before the registry's {@code MeterFilter}s; a filter that maps two ids onto one defeats it.
 *
 * <p><b>Thread safety.</b> Safe for concurrent use by any number of threads, as the registry is.
 * Closing a {@link MetricsCollector.Registration} is idempotent: a second close does nothing, even
 * if a meter with the same id was registered meanwhile.
 *
 * @since 0.1.0
 */
public final class MicrometerMetricsCollector implements MetricsCollector {

    private final MeterRegistry registry;

    /**
     * A collector that registers in {@code registry}.
     *
     * @param registry where the meters go
     * @throws NullPointerException if {@code registry} is null
     */
    public MicrometerMetricsCollector(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Registers a {@link Gauge}; a latency in milliseconds as a {@link TimeGauge}, which the
     * registry states in its base time unit.
     *
     * @throws NullPointerException  if any argument is null
     * @throws IllegalStateException if the registry already has a meter with this name and tags
     */
    @Override
    public Registration registerGauge(String name, Map<String, String> tags, DoubleSupplier value) {
        Objects.requireNonNull(value, "value");
        Optional<FlowMetric> metric = metric(name);
        Tags t = tags(tags);
        refuseDuplicate(name, t);
        if (metric.map(m -> m.unit() == FlowMetric.Unit.MILLISECONDS).orElse(false)) {
            // A duration: the registry states it in its base time unit (seconds, as a rule).
            TimeGauge.Builder<DoubleSupplier> b = TimeGauge.builder(name, value, TimeUnit.MILLISECONDS,
                    DoubleSupplier::getAsDouble).tags(t);
            metric.ifPresent(m -> b.description(description(m)));
            return removing(b.register(registry));
        }
        Gauge.Builder<DoubleSupplier> b = Gauge.builder(name, value, DoubleSupplier::getAsDouble).tags(t);
        metric.ifPresent(m -> b.description(description(m)));
        return removing(b.register(registry));
    }

    /**
     * Registers a {@link FunctionCounter}.
     *
     * @throws NullPointerException  if any argument is null
     * @throws IllegalStateException if the registry already has a meter with this name and tags
     */
    @Override
    public Registration registerCounter(String name, Map<String, String> tags, LongSupplier value) {
        Objects.requireNonNull(value, "value");
        Optional<FlowMetric> metric = metric(name);
        Tags t = tags(tags);
        refuseDuplicate(name, t);
        FunctionCounter.Builder<LongSupplier> b = FunctionCounter.builder(name, value, v -> (double) v.getAsLong())
                .tags(t);
        metric.ifPresent(m -> b.description(description(m)));
        return removing(b.register(registry));
    }

    private static Optional<FlowMetric> metric(String name) {
        return FlowMetric.named(Objects.requireNonNull(name, "name"));
    }

    /** The description; a rate, which has no Micrometer base unit, says its unit in words. */
    private static String description(FlowMetric m) {
        return m.unit() == FlowMetric.Unit.PER_SECOND ? m.description() + ", in " + m.unit().text() : m.description();
    }

    private static Tags tags(Map<String, String> tags) {
        Objects.requireNonNull(tags, "tags");
        return Tags.of(tags.entrySet().stream().map(e -> Tag.of(e.getKey(), e.getValue())).toList());
    }

    private void refuseDuplicate(String name, Tags tags) {
        for (Meter m : registry.find(name).tags(tags).meters()) {
            if (Tags.of(m.getId().getTags()).equals(tags)) {
                throw new IllegalStateException("meter already registered: " + name + tags
                        + " (another live instance has this name; give each a unique name)");
            }
        }
    }

    /** Removes exactly this meter, once. */
    private Registration removing(Meter meter) {
        AtomicBoolean closed = new AtomicBoolean();
        return () -> {
            if (closed.compareAndSet(false, true)) {
                registry.remove(meter);
            }
        };
    }

    @Override
    public String toString() {
        return "MicrometerMetricsCollector[" + registry.getClass().getSimpleName() + "]";
    }
}
