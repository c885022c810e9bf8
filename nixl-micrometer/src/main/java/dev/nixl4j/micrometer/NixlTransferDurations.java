package dev.nixl4j.micrometer;

import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentStatistics;
import dev.nixl4j.NixlException;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * Records each post's duration in the {@code nixl.transfer.duration} timer of its
 * direction and outcome (tags {@code agent}, {@code op}, {@code outcome}), in every
 * registry its timers were {@linkplain #register registered} with. A
 * {@link TransferListener}: it records the posts of the agent it is added to;
 * {@link NixlAgentMetrics} registers its timers when it is bound.
 */
public class NixlTransferDurations implements TransferListener {

	private final Tags tags;

	private final Map<MeterRegistry, Boolean> registries = new IdentityHashMap<>();

	private final List<Map<XferOp, Map<TransferState, Timer>>> timers = new CopyOnWriteArrayList<>();

	/**
	 * Creates the recorder of an agent's transfer durations.
	 * @param agentName the name of the agent it is added to
	 * @param tags tags added to the timers
	 */
	public NixlTransferDurations(String agentName, Iterable<Tag> tags) {
		this.tags = Tags.of("agent", agentName).and(tags);
	}

	/**
	 * Returns the tags of the timers besides {@code op} and {@code outcome}.
	 * @return {@code agent} and the extra tags
	 */
	public Tags tags() {
		return this.tags;
	}

	/**
	 * Registers the timers with a registry; later posts are recorded there too.
	 * Registering with the same registry again does nothing.
	 * @param registry the registry
	 */
	public void register(MeterRegistry registry) {
		synchronized (this.registries) {
			if (this.registries.put(registry, Boolean.TRUE) != null) {
				return;
			}
		}
		Map<XferOp, Map<TransferState, Timer>> durations = new EnumMap<>(XferOp.class);
		for (XferOp op : XferOp.values()) {
			Map<TransferState, Timer> byOutcome = new EnumMap<>(TransferState.class);
			for (TransferState outcome : AgentStatistics.OUTCOMES) {
				byOutcome.put(outcome,
						Timer.builder("nixl.transfer.duration")
							.tags(this.tags.and("op", NixlAgentMetrics.tagValue(op), "outcome",
									NixlAgentMetrics.tagValue(outcome)))
							.description("Time from a transfer's post to its end")
							.register(registry));
			}
			durations.put(op, byOutcome);
		}
		this.timers.add(durations);
	}

	@Override
	public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
			@Nullable NixlException failure) {
		for (Map<XferOp, Map<TransferState, Timer>> durations : this.timers) {
			Map<TransferState, Timer> byOutcome = durations.get(transfer.op());
			Timer timer = (byOutcome != null) ? byOutcome.get(outcome) : null;
			if (timer != null) {
				timer.record(durationNanos, TimeUnit.NANOSECONDS);
			}
		}
	}

}
