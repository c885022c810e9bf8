package dev.nixl4j.autoconfigure;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.connect.Connector;
import dev.nixl4j.metadata.MetadataExchange;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class NixlAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded");

	@Test
	void defaultsGiveAnAgentNamedAfterTheApplicationAConnectorAndNoExchange() {
		this.runner.withPropertyValues("spring.application.name=prefill").run(context -> {
			assertThat(context).hasNotFailed().hasSingleBean(NixlAgent.class).hasSingleBean(Connector.class)
				.doesNotHaveBean(MetadataExchange.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			assertThat(agent.name()).matches("prefill-[0-9a-f]{8}");
			assertThat(agent.engine()).isEqualTo(Engine.EMBEDDED);
			assertThat(agent.backends()).hasSize(1);
			assertThat(context.getBean(Connector.class).agent()).isSameAs(agent);
		});
	}

	@Test
	void customizersChangeTheAgentConfiguration() {
		this.runner.withBean(NixlAgentConfigCustomizer.class, () -> builder -> builder.mailboxCapacity(7))
			.run(context -> assertThat(context.getBean(AgentConfig.class).mailboxCapacity()).isEqualTo(7));
	}

}
