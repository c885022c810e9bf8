/**
 * Actuator health of the NIXL agent, the {@code nixl} health contributor, and of the HTTP
 * metadata registry an application serves, {@code nixlMetadataRegistry}.
 */
@NullMarked
package dev.nixl4j.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
