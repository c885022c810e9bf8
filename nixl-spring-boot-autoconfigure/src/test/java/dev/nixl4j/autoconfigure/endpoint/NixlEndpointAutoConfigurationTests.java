package dev.nixl4j.autoconfigure.endpoint;

import java.lang.foreign.Arena;
import java.security.Principal;
import java.util.List;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint.BackendDescriptor;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint.LibraryDescriptor;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint.NixlDescriptor;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint.SizeDescriptor;
import dev.nixl4j.internal.ffm.NativeLibrary;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class NixlEndpointAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlEndpointAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded");

	private final ApplicationContextRunner exposed = this.runner
		.withPropertyValues("management.endpoints.web.exposure.include=nixl");

	@Test
	void agentNamesAreShownOnlyToAuthenticatedCallersByDefault() {
		this.exposed.run((context) -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			try (NixlAgent peer = NixlAgent
				.create(AgentConfig.builder("endpoint-peer").engine(Engine.EMBEDDED).build())) {
				agent.loadRemoteMetadata(peer.localMetadata());
				NixlEndpoint endpoint = context.getBean(NixlEndpoint.class);

				NixlDescriptor anonymous = endpoint.nixl(SecurityContext.NONE);
				assertThat(anonymous.agent()).isEqualTo(NixlEndpoint.HIDDEN);
				assertThat(anonymous.peers()).containsExactly(NixlEndpoint.HIDDEN);
				assertThat(anonymous.toString()).doesNotContain(agent.name()).doesNotContain("endpoint-peer");

				NixlDescriptor signedIn = endpoint.nixl(caller("operator"));
				assertThat(signedIn.agent()).isEqualTo(agent.name());
				assertThat(signedIn.peers()).containsExactly("endpoint-peer");
			}
		});
	}

	@Test
	void agentNamesFollowShowNamesAndRoles() {
		this.exposed.withPropertyValues("nixl.endpoint.show-names=always")
			.run((context) -> assertThat(context.getBean(NixlEndpoint.class).nixl(SecurityContext.NONE).agent())
				.isEqualTo(context.getBean(NixlAgent.class).name()));
		this.exposed.withPropertyValues("nixl.endpoint.show-names=never")
			.run((context) -> assertThat(context.getBean(NixlEndpoint.class).nixl(caller("operator")).agent())
				.isEqualTo(NixlEndpoint.HIDDEN));
		this.exposed.withPropertyValues("nixl.endpoint.roles=nixl-admin").run((context) -> {
			NixlEndpoint endpoint = context.getBean(NixlEndpoint.class);
			assertThat(endpoint.nixl(caller("operator")).agent()).isEqualTo(NixlEndpoint.HIDDEN);
			assertThat(endpoint.nixl(caller("nixl-admin")).agent()).isEqualTo(context.getBean(NixlAgent.class).name());
		});
	}

	/** An authenticated caller in one role. */
	private static SecurityContext caller(String role) {
		return new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return () -> "alice";
			}

			@Override
			public boolean isUserInRole(String name) {
				return role.equals(name);
			}

		};
	}

	@Test
	void anExposedEndpointDescribesTheAgentAndItsRegistrationsByMemoryType() {
		this.exposed.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(NixlEndpoint.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			try (Arena arena = Arena.ofShared();
					Registration _ = agent.register(arena.allocate(4096));
					Registration _ = agent.register(arena.allocate(1 << 20))) {
				NixlDescriptor nixl = context.getBean(NixlEndpoint.class).nixl();
				assertThat(nixl.agent()).isEqualTo(agent.name());
				assertThat(nixl.open()).isTrue();
				assertThat(nixl.engine()).isEqualTo(Engine.EMBEDDED);
				assertThat(nixl.engineDescription()).isEqualTo(agent.engineDescription());
				assertThat(nixl.library()).as("no NIXL library backs the embedded engine").isNull();
				assertThat(nixl.availablePlugins()).isEqualTo(agent.availablePlugins());
				assertThat(nixl.backends()).containsExactly(
						new BackendDescriptor(agent.backends().getFirst().plugin(), List.of(MemoryType.DRAM)));
				assertThat(nixl.registrations().count()).isEqualTo(2);
				assertThat(nixl.registrations().bytes()).isEqualTo(4096 + (1 << 20));
				assertThat(nixl.registrations().byMemoryType())
					.isEqualTo(Map.of(MemoryType.DRAM, new SizeDescriptor(2, 4096 + (1 << 20))));
				assertThat(nixl.peers()).isEmpty();
				assertThat(nixl.inFlightTransfers()).isEmpty();
				assertThat(nixl.statistics().transfers().get(XferOp.READ)).containsOnlyKeys(TransferState.COMPLETED,
						TransferState.FAILED, TransferState.STALLED, TransferState.CANCELLED);
				assertThat(nixl.statistics().transfers().get(XferOp.WRITE).values()).containsOnly(0L);
			}
		});
	}

	@Test
	void aNativeAgentIsDescribedWithTheLibraryItRunsOnAndWhereItWasFound() {
		NativeNixl.require();
		this.exposed.withPropertyValues("nixl.agent.engine=native").run((context) -> {
			assertThat(context).hasNotFailed();
			NixlDescriptor nixl = context.getBean(NixlEndpoint.class).nixl();
			NativeLibrary library = NativeLibrary.loadedLibrary();
			assertThat(library).isNotNull();
			assertThat(nixl.engine()).isEqualTo(Engine.NATIVE);
			assertThat(nixl.library())
				.isEqualTo(new LibraryDescriptor(library.source(), library.path().toString(), library.version()));
			assertThat(nixl.library().path()).endsWith("/" + NativeLibrary.LIBRARY_FILE);
			assertThat(nixl.engineDescription()).contains(library.source());
			// an anonymous caller sees where the library lies no more than names
			NixlDescriptor anonymous = context.getBean(NixlEndpoint.class).nixl(SecurityContext.NONE);
			assertThat(anonymous.library())
				.isEqualTo(new LibraryDescriptor(NixlEndpoint.HIDDEN, NixlEndpoint.HIDDEN, library.version()));
			assertThat(anonymous.engineDescription()).doesNotContain(library.path().toString())
				.doesNotContain(library.source())
				.contains(library.version());
		});
	}

	@Test
	void aClosedAgentIsDescribedWithoutCallingIntoItsEngine() {
		this.exposed.run((context) -> {
			context.getBean(NixlAgent.class).close();
			NixlDescriptor nixl = context.getBean(NixlEndpoint.class).nixl();
			assertThat(nixl.open()).isFalse();
			assertThat(nixl.availablePlugins()).isEmpty();
			assertThat(nixl.registrations().count()).isZero();
		});
	}

	@Test
	void isAbsentUnlessExposed() {
		this.runner.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlEndpoint.class));
	}

	@Test
	void isAbsentWhenItsAccessIsNone() {
		this.exposed.withPropertyValues("management.endpoint.nixl.access=NONE")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlEndpoint.class));
	}

	@Test
	void backsOffWithoutActuator() {
		this.exposed.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlEndpoint.class));
	}

	@Test
	void backsOffWhenTheUserDefinesTheEndpoint() {
		this.exposed.withUserConfiguration(UserEndpoint.class)
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(NixlEndpoint.class)
				.hasBean("userNixlEndpoint"));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserEndpoint {

		@Bean
		NixlEndpoint userNixlEndpoint(NixlAgent agent) {
			return new NixlEndpoint(agent);
		}

	}

}
