package dev.nixl4j.metadata;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.nixl4j.testsupport.Eventually;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link MetadataPublication} keeps an agent's entry published: removed or replaced
 * entries come back, failed publications are retried, and the state says what is going
 * on. Real agents and a real in-memory exchange (the HTTP registry's case is in
 * nixl-metadata-http).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetadataPublicationTest {

	private static final Duration REPAIRED = Duration.ofSeconds(1);

	private static final Duration CHECK = Duration.ofMillis(100);

	private static final AtomicInteger ids = new AtomicInteger();

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
		return track(NixlAgent
			.create(AgentConfig.builder(role + "-" + ids.incrementAndGet()).engine(Engine.EMBEDDED).build()));
	}

	private MetadataPublication publication(MetadataExchange exchange, NixlAgent agent) {
		return track(MetadataPublication.builder(exchange, agent)
			.checkInterval(CHECK)
			.maxRetryInterval(Duration.ofMillis(100))
			.build());
	}

	@Test
	void anEntryRemovedFromAnInMemoryExchangeIsPublishedAgainAtOnce() {
		InMemoryMetadataExchange exchange = track(new InMemoryMetadataExchange());
		NixlAgent agent = agent("prefill");
		MetadataPublication publication = publication(exchange, agent);
		publication.publish();
		assertThat(publication.state().status()).isEqualTo(MetadataPublication.Status.PUBLISHED);

		long removed = System.nanoTime();
		exchange.invalidate(agent.name());

		Eventually.until(REPAIRED, "the entry is back", () -> exchange.isPublished(agent.name()));
		long delay = System.nanoTime() - removed;
		Eventually.until(REPAIRED, "the publication reports it",
				() -> publication.state().status() == MetadataPublication.Status.PUBLISHED);
		assertThat(exchange.fetch(agent.name(), Duration.ZERO)).isEqualTo(agent.localMetadata());
		assertThat(publication.republications()).isEqualTo(1);
		assertThat(publication.publications()).isEqualTo(2);
		System.out.printf("in-memory exchange: republished %.1f ms after the removal%n", delay / 1e6);
	}

	@Test
	void anEntryReplacedByAnotherAgentsMetadataIsRestored() {
		InMemoryMetadataExchange exchange = track(new InMemoryMetadataExchange());
		NixlAgent agent = agent("prefill");
		NixlAgent intruder = agent("intruder");
		MetadataPublication publication = publication(exchange, agent);
		publication.publish();

		// the in-memory store takes any value under any name: the check sees it is not
		// the agent's
		exchange.publish(agent.name(), intruder.localMetadata());

		Eventually.until(REPAIRED, "the agent's own metadata is back", () -> {
			try {
				return exchange.fetch(agent.name(), Duration.ZERO).equals(agent.localMetadata());
			}
			catch (NixlException ex) {
				return false;
			}
		});
		assertThat(publication.republications()).isEqualTo(1);
	}

	@Test
	void aFailedPublicationIsReportedAndRetriedUntilItLands() {
		InMemoryMetadataExchange store = track(new InMemoryMetadataExchange());
		AtomicInteger refusals = new AtomicInteger(3);
		MetadataExchange flaky = new ForwardingMetadataExchange(store) {
			@Override
			public void publish(String agentName, AgentMetadata metadata) {
				if (refusals.getAndDecrement() > 0) {
					throw new NixlException(NixlStatus.UNAVAILABLE, "send_local_md", null, agentName,
							"the exchange is down");
				}
				super.publish(agentName, metadata);
			}
		};
		NixlAgent agent = agent("decode");
		MetadataPublication publication = publication(flaky, agent);

		NixlException failure = catchThrowableOfType(NixlException.class, publication::publish);

		assertThat(failure.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		// three refusals with retries after 50, 100 and 200 ms: not published for 350 ms
		// at least
		MetadataPublication.State state = publication.state();
		assertThat(state.status()).isEqualTo(MetadataPublication.Status.NOT_PUBLISHED);
		assertThat(state.reason()).contains("the exchange is down");
		Eventually.until(Duration.ofSeconds(5), "published after the retries", () -> store.isPublished(agent.name()));
		Eventually.until(REPAIRED, "reported published",
				() -> publication.state().status() == MetadataPublication.Status.PUBLISHED);
		assertThat(publication.failures()).isEqualTo(3);
		assertThat(publication.republications()).as("nothing had vanished").isZero();
		assertThat(publication.state().reason()).isNull();
	}

	@Test
	void aWithdrawnEntryStaysWithdrawn() throws InterruptedException {
		InMemoryMetadataExchange exchange = track(new InMemoryMetadataExchange());
		NixlAgent agent = agent("prefill");
		MetadataPublication publication = publication(exchange, agent);
		publication.publish();

		publication.withdraw();

		assertThat(exchange.isPublished(agent.name())).isFalse();
		assertThat(publication.state().status()).isEqualTo(MetadataPublication.Status.WITHDRAWN);
		// several check intervals: nothing may bring the entry back
		Thread.sleep(CHECK.multipliedBy(5));
		assertThat(exchange.isPublished(agent.name())).isFalse();
		assertThat(publication.publications()).isEqualTo(1);
	}

	@Test
	void nothingIsPublishedBeforePublishAndStateSaysSo() {
		InMemoryMetadataExchange exchange = track(new InMemoryMetadataExchange());
		NixlAgent agent = agent("decode");
		MetadataPublication publication = publication(exchange, agent);

		assertThat(publication.state().status()).isEqualTo(MetadataPublication.Status.NEW);
		assertThat(exchange.isPublished(agent.name())).isFalse();
		assertThat(publication.toString()).contains(agent.name()).contains("NEW");
	}

}
