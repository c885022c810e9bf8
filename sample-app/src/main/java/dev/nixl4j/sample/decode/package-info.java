/**
 * The decode role: {@code POST /generate} asks the prefill worker for a request's blocks,
 * pulls them under the lease, verifies every byte and answers.
 */
@NullMarked
package dev.nixl4j.sample.decode;

import org.jspecify.annotations.NullMarked;
