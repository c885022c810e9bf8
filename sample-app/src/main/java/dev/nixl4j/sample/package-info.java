/**
 * A prefill worker and a decode worker in one Spring Boot application: the prefill role
 * fills KV-cache blocks from a prompt and leases them, the decode role pulls and verifies
 * them.
 */
@NullMarked
package dev.nixl4j.sample;

import org.jspecify.annotations.NullMarked;
