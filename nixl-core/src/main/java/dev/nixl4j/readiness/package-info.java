/**
 * The readiness report ({@link dev.nixl4j.readiness.ReadinessReport}, the "doctor"): whether NIXL
 * can move data in this process and, when it cannot, why. The command line's {@code doctor} and
 * the Spring Boot health indicator both use it.
 *
 * <p>{@link dev.nixl4j.readiness.ReadinessReport}, {@link dev.nixl4j.readiness.Readiness} and
 * {@link dev.nixl4j.readiness.Patterns} (the data patterns of self-tests and benchmarks) are API;
 * {@link dev.nixl4j.readiness.PluginFiles} serves the command line's {@code info}.
 */
@NullMarked
package dev.nixl4j.readiness;

import org.jspecify.annotations.NullMarked;
