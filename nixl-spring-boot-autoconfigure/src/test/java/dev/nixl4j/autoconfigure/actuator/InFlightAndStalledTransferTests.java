package dev.nixl4j.autoconfigure.actuator;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.testsupport.PeerMain;
import dev.nixl4j.testsupport.PeerProcess;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint.NixlDescriptor;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint.TransferDescriptor;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpointAutoConfiguration;
import dev.nixl4j.autoconfigure.health.NixlHealthContributorAutoConfiguration;
import dev.nixl4j.autoconfigure.health.NixlHealthIndicator;
import dev.nixl4j.autoconfigure.metrics.NixlMetricsAutoConfiguration;
import dev.nixl4j.testsupport.Eventually;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A READ from a peer process stopped with SIGSTOP stays in flight, then stalls: health,
 * meters and the endpoint show it while it runs and count it once it stalled.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class InFlightAndStalledTransferTests {

	private static final int SIZE = 4 << 20;

	private static final Duration STALL_LIMIT = Duration.ofSeconds(2);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class,
				NixlHealthContributorAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
				NixlEndpointAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded",
				"nixl.transfer.stall-timeout=" + STALL_LIMIT.toMillis() + "ms",
				"management.endpoints.web.exposure.include=nixl");

	@Test
	void aTransferHeldByAStoppedPeerIsShownInFlightAndThenCountedAsStalled() {
		this.runner.run((context) -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			NixlEndpoint endpoint = context.getBean(NixlEndpoint.class);
			NixlHealthIndicator health = context.getBean(NixlHealthIndicator.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			try (PeerProcess peer = PeerProcess.start("stopped-peer-" + ProcessHandle.current().pid(), SIZE, 42,
					Map.of(), Engine.EMBEDDED); Arena arena = Arena.ofShared()) {
				MemorySegment local = arena.allocate(SIZE, 64);
				try (Registration _ = agent.register(local)) {
					agent.loadRemoteMetadata(peer.metadata());
					try (Transfer first = agent.transfer(XferOp.READ, DescriptorList.of(local), peer.region(),
							peer.name(), null)) {
						first.await(WAIT);
					}
					assertThat(PeerMain.crc(local)).isEqualTo(peer.crc());
					peer.pause();
					try (Transfer held = agent.transfer(XferOp.READ, DescriptorList.of(local), peer.region(),
							peer.name(), null)) {
						assertThat(held.state()).isEqualTo(TransferState.IN_PROGRESS);
						NixlDescriptor running = endpoint.nixl();
						assertThat(running.peers()).containsExactly(peer.name());
						assertThat(running.inFlightTransfers()).singleElement().satisfies((transfer) -> {
							assertThat(transfer.op()).isEqualTo(XferOp.READ);
							assertThat(transfer.remoteAgent()).isEqualTo(peer.name());
							assertThat(transfer.bytes()).isEqualTo(SIZE);
						});
						Eventually.until(WAIT, "the endpoint shows the transfer's age growing",
								() -> ageMillis(endpoint) >= 200);
						Health during = health.health();
						assertThat(during.getStatus()).isEqualTo(Status.UP);
						assertThat(during.getDetails()).containsEntry("inFlightTransfers", 1)
							.containsEntry("stalledTransfers", 0L);
						assertThat(registry.get("nixl.transfers.in.flight").gauge().value()).isOne();

						NixlException stalled = catchThrowableOfType(NixlException.class, () -> held.await(WAIT));
						assertThat(stalled.status()).isEqualTo(NixlStatus.STALLED);
					}
					finally {
						peer.resume();
					}
				}
			}
			Health after = health.health();
			assertThat(after.getStatus()).as("a stall is counted, it does not take the agent down")
				.isEqualTo(Status.UP);
			assertThat(after.getDetails()).containsEntry("inFlightTransfers", 0).containsEntry("stalledTransfers", 1L);
			NixlDescriptor ended = endpoint.nixl();
			assertThat(ended.inFlightTransfers()).isEmpty();
			assertThat(ended.statistics().transfers().get(XferOp.READ)).containsEntry(TransferState.COMPLETED, 1L)
				.containsEntry(TransferState.STALLED, 1L);
			assertThat(ended.statistics().bytes().get(XferOp.READ)).containsEntry(TransferState.STALLED, (long) SIZE);
			assertThat(registry.get("nixl.transfers.stalled").functionCounter().count()).isOne();
			assertThat(
					registry.get("nixl.transfers").tags("op", "read", "outcome", "stalled").functionCounter().count())
				.isOne();
			assertThat(registry.get("nixl.transfers.in.flight").gauge().value()).isZero();
			Timer stalledDuration = registry.get("nixl.transfer.duration")
				.tags("op", "read", "outcome", "stalled")
				.timer();
			assertThat(stalledDuration.count()).isOne();
			assertThat(stalledDuration.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(STALL_LIMIT.toMillis());
		});
	}

	private static long ageMillis(NixlEndpoint endpoint) {
		return endpoint.nixl().inFlightTransfers().stream().mapToLong(TransferDescriptor::ageMillis).max().orElse(-1);
	}

}
