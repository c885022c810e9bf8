/**
 * Spring Boot auto-configuration of nixl4j: properties under {@code nixl}, the agent, the
 * metadata exchange, the connector, a managed KV cache and graceful shutdown.
 */
@NullMarked
package dev.nixl4j.autoconfigure;

import org.jspecify.annotations.NullMarked;
