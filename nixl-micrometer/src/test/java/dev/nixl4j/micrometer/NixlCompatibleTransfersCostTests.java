package dev.nixl4j.micrometer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.testsupport.TestPeer;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link NixlCompatibleMetrics} bound on its own (no Spring) to an agent with telemetry
 * on, and the cost its listener adds to each completed transfer, printed (no timed
 * assertion): the listener's work at a transfer's end (reading NIXL's telemetry, two
 * histograms, two counters), with telemetry on and off, in interleaved rounds.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NixlCompatibleTransfersCostTests {

	private static final int SIZE = 4096;

	private static final int TRANSFERS = 200;

	private static final int ROUNDS = 5;

	private static final int CALLS = 20_000;

	@Test
	void embedded() {
		measure(Engine.EMBEDDED);
	}

	@Test
	void nativeEngine() {
		NativeNixl.require();
		measure(Engine.NATIVE);
	}

	private static void measure(Engine engine) {
		try (NixlAgent agent = NixlAgent.create(
				AgentConfig.builder("cost-" + ProcessHandle.current().pid()).engine(engine).telemetry(true).build());
				TestPeer peer = TestPeer.start("cost", SIZE, 1, engine);
				Arena arena = Arena.ofShared()) {
			PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
			new NixlCompatibleMetrics(agent, true).bindTo(registry);
			MemorySegment local = Bytes.pattern(arena, SIZE, 5);
			try (Registration _ = agent.register(local)) {
				agent.loadRemoteMetadata(peer.agent().localMetadata());
				for (int i = 0; i < TRANSFERS; i++) {
					peer.transfer(agent, XferOp.READ, local, null);
				}
				DistributionSummary postTime = registry.get("agent_xfer_post_time_us").summary();
				assertThat(postTime.count()).as("NIXL's post time of every transfer").isEqualTo(TRANSFERS);
				assertThat(registry.get("agent_xfer_time_us").summary().count()).isEqualTo(TRANSFERS);
				assertThat(registry.scrape()).contains("agent_rx_requests_num_total{agent_name=\"" + agent.name());

				NixlCompatibleTransfers withTelemetry = new NixlCompatibleTransfers(agent.name(), true);
				NixlCompatibleTransfers withoutTelemetry = new NixlCompatibleTransfers(agent.name(), false);
				PrometheusMeterRegistry on = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
				PrometheusMeterRegistry off = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
				withTelemetry.register(on);
				withoutTelemetry.register(off);
				try (Transfer transfer = agent.transfer(XferOp.READ, DescriptorList.of(local),
						DescriptorList.of(peer.memory()), peer.agent().name(), null)) {
					transfer.await(TestPeer.WAIT);
					assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
					double[] onNanos = new double[ROUNDS];
					double[] offNanos = new double[ROUNDS];
					afterPost(withTelemetry, transfer, CALLS);
					afterPost(withoutTelemetry, transfer, CALLS);
					for (int round = 0; round < ROUNDS; round++) {
						onNanos[round] = afterPost(withTelemetry, transfer, CALLS);
						offNanos[round] = afterPost(withoutTelemetry, transfer, CALLS);
					}
					System.out.printf(
							"%s engine, listener's work per completed transfer, ns (median of %d interleaved rounds"
									+ " of %d calls): telemetry on %.0f, off %.0f%n",
							engine, ROUNDS, CALLS, median(onNanos), median(offNanos));
				}
				long calls = (ROUNDS + 1L) * CALLS;
				assertThat(on.get("agent_xfer_post_time_us").summary().count()).isEqualTo(calls);
				assertThat(off.get("agent_xfer_post_time_us").summary().count()).as("no post time without telemetry")
					.isZero();
				assertThat(off.get("agent_xfer_time_us").summary().count()).isEqualTo(calls);
			}
		}
	}

	private static double afterPost(NixlCompatibleTransfers listener, Transfer transfer, int calls) {
		long start = System.nanoTime();
		for (int i = 0; i < calls; i++) {
			listener.afterPost(transfer, TransferState.COMPLETED, 1000, null);
		}
		return (double) (System.nanoTime() - start) / calls;
	}

	private static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2];
	}

}
