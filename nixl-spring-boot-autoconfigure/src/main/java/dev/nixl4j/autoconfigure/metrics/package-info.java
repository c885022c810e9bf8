/**
 * Micrometer meters and observations of the NIXL agent: transfers, bytes, durations,
 * in-flight and stalled transfers, registered memory, notifications, peers and metadata
 * fetches.
 */
@NullMarked
package dev.nixl4j.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
