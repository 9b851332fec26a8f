package io.github.performancehelpers.metrics;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import javax.management.DescriptorKey;

/**
 * What an MXBean or one of its attributes is, in words: JMX introspection copies it into the
 * {@code description} field of the MBean's or the attribute's {@link javax.management.Descriptor},
 * and the library's MBeans return it (with the {@linkplain Units unit}) from
 * {@link javax.management.MBeanInfo#getDescription()} and
 * {@link javax.management.MBeanAttributeInfo#getDescription()}, which a standard MXBean would
 * otherwise fill with the attribute's own name.
 *
 * @since 0.1.0
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface Description {

    /**
     * The description, one or two sentences, without the unit.
     *
     * @return the description
     */
    // DescriptorKey (java.management) is read by JMX introspection, not by a caller of this
    // element, so a module reading this one need not read java.management: no requires transitive.
    @SuppressWarnings("exports")
    @DescriptorKey("description")
    String value();
}
