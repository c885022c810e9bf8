package dev.nixl4j.autoconfigure;

import java.time.Duration;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.metrics.NixlMetricsAutoConfiguration;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nixl.kv.confirmation-resend} configures the managed consumer, and the done
 * messages its pulls sent again are a meter: an application pulls from a producer that
 * loses the first done message it receives.
 */
class NixlKvConfirmationResendTests {

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
	void theConsumerResendsAfterTheCoresDefaultUnlessToldOtherwise() {
		this.runner.run((context) -> assertThat(context.getBean(KvConsumer.class).confirmationResend())
			.isEqualTo(KvConsumer.DEFAULT_CONFIRMATION_RESEND));
	}

	@Test
	void zeroTurnsResendsOff() {
		this.runner.withPropertyValues("nixl.kv.confirmation-resend=0s")
			.run((context) -> assertThat(context.getBean(KvConsumer.class).confirmationResend()).isZero());
	}

	@Test
	void aNegativeBoundIsNamed() {
		this.runner.withPropertyValues("nixl.kv.confirmation-resend=-1ms").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("kv.confirmation-resend")
				.hasMessageContaining("must be zero or a positive duration");
		});
	}

	@Test
	void theResendsOfTheConsumersPullsAreCountedByItsMeter() {
		this.runner.run((decode) -> {
			PagedKvCache consumerCache = decode.getBean(PagedKvCache.class);
			// a producer whose driver loses the first done message it receives
			AgentConfig config = AgentConfig.builder("prefill-lossy").engine(Engine.EMBEDDED).build();
			FaultInjectingDriver driver = FaultInjectingDriver.open(config);
			try (NixlAgent agent = driver.agent(config);
					PagedKvCache producerCache = PagedKvCache.allocate(agent, consumerCache.layout());
					MetadataPublication publication = MetadataPublication.builder(this.registry, agent).build();
					KvProducer producer = KvProducer.builder(producerCache)
						.peers(PeerLoader.of(this.registry))
						.build()) {
				publication.publish();
				int[] blocks = producerCache.allocator().allocate(2);
				for (int r = 0; r < producerCache.layout().regionCount(); r++) {
					for (int block : blocks) {
						Bytes.fill(producerCache.block(r, block), r * 100 + block);
					}
				}
				KvLease lease = producer.lease("resent", blocks);
				KvConsumer consumer = decode.getBean(KvConsumer.class);
				consumer.connect(producer.handle());
				int[] local = consumerCache.allocator().allocate(2);
				MeterRegistry meters = decode.getBean(MeterRegistry.class);
				assertThat(meters.get("nixl.kv.confirmation.resends").functionCounter().count()).isZero();
				driver.dropNotifications(KvProducer.DEFAULT_PREFIX + "done:", 1);

				consumer.pull(lease.params(), local, WAIT);

				for (int r = 0; r < consumerCache.layout().regionCount(); r++) {
					for (int i = 0; i < local.length; i++) {
						assertThat(Bytes.hasPattern(consumerCache.block(r, local[i]), r * 100 + blocks[i])).isTrue();
					}
				}
				assertThat(driver.droppedNotifications()).hasSize(1);
				assertThat(meters.get("nixl.kv.confirmation.resends")
					.tags("agent", consumerCache.agent().name())
					.functionCounter()
					.count()).isOne();
			}
		});
	}

}
