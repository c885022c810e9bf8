/**
 * Metadata exchange: how agents find each other's {@link dev.nixl4j.AgentMetadata}. The
 * {@link dev.nixl4j.metadata.MetadataExchange} SPI publishes an agent's metadata, fetches a
 * peer's by name with a deadline, withdraws it, and watches peers disappear; implementations
 * keep it in memory (one JVM), serve it over HTTP with a bearer token, or store it in etcd under
 * NIXL's own key layout ({@link dev.nixl4j.metadata.EtcdMetadataExchange}, which needs jetcd on the
 * class path, and {@link dev.nixl4j.metadata.NixlEtcdMetadataExchange}, NIXL's built-in exchange
 * of a native agent).
 *
 * <p>Metadata carries the keys that grant access to registered memory: implementations never log
 * it, and every value fetched is checked (size and NIXL's framing, and that it names the agent
 * asked for) before it can reach an agent.
 */
@NullMarked
package dev.nixl4j.metadata;

import org.jspecify.annotations.NullMarked;
