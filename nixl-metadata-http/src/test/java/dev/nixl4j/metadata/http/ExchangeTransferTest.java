package dev.nixl4j.metadata.http;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Real agents find each other through an exchange, move data, and forget each other when
 * the exchange withdraws the metadata.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ExchangeTransferTest {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final String TOKEN = "transfer-test-token-" + Long.toHexString(new Random().nextLong());

	private static final AtomicInteger ids = new AtomicInteger();

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Test
	void inMemoryExchangeConnectsAgentsAndInvalidateMakesThemForget() throws Exception {
		try (InMemoryMetadataExchange exchange = new InMemoryMetadataExchange()) {
			transferThenForget(exchange, exchange);
		}
	}

	@Test
	void httpExchangeConnectsAgentsAndDeleteMakesThemForget() throws Exception {
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(TOKEN).start();
				HttpMetadataExchange publisher = client(server);
				HttpMetadataExchange fetcher = client(server)) {
			transferThenForget(publisher, fetcher);
		}
	}

	@Test
	void corruptMetadataNeverReachesTheAgent() {
		try (InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();
				NixlAgent agent = NixlAgent.create(AgentConfig.builder("corrupt-" + ids.incrementAndGet()).build())) {
			byte[] random = new byte[1024];
			new Random(7).nextBytes(random);
			exchange.publish("peer", AgentMetadata.of(random));
			NixlException failure = catchThrowableOfType(NixlException.class,
					() -> exchange.load(agent, "peer", Duration.ofSeconds(1)));
			assertThat(failure.status()).isEqualTo(NixlStatus.INVALID_METADATA);
			assertThat(agent.remoteAgents()).isEmpty();
		}
	}

	private static HttpMetadataExchange client(MetadataHttpServer server) {
		return HttpMetadataExchange.builder(server.baseUri())
			.token(TOKEN)
			.pollInterval(Duration.ofMillis(50))
			.maxRetryInterval(Duration.ofMillis(100))
			.build();
	}

	private static void transferThenForget(MetadataExchange publisher, MetadataExchange fetcher) throws Exception {
		int id = ids.incrementAndGet();
		try (Arena arena = Arena.ofShared();
				NixlAgent initiator = NixlAgent.create(AgentConfig.builder("initiator-" + id).build());
				NixlAgent target = NixlAgent.create(AgentConfig.builder("target-" + id).build())) {
			MemorySegment local = Bytes.pattern(arena, 1 << 20, 1);
			MemorySegment remote = Bytes.pattern(arena, 1 << 20, 2);
			initiator.register(local);
			target.register(remote);
			publisher.publish(target);

			MetadataExchange.Watch loaded = fetcher.load(initiator, target.name(), WAIT);
			try (Transfer transfer = initiator.transfer(XferOp.WRITE, DescriptorList.of(local),
					DescriptorList.of(remote), target.name(), null)) {
				transfer.await(WAIT);
				assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
			}
			assertThat(Bytes.hasPattern(remote, 1)).isTrue();
			assertThat(initiator.remoteAgents()).contains(target.name());

			// watches of one peer are told in the order they were created: the load's
			// comes first
			CompletableFuture<String> removed = new CompletableFuture<>();
			fetcher.watch(target.name(), removed::complete);
			publisher.invalidate(target.name());
			assertThat(removed.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(target.name());
			assertThat(initiator.remoteAgents()).doesNotContain(target.name());
			loaded.close();
		}
	}

}
