package io.github.performancehelpers.internal;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
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
import javax.management.StandardMBean;
import io.github.performancehelpers.metrics.MetricsCollector;

/**
 * What one executor or controller has published: its {@link MetricsCollector} registrations and
 * its MBean. Built all-or-nothing (a failure closes what was registered before it), closed once.
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

    public void gauge(String metric, DoubleSupplier value) {
        if (collector != null) {
            registrations.add(collector.registerGauge(metric, tags, value));
        }
    }

    public void counter(String metric, LongSupplier value) {
        if (collector != null) {
            registrations.add(collector.registerCounter(metric, tags, value));
        }
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
            server.registerMBean(new StandardMBean(impl, iface, true), on);
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
