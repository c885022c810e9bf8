package dev.nixl4j.metadata.etcd;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.EtcdServer;
import dev.nixl4j.testsupport.EtcdServerExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link EtcdMetadataExchange} when etcd is not there: clear errors within the deadline,
 * and recovery of publishing, fetching, leases and watches once etcd is back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EtcdOutageTest {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);

	private static NixlAgent agent;

	private static Arena arena;

	/** Each test's own etcd, which it starts, stops and wipes. */
	@RegisterExtension
	final EtcdServerExtension etcdPerTest = EtcdServerExtension.notStarted();

	@BeforeAll
	static void createAgent() {
		NativeNixl.require();
		EtcdServer.require();
		arena = Arena.ofShared();
		agent = NixlAgent.create(AgentConfig.builder("outage-" + ProcessHandle.current().pid()).build());
		agent.register(Bytes.pattern(arena, 1 << 16, 5));
	}

	@AfterAll
	static void closeAgent() {
		if (agent != null) {
			agent.close();
		}
		if (arena != null) {
			arena.close();
		}
	}

	private static EtcdMetadataExchange exchange(EtcdServer etcd) {
		return EtcdMetadataExchange.builder()
			.endpoints(etcd.endpoint())
			.leaseTtl(Duration.ofSeconds(2))
			.operationTimeout(OPERATION_TIMEOUT)
			.build();
	}

	private static void assertFailsClearly(NixlException failure, EtcdServer etcd, Duration took, Duration limit) {
		assertThat(failure.status()).isIn(NixlStatus.UNAVAILABLE, NixlStatus.TIMEOUT);
		if (failure.status() == NixlStatus.UNAVAILABLE) {
			assertThat(failure.getMessage()).contains(etcd.endpoint());
		}
		assertThat(took).isLessThan(limit);
	}

	/**
	 * Publishes once etcd answers again. Each call has the 1 s operation timeout, but
	 * gRPC reconnects on its own back-off, which after an outage of a few seconds is
	 * itself a few seconds: recovery is bounded by that, so calls made meanwhile fail
	 * clearly and a later one succeeds.
	 */
	private static void publishOnceReachable(EtcdMetadataExchange exchange) {
		Eventually.until(WAIT, "publishing works again", () -> {
			try {
				exchange.publish(agent);
				return true;
			}
			catch (NixlException ex) {
				assertThat(ex.status()).isEqualTo(NixlStatus.UNAVAILABLE);
				return false;
			}
		});
	}

	private static Duration since(long start) {
		return Duration.ofNanos(System.nanoTime() - start);
	}

	@Test
	void etcdDownAtStartFailsClearlyWithinTheDeadlineThenWorksOnceStarted() {
		EtcdServer etcd = this.etcdPerTest.server();
		try (EtcdMetadataExchange exchange = exchange(etcd)) {
			long start = System.nanoTime();
			NixlException publish = catchThrowableOfType(NixlException.class, () -> exchange.publish(agent));
			assertFailsClearly(publish, etcd, since(start), OPERATION_TIMEOUT.plusSeconds(2));
			assertThat(publish.status()).isEqualTo(NixlStatus.UNAVAILABLE);

			start = System.nanoTime();
			NixlException fetch = catchThrowableOfType(NixlException.class,
					() -> exchange.fetch(agent.name(), Duration.ofMillis(1500)));
			assertFailsClearly(fetch, etcd, since(start), Duration.ofSeconds(4));
			assertThat(fetch.getMessage()).contains(agent.name());

			etcd.startAgain();

			publishOnceReachable(exchange);
			assertThat(exchange.fetch(agent.name(), WAIT)).isEqualTo(agent.localMetadata());
		}
	}

	@Test
	void afterARestartOnTheSameDataPublishingFetchingAndWatchingRecover() throws Exception {
		EtcdServer etcd = this.etcdPerTest.server();
		etcd.startAgain();
		try (EtcdMetadataExchange publisher = exchange(etcd); EtcdMetadataExchange watcher = exchange(etcd)) {
			publisher.publish(agent);
			assertThat(watcher.fetch(agent.name(), WAIT)).isEqualTo(agent.localMetadata());
			CompletableFuture<String> removed = new CompletableFuture<>();
			watcher.watch(agent.name(), removed::complete);

			etcd.stop();
			long start = System.nanoTime();
			NixlException publish = catchThrowableOfType(NixlException.class, () -> publisher.publish(agent));
			assertFailsClearly(publish, etcd, since(start), OPERATION_TIMEOUT.plusSeconds(2));
			start = System.nanoTime();
			NixlException fetch = catchThrowableOfType(NixlException.class,
					() -> watcher.fetch(agent.name(), Duration.ofMillis(1500)));
			assertFailsClearly(fetch, etcd, since(start), Duration.ofSeconds(4));

			etcd.startAgain();

			// the key survived with its lease, which the publisher keeps alive again
			assertThat(watcher.fetch(agent.name(), WAIT)).isEqualTo(agent.localMetadata());
			publishOnceReachable(publisher);
			assertThat(removed).isNotDone();
			try (Client raw = Client.builder().endpoints(etcd.endpoint()).build()) {
				raw.getKVClient()
					.delete(ByteSequence.from(publisher.key(agent.name()), StandardCharsets.UTF_8))
					.get(10, TimeUnit.SECONDS);
			}
			assertThat(removed).succeedsWithin(WAIT).isEqualTo(agent.name());
		}
	}

	@Test
	void whenEtcdLostTheLeaseThePublisherPutsItsKeysBackUnderANewOne() throws Exception {
		EtcdServer etcd = this.etcdPerTest.server();
		etcd.startAgain();
		try (EtcdMetadataExchange publisher = exchange(etcd)) {
			publisher.publish(agent);
			etcd.stop();
			etcd.wipe();
			etcd.startAgain();

			try (Client raw = Client.builder().endpoints(etcd.endpoint()).build()) {
				ByteSequence key = ByteSequence.from(publisher.key(agent.name()), StandardCharsets.UTF_8);
				Eventually.until(WAIT, "the key is published again", () -> !get(raw, key).isEmpty());
				KeyValue kv = get(raw, key).get(0);
				assertThat(kv.getLease()).isNotZero();
				assertThat(AgentMetadata.of(kv.getValue().getBytes())).isEqualTo(agent.localMetadata());
				// withdrawn keys stay withdrawn
				publisher.invalidate(agent.name());
				raw.getKVClient().delete(key, DeleteOption.DEFAULT).get(10, TimeUnit.SECONDS);
				assertThat(get(raw, key)).isEmpty();
			}
		}
	}

	private static List<KeyValue> get(Client raw, ByteSequence key) {
		try {
			return raw.getKVClient().get(key).get(10, TimeUnit.SECONDS).getKvs();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
