package dev.nixl4j.autoconfigure;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.etcd.EtcdMetadataExchange;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.EtcdServerExtension;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code nixl.metadata.exchange=nixl-etcd} against a real etcd server: NIXL's own client
 * of each native agent publishes it at start, the KV peer loader loads peers through it,
 * and stopping the application withdraws the agent's keys. There is no
 * {@link MetadataExchange} bean.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NixlOwnEtcdIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final String NAMESPACE = "/nixl4j-own-it/";

	@RegisterExtension
	static final EtcdServerExtension etcd = new EtcdServerExtension();

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	private ApplicationContextRunner application(String name) {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=native", "nixl.agent.name=" + name,
					"nixl.metadata.exchange=nixl-etcd", "nixl.metadata.etcd.endpoints=" + etcd.endpoint(),
					"nixl.metadata.etcd.namespace=" + NAMESPACE, "nixl.kv.layers=2", "nixl.kv.blocks=4",
					"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64", "nixl.kv.block-size=16");
	}

	private static void write(NixlAgent initiator, MemorySegment local, MemorySegment remote, String target) {
		try (Transfer transfer = initiator.transfer(XferOp.WRITE, DescriptorList.of(local), DescriptorList.of(remote),
				target, null)) {
			transfer.await(WAIT);
			assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
		}
	}

	@Test
	void applicationsPublishAtStartLoadPeersAndWithdrawAtStop() {
		try (EtcdMetadataExchange observer = EtcdMetadataExchange.builder()
			.endpoints(etcd.endpoint())
			.namespace(NAMESPACE)
			.build(); Arena arena = Arena.ofShared()) {
			application("own-a").run(a -> {
				assertThat(a).hasNotFailed()
					.doesNotHaveBean(MetadataExchange.class)
					.hasSingleBean(NixlEtcdMetadata.class);
				NixlAgent agentA = a.getBean(NixlAgent.class);
				PeerLoader peersOfA = a.getBean(PeerLoader.class);
				// published at start, KV cache included
				assertThat(observer.fetch("own-a", WAIT)).isEqualTo(agentA.localMetadata());
				MemorySegment memoryA = Bytes.pattern(arena, 1 << 20, 1);
				try (Registration registrationA = agentA.register(memoryA)) {
					a.getBean(NixlLifecycle.class).republish();
					Eventually.until(WAIT, "the republished metadata of own-a is in etcd",
							() -> observer.fetch("own-a", WAIT).equals(agentA.localMetadata()));
					application("own-b").run(b -> {
						assertThat(b).hasNotFailed();
						NixlAgent agentB = b.getBean(NixlAgent.class);
						MemorySegment memoryB = Bytes.pattern(arena, 1 << 20, 2);
						try (Registration registrationB = agentB.register(memoryB)) {
							b.getBean(PeerLoader.class).load(agentB, "own-a", WAIT);
							write(agentB, memoryB, memoryA, "own-a");
							assertThat(Bytes.hasPattern(memoryA, 2)).as("B wrote its bytes into A").isTrue();
							peersOfA.load(agentA, "own-b", WAIT);
							assertThat(agentA.hasRemoteMetadata("own-b")).isTrue();
						}
					});
					// B stopped: its keys are gone
					Eventually.until(WAIT, "own-b's keys are deleted", () -> {
						NixlException gone = catchThrowableOfType(NixlException.class,
								() -> observer.fetch("own-b", Duration.ofMillis(300)));
						return gone != null && gone.status() == NixlStatus.TIMEOUT;
					});
					// A forgets B when NIXL's watch of B's key sees the deletion; NIXL
					// sets that
					// watch up on its own thread after the fetch, so a deletion that
					// comes first
					// may go unseen. Once forgotten, a new load fails at its deadline.
					if (!agentA.hasRemoteMetadata("own-b")) {
						long start = System.nanoTime();
						NixlException failure = catchThrowableOfType(NixlException.class,
								() -> peersOfA.load(agentA, "own-b", Duration.ofSeconds(1)));
						assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
						assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
					}
				}
			});
		}
	}

	@Test
	void anEmbeddedAgentCannotUseNixlsEtcd() {
		application("own-embedded").withPropertyValues("nixl.agent.engine=embedded")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOfSatisfying(NixlException.class,
						failure -> assertThat(failure.status()).isEqualTo(NixlStatus.NOT_SUPPORTED)));
	}

}
