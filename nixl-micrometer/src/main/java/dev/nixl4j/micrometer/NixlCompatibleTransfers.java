package dev.nixl4j.micrometer;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.TransferTelemetry;
import dev.nixl4j.XferOp;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import org.jspecify.annotations.Nullable;

/**
 * Records each post of an agent in the meters of {@link NixlCompatibleMetrics} that only
 * a transfer's end can feed: the transfer-time and post-time histograms and their sums,
 * the size of the latest transfer of each direction, and {@code agent_errors_total}. A
 * {@link TransferListener}: it records the posts of the agent it is added to, in every
 * registry it was {@linkplain #register registered} with.
 *
 * <p>
 * With the agent's telemetry on ({@link dev.nixl4j.AgentConfig#telemetry()}), a completed
 * post's times are NIXL's own figures, read once with {@link Transfer#telemetry()} on the
 * thread that ends the post; with it off (or when the transfer was closed before its
 * figures were read), the transfer time is nixl4j's time from post to end and no post
 * time is recorded.
 */
public class NixlCompatibleTransfers implements TransferListener {

	/**
	 * NIXL's default bucket boundaries of the transfer-time histograms, in microseconds
	 * ({@code defaultHistogramBucketsUs()} of its telemetry plugins).
	 */
	public static final List<Double> BUCKETS_MICROS = List.of(10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0,
			5000.0, 10000.0, 25000.0, 50000.0, 100000.0, 250000.0, 500000.0, 1000000.0, 5000000.0, 10000000.0);

	/**
	 * NIXL's values of the {@code status} label of {@code agent_errors_total}, in the
	 * order of its error events.
	 */
	public static final List<String> STATUS_LABELS = List.of("not_posted", "invalid_param", "backend", "not_found",
			"mismatch", "not_allowed", "repost_active", "unknown", "not_supported", "remote_disconnect", "canceled",
			"no_telemetry");

	private final boolean telemetry;

	private final Tags tags;

	private final Map<MeterRegistry, Boolean> registries = new IdentityHashMap<>();

	private final List<Recorders> recorders = new CopyOnWriteArrayList<>();

	private final Map<XferOp, AtomicLong> lastBytes = new EnumMap<>(XferOp.class);

	/**
	 * Creates the recorder of an agent's posts, labelled with this host's name.
	 * @param agentName the name of the agent it is added to
	 * @param telemetry whether that agent captures NIXL's per-transfer telemetry
	 */
	public NixlCompatibleTransfers(String agentName, boolean telemetry) {
		this(agentName, telemetry, localHostname(), Tags.empty());
	}

	/**
	 * Creates the recorder of an agent's posts.
	 * @param agentName the name of the agent it is added to (the {@code agent_name}
	 * label)
	 * @param telemetry whether that agent captures NIXL's per-transfer telemetry
	 * @param hostname the value of the {@code hostname} label
	 * @param tags tags added to every meter besides {@code hostname} and
	 * {@code agent_name}
	 */
	public NixlCompatibleTransfers(String agentName, boolean telemetry, String hostname, Iterable<Tag> tags) {
		this.telemetry = telemetry;
		this.tags = Tags.of("hostname", hostname, "agent_name", agentName).and(tags);
		for (XferOp op : XferOp.values()) {
			this.lastBytes.put(op, new AtomicLong());
		}
	}

	/**
	 * Returns the tags of every meter.
	 * @return {@code hostname}, {@code agent_name} and the extra tags
	 */
	public Tags tags() {
		return this.tags;
	}

	/**
	 * Returns whether completed posts are timed with NIXL's telemetry.
	 * @return whether the agent captures telemetry
	 */
	public boolean telemetry() {
		return this.telemetry;
	}

	/**
	 * Registers the meters with a registry; later posts are recorded there too.
	 * Registering with the same registry again does nothing.
	 * @param registry the registry
	 */
	public void register(MeterRegistry registry) {
		synchronized (this.registries) {
			if (this.registries.put(registry, Boolean.TRUE) != null) {
				return;
			}
		}
		lastBytes(registry, XferOp.WRITE, "agent_tx_last_bytes", "Bytes sent by the last request");
		lastBytes(registry, XferOp.READ, "agent_rx_last_bytes", "Bytes received by the last request");
		Map<String, Counter> errors = new HashMap<>();
		for (String status : STATUS_LABELS) {
			errors.put(status,
					Counter.builder("agent_errors_total")
						.tags(this.tags.and("status", status))
						.description("Cumulative error count by status")
						.register(registry));
		}
		this.recorders.add(new Recorders(
				histogram(registry, "agent_xfer_time_us",
						"Distribution of transfer time from start to completion, in microseconds"),
				Counter.builder("agent_xfer_time_total")
					.tags(this.tags)
					.description("Cumulative sum of transfer time from start to completion")
					.register(registry),
				histogram(registry, "agent_xfer_post_time_us",
						"Distribution of time from start to posting to the back-end, in microseconds"),
				Counter.builder("agent_xfer_post_time_total")
					.tags(this.tags)
					.description("Cumulative sum of time from start to posting to the back-end")
					.register(registry),
				errors));
	}

	private void lastBytes(MeterRegistry registry, XferOp op, String name, String description) {
		AtomicLong last = this.lastBytes.get(op);
		if (last != null) {
			Gauge.builder(name, last, AtomicLong::get).tags(this.tags).description(description).register(registry);
		}
	}

	private DistributionSummary histogram(MeterRegistry registry, String name, String description) {
		double[] buckets = new double[BUCKETS_MICROS.size()];
		for (int i = 0; i < buckets.length; i++) {
			buckets[i] = BUCKETS_MICROS.get(i);
		}
		return DistributionSummary.builder(name)
			.tags(this.tags)
			.description(description)
			.serviceLevelObjectives(buckets)
			.register(registry);
	}

	@Override
	public void postRefused(Transfer transfer, RuntimeException reason) {
		if (reason instanceof NixlException failure) {
			countError(statusLabel(failure.status()));
		}
	}

	@Override
	public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
			@Nullable NixlException failure) {
		if (outcome != TransferState.COMPLETED) {
			countError(statusLabel(outcome, failure));
			return;
		}
		AtomicLong last = this.lastBytes.get(transfer.op());
		if (last != null) {
			last.set(transfer.byteSize());
		}
		long transferMicros = durationNanos / 1000;
		long postMicros = -1;
		TransferTelemetry figures = (this.telemetry) ? telemetry(transfer) : null;
		if (figures != null) {
			transferMicros = micros(figures.transferDuration());
			postMicros = micros(figures.postDuration());
		}
		for (Recorders recorders : this.recorders) {
			recorders.transferTime().record(transferMicros);
			recorders.transferTimeTotal().increment(transferMicros);
			if (postMicros >= 0) {
				recorders.postTime().record(postMicros);
				recorders.postTimeTotal().increment(postMicros);
			}
		}
	}

	private static @Nullable TransferTelemetry telemetry(Transfer transfer) {
		try {
			return transfer.telemetry();
		}
		catch (NixlException ex) {
			// closed by its owner meanwhile, or not captured: nixl4j's own time stands in
			return null;
		}
	}

	private static long micros(Duration duration) {
		return duration.toNanos() / 1000;
	}

	private void countError(String status) {
		for (Recorders recorders : this.recorders) {
			Counter counter = recorders.errors().get(status);
			if (counter != null) {
				counter.increment();
			}
		}
	}

	/**
	 * Returns the {@code status} label under which a post that did not complete is
	 * counted in {@code agent_errors_total}.
	 * @param outcome how the post ended
	 * @param failure why, when known
	 * @return one of {@link #STATUS_LABELS}
	 */
	static String statusLabel(TransferState outcome, @Nullable NixlException failure) {
		if (outcome == TransferState.STALLED || outcome == TransferState.CANCELLED) {
			return "canceled";
		}
		return (failure != null) ? statusLabel(failure.status()) : "unknown";
	}

	/**
	 * Returns NIXL's {@code status} label of a nixl4j status: its own for the statuses of
	 * NIXL's C API, {@code canceled} for {@link NixlStatus#CANCELLED} and
	 * {@link NixlStatus#STALLED} (nixl4j cancelled the transfer),
	 * {@code remote_disconnect} for {@link NixlStatus#UNAVAILABLE}, {@code not_allowed}
	 * for {@link NixlStatus#ERROR_INVALID_STATE}, {@code unknown} for the others.
	 * @param status the status
	 * @return one of {@link #STATUS_LABELS}
	 */
	public static String statusLabel(NixlStatus status) {
		return switch (status) {
			case ERROR_INVALID_PARAM -> "invalid_param";
			case ERROR_BACKEND -> "backend";
			case ERROR_INVALID_STATE -> "not_allowed";
			case ERROR_NO_TELEMETRY -> "no_telemetry";
			case ERROR_NOT_FOUND -> "not_found";
			case NOT_SUPPORTED -> "not_supported";
			case CANCELLED, STALLED -> "canceled";
			case UNAVAILABLE -> "remote_disconnect";
			default -> "unknown";
		};
	}

	/**
	 * Returns this host's name as NIXL's exporter labels it ({@code gethostname}), or
	 * {@code unknown}.
	 * @return the name
	 */
	static String localHostname() {
		try {
			String name = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.US_ASCII).strip();
			if (!name.isEmpty()) {
				return name;
			}
		}
		catch (IOException | RuntimeException ex) {
			// not Linux: ask the JDK
		}
		try {
			return InetAddress.getLocalHost().getHostName();
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	private record Recorders(DistributionSummary transferTime, Counter transferTimeTotal, DistributionSummary postTime,
			Counter postTimeTotal, Map<String, Counter> errors) {
	}

}
