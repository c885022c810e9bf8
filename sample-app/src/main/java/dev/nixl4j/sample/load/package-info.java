/**
 * The load generator: concurrent {@code POST /generate} requests against a decode worker,
 * each response checked against the KV bytes and text expected from its prompt.
 */
@NullMarked
package dev.nixl4j.sample.load;

import org.jspecify.annotations.NullMarked;
