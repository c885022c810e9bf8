package dev.nixl4j.autoconfigure;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.autoconfigure.health.NixlHealthContributorAutoConfiguration;
import dev.nixl4j.autoconfigure.health.NixlHealthIndicator;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.http.MetadataHttpServer;
import dev.nixl4j.metadata.MetadataPublication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's agent keeps its entry published: the entry removed from the exchange
 * comes back, and the {@code nixl} health is {@code OUT_OF_SERVICE} while it is not
 * published and {@code UP} again once it is.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NixlMetadataPublicationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(NixlAutoConfiguration.class, NixlHealthContributorAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.metadata.check-interval=100ms");

	@Test
	void healthIsOutOfServiceWhileTheEntryIsGoneAndUpOnceItIsPublishedAgain() {
		InMemoryMetadataExchange store = new InMemoryMetadataExchange();
		AtomicBoolean refusing = new AtomicBoolean();
		this.runner.withBean("registry", MetadataExchange.class, () -> new ForwardingMetadataExchange(store) {
			@Override
			public void publish(String agentName, AgentMetadata metadata) {
				if (refusing.get()) {
					throw new NixlException(NixlStatus.UNAVAILABLE, "send_local_md", null, agentName,
							"the registry is down");
				}
				super.publish(agentName, metadata);
			}
		}).run(context -> {
			String name = context.getBean(NixlAgent.class).name();
			NixlHealthIndicator health = context.getBean(NixlHealthIndicator.class);
			assertThat(store.isPublished(name)).isTrue();
			assertThat(health.health().getStatus()).isEqualTo(Status.UP);

			// the entry disappears while the registry refuses: it cannot come back yet
			refusing.set(true);
			store.invalidate(name);
			// out of service at once; the reason gains the registry's answer once the
			// first attempt to
			// publish again has failed
			Health down = await(health, h -> h.getStatus().equals(Status.OUT_OF_SERVICE)
					&& String.valueOf(metadataDetail(h).get("reason")).contains("the registry is down"));
			assertThat(metadataDetail(down)).containsEntry("status", MetadataPublication.Status.NOT_PUBLISHED)
				.hasEntrySatisfying("reason", reason -> assertThat(reason.toString())
					.contains("'" + name + "' was removed from the exchange", "the registry is down"));

			refusing.set(false);
			long back = System.nanoTime();
			Health up = await(health, h -> h.getStatus().equals(Status.UP));
			System.out.printf("health UP %.0f ms after the registry accepted publications again%n",
					(System.nanoTime() - back) / 1e6);
			assertThat(store.isPublished(name)).isTrue();
			assertThat(metadataDetail(up)).containsEntry("status", MetadataPublication.Status.PUBLISHED)
				.doesNotContainKey("reason");
			assertThat(context.getBean(NixlLifecycle.class).publication().republications()).isEqualTo(1);
		});
		store.close();
	}

	@Test
	void anEntryDeletedFromAnHttpRegistryIsPublishedAgainAndWithdrawnAtShutdown() {
		String token = "tok-" + UUID.randomUUID();
		InMemoryMetadataExchange store = new InMemoryMetadataExchange();
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(token).store(store).start()) {
			String[] name = new String[1];
			this.runner
				.withPropertyValues("nixl.metadata.exchange=http", "nixl.metadata.http.endpoint=" + server.baseUri(),
						"nixl.metadata.http.token=" + token, "nixl.metadata.http.serve=false")
				.run(context -> {
					name[0] = context.getBean(NixlAgent.class).name();
					NixlHealthIndicator health = context.getBean(NixlHealthIndicator.class);
					assertThat(store.isPublished(name[0])).isTrue();

					long removed = System.nanoTime();
					store.invalidate(name[0]);

					awaitTrue(() -> store.isPublished(name[0]));
					System.out.printf("HTTP registry: entry back %.0f ms after its removal%n",
							(System.nanoTime() - removed) / 1e6);
					assertThat(store.fetch(name[0], Duration.ZERO))
						.isEqualTo(context.getBean(NixlAgent.class).localMetadata());
					Health up = await(health, h -> h.getStatus().equals(Status.UP)
							&& Long.valueOf(1).equals(metadataDetail(h).get("republications")));
					assertThat(metadataDetail(up)).containsEntry("status", MetadataPublication.Status.PUBLISHED);
				});
			assertThat(store.isPublished(name[0])).as("withdrawn at shutdown").isFalse();
		}
		store.close();
	}

	@Test
	void anApplicationWhoseRegistryIsNotListeningYetStartsOutOfServiceAndPublishesOnceItListens() throws Exception {
		String token = "tok-" + UUID.randomUUID();
		int port;
		try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = probe.getLocalPort();
		}
		InMemoryMetadataExchange store = new InMemoryMetadataExchange();
		MetadataHttpServer[] server = new MetadataHttpServer[1];
		try {
			this.runner
				.withPropertyValues("nixl.metadata.exchange=http",
						"nixl.metadata.http.endpoint=http://127.0.0.1:" + port + "/nixl",
						"nixl.metadata.http.token=" + token, "nixl.metadata.http.serve=false")
				.run(context -> {
					assertThat(context).hasNotFailed();
					String name = context.getBean(NixlAgent.class).name();
					NixlHealthIndicator health = context.getBean(NixlHealthIndicator.class);
					Health waiting = health.health();
					assertThat(waiting.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
					assertThat(metadataDetail(waiting)).containsEntry("status",
							MetadataPublication.Status.NOT_PUBLISHED);

					server[0] = MetadataHttpServer.builder()
						.address(InetAddress.getLoopbackAddress())
						.port(port)
						.token(token)
						.store(store)
						.start();
					Health up = await(health, h -> h.getStatus().equals(Status.UP));
					assertThat(metadataDetail(up)).containsEntry("status", MetadataPublication.Status.PUBLISHED);
					assertThat(store.fetch(name, Duration.ZERO))
						.isEqualTo(context.getBean(NixlAgent.class).localMetadata());
				});
		}
		finally {
			if (server[0] != null) {
				server[0].close();
			}
			store.close();
		}
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> metadataDetail(Health health) {
		return (Map<String, Object>) health.getDetails().get("metadata");
	}

	private static Health await(NixlHealthIndicator indicator, Predicate<Health> condition) {
		long deadline = System.nanoTime() + WAIT.toNanos();
		Health health = indicator.health();
		while (!condition.test(health)) {
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("health not as expected within " + WAIT + ": " + health);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			health = indicator.health();
		}
		return health;
	}

	private static void awaitTrue(java.util.function.BooleanSupplier condition) {
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("not true within " + WAIT);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

}
