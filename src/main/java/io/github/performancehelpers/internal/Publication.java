package io.github.performancehelpers.internal;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import io.github.performancehelpers.metrics.FlowMetric;
import io.github.performancehelpers.metrics.InMemoryMetricsCollector;
import io.github.performancehelpers.metrics.MetricsCollector;

/**
 * What one executor or controller has published: its {@link MetricsCollector} registrations and
 * its MBean. Built all-or-nothing (a failure closes what was registered before it), closed once.
 *
 * <p>It holds every supplier it registered strongly, for as long as it lives (so at least until
 * {@link #close()}, and a read racing with the close still finds its supplier): a collector may hold
 * them weakly (Micrometer holds a gauge's and a function counter's object through a
 * {@code WeakReference}), and nothing else refers to the lambdas the library registers, so
 * without this hold they would be collected at the first GC and the bridge would read NaN and
 * frozen counters. The publication itself is held by its executor (reachable from its threads
 * while it runs) or its controller.
 *
 * <p><b>Thread safety.</b> Built by one thread (the builder's); {@link #close()} is safe from any
 * thread and acts once.
 */
public final class Publication implements AutoCloseable {

    /** The JMX domain of every MBean the library registers. */
    public static final String DOMAIN = "io.github.performancehelpers";

    private static final System.Logger LOG = System.getLogger(Publication.class.getName());

    private final MetricsCollector collector;
    private final Map<String, String> tags;
    private final List<MetricsCollector.Registration> registrations = new ArrayList<>();
    /** The registered suppliers, held strongly (see the class comment); never read. */
    private final List<Object> suppliers = new ArrayList<>();
    private ObjectName objectName;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Starts an empty publication.
     *
     * @param collector where metrics go, or null for none
     * @param type      {@code executor} or {@code controller}
     */
    public Publication(MetricsCollector collector, String name, String type) {
        this.collector = collector;
        this.tags = Map.of("name", name, "type", type);
    }

    /**
     * Registers a gauge, if there is a collector.
     *
     * @throws IllegalArgumentException if the metric is not a gauge, or the collector returned a
     *                                  null registration (naming the collector and the metric)
     */
    public void gauge(FlowMetric metric, DoubleSupplier value) {
        if (collector != null) {
            expect(metric, FlowMetric.Kind.GAUGE);
            suppliers.add(value);
            add(metric, collector.registerGauge(metric.metricName(), tags, value));
        }
    }

    /**
     * Registers a counter, if there is a collector.
     *
     * @throws IllegalArgumentException if the metric is not a counter, or the collector returned a
     *                                  null registration (naming the collector and the metric)
     */
    public void counter(FlowMetric metric, LongSupplier value) {
        if (collector != null) {
            expect(metric, FlowMetric.Kind.COUNTER);
            suppliers.add(value);
            add(metric, collector.registerCounter(metric.metricName(), tags, value));
        }
    }

    private static void expect(FlowMetric metric, FlowMetric.Kind kind) {
        if (metric.kind() != kind) {
            throw new IllegalArgumentException(metric.metricName() + " is a " + metric.kind() + ", not a " + kind);
        }
    }

    /** A null handle could never be closed: refused now, by name, rather than failing at every close. */
    private void add(FlowMetric metric, MetricsCollector.Registration r) {
        if (r == null) {
            throw new IllegalArgumentException("observability collector " + collector + " (" + collector.getClass()
                    .getName() + ") returned a null Registration for " + metric.kind().name().toLowerCase(Locale.ROOT)
                    + " " + InMemoryMetricsCollector.key(metric.metricName(), tags)
                    + "; registerGauge and registerCounter must return the handle that removes the metric");
        }
        registrations.add(r);
    }

    /**
     * Registers an MXBean in the platform MBean server under
     * {@code io.github.performancehelpers:type=<type>,name=<name>}. A name already registered is
     * refused (IllegalStateException), never overwritten.
     */
    public <T> void mbean(String type, String name, T impl, Class<T> iface) {
        ObjectName on = objectName(type, name);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.registerMBean(new DescribedMXBean<>(impl, iface), on);
        } catch (InstanceAlreadyExistsException e) {
            throw new IllegalStateException("JMX name already registered: " + on
                    + " (another live instance has the name \"" + name + "\"; give each a unique name)", e);
        } catch (JMException e) {
            throw new IllegalStateException("cannot register MBean " + on, e);
        }
        this.objectName = on;
    }

    /** The ObjectName for a type and an instance name; the name is quoted if it has to be. */
    public static ObjectName objectName(String type, String name) {
        boolean plain = name.chars().noneMatch(c -> c == ',' || c == '=' || c == ':' || c == '"'
                || c == '*' || c == '?' || c == '\n');
        try {
            return new ObjectName(DOMAIN + ":type=" + type + ",name=" + (plain ? name : ObjectName.quote(name)));
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("name cannot be used in a JMX ObjectName: \"" + name + "\"", e);
        }
    }

    /** The registered ObjectName, or null. */
    public ObjectName objectName() {
        return objectName;
    }

    /** Unregisters everything; idempotent; never throws. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (MetricsCollector.Registration r : registrations) {
            try {
                r.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing a metrics registration failed", e);
            }
        }
        if (objectName != null) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
            } catch (InstanceNotFoundException e) {
                // unregistered by someone else: nothing to do
            } catch (JMException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "unregistering " + objectName + " failed", e);
            }
        }
    }
}
