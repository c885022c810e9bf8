/**
 * Auto-configuration of nixl-micrometer's meters and observations
 * ({@code dev.nixl4j.micrometer}): the beans that bind them and the transfer listener
 * beans that feed them, and the customizer that observes the metadata exchange.
 */
@NullMarked
package dev.nixl4j.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
