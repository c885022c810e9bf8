/**
 * Testcontainers service connections for nixl4j: an etcd container as the etcd metadata
 * exchange.
 */
@NullMarked
package dev.nixl4j.autoconfigure.testcontainers;

import org.jspecify.annotations.NullMarked;
