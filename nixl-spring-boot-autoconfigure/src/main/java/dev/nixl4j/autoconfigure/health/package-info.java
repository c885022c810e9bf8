/**
 * Actuator health of the NIXL agent: the {@code nixl} health contributor.
 */
@NullMarked
package dev.nixl4j.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
