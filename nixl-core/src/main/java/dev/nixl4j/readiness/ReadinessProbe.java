package dev.nixl4j.readiness;

import java.util.Set;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.MemoryType;

/**
 * Service-provider interface of the readiness check behind {@link ReadinessReport#check}:
 * found with {@link java.util.ServiceLoader}; nixl-core provides it. Applications do not
 * implement or call it.
 */
public interface ReadinessProbe {

	/**
	 * Checks a configuration, as {@link ReadinessReport#check(AgentConfig, Set)}
	 * describes.
	 * @param config the configuration to check
	 * @param memoryTypes memory types that must be supported
	 * @return the report; never throws for a failed check
	 */
	ReadinessReport check(AgentConfig config, Set<MemoryType> memoryTypes);

}
