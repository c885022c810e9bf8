package dev.nixl4j.autoconfigure;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

import dev.nixl4j.autoconfigure.metrics.NixlMetricsAutoConfiguration;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvIntegrity;
import dev.nixl4j.kv.KvIntegrityException;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.micrometer.NixlKvMetrics;
import dev.nixl4j.testsupport.Bytes;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@code nixl.kv.integrity} configures the managed producer, and the managed consumer's
 * integrity failures are a meter: two applications, a block written to after its lease.
 */
class NixlKvIntegrityTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final InMemoryMetadataExchange registry = new InMemoryMetadataExchange();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
				MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class))
		.withBean("registry", MetadataExchange.class, () -> new NixlAutoConfigurationTests.NamedExchange(this.registry))
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.kv.layers=2", "nixl.kv.blocks=8", "nixl.kv.kv-heads=2",
				"nixl.kv.head-dim=64");

	@Test
	void theProducerChecksGenerationsUnlessToldOtherwise() {
		this.runner.run((context) -> assertThat(context.getBean(KvProducer.class).integrity())
			.isEqualTo(KvIntegrity.GENERATION));
	}

	@Test
	void aCrc32cMismatchFailsThePullAndIsCountedByTheConsumersMeter() {
		ApplicationContextRunner crc = this.runner.withPropertyValues("nixl.kv.integrity=crc32c");
		crc.run((prefill) -> crc.run((decode) -> {
			KvProducer producer = prefill.getBean(KvProducer.class);
			assertThat(producer.integrity()).isEqualTo(KvIntegrity.CRC32C);
			PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
			int[] blocks = producerCache.allocator().allocate(2);
			for (int r = 0; r < producerCache.layout().regionCount(); r++) {
				for (int block : blocks) {
					Bytes.fill(producerCache.block(r, block), r * 100 + block);
				}
			}
			KvLease lease = producer.lease("tampered", blocks);
			MemorySegment target = producerCache.block(0, blocks[1]);
			target.set(ValueLayout.JAVA_BYTE, 0, (byte) ~target.get(ValueLayout.JAVA_BYTE, 0));
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			consumer.connect(producer.handle());
			MeterRegistry meters = decode.getBean(MeterRegistry.class);
			assertThat(meters.get("nixl.kv.integrity.failures").functionCounter().count()).isZero();

			KvIntegrityException failure = catchThrowableOfType(KvIntegrityException.class, () -> consumer
				.pull(lease.params(), decode.getBean(PagedKvCache.class).allocator().allocate(2), WAIT));

			assertThat(failure.producerBlockId()).isEqualTo(blocks[1]);
			assertThat(meters.get("nixl.kv.integrity.failures")
				.tags("agent", decode.getBean(PagedKvCache.class).agent().name())
				.functionCounter()
				.count()).isOne();
		}));
	}

	@Test
	void withoutAKvConsumerThereAreNoKvMeters() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
					MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded")
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(NixlKvMetrics.class)
					.doesNotHaveBean(KvConsumer.class);
				assertThat(context.getBean(MeterRegistry.class).find("nixl.kv.integrity.failures").meters()).isEmpty();
			});
	}

}
