/**
 * The prefill role: {@code POST /prefill} fills and leases a request's KV blocks; decode
 * workers find its cache through the metadata registry, where the starter publishes the
 * cache's handle beside the agent's metadata.
 */
@NullMarked
package dev.nixl4j.sample.prefill;

import org.jspecify.annotations.NullMarked;
