/**
 * Internal, not API: the binding of NIXL's C API ({@code libnixl_capi.so}) through
 * {@code java.lang.foreign}, the native library locator, and the native engine's driver.
 * Public types here are not promised to users.
 */
@NullMarked
package dev.nixl4j.internal.ffm;

import org.jspecify.annotations.NullMarked;
