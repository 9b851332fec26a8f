/**
 * Implementation details shared between the library's files. <b>Not API.</b>
 *
 * <p>The module {@code io.github.performancehelpers} does not export this package (nor open it),
 * so a named module that requires the library cannot compile against it: {@code javac} reports
 * "package io.github.performancehelpers.internal is not visible". On the class path its public
 * classes can be reached, but they are outside the versioning policy: anything here may change or
 * disappear in any release, patch releases included.
 *
 * @since 0.1.0
 */
package io.github.performancehelpers.internal;
