package dev.nixl4j.micrometer;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.AgentState;
import dev.nixl4j.AgentStatistics;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Meters of a {@link NixlAgent}, all tagged with {@code agent} (the agent's name):
 *
 * <ul>
 * <li>{@code nixl.transfers} (function counter; tags {@code op}, {@code outcome}): posts
 * that ended;
 * <li>{@code nixl.transfer.bytes} (function counter, bytes; tags {@code op},
 * {@code outcome}): bytes moved by completed posts, bytes requested by the others;
 * <li>{@code nixl.transfer.duration} (timer; tags {@code op}, {@code outcome}): time from
 * post to end; percentiles, histograms and SLOs come from Boot's
 * {@code management.metrics.distribution.*.nixl.transfer.duration};
 * <li>{@code nixl.transfers.in.flight} (gauge): posts in progress now;
 * <li>{@code nixl.transfers.stalled} (function counter): posts that stayed in progress
 * past the stall limit and were cancelled;
 * <li>{@code nixl.registered.bytes} (gauge, bytes) and {@code nixl.registrations}
 * (gauge): memory registered now;
 * <li>{@code nixl.notifications} (function counter; tag {@code direction}: {@code sent}
 * or {@code received});
 * <li>{@code nixl.notifications.dropped} (function counter; tag {@code sender}):
 * notifications dropped unclaimed, over the mailbox's bound for their sender or in total;
 * the first {@value BoundedTagValues#MAX} senders that had drops by name, each counting
 * from the first publication after its first drop, the rest (and each sender's drops
 * before its series appeared) as {@code other};
 * <li>{@code nixl.peers} (gauge): peers whose metadata is loaded;
 * <li>{@code nixl.agent.failed} (gauge): 1 once the agent {@linkplain AgentState#FAILED
 * failed} (one of its internal threads could not go on), else 0;
 * <li>{@code nixl.agent.internal.errors} (function counter): units of work of the agent's
 * internal threads that threw ({@link AgentStatistics#internalErrors()}), survived or
 * not.
 * </ul>
 *
 * <p>
 * {@code op} is {@code read} or {@code write}; {@code outcome} is {@code completed},
 * {@code failed}, {@code stalled} or {@code cancelled}. Counters and gauges read the
 * agent's live state when they are published; only the timer is recorded, by a
 * {@link NixlTransferDurations} transfer listener.
 */
public class NixlAgentMetrics implements MeterBinder {

	private final NixlAgent agent;

	private final Tags tags;

	private final NixlTransferDurations durations;

	private final boolean ownDurations;

	private final AtomicBoolean durationsAdded = new AtomicBoolean();

	/**
	 * Creates the meters of an agent; the duration timer is recorded by a listener added
	 * to the agent when the binder is first bound. {@link #builder(NixlAgent)} adds tags
	 * or takes a listener of the caller's.
	 * @param agent the agent
	 */
	public NixlAgentMetrics(NixlAgent agent) {
		this(agent, new NixlTransferDurations(agent.name(), Tags.empty()), true);
	}

	private NixlAgentMetrics(NixlAgent agent, NixlTransferDurations durations, boolean ownDurations) {
		this.agent = agent;
		this.tags = durations.tags();
		this.durations = durations;
		this.ownDurations = ownDurations;
	}

	/**
	 * Starts building the meters of an agent.
	 * @param agent the agent
	 * @return the builder
	 */
	public static Builder builder(NixlAgent agent) {
		return new Builder(Objects.requireNonNull(agent, "agent"));
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		AgentStatistics statistics = this.agent.statistics();
		for (XferOp op : XferOp.values()) {
			for (TransferState outcome : AgentStatistics.OUTCOMES) {
				Tags tags = this.tags.and("op", tagValue(op), "outcome", tagValue(outcome));
				FunctionCounter.builder("nixl.transfers", statistics, (s) -> s.transfers(op, outcome))
					.tags(tags)
					.description("Transfer posts that ended")
					.register(registry);
				FunctionCounter.builder("nixl.transfer.bytes", statistics, (s) -> s.bytes(op, outcome))
					.tags(tags)
					.baseUnit(BaseUnits.BYTES)
					.description("Bytes moved by completed transfer posts, requested by the others")
					.register(registry);
			}
		}
		this.durations.register(registry);
		Gauge.builder("nixl.transfers.in.flight", this.agent, (a) -> a.inFlightTransfers().size())
			.tags(this.tags)
			.description("Transfer posts in progress")
			.register(registry);
		FunctionCounter.builder("nixl.transfers.stalled", statistics, NixlAgentMetrics::stalled)
			.tags(this.tags)
			.description("Transfer posts that stayed in progress past the stall limit and were cancelled")
			.register(registry);
		Gauge.builder("nixl.registered.bytes", this.agent, NixlAgentMetrics::registeredBytes)
			.tags(this.tags)
			.baseUnit(BaseUnits.BYTES)
			.description("Memory registered with the agent")
			.register(registry);
		Gauge.builder("nixl.registrations", this.agent, (a) -> a.registrations().size())
			.tags(this.tags)
			.description("Live memory registrations")
			.register(registry);
		FunctionCounter.builder("nixl.notifications", statistics, AgentStatistics::notificationsSent)
			.tags(this.tags.and("direction", "sent"))
			.description("Notifications sent, on their own or with a transfer")
			.register(registry);
		FunctionCounter.builder("nixl.notifications", statistics, AgentStatistics::notificationsReceived)
			.tags(this.tags.and("direction", "received"))
			.description("Notifications received")
			.register(registry);
		DroppedNotifications dropped = new DroppedNotifications(registry, statistics);
		// the counter holds its state object weakly: the agent's statistics, which live
		// as
		// long as the agent, while the function keeps the senders' bookkeeping
		FunctionCounter.builder("nixl.notifications.dropped", statistics, (s) -> dropped.others())
			.tags(this.tags.and("sender", BoundedTagValues.OTHER))
			.description(DROPPED)
			.register(registry);
		Gauge.builder("nixl.peers", this.agent, (a) -> a.remoteAgents().size())
			.tags(this.tags)
			.description("Peers whose metadata is loaded")
			.register(registry);
		Gauge.builder("nixl.agent.failed", this.agent, (a) -> (a.state() == AgentState.FAILED) ? 1 : 0)
			.tags(this.tags)
			.description("1 once one of the agent's internal threads could not go on, so it can no longer move data")
			.register(registry);
		FunctionCounter.builder("nixl.agent.internal.errors", statistics, AgentStatistics::internalErrors)
			.tags(this.tags)
			.description("Units of work of the agent's internal threads that threw")
			.register(registry);
		if (this.ownDurations && this.durationsAdded.compareAndSet(false, true)) {
			this.agent.addTransferListener(this.durations);
		}
	}

	private static final String DROPPED = "Notifications dropped unclaimed, over the mailbox's bound for their sender"
			+ " or in total";

	static String tagValue(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT);
	}

	private static double stalled(AgentStatistics statistics) {
		long stalled = 0;
		for (XferOp op : XferOp.values()) {
			stalled += statistics.transfers(op, TransferState.STALLED);
		}
		return stalled;
	}

	/**
	 * Publishes the drops of each sender. The first {@value BoundedTagValues#MAX} senders
	 * that had drops get a counter of their own, registered when the {@code other}
	 * counter is read (published) after their first drop, and counting from then on;
	 * their earlier drops, and those of further senders, count under {@code other}. The
	 * series of one agent always add up to its drops, and each only grows.
	 */
	private final class DroppedNotifications {

		private final MeterRegistry registry;

		private final AgentStatistics statistics;

		private final BoundedTagValues senders = new BoundedTagValues();

		/** Each named sender's drops when its counter was registered. */
		private final Map<String, Long> baselines = new ConcurrentHashMap<>();

		private long seen;

		private double others;

		DroppedNotifications(MeterRegistry registry, AgentStatistics statistics) {
			this.registry = registry;
			this.statistics = statistics;
		}

		synchronized double others() {
			long total = this.statistics.notificationsDropped();
			if (total == this.seen) {
				return this.others;
			}
			this.seen = total;
			Map<String, Long> bySender = this.statistics.notificationsDroppedBySender();
			long named = 0;
			for (Map.Entry<String, Long> entry : bySender.entrySet()) {
				String sender = entry.getKey();
				Long baseline = this.baselines.get(sender);
				if (baseline != null) {
					named += entry.getValue() - baseline;
				}
				else if (!BoundedTagValues.OTHER.equals(this.senders.valueOf(sender))) {
					long from = entry.getValue();
					this.baselines.put(sender, from);
					FunctionCounter
						.builder("nixl.notifications.dropped", this.statistics,
								(s) -> s.notificationsDropped(sender) - from)
						.tags(NixlAgentMetrics.this.tags.and("sender", sender))
						.description(DROPPED)
						.register(this.registry);
				}
			}
			// the total and the senders' counts are read one after the other: never
			// let a drop counted under a sender meanwhile make this one shrink
			this.others = Math.max(this.others, total - named);
			return this.others;
		}

	}

	private static double registeredBytes(NixlAgent agent) {
		long bytes = 0;
		for (Registration registration : agent.registrations()) {
			bytes += registration.byteSize();
		}
		return bytes;
	}

	/**
	 * Builds {@link NixlAgentMetrics}: extra tags for every meter, or the
	 * {@link NixlTransferDurations} listener that records the duration timer (whose tags
	 * every meter then gets).
	 */
	public static final class Builder {

		private final NixlAgent agent;

		private Tags tags = Tags.empty();

		private boolean tagsSet;

		private @Nullable NixlTransferDurations durations;

		private Builder(NixlAgent agent) {
			this.agent = agent;
		}

		/**
		 * Adds tags to every meter, beside {@code agent}; none by default. The binder
		 * then records the duration timer with a listener of its own, added to the agent
		 * when it is first bound.
		 * @param tags the tags
		 * @return this builder
		 */
		public Builder tags(Iterable<Tag> tags) {
			this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
			this.tagsSet = true;
			return this;
		}

		/**
		 * Has the duration timer recorded by a listener that the caller adds to the agent
		 * (the Spring Boot starter applies it as a transfer listener bean), instead of
		 * one the binder adds. Every meter gets the listener's
		 * {@linkplain NixlTransferDurations#tags() tags}.
		 * @param durations the listener
		 * @return this builder
		 */
		public Builder durations(NixlTransferDurations durations) {
			this.durations = Objects.requireNonNull(durations, "durations");
			return this;
		}

		/**
		 * Builds the meters.
		 * @return the binder
		 * @throws IllegalStateException when both tags and a durations listener are set:
		 * the meters take the listener's tags, so give the tags to the listener
		 */
		public NixlAgentMetrics build() {
			NixlTransferDurations durations = this.durations;
			if (durations == null) {
				return new NixlAgentMetrics(this.agent, new NixlTransferDurations(this.agent.name(), this.tags), true);
			}
			if (this.tagsSet) {
				throw new IllegalStateException("the meters of agent '" + this.agent.name()
						+ "' take the tags of their NixlTransferDurations listener: give the tags to the listener, "
						+ "not to the builder");
			}
			return new NixlAgentMetrics(this.agent, durations, false);
		}

	}

}
