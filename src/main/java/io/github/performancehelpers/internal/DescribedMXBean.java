package io.github.performancehelpers.internal;

import javax.management.Descriptor;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.StandardMBean;
import io.github.performancehelpers.metrics.Description;
import io.github.performancehelpers.metrics.Units;

/**
 * An MXBean whose MBean and attribute descriptions are the interface's {@link Description} (and,
 * for an attribute, its {@link Units}) rather than the attribute's name, which is all a standard
 * MXBean can say ({@code P99 : double : P99}). JMX introspection copies both annotations into the
 * descriptors, so this only reads them back; the interface's types are unchanged.
 *
 * <p><b>Thread safety.</b> As {@link StandardMBean}: the MBean server may call it from any
 * thread; the MBeanInfo is built once and cached.
 *
 * @param <T> the MXBean interface
 */
final class DescribedMXBean<T> extends StandardMBean {

    DescribedMXBean(T impl, Class<T> iface) {
        super(impl, iface, true);
    }

    @Override
    protected String getDescription(MBeanInfo info) {
        Object text = info.getDescriptor().getFieldValue("description");
        return text instanceof String s ? s : super.getDescription(info);
    }

    @Override
    protected String getDescription(MBeanAttributeInfo info) {
        return describe(info.getDescriptor(), super.getDescription(info));
    }

    /** The description, and ", in <unit>" where the attribute has one. */
    static String describe(Descriptor d, String fallback) {
        Object text = d.getFieldValue("description");
        if (!(text instanceof String s)) {
            return fallback;
        }
        Object units = d.getFieldValue("units");
        return units instanceof String u && !u.isEmpty() ? s + ", in " + u : s;
    }
}
