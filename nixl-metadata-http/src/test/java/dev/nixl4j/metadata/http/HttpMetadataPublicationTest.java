package dev.nixl4j.metadata.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Eventually;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link MetadataPublication} keeps an agent's entry in a real HTTP registry on the
 * loopback interface: an entry deleted from the registry comes back.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpMetadataPublicationTest {

	private static final Duration REPAIRED = Duration.ofSeconds(1);

	private static final Duration CHECK = Duration.ofMillis(100);

	private final List<AutoCloseable> resources = new ArrayList<>();

	@AfterEach
	void closeAll() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	private <T extends AutoCloseable> T track(T resource) {
		this.resources.add(resource);
		return resource;
	}

	private NixlAgent agent(String role) {
		return track(
				NixlAgent.create(AgentConfig.builder(role + "-" + UUID.randomUUID()).engine(Engine.EMBEDDED).build()));
	}

	private MetadataPublication publication(MetadataExchange exchange, NixlAgent agent) {
		return track(MetadataPublication.builder(exchange, agent)
			.checkInterval(CHECK)
			.maxRetryInterval(Duration.ofMillis(100))
			.build());
	}

	@Test
	void anEntryDeletedFromAnHttpRegistryIsPublishedAgain() {
		String token = "tok-" + UUID.randomUUID();
		InMemoryMetadataExchange store = track(new InMemoryMetadataExchange());
		MetadataHttpServer server = track(MetadataHttpServer.builder().token(token).store(store).start());
		HttpMetadataExchange client = track(HttpMetadataExchange.builder(server.baseUri())
			.token(token)
			.pollInterval(Duration.ofMillis(100))
			.maxRetryInterval(Duration.ofMillis(100))
			.build());
		NixlAgent agent = agent("decode");
		MetadataPublication publication = publication(client, agent);
		publication.publish();
		assertThat(store.isPublished(agent.name())).isTrue();

		for (int round = 1; round <= 3; round++) {
			long removed = System.nanoTime();
			store.invalidate(agent.name());

			Eventually.until(REPAIRED, "the entry is back in the registry", () -> store.isPublished(agent.name()));
			System.out.printf("HTTP registry: republished %.1f ms after the removal%n",
					(System.nanoTime() - removed) / 1e6);
			assertThat(store.fetch(agent.name(), Duration.ZERO)).isEqualTo(agent.localMetadata());
			int expected = round;
			Eventually.until(REPAIRED, "republication " + round + " counted",
					() -> publication.republications() == expected);
		}
	}

}
