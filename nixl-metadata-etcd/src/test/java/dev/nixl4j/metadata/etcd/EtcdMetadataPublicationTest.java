package dev.nixl4j.metadata.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import io.etcd.jetcd.ByteSequence;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Eventually;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link MetadataPublication} on {@link EtcdMetadataExchange} with a real etcd: an entry
 * that is there is not republished by the checks, and one deleted behind the exchange's
 * back comes back.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EtcdMetadataPublicationTest extends EtcdAgentTests {

	private static final AtomicInteger ids = new AtomicInteger();

	@Test
	void checksLeaveAPublishedEntryAloneAndADeletedOneComesBack() throws Exception {
		EtcdMetadataExchange exchange = track(EtcdMetadataExchange.builder()
			.endpoints(etcd.endpoint())
			.leaseTtl(Duration.ofSeconds(5))
			.operationTimeout(Duration.ofSeconds(3))
			.build());
		NixlAgent agent = track(
				NixlAgent.create(AgentConfig.builder("etcd-published-" + ids.incrementAndGet()).build()));
		MetadataPublication publication = track(
				MetadataPublication.builder(exchange, agent).checkInterval(Duration.ofMillis(100)).build());
		publication.publish();
		ByteSequence key = ByteSequence.from(exchange.key(agent.name()), StandardCharsets.UTF_8);

		// ten checks of an entry that is there
		Thread.sleep(1000);
		assertThat(publication.republications()).isZero();
		assertThat(publication.state().status()).isEqualTo(MetadataPublication.Status.PUBLISHED);

		long deleted = System.nanoTime();
		raw.getKVClient().delete(key).get(10, TimeUnit.SECONDS);

		Eventually.until(Duration.ofSeconds(1), "the key is back", () -> {
			try {
				return !raw.getKVClient().get(key).get(10, TimeUnit.SECONDS).getKvs().isEmpty();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		System.out.printf("etcd: key back %.1f ms after its deletion%n", (System.nanoTime() - deleted) / 1e6);
		assertThat(exchange.fetch(agent.name(), Duration.ofSeconds(5))).isEqualTo(agent.localMetadata());
		Eventually.until(Duration.ofSeconds(1), "counted", () -> publication.republications() == 1);
	}

}
