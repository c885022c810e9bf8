/**
 * Not API: the readiness check of native NIXL behind
 * {@link dev.nixl4j.readiness.ReadinessReport#check}, and its loopback probe.
 */
@NullMarked
package dev.nixl4j.internal.readiness;

import org.jspecify.annotations.NullMarked;
