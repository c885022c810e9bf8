/**
 * Micrometer meters and observations of the NIXL agent and the KV session, without
 * Spring: transfers, bytes, durations, in-flight and stalled transfers, registered
 * memory, notifications, peers, metadata fetches, leases and pulls, and the same figures
 * under the names of NIXL's own Prometheus exporter. Bind a {@code MeterBinder} of this
 * package to a {@code MeterRegistry} and add its transfer listeners to the agent; the
 * Spring Boot starter does both from its beans.
 */
@NullMarked
package dev.nixl4j.micrometer;

import org.jspecify.annotations.NullMarked;
