/**
 * The prefill role: {@code POST /prefill} fills and leases a request's KV blocks;
 * {@code GET /kv/handle} describes the cache to decode workers.
 */
@NullMarked
package dev.nixl4j.sample.prefill;

import org.jspecify.annotations.NullMarked;
