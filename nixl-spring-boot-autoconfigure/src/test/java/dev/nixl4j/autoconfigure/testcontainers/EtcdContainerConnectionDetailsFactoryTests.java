package dev.nixl4j.autoconfigure.testcontainers;

import java.time.Duration;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.EtcdConnectionDetails;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.metadata.MetadataExchange;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An etcd container as the etcd metadata exchange through {@code @ServiceConnection}.
 * Skipped where no Docker engine is available.
 */
@Testcontainers(disabledWithoutDocker = true)
@SpringBootTest(properties = { "nixl.agent.engine=embedded", "nixl.agent.name=container-app",
		"nixl.metadata.exchange=etcd", "nixl.metadata.etcd.endpoints=http://127.0.0.1:1" })
class EtcdContainerConnectionDetailsFactoryTests {

	@Container
	@ServiceConnection(name = "etcd")
	static final GenericContainer<?> etcd = new GenericContainer<>(
			DockerImageName.parse("gcr.io/etcd-development/etcd:v3.5.21"))
		.withCommand("etcd", "--listen-client-urls=http://0.0.0.0:2379", "--advertise-client-urls=http://0.0.0.0:2379")
		.withExposedPorts(EtcdContainerConnectionDetailsFactory.CLIENT_PORT);

	@Autowired
	private EtcdConnectionDetails connectionDetails;

	@Autowired
	private MetadataExchange exchange;

	@Autowired
	private NixlAgent agent;

	@Test
	void theExchangeTalksToTheContainer() {
		assertThat(this.connectionDetails.endpoints()).containsExactly("http://" + etcd.getHost() + ":"
				+ etcd.getMappedPort(EtcdContainerConnectionDetailsFactory.CLIENT_PORT));
		assertThat(this.exchange.fetch("container-app", Duration.ofSeconds(10)).toByteArray())
			.isEqualTo(this.agent.localMetadata().toByteArray());
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(NixlAutoConfiguration.class)
	static class TestApplication {

	}

}
