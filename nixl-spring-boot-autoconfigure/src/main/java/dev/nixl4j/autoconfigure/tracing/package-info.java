/**
 * Auto-configuration of traces across the KV hand-off: nixl-micrometer's
 * {@code ObservationKvObserver} (in {@code dev.nixl4j.micrometer.tracing}) as the
 * {@code KvObserver} of the managed KV producer and consumer.
 */
@NullMarked
package dev.nixl4j.autoconfigure.tracing;

import org.jspecify.annotations.NullMarked;
