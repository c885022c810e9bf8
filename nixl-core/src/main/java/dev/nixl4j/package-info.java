/**
 * The nixl4j API: a {@link dev.nixl4j.NixlAgent} created from an
 * {@link dev.nixl4j.AgentConfig}, memory it registers ({@link dev.nixl4j.Registration}),
 * descriptor lists and the {@link dev.nixl4j.Transfer}s it posts between its memory and a
 * peer's, with failures reported as {@link dev.nixl4j.NixlException} carrying a
 * {@link dev.nixl4j.NixlStatus}.
 */
@NullMarked
package dev.nixl4j;

import org.jspecify.annotations.NullMarked;
