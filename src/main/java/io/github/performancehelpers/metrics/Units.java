package io.github.performancehelpers.metrics;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import javax.management.DescriptorKey;

/**
 * The unit of an MXBean attribute, in the standard {@code units} field of its
 * {@link javax.management.Descriptor} (the JMX convention; see {@link DescriptorKey}). The
 * library spells its two units {@link #MILLISECONDS} and {@link #PER_SECOND}, as
 * {@link FlowMetric.Unit#text()} does; counts and flags carry none.
 *
 * @since 0.1.0
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Units {

    /** A duration in milliseconds, the seed's unit for latency. */
    String MILLISECONDS = "milliseconds";

    /** A rate. */
    String PER_SECOND = "operations per second";

    /**
     * The unit, in words.
     *
     * @return the unit, such as {@code milliseconds}
     */
    // DescriptorKey (java.management) is read by JMX introspection, not by a caller of this
    // element, so a module reading this one need not read java.management: no requires transitive.
    @SuppressWarnings("exports")
    @DescriptorKey("units")
    String value();
}
