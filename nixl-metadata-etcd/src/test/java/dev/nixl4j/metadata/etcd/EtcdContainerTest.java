package dev.nixl4j.metadata.etcd;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EtcdMetadataExchange} against etcd's own container image, where a Docker engine
 * exists; skipped (not failed, in CI too) where none does. The tests with
 * {@link EtcdServer} cover the same without Docker.
 */
@Testcontainers(disabledWithoutDocker = true)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EtcdContainerTest {

	private static final int CLIENT_PORT = 2379;

	@Container
	private static final GenericContainer<?> etcd = new GenericContainer<>(
			DockerImageName.parse("quay.io/coreos/etcd:v3.5.17"))
		.withCommand("etcd", "--name", "nixl4j", "--listen-client-urls", "http://0.0.0.0:" + CLIENT_PORT,
				"--advertise-client-urls", "http://127.0.0.1:" + CLIENT_PORT)
		.withExposedPorts(CLIENT_PORT)
		.waitingFor(Wait.forLogMessage(".*ready to serve client requests.*", 1));

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Test
	void publishesAndFetchesThroughEtcdInAContainer() {
		String endpoint = "http://" + etcd.getHost() + ":" + etcd.getMappedPort(CLIENT_PORT);
		try (Arena arena = Arena.ofShared();
				NixlAgent agent = NixlAgent.create(AgentConfig.builder("container-target").build());
				EtcdMetadataExchange publisher = EtcdMetadataExchange.builder().endpoints(endpoint).build();
				EtcdMetadataExchange fetcher = EtcdMetadataExchange.builder().endpoints(endpoint).build()) {
			agent.register(Bytes.pattern(arena, 1 << 16, 7));
			publisher.publish(agent);
			assertThat(fetcher.fetch(agent.name(), Duration.ofSeconds(20))).isEqualTo(agent.localMetadata());
		}
	}

}
