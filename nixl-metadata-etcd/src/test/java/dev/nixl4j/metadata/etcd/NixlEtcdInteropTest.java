package dev.nixl4j.metadata.etcd;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import dev.nixl4j.testsupport.Eventually;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * NIXL's built-in etcd exchange ({@link NixlEtcdMetadata}) and the Java one
 * ({@link EtcdMetadataExchange}) find each other's agents in a real etcd, and the
 * metadata carries real transfers.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class NixlEtcdInteropTest extends EtcdAgentTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final AtomicInteger ids = new AtomicInteger();

	private static String name(String role, TestInfo info) {
		return role + "-" + info.getTestMethod().map(m -> m.getName()).orElse("t") + "-" + ids.incrementAndGet();
	}

	private NixlAgent plainAgent(String role, TestInfo info) {
		return track(NixlAgent.create(AgentConfig.builder(name(role, info)).build()));
	}

	private NixlAgent nixlEtcdAgent(String role, TestInfo info) {
		return track(NixlAgent
			.create(NixlEtcdMetadata.configure(AgentConfig.builder(name(role, info)), etcd.endpoint()).build()));
	}

	private static NixlEtcdMetadata nixlEtcd(NixlAgent agent) {
		return agent.etcdMetadata().orElseThrow();
	}

	private MemorySegment registered(NixlAgent agent, long seed) {
		Arena arena = track(Arena.ofShared());
		MemorySegment segment = Bytes.pattern(arena, 1 << 20, seed);
		agent.register(segment);
		return segment;
	}

	private EtcdMetadataExchange javaExchange() {
		return track(EtcdMetadataExchange.builder().endpoints(etcd.endpoint()).build());
	}

	private static void write(NixlAgent initiator, MemorySegment local, MemorySegment remote, String target) {
		try (Transfer transfer = initiator.transfer(XferOp.WRITE, DescriptorList.of(local), DescriptorList.of(remote),
				target, null)) {
			transfer.await(WAIT);
			assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
		}
	}

	private static List<KeyValue> get(String key) throws Exception {
		return raw.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS).getKvs();
	}

	@Test
	void aJavaExchangeFetchesWhatNixlPublished(TestInfo info) throws Exception {
		NixlAgent target = nixlEtcdAgent("nixl-target", info);
		MemorySegment remote = registered(target, 2);
		NixlAgent initiator = plainAgent("java-init", info);
		MemorySegment local = registered(initiator, 1);

		nixlEtcd(target).publish();
		EtcdMetadataExchange exchange = javaExchange();
		initiator.loadRemoteMetadata(exchange.fetch(target.name(), WAIT));

		// NIXL stores exactly get_local_md's bytes under the same key, without a lease
		List<KeyValue> stored = get(exchange.key(target.name()));
		assertThat(stored).singleElement().satisfies(kv -> {
			assertThat(kv.getValue().getBytes()).isEqualTo(target.localMetadata().toByteArray());
			assertThat(kv.getLease()).isZero();
		});
		write(initiator, local, remote, target.name());
		assertThat(Bytes.hasPattern(remote, 1)).isTrue();
	}

	@Test
	void nixlFetchesWhatAJavaExchangePublishedAndForgetsItWhenWithdrawn(TestInfo info) {
		NixlAgent target = plainAgent("java-target", info);
		MemorySegment remote = registered(target, 2);
		NixlAgent initiator = nixlEtcdAgent("nixl-init", info);
		MemorySegment local = registered(initiator, 1);
		EtcdMetadataExchange exchange = javaExchange();
		exchange.publish(target);

		nixlEtcd(initiator).load(target.name(), WAIT);
		assertThat(initiator.hasRemoteMetadata(target.name())).isTrue();
		write(initiator, local, remote, target.name());
		assertThat(Bytes.hasPattern(remote, 1)).isTrue();

		// NIXL watches the agent's anchor key, which the Java exchange writes and deletes
		// too
		exchange.invalidate(target.name());
		Eventually.until(WAIT, "NIXL forgets " + target.name(), () -> !initiator.hasRemoteMetadata(target.name()));
	}

	@Test
	void nixlsInvalidateWithdrawsTheKeysAndJavaWatchersHearIt(TestInfo info) throws Exception {
		NixlAgent target = nixlEtcdAgent("nixl-target", info);
		registered(target, 2);
		NixlEtcdMetadata nixl = nixlEtcd(target);
		nixl.publish();
		EtcdMetadataExchange exchange = javaExchange();
		exchange.fetch(target.name(), WAIT);
		java.util.concurrent.CompletableFuture<String> removed = new java.util.concurrent.CompletableFuture<>();
		exchange.watch(target.name(), removed::complete);

		nixl.invalidate();

		assertThat(removed).succeedsWithin(WAIT).isEqualTo(target.name());
		assertThat(get(exchange.key(target.name()))).isEmpty();
	}

	@Test
	void eachAgentGetsTheNamespaceItsConfigurationSet(TestInfo info) throws Exception {
		String namespace = "/nixl4j-test/" + ids.incrementAndGet();
		NixlAgent scoped = track(NixlAgent
			.create(NixlEtcdMetadata.configure(AgentConfig.builder(name("scoped", info)), etcd.endpoint(), namespace)
				.build()));
		registered(scoped, 2);
		NixlAgent unscoped = nixlEtcdAgent("default", info);
		registered(unscoped, 3);
		NixlAgent plain = plainAgent("plain", info);

		nixlEtcd(scoped).publish();
		nixlEtcd(unscoped).publish();

		EtcdMetadataExchange inNamespace = track(
				EtcdMetadataExchange.builder().endpoints(etcd.endpoint()).namespace(namespace).build());
		assertThat(inNamespace.fetch(scoped.name(), WAIT)).isEqualTo(scoped.localMetadata());
		assertThat(get(namespace + "/" + scoped.name() + "/metadata")).hasSize(1);
		assertThat(javaExchange().fetch(unscoped.name(), WAIT)).isEqualTo(unscoped.localMetadata());
		// the variables applied to the agents that asked for them only
		assertThat(plain.etcdMetadata()).isEmpty();
	}

	@Test
	void nixlsLoadFailsAtTheDeadlineNamingAnAgentThatNeverPublishes(TestInfo info) {
		NixlAgent initiator = nixlEtcdAgent("nixl-init", info);
		NixlEtcdMetadata nixl = nixlEtcd(initiator);
		long start = System.nanoTime();
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> nixl.load("nobody-publishes-this", Duration.ofSeconds(1)));
		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(failure.getMessage()).contains("nobody-publishes-this");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
	}

}
