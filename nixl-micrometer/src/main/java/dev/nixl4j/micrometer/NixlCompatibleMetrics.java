package dev.nixl4j.micrometer;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.AgentStatistics;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The meters of a {@link NixlAgent} under the names, units and labels of NIXL's
 * Prometheus telemetry exporter ({@code src/plugins/telemetry/prometheus}), so that a
 * dashboard built for that exporter works on nixl4j's scrape unchanged. Every series has
 * the labels {@code hostname} and {@code agent_name}; with Micrometer's Prometheus
 * registry the scraped names are NIXL's exactly:
 *
 * <ul>
 * <li>{@code agent_tx_bytes_total} and {@code agent_rx_bytes_total} (counters, bytes):
 * bytes moved by completed WRITE and READ posts;
 * <li>{@code agent_tx_requests_num_total} and {@code agent_rx_requests_num_total}
 * (counters): completed WRITE and READ posts;
 * <li>{@code agent_tx_last_bytes} and {@code agent_rx_last_bytes} (gauges, bytes): the
 * size of the latest completed WRITE and READ;
 * <li>{@code agent_xfer_time_us} and {@code agent_xfer_post_time_us} (histograms,
 * microseconds, NIXL's default buckets from 10 µs to 10 s) with
 * {@code agent_xfer_time_total} and {@code agent_xfer_post_time_total} (counters,
 * microseconds, their sums): per completed post, its transfer time (from the start of the
 * post to completion) and its post time (from the start of the post to its hand-over to
 * the backend);
 * <li>{@code agent_memory_registered_total} and {@code agent_memory_deregistered_total}
 * (counters, bytes) with {@code agent_memory_registered_last_bytes} and
 * {@code agent_memory_deregistered_last_bytes} (gauges, bytes): memory registered and
 * deregistered, the size of the latest of each;
 * <li>{@code agent_errors_total} (counter; label {@code status}, one of NIXL's twelve:
 * {@code not_posted}, {@code invalid_param}, {@code backend}, {@code not_found},
 * {@code mismatch}, {@code not_allowed}, {@code repost_active}, {@code unknown},
 * {@code not_supported}, {@code remote_disconnect}, {@code canceled},
 * {@code no_telemetry}): posts that did not complete and posts that were refused with a
 * {@link NixlException}, by their
 * {@linkplain NixlCompatibleTransfers#statusLabel(NixlStatus) status};
 * <li>{@code agent_telemetry_events_dropped_total} (counter): always 0, nixl4j reads each
 * transfer's figures at its end instead of queueing events.
 * </ul>
 *
 * <p>
 * With the agent's telemetry on ({@link dev.nixl4j.AgentConfig#telemetry()}), the two
 * times are NIXL's own per-transfer figures ({@link Transfer#telemetry()}, read once on
 * the thread that ends the transfer); with it off, the transfer time is nixl4j's time
 * from post to end and the post-time histogram stays empty, as NIXL publishes no post
 * time without telemetry. Byte and request counters read {@link AgentStatistics};
 * registered memory is sampled from {@link NixlAgent#registrations()} when the meters are
 * read, so a registration that lives shorter than the interval between two scrapes is not
 * counted, and {@code agent_memory_registered_total - agent_memory_deregistered_total} is
 * the memory registered at the scrape.
 *
 * <p>
 * NIXL's exporter also publishes last-value gauges named {@code agent_xfer_time} and
 * {@code agent_xfer_post_time}; Prometheus' Java client cannot expose a gauge beside a
 * counter of the same name plus {@code _total}, so only the counters are published.
 *
 * <p>
 * The meters fed at a transfer's end are recorded by a {@link NixlCompatibleTransfers}
 * transfer listener.
 */
public class NixlCompatibleMetrics implements MeterBinder {

	private final NixlAgent agent;

	private final NixlCompatibleTransfers transfers;

	private final boolean ownTransfers;

	private final AtomicBoolean transfersAdded = new AtomicBoolean();

	private final Tags tags;

	private final RegisteredMemory memory = new RegisteredMemory();

	/**
	 * Creates the meters of an agent, labelled with this host's name; the transfer
	 * listener is added to the agent when the binder is first bound.
	 * @param agent the agent
	 * @param telemetry whether the agent captures NIXL's per-transfer telemetry
	 */
	public NixlCompatibleMetrics(NixlAgent agent, boolean telemetry) {
		this(agent, new NixlCompatibleTransfers(agent.name(), telemetry), true);
	}

	/**
	 * Creates the meters of an agent whose transfer listener the caller adds to the agent
	 * (the Spring Boot starter applies it as a transfer listener bean). Every meter gets
	 * the listener's {@linkplain NixlCompatibleTransfers#tags() tags}.
	 * @param agent the agent
	 * @param transfers the listener
	 */
	public NixlCompatibleMetrics(NixlAgent agent, NixlCompatibleTransfers transfers) {
		this(agent, transfers, false);
	}

	private NixlCompatibleMetrics(NixlAgent agent, NixlCompatibleTransfers transfers, boolean ownTransfers) {
		this.agent = agent;
		this.transfers = transfers;
		this.ownTransfers = ownTransfers;
		this.tags = transfers.tags();
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		AgentStatistics statistics = this.agent.statistics();
		transferCounters(registry, statistics, XferOp.WRITE, "tx", "sent");
		transferCounters(registry, statistics, XferOp.READ, "rx", "received");
		FunctionCounter.builder("agent_memory_registered_total", this, (m) -> m.memory().registered())
			.tags(this.tags)
			.description("Cumulative memory registered")
			.register(registry);
		FunctionCounter.builder("agent_memory_deregistered_total", this, (m) -> m.memory().deregistered())
			.tags(this.tags)
			.description("Cumulative memory deregistered")
			.register(registry);
		Gauge.builder("agent_memory_registered_last_bytes", this, (m) -> m.memory().lastRegistered())
			.tags(this.tags)
			.description("Memory registered by the last operation")
			.register(registry);
		Gauge.builder("agent_memory_deregistered_last_bytes", this, (m) -> m.memory().lastDeregistered())
			.tags(this.tags)
			.description("Memory deregistered by the last operation")
			.register(registry);
		FunctionCounter.builder("agent_telemetry_events_dropped_total", this, (m) -> 0)
			.tags(this.tags)
			.description("Cumulative telemetry events dropped at the producer-side staging queue")
			.register(registry);
		this.transfers.register(registry);
		if (this.ownTransfers && this.transfersAdded.compareAndSet(false, true)) {
			this.agent.addTransferListener(this.transfers);
		}
	}

	private void transferCounters(MeterRegistry registry, AgentStatistics statistics, XferOp op, String prefix,
			String verb) {
		FunctionCounter
			.builder("agent_" + prefix + "_bytes_total", statistics, (s) -> s.bytes(op, TransferState.COMPLETED))
			.tags(this.tags)
			.description("Number of bytes " + verb + " by the agent")
			.register(registry);
		FunctionCounter
			.builder("agent_" + prefix + "_requests_num_total", statistics,
					(s) -> s.transfers(op, TransferState.COMPLETED))
			.tags(this.tags)
			.description("Number of requests " + verb + " by the agent")
			.register(registry);
	}

	private MemorySample memory() {
		return this.memory.sample(this.agent);
	}

	/**
	 * Registered memory as sampled from the agent's live registrations: a registration
	 * seen for the first time counts as registered, one seen before and now gone as
	 * deregistered. Holds no more entries than the agent has registrations.
	 */
	private static final class RegisteredMemory {

		private final Map<Registration, Long> seen = new IdentityHashMap<>();

		private MemorySample sample = new MemorySample(0, 0, 0, 0);

		synchronized MemorySample sample(NixlAgent agent) {
			List<Registration> live = agent.registrations();
			Map<Registration, Boolean> now = new IdentityHashMap<>(live.size());
			long registered = this.sample.registered();
			long deregistered = this.sample.deregistered();
			long lastRegistered = this.sample.lastRegistered();
			long lastDeregistered = this.sample.lastDeregistered();
			for (Registration registration : live) {
				now.put(registration, Boolean.TRUE);
				if (!this.seen.containsKey(registration)) {
					long size = registration.byteSize();
					this.seen.put(registration, size);
					registered += size;
					lastRegistered = size;
				}
			}
			List<Registration> gone = new ArrayList<>();
			for (Map.Entry<Registration, Long> entry : this.seen.entrySet()) {
				if (!now.containsKey(entry.getKey())) {
					gone.add(entry.getKey());
					deregistered += entry.getValue();
					lastDeregistered = entry.getValue();
				}
			}
			for (Registration registration : gone) {
				this.seen.remove(registration);
			}
			this.sample = new MemorySample(registered, deregistered, lastRegistered, lastDeregistered);
			return this.sample;
		}

	}

	private record MemorySample(long registered, long deregistered, long lastRegistered, long lastDeregistered) {
	}

}
