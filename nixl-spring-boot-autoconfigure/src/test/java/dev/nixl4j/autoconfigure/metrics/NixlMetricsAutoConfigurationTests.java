package dev.nixl4j.autoconfigure.metrics;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.micrometer.NixlAgentMetrics;
import dev.nixl4j.micrometer.NixlTransferDurations;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.Registration;
import dev.nixl4j.XferOp;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.testsupport.TestPeer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class NixlMetricsAutoConfigurationTests {

	private static final int SIZE = 256 * 1024;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
				MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded",
				"nixl.agent.name=metrics-app-" + ProcessHandle.current().pid());

	/**
	 * A WRITE with a notification and a READ between the application's agent and a peer.
	 */
	private static void writeThenRead(AssertableApplicationContext context, TestPeer peer) {
		NixlAgent agent = context.getBean(NixlAgent.class);
		try (Arena arena = Arena.ofShared()) {
			MemorySegment local = Bytes.pattern(arena, SIZE, 5);
			try (Registration _ = agent.register(local)) {
				agent.loadRemoteMetadata(peer.agent().localMetadata());
				peer.transfer(agent, XferOp.WRITE, local, "written");
				Bytes.fill(peer.memory(), 6);
				peer.transfer(agent, XferOp.READ, local, null);
			}
		}
	}

	private static double count(MeterRegistry registry, String name, String... tags) {
		return registry.get(name).tags(tags).functionCounter().count();
	}

	/**
	 * Reads the drops as a scrape does: the {@code other} series first (which registers
	 * the series of senders that had drops since), then every series.
	 */
	private static double dropped(MeterRegistry registry) {
		// meters hold their state objects weakly: what they read must survive a
		// collection
		System.gc();
		registry.get("nixl.notifications.dropped").tags("sender", "other").functionCounter().count();
		return registry.find("nixl.notifications.dropped")
			.functionCounters()
			.stream()
			.mapToDouble(FunctionCounter::count)
			.sum();
	}

	@Test
	void metersReadTheAgentsLiveState() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(NixlAgentMetrics.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			try (TestPeer peer = TestPeer.start("metrics", SIZE, 1)) {
				writeThenRead(context, peer);
				assertThat(count(registry, "nixl.transfers", "op", "write", "outcome", "completed")).isEqualTo(1);
				assertThat(count(registry, "nixl.transfers", "op", "read", "outcome", "completed")).isEqualTo(1);
				assertThat(count(registry, "nixl.transfers", "op", "read", "outcome", "failed")).isZero();
				assertThat(count(registry, "nixl.transfer.bytes", "op", "write", "outcome", "completed"))
					.isEqualTo(SIZE);
				assertThat(count(registry, "nixl.transfer.bytes", "op", "read", "outcome", "completed"))
					.isEqualTo(SIZE);
				assertThat(registry.get("nixl.transfer.bytes").meters())
					.allSatisfy((meter) -> assertThat(meter.getId().getBaseUnit()).isEqualTo("bytes"));
				Timer writes = registry.get("nixl.transfer.duration")
					.tags("op", "write", "outcome", "completed")
					.timer();
				assertThat(writes.count()).isOne();
				assertThat(writes.totalTime(TimeUnit.NANOSECONDS)).isPositive();
				assertThat(writes.takeSnapshot().percentileValues()).as("no percentiles unless configured").isEmpty();
				assertThat(count(registry, "nixl.notifications", "direction", "sent")).isOne();
				assertThat(count(registry, "nixl.notifications", "direction", "received")).isZero();
				assertThat(peer.agent().statistics().notificationsReceived()).isOne();
				assertThat(count(registry, "nixl.transfers.stalled")).isZero();
				assertThat(registry.get("nixl.transfers.in.flight").gauge().value()).isZero();
				assertThat(registry.get("nixl.peers").gauge().value()).isOne();
				// the local buffer was deregistered after the transfers: the gauges
				// follow at once
				assertThat(registry.get("nixl.registrations").gauge().value()).isZero();
				assertThat(registry.get("nixl.registered.bytes").gauge().value()).isZero();
				try (Arena arena = Arena.ofShared(); Registration _ = agent.register(arena.allocate(4096))) {
					assertThat(registry.get("nixl.registrations").gauge().value()).isOne();
					assertThat(registry.get("nixl.registered.bytes").gauge().value()).isEqualTo(4096);
				}
			}
			assertThat(registry.find("nixl.transfers").meters()).hasSize(8)
				.allSatisfy((meter) -> assertThat(meter.getId().getTag("agent")).isEqualTo(agent.name()));
		});
	}

	@Test
	void notificationsDroppedOverTheMailboxsBoundAreCounted() {
		this.runner.withPropertyValues("nixl.agent.mailbox-per-sender=1").run((context) -> {
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			assertThat(count(registry, "nixl.notifications.dropped")).isZero();
			try (NixlAgent sender = NixlAgent.create(
					AgentConfig.builder("dropping-" + ProcessHandle.current().pid()).engine(Engine.EMBEDDED).build())) {
				sender.loadRemoteMetadata(agent.localMetadata());
				for (int i = 0; i < 3; i++) {
					sender.sendNotification(agent.name(), ("unclaimed-" + i).getBytes(StandardCharsets.UTF_8));
				}
				Eventually.until(Duration.ofSeconds(30), "two notifications dropped",
						() -> agent.statistics().notificationsDropped() == 2);
				assertThat(dropped(registry)).isEqualTo(2);
				// the sender's series appeared with that publication, and counts from
				// then on
				assertThat(count(registry, "nixl.notifications.dropped", "sender", sender.name())).isZero();
				for (int i = 3; i < 6; i++) {
					sender.sendNotification(agent.name(), ("unclaimed-" + i).getBytes(StandardCharsets.UTF_8));
				}
				Eventually.until(Duration.ofSeconds(30), "five notifications dropped",
						() -> agent.statistics().notificationsDropped() == 5);
				assertThat(dropped(registry)).isEqualTo(5);
				assertThat(count(registry, "nixl.notifications.dropped", "sender", sender.name())).isEqualTo(3);
				assertThat(count(registry, "nixl.notifications.dropped", "sender", "other")).isEqualTo(2);
			}
			assertThat(registry.find("nixl.notifications.dropped").meters())
				.allSatisfy((meter) -> assertThat(meter.getId().getTags()).extracting(Tag::getKey)
					.containsExactlyInAnyOrder("agent", "sender"));
		});
	}

	@Test
	void theDurationTimerTakesBootsDistributionProperties() {
		this.runner
			.withPropertyValues("management.metrics.distribution.percentiles.nixl.transfer.duration=0.5,0.99",
					"management.metrics.distribution.slo.nixl.transfer.duration=1ms,10s")
			.run((context) -> {
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				try (TestPeer peer = TestPeer.start("distribution", SIZE, 1)) {
					writeThenRead(context, peer);
				}
				HistogramSnapshot snapshot = registry.get("nixl.transfer.duration")
					.tags("op", "read", "outcome", "completed")
					.timer()
					.takeSnapshot();
				assertThat(snapshot.count()).isOne();
				assertThat(snapshot.percentileValues()).extracting((value) -> value.percentile())
					.containsExactly(0.5, 0.99);
				assertThat(snapshot.histogramCounts()).extracting((bucket) -> bucket.bucket(TimeUnit.MILLISECONDS))
					.containsExactly(1.0, 10_000.0);
				assertThat(snapshot.histogramCounts()[1].count()).as("the READ took less than 10 s").isOne();
			});
	}

	@Test
	void bootsMeterFilterTurnsTheMetersOff() {
		this.runner.withPropertyValues("management.metrics.enable.nixl=false").run((context) -> {
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			try (TestPeer peer = TestPeer.start("denied", SIZE, 1)) {
				writeThenRead(context, peer);
			}
			assertThat(registry.find("nixl.transfers").meters()).isEmpty();
			assertThat(registry.getMeters())
				.noneSatisfy((meter) -> assertThat(meter.getId().getName()).startsWith("nixl."));
		});
	}

	@Test
	void backsOffWithoutMicrometer() {
		this.runner.withClassLoader(new FilteredClassLoader(MeterBinder.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlAgentMetrics.class));
	}

	@Test
	void backsOffWithoutNixlMicrometer() {
		this.runner.withClassLoader(new FilteredClassLoader("dev.nixl4j.micrometer"))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(NixlAgentMetrics.class)
				.doesNotHaveBean(NixlTransferDurations.class));
	}

	@Test
	void backsOffWithoutAMeterRegistry() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlAgentMetrics.class));
	}

	@Test
	void backsOffWhenTheUserDefinesTheBinder() {
		this.runner.withUserConfiguration(ZoneTaggedMetrics.class).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(NixlAgentMetrics.class).hasBean("zoneTaggedMetrics");
			FunctionCounter counter = context.getBean(MeterRegistry.class)
				.get("nixl.transfers")
				.tags("zone", "a", "op", "read", "outcome", "completed")
				.functionCounter();
			assertThat(counter.count()).isZero();
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class ZoneTaggedMetrics {

		@Bean
		NixlAgentMetrics zoneTaggedMetrics(NixlAgent agent) {
			return NixlAgentMetrics.builder(agent).tags(Tags.of("zone", "a")).build();
		}

	}

}
