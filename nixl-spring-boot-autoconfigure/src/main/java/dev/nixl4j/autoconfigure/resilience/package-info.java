/**
 * Auto-configuration of nixl-resilience4j ({@code dev.nixl4j.resilience4j}) from
 * Resilience4j's registries: a retry of metadata fetches ({@code nixl-metadata}), a
 * circuit breaker per peer ({@code nixl-peer-<agent>}), a bulkhead bounding transfers in
 * flight ({@code nixl-transfers}) and a time limiter giving the default deadline of waits
 * ({@code nixl-transfer}), all tuned with the usual {@code resilience4j.*} properties.
 */
@NullMarked
package dev.nixl4j.autoconfigure.resilience;

import org.jspecify.annotations.NullMarked;
