package dev.nixl4j.autoconfigure.resilience;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;

import dev.nixl4j.resilience4j.TransferBulkhead;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.testsupport.PeerProcess;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.AgentConfig;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerMetricsAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The per-peer circuit breaker and the transfer bulkhead on real transfers of the
 * embedded engine between the application's agent and peers in another process (over TCP)
 * or the same JVM.
 */
class TransferResilienceTests {

	private static final long REGION = 8 << 20;

	private static final long PEER_SEED = 42;

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(NixlResilienceAutoConfigurationTests.RESILIENCE4J)
		.withConfiguration(NixlResilienceAutoConfigurationTests.NIXL)
		.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CircuitBreakerMetricsAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.agent.name=app");

	@Test
	void aFullBulkheadRefusesThePostAtOnceAndAdmitsAgainOnceTransfersEnd() throws Exception {
		this.runner.withPropertyValues("nixl.transfer.max-in-flight=2").run(context -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			Bulkhead bulkhead = context.getBean(TransferBulkhead.class).bulkhead();
			try (Arena arena = Arena.ofShared();
					PeerProcess peer = PeerProcess.start("paused-peer", REGION, PEER_SEED, Map.of(), Engine.EMBEDDED)) {
				MemorySegment[] local = new MemorySegment[3];
				Registration[] registrations = new Registration[3];
				Transfer[] transfers = new Transfer[3];
				try {
					agent.loadRemoteMetadata(peer.metadata());
					for (int i = 0; i < 3; i++) {
						local[i] = Bytes.pattern(arena, REGION, i);
						registrations[i] = agent.register(local[i]);
						transfers[i] = agent.createTransfer(XferOp.READ, DescriptorList.of(local[i]), peer.region(),
								peer.name(), null);
					}
					// connected first, so that the paused peer holds the READs rather
					// than the handshake
					transfers[0].post();
					transfers[0].await(WAIT);
					Bytes.fill(local[0], 0);
					peer.pause();
					transfers[0].post();
					transfers[1].post();
					assertThat(transfers[1].state()).isEqualTo(TransferState.IN_PROGRESS);

					TransferRefusedException full = catchThrowableOfType(TransferRefusedException.class,
							transfers[2]::post);
					assertThat(full.reason()).isEqualTo(TransferRefusedException.Reason.TOO_MANY_IN_FLIGHT);
					assertThat(full.limiter()).isEqualTo("nixl-transfers");
					assertThat(full.getCause()).isInstanceOf(BulkheadFullException.class);
					assertThat(agent.inFlightTransfers()).containsExactlyInAnyOrder(transfers[0], transfers[1]);
					assertThat(Bytes.hasPattern(local[2], 2)).as("the refused READ moved nothing").isTrue();
					assertThat(bulkhead.getMetrics().getAvailableConcurrentCalls()).isZero();

					peer.resume();
					transfers[0].await(WAIT);
					transfers[1].await(WAIT);
					assertThat(bulkhead.getMetrics().getAvailableConcurrentCalls()).isEqualTo(2);
					transfers[2].post();
					transfers[2].await(WAIT);
					for (MemorySegment segment : local) {
						assertThat(Bytes.hasPattern(segment, PEER_SEED)).isTrue();
					}
				}
				finally {
					peer.resume();
					closeAll(transfers, registrations);
				}
			}
		});
	}

	@Test
	void aPeersBreakerOpensAfterFailedTransfersAndRefusesAtOnceWhileOtherPeersWork() throws Exception {
		this.runner
			.withPropertyValues("resilience4j.circuitbreaker.configs.nixl-peer.sliding-window-size=2",
					"resilience4j.circuitbreaker.configs.nixl-peer.minimum-number-of-calls=2",
					"resilience4j.circuitbreaker.configs.nixl-peer.wait-duration-in-open-state=1h")
			.run(context -> {
				NixlAgent agent = context.getBean(NixlAgent.class);
				CircuitBreakerRegistry registry = context.getBean(CircuitBreakerRegistry.class);
				try (Arena arena = Arena.ofShared();
						NixlAgent healthy = NixlAgent
							.create(AgentConfig.builder("healthy-peer").engine(Engine.EMBEDDED).build());
						PeerProcess dead = PeerProcess.start("dead-peer", REGION, PEER_SEED, Map.of(),
								Engine.EMBEDDED)) {
					MemorySegment healthyRegion = Bytes.pattern(arena, REGION, 7);
					MemorySegment local = Bytes.pattern(arena, REGION, 1);
					try (Registration healthyRegistration = healthy.register(healthyRegion);
							Registration registration = agent.register(local)) {
						agent.loadRemoteMetadata(dead.metadata());
						agent.loadRemoteMetadata(healthy.localMetadata());
						dead.kill();
						for (int i = 0; i < 2; i++) {
							try (Transfer failing = agent.createTransfer(XferOp.READ, DescriptorList.of(local),
									dead.region(), dead.name(), null)) {
								failing.post();
								NixlException failure = catchThrowableOfType(NixlException.class,
										() -> failing.await(WAIT));
								assertThat(failure.remoteAgent()).isEqualTo("dead-peer");
								assertThat(failing.state()).isEqualTo(TransferState.FAILED);
							}
						}
						CircuitBreaker breaker = registry.find("nixl-peer-dead-peer").orElseThrow();
						assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
						assertThat(breaker.getCircuitBreakerConfig())
							.isSameAs(registry.getConfiguration("nixl-peer").orElseThrow());

						try (Transfer refused = agent.createTransfer(XferOp.READ, DescriptorList.of(local),
								dead.region(), dead.name(), null)) {
							TransferRefusedException open = catchThrowableOfType(TransferRefusedException.class,
									refused::post);
							assertThat(open.reason()).isEqualTo(TransferRefusedException.Reason.PEER_SUSPENDED);
							assertThat(open.limiter()).isEqualTo("nixl-peer-dead-peer");
							assertThat(open.remoteAgent()).isEqualTo("dead-peer");
							assertThat(open.getCause()).isInstanceOf(CallNotPermittedException.class);
							assertThat(refused.state()).isNotEqualTo(TransferState.IN_PROGRESS);
						}
						assertThat(agent.inFlightTransfers()).isEmpty();

						try (Transfer read = agent.createTransfer(XferOp.READ, DescriptorList.of(local),
								DescriptorList.of(healthyRegion), "healthy-peer", null)) {
							read.post();
							read.await(WAIT);
						}
						assertThat(Bytes.hasPattern(local, 7)).isTrue();
						assertThat(registry.find("nixl-peer-healthy-peer").orElseThrow().getState())
							.isEqualTo(CircuitBreaker.State.CLOSED);

						MeterRegistry meters = context.getBean(MeterRegistry.class);
						assertThat(meters.get("resilience4j.circuitbreaker.state")
							.tags("name", "nixl-peer-dead-peer", "state", "open")
							.gauge()
							.value()).isEqualTo(1.0);
						assertThat(meters.get("resilience4j.circuitbreaker.not.permitted.calls")
							.tag("name", "nixl-peer-dead-peer")
							.counter()
							.count()).isEqualTo(1.0);
					}
				}
			});
	}

	@Test
	void withoutAPeerConfigurationBreakersUseTheDefaultConfiguration() throws Exception {
		this.runner.run(context -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			CircuitBreakerRegistry registry = context.getBean(CircuitBreakerRegistry.class);
			try (Arena arena = Arena.ofShared();
					NixlAgent peer = NixlAgent
						.create(AgentConfig.builder("plain-peer").engine(Engine.EMBEDDED).build())) {
				MemorySegment remote = Bytes.pattern(arena, 4096, 3);
				MemorySegment local = Bytes.pattern(arena, 4096, 4);
				try (Registration remoteRegistration = peer.register(remote);
						Registration registration = agent.register(local)) {
					agent.loadRemoteMetadata(peer.localMetadata());
					try (Transfer write = agent.createTransfer(XferOp.WRITE, DescriptorList.of(local),
							DescriptorList.of(remote), "plain-peer", null)) {
						write.post();
						context.getBean(dev.nixl4j.autoconfigure.NixlTimeouts.class).await(write);
					}
					assertThat(Bytes.hasPattern(remote, 4)).isTrue();
				}
			}
			CircuitBreaker breaker = registry.find("nixl-peer-plain-peer").orElseThrow();
			assertThat(breaker.getCircuitBreakerConfig()).isSameAs(registry.getDefaultConfig());
			assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
		});
	}

	private static void closeAll(Transfer[] transfers, Registration[] registrations) {
		for (Transfer transfer : transfers) {
			if (transfer != null) {
				transfer.close();
			}
		}
		for (Registration registration : registrations) {
			if (registration != null) {
				registration.close();
			}
		}
	}

}
