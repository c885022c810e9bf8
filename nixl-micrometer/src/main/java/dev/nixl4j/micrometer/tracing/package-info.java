/**
 * Traces across the KV hand-off: the producer's and the consumer's steps of one request
 * as Micrometer observations, their W3C trace context carried with the lease and the done
 * message through micrometer-tracing's {@code Propagator}. Needs micrometer-tracing on
 * the class path, which nixl-micrometer declares optional.
 */
@NullMarked
package dev.nixl4j.micrometer.tracing;

import org.jspecify.annotations.NullMarked;
