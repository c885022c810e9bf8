package dev.nixl4j.autoconfigure;

import dev.nixl4j.AgentConfig;

/**
 * Changes the agent's configuration after it was built from {@code nixl.*} properties and
 * before the agent is created. Beans of this type are applied in
 * {@link org.springframework.core.Ordered order}.
 */
@FunctionalInterface
public interface NixlAgentConfigCustomizer {

	/**
	 * Customizes the configuration.
	 * @param builder a builder holding the configuration from properties
	 */
	void customize(AgentConfig.Builder builder);

}
