/**
 * The {@code nixl} Actuator endpoint: what the agent is, what it holds and what it is
 * doing.
 */
@NullMarked
package dev.nixl4j.autoconfigure.endpoint;

import org.jspecify.annotations.NullMarked;
