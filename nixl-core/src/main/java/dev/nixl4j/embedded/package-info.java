/**
 * Internal, not API: the embedded engine, a pure-Java {@link dev.nixl4j.engine.EngineDriver} with
 * NIXL's semantics for DRAM. Agents in one JVM copy between registered segments; agents in
 * different processes move bytes over TCP, straight between the socket and the registered
 * segments. Its metadata uses NIXL's serialization with an {@code EMBEDDED} backend whose
 * connection info carries the listener's address and a secret token, and whose descriptor keys
 * are random per-registration keys checked by the target on every request.
 */
@NullMarked
package dev.nixl4j.embedded;

import org.jspecify.annotations.NullMarked;
