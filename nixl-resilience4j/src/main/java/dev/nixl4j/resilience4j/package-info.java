/**
 * Resilience4j around nixl4j, without Spring: a retry of metadata fetches
 * ({@code nixl-metadata}, {@link dev.nixl4j.resilience4j.MetadataExchangeRetry}), a
 * circuit breaker per peer ({@code nixl-peer-<agent>},
 * {@link dev.nixl4j.resilience4j.PeerCircuitBreakers}), a bulkhead bounding transfers in
 * flight ({@code nixl-transfers}, {@link dev.nixl4j.resilience4j.TransferBulkhead}) and a
 * time limiter giving the default deadline of waits on transfers ({@code nixl-transfer},
 * {@link dev.nixl4j.resilience4j.TransferTimeLimiter}). Each takes its instance from a
 * Resilience4j registry, so the registry's configuration, events and metrics apply; the
 * Spring Boot starter passes the registries of Resilience4j's own auto-configuration.
 */
@NullMarked
package dev.nixl4j.resilience4j;

import org.jspecify.annotations.NullMarked;
