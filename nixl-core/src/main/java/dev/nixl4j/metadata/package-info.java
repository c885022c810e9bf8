/**
 * Metadata exchange: how agents find each other's {@link dev.nixl4j.AgentMetadata}. The
 * {@link dev.nixl4j.metadata.MetadataExchange} SPI publishes an agent's metadata, fetches
 * a peer's by name with a deadline, withdraws it, and watches peers disappear;
 * implementations keep it in memory (one JVM) or serve it over HTTP with a bearer token.
 * The jetcd exchange, in NIXL's own key layout, is in the {@code nixl-metadata-etcd}
 * module ({@code dev.nixl4j.metadata.etcd}). NIXL's built-in etcd exchange is not a
 * {@code MetadataExchange}, since NIXL loads what it fetches into the agent and hands no
 * bytes back: it is a capability of a native agent,
 * {@link dev.nixl4j.NixlAgent#etcdMetadata()}.
 *
 * <p>
 * Metadata carries the keys that grant access to registered memory: implementations never
 * log it, and every value fetched is checked (size and NIXL's framing, and that it names
 * the agent asked for) before it can reach an agent.
 */
@NullMarked
package dev.nixl4j.metadata;

import org.jspecify.annotations.NullMarked;
