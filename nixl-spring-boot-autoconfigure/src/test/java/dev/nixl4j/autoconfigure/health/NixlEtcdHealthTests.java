package dev.nixl4j.autoconfigure.health;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.testsupport.EtcdServer;
import dev.nixl4j.testsupport.EtcdServerExtension;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

/**
 * The {@code nixl} health indicator with NIXL's own etcd exchange reports whether etcd
 * can be reached: a real closed port and a real etcd server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NixlEtcdHealthTests {

	@RegisterExtension
	static final EtcdServerExtension etcdServer = new EtcdServerExtension();

	private static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	private static NixlAgent embeddedAgent(String role) {
		return NixlAgent.create(AgentConfig.builder("etcd-health-" + role + "-" + ProcessHandle.current().pid())
			.engine(Engine.EMBEDDED)
			.build());
	}

	@Test
	void etcdAtAClosedPortIsDownWithTheReason() throws IOException {
		String endpoint = "http://127.0.0.1:" + closedPort();
		try (NixlAgent agent = embeddedAgent("closed")) {
			Health health = new NixlHealthIndicator(agent).withEtcdEndpoints(List.of(endpoint), Duration.ofSeconds(2))
				.health();
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails().get("etcd")).asInstanceOf(MAP)
				.containsEntry("endpoints", List.of(endpoint))
				.containsEntry("reachable", false)
				.hasEntrySatisfying("reason", (reason) -> assertThat((String) reason).contains(endpoint)
					.contains("could not be reached within PT2S"));
		}
	}

	@Test
	void aRunningEtcdIsUp() {
		EtcdServer etcd = etcdServer.server();
		try (NixlAgent agent = embeddedAgent("running")) {
			Health health = new NixlHealthIndicator(agent)
				.withEtcdEndpoints(List.of("http://127.0.0.1:" + closedPort(), etcd.endpoint()), Duration.ofSeconds(5))
				.health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails().get("etcd")).asInstanceOf(MAP).containsEntry("reachable", true);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void theNixlEtcdExchangeAtAClosedPortMakesTheApplicationsHealthDown() throws IOException {
		NativeNixl.require();
		String endpoint = "http://127.0.0.1:" + closedPort();
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(NixlAutoConfiguration.class, NixlHealthContributorAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=native", "nixl.metadata.exchange=nixl-etcd",
					"nixl.metadata.publish=false", "nixl.metadata.etcd.endpoints=" + endpoint,
					"nixl.metadata.etcd.operation-timeout=2s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Health health = context.getBean(NixlHealthIndicator.class).health();
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails().get("etcd")).asInstanceOf(MAP)
					.hasEntrySatisfying("reason", (reason) -> assertThat((String) reason).contains(endpoint));
			});
	}

}
