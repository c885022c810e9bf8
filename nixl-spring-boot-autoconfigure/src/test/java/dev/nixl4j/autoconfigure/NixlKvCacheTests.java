package dev.nixl4j.autoconfigure;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaException;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvPart;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The managed KV cache of two applications: the consumer finds the producer through the
 * metadata exchange, pulls a request's blocks and the producer's lease is confirmed.
 */
class NixlKvCacheTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void theProducersLeasesLastTheLeaseTtlPropertyAndGiveTheirBlocksBackWhenTheyEnd() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.kv.layers=2", "nixl.kv.blocks=8",
					"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64", "nixl.kv.lease-ttl=300ms")
			.run((context) -> {
				KvProducer producer = context.getBean(KvProducer.class);
				PagedKvCache cache = context.getBean(PagedKvCache.class);
				KvLease lease = producer.lease("req-ttl", cache.allocator().allocate(3));

				assertThat(producer.leaseTtl()).isEqualTo(Duration.ofMillis(300));
				assertThat(lease.ttl()).isEqualTo(Duration.ofMillis(300));
				assertThat(lease.outcome().get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(LeaseOutcome.EXPIRED);
				assertThat(cache.allocator().freeCount()).isEqualTo(8);
			});
	}

	@Test
	void withoutTheLeaseTtlPropertyTheProducerKeepsItsDefault() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.kv.layers=2", "nixl.kv.blocks=8",
					"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64")
			.run((context) -> assertThat(context.getBean(KvProducer.class).leaseTtl())
				.isEqualTo(KvProducer.DEFAULT_LEASE_TTL));
	}

	@ParameterizedTest
	@ValueSource(strings = { "embedded", "native" })
	void aConsumerPullsLeasedBlocksFoundThroughTheExchange(String engine) {
		if (engine.equals("native")) {
			NativeNixl.require();
		}
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withBean("registry", MetadataExchange.class, () -> new NixlAutoConfigurationTests.NamedExchange(registry))
			.withPropertyValues("nixl.agent.engine=" + engine, "nixl.kv.layers=3", "nixl.kv.blocks=16",
					"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64", "nixl.kv.block-size=16");
		runner.run(prefill -> runner.run(decode -> {
			PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
			int[] blocks = producerCache.allocator().allocate(3);
			for (int layer = 0; layer < 3; layer++) {
				for (KvPart part : new KvPart[] { KvPart.K, KvPart.V }) {
					for (int block : blocks) {
						fill(producerCache.block(layer, part, block), layer * 1000 + part.ordinal() * 100 + block);
					}
				}
			}
			KvLease lease = prefill.getBean(KvProducer.class).lease("req-1", blocks);

			KvConsumer consumer = decode.getBean(KvConsumer.class);
			PagedKvCache consumerCache = decode.getBean(PagedKvCache.class);
			consumer.connect(prefill.getBean(KvProducer.class).handle());
			int[] local = consumerCache.allocator().allocate(3);
			long bytes = consumer.pull(lease.params(), local, WAIT);

			assertThat(bytes).isEqualTo(3L * 3 * 2 * producerCache.layout().blockLength());
			for (int layer = 0; layer < 3; layer++) {
				for (KvPart part : new KvPart[] { KvPart.K, KvPart.V }) {
					for (int i = 0; i < blocks.length; i++) {
						assertThat(consumerCache.block(layer, part, local[i])
							.mismatch(producerCache.block(layer, part, blocks[i])))
							.as("layer %d %s block %d", layer, part, i)
							.isEqualTo(-1);
					}
				}
			}
			assertThat(lease.outcome().get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(LeaseOutcome.COMPLETED);
		}));
	}

	@Test
	void aStoppingProducerLetsAConsumerReadItsLeasedBlocksFirst() throws Exception {
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withBean("registry", MetadataExchange.class, () -> new NixlAutoConfigurationTests.NamedExchange(registry))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.kv.layers=2", "nixl.kv.blocks=8",
					"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64", "nixl.shutdown.timeout=30s");
		runner.run(prefill -> runner.run(decode -> {
			PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
			int[] blocks = producerCache.allocator().allocate(2);
			for (int region = 0; region < producerCache.layout().regionCount(); region++) {
				for (int block : blocks) {
					fill(producerCache.block(region, block), region * 100 + block);
				}
			}
			KvProducer producer = prefill.getBean(KvProducer.class);
			KvLease lease = producer.lease("req-stop", blocks);
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			consumer.connect(producer.handle());
			NixlLifecycle lifecycle = prefill.getBean(NixlLifecycle.class);
			NixlAgent agent = prefill.getBean(NixlAgent.class);

			CompletableFuture<Void> closing = CompletableFuture.runAsync(prefill::close);
			long deadline = System.nanoTime() + WAIT.toNanos();
			while (!lifecycle.isStopping() && !closing.isDone() && System.nanoTime() - deadline < 0) {
				LockSupport.parkNanos(1_000_000);
			}
			assertThat(lifecycle.isStopping()).as("the producer's application is stopping").isTrue();
			assertThat(closing).as("stop waits for the lease").isNotDone();

			PagedKvCache consumerCache = decode.getBean(PagedKvCache.class);
			int[] local = consumerCache.allocator().allocate(2);
			consumer.pull(lease.params(), local, WAIT);
			for (int region = 0; region < consumerCache.layout().regionCount(); region++) {
				for (int i = 0; i < blocks.length; i++) {
					// The producer's cache closes once the lease is confirmed: compare
					// with the values written.
					MemorySegment expected = MemorySegment
						.ofArray(new byte[(int) producerCache.layout().blockLength()]);
					fill(expected, region * 100 + blocks[i]);
					assertThat(consumerCache.block(region, local[i]).mismatch(expected)).isEqualTo(-1);
				}
			}
			closing.get(WAIT.toSeconds(), TimeUnit.SECONDS);
			assertThat(lease.outcome().get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(LeaseOutcome.COMPLETED);
			assertThat(agent.isOpen()).isFalse();
		}));
	}

	@Test
	void aDeviceThatIsNeitherCpuNorCudaIsRefusedByItsOwnRule() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.kv.layers=2", "nixl.kv.device=gpu0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("kv.device")
				.hasMessageContaining("device must be \"cpu\" or \"cuda:<id>\", was \"gpu0\""));
	}

	@Test
	void aCacheOnACudaDeviceIsInVramOrRefusedWithATypedAnswer() {
		CudaReport cuda = Cuda.report();
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=" + (cuda.usable() ? "native" : "embedded"), "nixl.kv.layers=2",
					"nixl.kv.blocks=8", "nixl.kv.kv-heads=2", "nixl.kv.head-dim=64", "nixl.kv.device=cuda:0")
			.run((context) -> {
				if (cuda.usable()) {
					assertThat(context).hasNotFailed();
					PagedKvCache cache = context.getBean(PagedKvCache.class);
					assertThat(cache.memoryType()).isEqualTo(MemoryType.VRAM);
					assertThat(cache.handle().deviceId()).isZero();
				}
				else {
					assertThat(context).hasFailed();
					assertThat(context.getStartupFailure()).rootCause()
						.isInstanceOfSatisfying(CudaException.class, (ex) -> assertThat(ex.status())
							.isIn(NixlStatus.LIBRARY_UNAVAILABLE, NixlStatus.UNAVAILABLE));
				}
			});
	}

	@Test
	void aConsumerPullsLeasedBlocksFromVramIntoVram() {
		CudaReport cuda = Cuda.report();
		Assumptions.assumeTrue(cuda.usable(), () -> "no CUDA device: " + cuda.summary());
		NativeNixl.require();
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withBean("registry", MetadataExchange.class, () -> new NixlAutoConfigurationTests.NamedExchange(registry))
			.withPropertyValues("nixl.agent.engine=native", "nixl.kv.layers=3", "nixl.kv.blocks=16",
					"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64", "nixl.kv.block-size=16",
					"nixl.kv.device=cuda:" + (cuda.devices().size() - 1));
		runner.run(prefill -> runner.run(decode -> {
			PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
			PagedKvCache consumerCache = decode.getBean(PagedKvCache.class);
			long regionLength = producerCache.layout().regionLength();
			try (Arena arena = Arena.ofConfined()) {
				MemorySegment pattern = arena.allocate(regionLength);
				for (int region = 0; region < producerCache.layout().regionCount(); region++) {
					fill(pattern, region);
					producerCache.deviceRegion(region).copyFrom(pattern, 0);
					consumerCache.deviceRegion(region).fill(0, regionLength, (byte) 0);
				}
				int[] blocks = producerCache.allocator().allocate(3);
				KvLease lease = prefill.getBean(KvProducer.class).lease("req-vram", blocks);
				KvConsumer consumer = decode.getBean(KvConsumer.class);
				consumer.connect(prefill.getBean(KvProducer.class).handle());
				int[] local = consumerCache.allocator().allocate(3);
				long bytes = consumer.pull(lease.params(), local, WAIT);

				long blockLength = producerCache.layout().blockLength();
				assertThat(bytes).isEqualTo(3L * producerCache.layout().regionCount() * blockLength);
				MemorySegment expected = arena.allocate(blockLength);
				MemorySegment actual = arena.allocate(blockLength);
				for (int region = 0; region < producerCache.layout().regionCount(); region++) {
					for (int i = 0; i < blocks.length; i++) {
						producerCache.deviceRegion(region).copyTo(blocks[i] * blockLength, expected);
						consumerCache.deviceRegion(region).copyTo(local[i] * blockLength, actual);
						assertThat(actual.mismatch(expected)).as("region %d block %d", region, i).isEqualTo(-1);
					}
				}
				assertThat(lease.outcome().get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(LeaseOutcome.COMPLETED);
			}
		}));
	}

	private static void fill(MemorySegment block, int seed) {
		for (long i = 0; i < block.byteSize(); i++) {
			block.set(ValueLayout.JAVA_BYTE, i, (byte) (seed * 31 + i * 7));
		}
	}

}
