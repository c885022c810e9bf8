/**
 * Internal, not API: the embedded engine, a pure-Java
 * {@link dev.nixl4j.internal.engine.EngineDriver} with NIXL's semantics for DRAM. Agents
 * in one JVM copy between registered segments; agents in different processes move bytes
 * over TCP, straight between the socket and the registered segments. Its metadata uses
 * NIXL's serialization with an {@code EMBEDDED} backend whose connection info carries the
 * listener's address and a secret token, and whose descriptor keys are random
 * per-registration keys checked by the target on every request. With the same-host path
 * on ({@link dev.nixl4j.EmbeddedOptions#sameHost()}), transfers between processes of one
 * host to registrations in {@link dev.nixl4j.ShareableMemory} are still checked by the
 * target, which then says where the memory lies, and copied by the initiator through a
 * mapping of it ({@link dev.nixl4j.internal.embedded.SameHostPath}).
 *
 * <p>
 * What peers can make it hold is bounded (see {@link dev.nixl4j.EmbeddedOptions}):
 * connections, threads (none for a connection before its hello), and time (hello, request
 * frame and response deadlines, enforced by the listener's accepting thread). Its threads
 * report what a unit of work threw to the agent's
 * {@link dev.nixl4j.internal.engine.EngineDriver.FaultListener} and go on; the accepting
 * thread reports a fatal fault when its selector or server socket breaks.
 */
@NullMarked
package dev.nixl4j.internal.embedded;

import org.jspecify.annotations.NullMarked;
