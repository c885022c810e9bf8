/**
 * The readiness report ({@link dev.nixl4j.readiness.ReadinessReport}, the "doctor"):
 * whether NIXL can move data in this process and, when it cannot, why. The command line's
 * {@code doctor} and the Spring Boot health indicator both use it.
 *
 * <p>
 * Besides the report and its classification, {@link dev.nixl4j.readiness.Patterns} holds
 * the data patterns of self-tests and benchmarks.
 * {@link dev.nixl4j.readiness.ReadinessProbe} is the service-provider interface through
 * which the report reaches the check, which is not API.
 */
@NullMarked
package dev.nixl4j.readiness;

import org.jspecify.annotations.NullMarked;
