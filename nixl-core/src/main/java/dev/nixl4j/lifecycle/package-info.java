/**
 * A worker's life around its agent: publishing the agent's metadata when it starts and
 * keeping it published, and stopping in order (drain, withdraw, close) to a deadline. The
 * Spring Boot starter runs the same {@link dev.nixl4j.lifecycle.AgentLifecycle} from its
 * properties.
 */
@NullMarked
package dev.nixl4j.lifecycle;

import org.jspecify.annotations.NullMarked;
