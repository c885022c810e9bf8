package dev.nixl4j.autoconfigure.metrics;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.XferOp;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.TransferListenerOrder;
import dev.nixl4j.micrometer.NixlAgentMetrics;
import dev.nixl4j.micrometer.NixlCompatibleMetrics;
import dev.nixl4j.micrometer.NixlCompatibleTransfers;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.testsupport.TestPeer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * The agent's meters under NIXL's exporter names, read from a real Prometheus scrape
 * after real transfers.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NixlCompatibleMetricsTests {

	private static final int SIZE = 256 * 1024;

	/** Every series NIXL's Prometheus exporter publishes that nixl4j publishes too. */
	private static final List<String> COUNTERS = List.of("agent_tx_bytes_total", "agent_rx_bytes_total",
			"agent_tx_requests_num_total", "agent_rx_requests_num_total", "agent_memory_registered_total",
			"agent_memory_deregistered_total", "agent_xfer_time_total", "agent_xfer_post_time_total",
			"agent_telemetry_events_dropped_total");

	private static final List<String> GAUGES = List.of("agent_tx_last_bytes", "agent_rx_last_bytes",
			"agent_memory_registered_last_bytes", "agent_memory_deregistered_last_bytes");

	private static final List<String> HISTOGRAMS = List.of("agent_xfer_time_us", "agent_xfer_post_time_us");

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
				MetricsAutoConfiguration.class, PrometheusMetricsExportAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.metrics.nixl-names=true",
				"nixl.agent.name=nixl-names-" + ProcessHandle.current().pid());

	@Test
	void everyNixlSeriesIsScrapedUnderItsNameWithNixlsLabelsAndMoves() {
		this.runner.withPropertyValues("nixl.agent.telemetry=true").run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(NixlCompatibleMetrics.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			// nixl-micrometer's tests check that this is the local hostname
			String hostname = context.getBean(NixlCompatibleTransfers.class)
				.tags()
				.stream()
				.filter((tag) -> tag.getKey().equals("hostname"))
				.findFirst()
				.orElseThrow()
				.getValue();
			String[] labels = { "agent_name", agent.name(), "hostname", hostname };
			Scrape before = scrape(context);
			for (String name : COUNTERS) {
				before.assertType(name, "counter");
				assertThat(before.value(name, labels)).as(name).isZero();
			}
			for (String name : GAUGES) {
				before.assertType(name, "gauge");
				assertThat(before.value(name, labels)).as(name).isZero();
			}
			for (String name : HISTOGRAMS) {
				before.assertType(name, "histogram");
				assertThat(before.value(name + "_count", labels)).as(name).isZero();
				assertThat(before.values(name + "_bucket", labels)).as(name + ": NIXL's buckets and +Inf")
					.hasSize(NixlCompatibleTransfers.BUCKETS_MICROS.size() + 1)
					.containsOnly(0.0);
			}
			before.assertType("agent_errors_total", "counter");
			for (String status : NixlCompatibleTransfers.STATUS_LABELS) {
				assertThat(before.value("agent_errors_total", concat(labels, "status", status))).as(status).isZero();
			}
			Set<String> expected = new TreeSet<>(COUNTERS);
			expected.addAll(GAUGES);
			for (String name : HISTOGRAMS) {
				expected.addAll(List.of(name + "_bucket", name + "_count", name + "_sum", name + "_max"));
			}
			expected.add("agent_errors_total");
			assertThat(new TreeSet<>(before.sampleNames()).subSet("agent_", "agent" + (char) ('_' + 1)))
				.as("the series named agent_*")
				.isEqualTo(expected);

			try (TestPeer peer = TestPeer.start("nixl-names", SIZE, 1); Arena arena = Arena.ofShared()) {
				MemorySegment local = Bytes.pattern(arena, SIZE, 5);
				try (Registration _ = agent.register(local)) {
					Scrape registered = scrape(context);
					assertThat(registered.value("agent_memory_registered_total", labels)).isEqualTo(SIZE);
					assertThat(registered.value("agent_memory_registered_last_bytes", labels)).isEqualTo(SIZE);
					assertThat(registered.value("agent_memory_deregistered_total", labels)).isZero();
					agent.loadRemoteMetadata(peer.agent().localMetadata());
					peer.transfer(agent, XferOp.WRITE, local, "written");
					Bytes.fill(peer.memory(), 6);
					peer.transfer(agent, XferOp.READ, local, null);
					peer.transfer(agent, XferOp.READ, local, null);
				}
			}
			Scrape after = scrape(context);
			assertThat(after.value("agent_tx_bytes_total", labels)).isEqualTo(SIZE);
			assertThat(after.value("agent_rx_bytes_total", labels)).isEqualTo(2.0 * SIZE);
			assertThat(after.value("agent_tx_requests_num_total", labels)).isEqualTo(1);
			assertThat(after.value("agent_rx_requests_num_total", labels)).isEqualTo(2);
			assertThat(after.value("agent_tx_last_bytes", labels)).isEqualTo(SIZE);
			assertThat(after.value("agent_rx_last_bytes", labels)).isEqualTo(SIZE);
			assertThat(after.value("agent_memory_registered_total", labels)).isEqualTo(SIZE);
			assertThat(after.value("agent_memory_deregistered_total", labels)).isEqualTo(SIZE);
			assertThat(after.value("agent_memory_deregistered_last_bytes", labels)).isEqualTo(SIZE);
			for (String name : HISTOGRAMS) {
				assertThat(after.value(name + "_count", labels)).as(name).isEqualTo(3);
				assertThat(after.value(name + "_bucket", concat(labels, "le", "+Inf"))).as(name).isEqualTo(3);
			}
			assertThat(after.value("agent_xfer_time_us_sum", labels)).isPositive()
				.isEqualTo(after.value("agent_xfer_time_total", labels));
			assertThat(after.value("agent_xfer_post_time_us_sum", labels))
				.isEqualTo(after.value("agent_xfer_post_time_total", labels));
			// both times are whole microseconds, rounded apart: a transfer that ends
			// inside its post may show a post time 1 us above its transfer time
			assertThat(after.value("agent_xfer_post_time_us_sum", labels))
				.as("posting takes no longer than the whole transfer, to a microsecond per transfer")
				.isLessThanOrEqualTo(after.value("agent_xfer_time_us_sum", labels) + 3);
			assertThat(after.value("agent_telemetry_events_dropped_total", labels)).isZero();
		});
	}

	@Test
	void withoutTelemetryTheTransferTimeIsNixl4jsAndNoPostTimeIsRecorded() {
		this.runner.run((context) -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			String[] labels = { "agent_name", agent.name() };
			writeThenRead(agent);
			Scrape after = scrape(context);
			assertThat(after.value("agent_xfer_time_us_count", labels)).isEqualTo(2);
			assertThat(after.value("agent_xfer_time_us_sum", labels)).isPositive();
			assertThat(after.value("agent_xfer_post_time_us_count", labels)).isZero();
			assertThat(after.value("agent_tx_bytes_total", labels)).isEqualTo(SIZE);
			assertThat(after.value("agent_rx_bytes_total", labels)).isEqualTo(SIZE);
		});
	}

	@Test
	void bootsSloPropertyReplacesNixlsBuckets() {
		this.runner.withPropertyValues("management.metrics.distribution.slo.agent_xfer_time_us=100,1000000")
			.run((context) -> {
				NixlAgent agent = context.getBean(NixlAgent.class);
				String[] labels = { "agent_name", agent.name() };
				writeThenRead(agent);
				Scrape after = scrape(context);
				assertThat(after.values("agent_xfer_time_us_bucket", labels)).hasSize(3).last().isEqualTo(2.0);
				assertThat(after.values("agent_xfer_post_time_us_bucket", labels))
					.hasSize(NixlCompatibleTransfers.BUCKETS_MICROS.size() + 1);
			});
	}

	@Test
	void aRefusedPostAndAFailedTransferAreCountedUnderTheirStatus() {
		this.runner.withUserConfiguration(RefusingListenerConfiguration.class).run((context) -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			RefusingListener refusing = context.getBean(RefusingListener.class);
			String[] labels = { "agent_name", agent.name() };
			try (Arena arena = Arena.ofShared()) {
				MemorySegment local = arena.allocate(SIZE);
				NixlException failure;
				try (Registration _ = agent.register(local)) {
					TestPeer peer = TestPeer.start("nixl-names-refused", SIZE, 1);
					DescriptorList remote = DescriptorList.of(peer.memory());
					String peerName = peer.agent().name();
					try {
						agent.loadRemoteMetadata(peer.agent().localMetadata());
						refusing.refuse = true;
						try (Transfer transfer = agent.createTransfer(XferOp.READ, DescriptorList.of(local), remote,
								peerName, null)) {
							assertThatExceptionOfType(NixlException.class).isThrownBy(transfer::post);
						}
						refusing.refuse = false;
					}
					finally {
						peer.close();
					}
					// the peer is gone: the READ fails, at post or when it runs
					try (Transfer transfer = agent.createTransfer(XferOp.READ, DescriptorList.of(local), remote,
							peerName, null)) {
						failure = failureOf(transfer);
					}
				}
				Scrape after = scrape(context);
				assertThat(after.value("agent_errors_total", concat(labels, "status", "remote_disconnect")))
					.as("the refused post")
					.isGreaterThanOrEqualTo(1);
				double errors = 0;
				for (String status : NixlCompatibleTransfers.STATUS_LABELS) {
					errors += after.value("agent_errors_total", concat(labels, "status", status));
				}
				assertThat(errors).as("one refused post and one failed transfer").isEqualTo(2);
				String status = NixlCompatibleTransfers.statusLabel(failure.status());
				assertThat(after.value("agent_errors_total", concat(labels, "status", status)))
					.as("the failed transfer, " + failure.status())
					.isGreaterThanOrEqualTo(1);
				assertThat(after.value("agent_rx_requests_num_total", labels)).isZero();
			}
		});
	}

	@Test
	void offByDefault() {
		this.runner.withPropertyValues("nixl.metrics.nixl-names=false").run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(NixlCompatibleMetrics.class)
				.doesNotHaveBean(NixlCompatibleTransfers.class)
				.hasSingleBean(NixlAgentMetrics.class);
			assertThat(scrape(context).sampleNames()).noneMatch((name) -> name.startsWith("agent_"));
		});
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
					MetricsAutoConfiguration.class, PrometheusMetricsExportAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlCompatibleMetrics.class));
	}

	@Test
	void nativeTelemetryFeedsThePostTimeHistogram() {
		NativeNixl.require();
		this.runner.withPropertyValues("nixl.agent.engine=native", "nixl.agent.telemetry=true").run((context) -> {
			assertThat(context).hasNotFailed();
			NixlAgent agent = context.getBean(NixlAgent.class);
			String[] labels = { "agent_name", agent.name() };
			try (TestPeer peer = TestPeer.start("nixl-names-native", SIZE, 1, Engine.NATIVE);
					Arena arena = Arena.ofShared()) {
				MemorySegment local = Bytes.pattern(arena, SIZE, 5);
				try (Registration _ = agent.register(local)) {
					agent.loadRemoteMetadata(peer.agent().localMetadata());
					peer.transfer(agent, XferOp.WRITE, local, "written");
					Bytes.fill(peer.memory(), 6);
					peer.transfer(agent, XferOp.READ, local, null);
				}
			}
			Scrape after = scrape(context);
			assertThat(after.value("agent_xfer_post_time_us_count", labels)).isEqualTo(2);
			assertThat(after.value("agent_xfer_time_us_count", labels)).isEqualTo(2);
			assertThat(after.value("agent_xfer_time_us_sum", labels)).isPositive();
			assertThat(after.value("agent_xfer_post_time_us_sum", labels))
				.isLessThanOrEqualTo(after.value("agent_xfer_time_us_sum", labels));
			assertThat(after.value("agent_tx_bytes_total", labels)).isEqualTo(SIZE);
			assertThat(after.value("agent_rx_bytes_total", labels)).isEqualTo(SIZE);
		});
	}

	private static NixlException failureOf(Transfer transfer) {
		try {
			transfer.post();
			transfer.await(TestPeer.WAIT);
		}
		catch (NixlException ex) {
			return ex;
		}
		return fail("a READ from a closed peer completed");
	}

	private static void writeThenRead(NixlAgent agent) {
		try (TestPeer peer = TestPeer.start("nixl-names", SIZE, 1); Arena arena = Arena.ofShared()) {
			MemorySegment local = Bytes.pattern(arena, SIZE, 5);
			try (Registration _ = agent.register(local)) {
				agent.loadRemoteMetadata(peer.agent().localMetadata());
				peer.transfer(agent, XferOp.WRITE, local, "written");
				Bytes.fill(peer.memory(), 6);
				peer.transfer(agent, XferOp.READ, local, null);
			}
		}
	}

	private static String[] concat(String[] labels, String key, String value) {
		String[] all = new String[labels.length + 2];
		System.arraycopy(labels, 0, all, 0, labels.length);
		all[labels.length] = key;
		all[labels.length + 1] = value;
		return all;
	}

	private static Scrape scrape(AssertableApplicationContext context) {
		return new Scrape(context.getBean(PrometheusMeterRegistry.class).scrape());
	}

	/**
	 * A scrape in Prometheus' text format.
	 */
	private record Scrape(String text) {

		private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$");

		void assertType(String name, String type) {
			assertThat(this.text.lines()).as("the type of " + name).contains("# TYPE " + name + " " + type);
		}

		List<String> sampleNames() {
			List<String> names = new ArrayList<>();
			this.text.lines().map(SAMPLE::matcher).filter(Matcher::matches).forEach((m) -> names.add(m.group(1)));
			return names;
		}

		/**
		 * Returns the value of the one sample of a name that has the given labels.
		 */
		double value(String name, String... labels) {
			List<Double> values = values(name, labels);
			assertThat(values).as("samples of " + name + " with " + List.of(labels) + " in\n" + this.text).hasSize(1);
			return values.get(0);
		}

		/**
		 * Returns the values of the samples of a name that have the given labels.
		 */
		List<Double> values(String name, String... labels) {
			List<Double> values = new ArrayList<>();
			for (String line : this.text.lines().toList()) {
				Matcher matcher = SAMPLE.matcher(line);
				if (!matcher.matches() || !matcher.group(1).equals(name)) {
					continue;
				}
				String set = (matcher.group(3) != null) ? "," + matcher.group(3) + "," : ",";
				boolean all = true;
				for (int i = 0; i < labels.length; i += 2) {
					all &= set.contains("," + labels[i] + "=\"" + labels[i + 1] + "\",");
				}
				if (all) {
					values.add(Double.parseDouble(matcher.group(4)));
				}
			}
			return values;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RefusingListenerConfiguration {

		@Bean
		@Order(TransferListenerOrder.METRICS + 1)
		RefusingListener refusingListener() {
			return new RefusingListener();
		}

	}

	/**
	 * Refuses posts, as a circuit breaker does, while told to.
	 */
	static class RefusingListener implements TransferListener {

		volatile boolean refuse;

		@Override
		public void beforePost(Transfer transfer) {
			if (this.refuse) {
				throw new NixlException(NixlStatus.UNAVAILABLE, "post_xfer_req", null, transfer.remoteAgent(),
						"refused by the test");
			}
		}

	}

}
