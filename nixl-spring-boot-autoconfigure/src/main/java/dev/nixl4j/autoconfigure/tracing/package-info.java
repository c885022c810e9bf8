/**
 * Traces across the KV hand-off: the producer's and the consumer's steps of one request
 * as Micrometer observations, their W3C trace context carried with the lease and the done
 * message through micrometer-tracing's {@code Propagator}.
 */
@NullMarked
package dev.nixl4j.autoconfigure.tracing;

import org.jspecify.annotations.NullMarked;
