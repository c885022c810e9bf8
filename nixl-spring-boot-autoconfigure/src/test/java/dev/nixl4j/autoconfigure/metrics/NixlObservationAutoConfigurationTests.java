package dev.nixl4j.autoconfigure.metrics;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.nixl4j.micrometer.DefaultTransferObservationConvention;
import dev.nixl4j.micrometer.ObservationTransferListener;
import dev.nixl4j.micrometer.ObservedMetadataExchange;
import dev.nixl4j.micrometer.TransferObservationConvention;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.XferOp;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.TestPeer;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class NixlObservationAutoConfigurationTests {

	private static final int SIZE = 64 * 1024;

	/** This application as the metadata registry: an in-memory exchange. */
	private static final String[] HTTP_REGISTRY = { "nixl.metadata.exchange=http",
			"nixl.metadata.http.token=observation-test" };

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlObservationAutoConfiguration.class,
				ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
		.withBean(RecordingHandler.class, RecordingHandler::new)
		.withPropertyValues("nixl.agent.engine=embedded",
				"nixl.agent.name=observed-app-" + ProcessHandle.current().pid());

	/** A WRITE between the application's agent and a peer, with every byte checked. */
	private static void write(AssertableApplicationContext context, TestPeer peer) {
		NixlAgent agent = context.getBean(NixlAgent.class);
		try (Arena arena = Arena.ofShared()) {
			MemorySegment local = Bytes.pattern(arena, SIZE, 3);
			try (Registration _ = agent.register(local)) {
				if (!agent.hasRemoteMetadata(peer.agent().name())) {
					agent.loadRemoteMetadata(peer.agent().localMetadata());
				}
				peer.transfer(agent, XferOp.WRITE, local, null);
			}
		}
	}

	private static List<Observation.Context> stopped(AssertableApplicationContext context, String name) {
		return context.getBean(RecordingHandler.class).stopped.stream()
			.filter((c) -> name.equals(c.getName()))
			.toList();
	}

	@Test
	void eachTransferPostIsObservedWithTheRemoteAgentAsAHighCardinalityKey() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(ObservationTransferListener.class);
			try (TestPeer peer = TestPeer.start("observed", SIZE, 1)) {
				write(context, peer);
				List<Observation.Context> transfers = stopped(context, "nixl.transfer");
				assertThat(transfers).singleElement().satisfies((observed) -> {
					assertThat(observed.getContextualName()).isEqualTo("nixl write");
					assertThat(observed.getLowCardinalityKeyValues()).isEqualTo(KeyValues.of("agent",
							context.getBean(NixlAgent.class).name(), "op", "write", "outcome", "completed"));
					assertThat(observed.getHighCardinalityKeyValue("remote.agent").getValue())
						.isEqualTo(peer.agent().name());
					assertThat(observed.getHighCardinalityKeyValue("bytes").getValue())
						.isEqualTo(Integer.toString(SIZE));
					assertThat(observed.getError()).isNull();
				});
			}
			Timer timer = context.getBean(MeterRegistry.class)
				.get("nixl.transfer")
				.tags("op", "write", "outcome", "completed", "error", "none")
				.timer();
			assertThat(timer.count()).isOne();
			assertThat(timer.getId().getTag("remote.agent")).as("high cardinality stays off meters").isNull();
		});
	}

	@Test
	void aRefusedPostEndsItsObservationWithTheReason() {
		this.runner.run((context) -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			TransferListener bulkhead = new TransferListener() {

				@Override
				public void beforePost(Transfer transfer) {
					throw new IllegalStateException("no room for another transfer");
				}

			};
			try (TestPeer peer = TestPeer.start("refusing", SIZE, 1); Arena arena = Arena.ofShared()) {
				MemorySegment local = arena.allocate(SIZE);
				try (Registration _ = agent.register(local)) {
					agent.loadRemoteMetadata(peer.agent().localMetadata());
					agent.addTransferListener(bulkhead);
					assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> agent.transfer(XferOp.READ,
							DescriptorList.of(local), DescriptorList.of(peer.memory()), peer.agent().name(), null));
					agent.removeTransferListener(bulkhead);
				}
			}
			assertThat(stopped(context, "nixl.transfer")).singleElement().satisfies((observed) -> {
				assertThat(observed.getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("refused");
				assertThat(observed.getError()).hasMessage("no room for another transfer");
			});
			assertThat(context.getBean(MeterRegistry.class)
				.get("nixl.transfer")
				.tags("op", "read", "outcome", "refused", "error", "IllegalStateException")
				.timer()
				.count()).isOne();
		});
	}

	@Test
	void metadataFetchesAndLoadsAreObserved() {
		this.runner.withPropertyValues(HTTP_REGISTRY).run((context) -> {
			MetadataExchange exchange = context.getBean(MetadataExchange.class);
			assertThat(exchange).isInstanceOf(ObservedMetadataExchange.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			try (TestPeer peer = TestPeer.start("published", SIZE, 1)) {
				exchange.publish(peer.agent());
				exchange.load(agent, peer.agent().name(), Duration.ofSeconds(5)).close();
				assertThat(agent.remoteAgents()).contains(peer.agent().name());
				NixlException missing = catchThrowableOfType(NixlException.class,
						() -> exchange.fetch("nobody-" + ProcessHandle.current().pid(), Duration.ofMillis(50)));
				assertThat(missing.status()).isEqualTo(NixlStatus.TIMEOUT);
			}
			assertThat(stopped(context, "nixl.metadata")).extracting(Observation.Context::getContextualName)
				.containsExactly("nixl metadata load", "nixl metadata fetch");
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("nixl.metadata").tags("operation", "load", "status", "success").timer().count())
				.isOne();
			assertThat(registry.get("nixl.metadata").tags("operation", "fetch", "status", "timeout").timer().count())
				.isOne();
		});
	}

	@Test
	void bootsObservationPredicateTurnsThemOff() {
		this.runner.withPropertyValues(HTTP_REGISTRY)
			.withPropertyValues("management.observations.enable.nixl=false")
			.run((context) -> {
				try (TestPeer peer = TestPeer.start("unobserved", SIZE, 1)) {
					context.getBean(MetadataExchange.class).publish(peer.agent());
					context.getBean(MetadataExchange.class)
						.load(context.getBean(NixlAgent.class), peer.agent().name(), Duration.ofSeconds(5))
						.close();
					write(context, peer);
				}
				assertThat(context.getBean(RecordingHandler.class).stopped)
					.noneSatisfy((observed) -> assertThat(observed.getName()).startsWith("nixl."));
				assertThat(context.getBean(MeterRegistry.class).find("nixl.transfer").timer()).isNull();
				assertThat(context.getBean(MeterRegistry.class).find("nixl.metadata").timer()).isNull();
			});
	}

	@Test
	void aConventionBeanRenamesTheObservations() {
		this.runner.withBean(TransferObservationConvention.class, () -> new DefaultTransferObservationConvention() {

			@Override
			public String getName() {
				return "kv.transfer";
			}

		}).run((context) -> {
			try (TestPeer peer = TestPeer.start("renamed", SIZE, 1)) {
				write(context, peer);
			}
			assertThat(stopped(context, "kv.transfer")).hasSize(1);
			assertThat(stopped(context, "nixl.transfer")).isEmpty();
		});
	}

	@Test
	void backsOffWithoutAnObservationRegistry() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(NixlAutoConfiguration.class, NixlObservationAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded")
			.withPropertyValues(HTTP_REGISTRY)
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(ObservationTransferListener.class)
					.doesNotHaveBean(ObservationMetadataExchangeCustomizer.class);
				assertThat(context.getBean(MetadataExchange.class)).isNotInstanceOf(ObservedMetadataExchange.class);
			});
	}

	@Test
	void backsOffWithoutMicrometerObservation() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class,
					NixlObservationAutoConfiguration.class, ObservationAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
			.withPropertyValues("nixl.agent.engine=embedded")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ObservationTransferListener.class));
	}

	@Test
	void backsOffWhenTheUserDefinesTheTransferListener() {
		this.runner
			.withBean("userListener", ObservationTransferListener.class,
					() -> new ObservationTransferListener(ObservationRegistry.NOOP, "user", null))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(ObservationTransferListener.class)
				.hasBean("userListener"));
	}

	/** Records every observation that stopped. */
	static final class RecordingHandler implements ObservationHandler<Observation.Context> {

		final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

		@Override
		public void onStop(Observation.Context context) {
			this.stopped.add(context);
		}

	}

}
