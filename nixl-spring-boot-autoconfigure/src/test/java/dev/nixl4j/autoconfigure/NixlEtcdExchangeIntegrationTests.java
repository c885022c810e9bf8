package dev.nixl4j.autoconfigure;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.testsupport.EtcdServerExtension;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.metadata.MetadataExchange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code nixl.metadata.exchange=etcd} against a real etcd server: applications publish
 * their agent at start, find each other through the exchange bean, transfer, and withdraw
 * at stop. Skips locally without etcd (with the install command); fails in CI.
 */
class NixlEtcdExchangeIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@RegisterExtension
	static final EtcdServerExtension etcd = new EtcdServerExtension();

	private ApplicationContextRunner application(String name) {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.agent.name=" + name,
					"nixl.embedded.in-process-copies=false", "nixl.metadata.exchange=etcd",
					"nixl.metadata.etcd.endpoints=" + etcd.endpoint(), "nixl.metadata.etcd.namespace=/nixl4j-it/");
	}

	@Test
	void twoApplicationsFindEachOtherTransferAndWithdrawAtStop() {
		AtomicReference<MetadataExchange.Watch> watchOfB = new AtomicReference<>();
		application("etcd-a").run(a -> {
			assertThat(a).hasNotFailed();
			NixlAgent agentA = a.getBean(NixlAgent.class);
			MetadataExchange exchangeA = a.getBean(MetadataExchange.class);
			try (Arena arena = Arena.ofShared()) {
				MemorySegment memoryA = Bytes.pattern(arena, 1 << 20, 1);
				try (Registration registrationA = agentA.register(memoryA)) {
					a.getBean(NixlLifecycle.class).republish();
					application("etcd-b").run(b -> {
						assertThat(b).hasNotFailed();
						NixlAgent agentB = b.getBean(NixlAgent.class);
						MetadataExchange exchangeB = b.getBean(MetadataExchange.class);
						MemorySegment memoryB = Bytes.pattern(arena, 1 << 20, 2);
						try (Registration registrationB = agentB.register(memoryB)) {
							b.getBean(NixlLifecycle.class).republish();
							// A watches B from now on; B's own watch of A ends with B
							watchOfB.set(exchangeA.load(agentA, "etcd-b", WAIT));
							exchangeB.load(agentB, "etcd-a", WAIT);
							MemorySegment readByA = memoryA.asSlice(0, 1 << 19);
							try (Transfer read = agentA.createTransfer(XferOp.READ, DescriptorList.of(readByA),
									DescriptorList.of(memoryB.asSlice(0, 1 << 19)), "etcd-b", null)) {
								read.post();
								read.await(WAIT);
							}
							assertThat(Bytes.same(readByA, Bytes.pattern(arena, 1 << 20, 2).asSlice(0, 1 << 19)))
								.as("A read B's bytes over TCP")
								.isTrue();
							try (Transfer write = agentB.createTransfer(XferOp.WRITE, DescriptorList.of(memoryB),
									DescriptorList.of(memoryA), "etcd-a", null)) {
								write.post();
								write.await(WAIT);
							}
							assertThat(Bytes.hasPattern(memoryA, 2)).as("B wrote its bytes into A").isTrue();
						}
					});
					// B stopped: its key is gone, and A's watch made A's agent forget it
					NixlException gone = catchThrowableOfType(NixlException.class,
							() -> exchangeA.fetch("etcd-b", Duration.ofMillis(300)));
					assertThat(gone.status()).isEqualTo(NixlStatus.TIMEOUT);
					Eventually.until(WAIT, "A forgets B", () -> !agentA.hasRemoteMetadata("etcd-b"));
					watchOfB.get().close();
					assertThat(exchangeA.fetch("etcd-a", WAIT).toByteArray())
						.isEqualTo(agentA.localMetadata().toByteArray());
				}
			}
		});
	}

	@Test
	void aUserEtcdConnectionDetailsBeanWinsOverTheProperties() {
		application("etcd-own-details").withPropertyValues("nixl.metadata.etcd.endpoints=http://127.0.0.1:1")
			.withBean(EtcdConnectionDetails.class, () -> () -> List.of(etcd.endpoint()))
			.run(context -> {
				// publishing at start reached etcd through the bean, not the unreachable
				// property
				assertThat(context).hasNotFailed();
				AgentMetadata published = context.getBean(MetadataExchange.class)
					.fetch("etcd-own-details", Duration.ofSeconds(5));
				assertThat(published.toByteArray())
					.isEqualTo(context.getBean(NixlAgent.class).localMetadata().toByteArray());
			});
	}

}
