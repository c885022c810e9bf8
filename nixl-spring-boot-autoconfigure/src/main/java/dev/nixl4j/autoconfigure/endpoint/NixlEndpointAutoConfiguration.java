package dev.nixl4j.autoconfigure.endpoint;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlProperties;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code nixl} endpoint ({@link NixlEndpoint}), when it is
 * available: exposed ({@code management.endpoints.web.exposure.include=nixl}) and not
 * switched off ({@code management.endpoint.nixl.access=none}). Agent names are shown as
 * {@code nixl.endpoint.show-names} says (by default to authenticated callers only).
 */
@AutoConfiguration(after = NixlAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(NixlAgent.class)
public final class NixlEndpointAutoConfiguration {

	NixlEndpointAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	NixlEndpoint nixlEndpoint(NixlAgent agent, NixlProperties properties) {
		NixlProperties.Endpoint endpoint = properties.getEndpoint();
		return new NixlEndpoint(agent, Show.valueOf(endpoint.getShowNames().name()), endpoint.getRoles());
	}

}
