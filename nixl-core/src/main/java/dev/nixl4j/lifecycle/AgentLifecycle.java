package dev.nixl4j.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.nixl4j.Drain;
import dev.nixl4j.DrainParticipant;
import dev.nixl4j.DrainResult;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import org.jspecify.annotations.Nullable;

/**
 * A worker's life around its agent, in plain Java: {@link #start()} publishes the agent's
 * metadata and keeps it published, {@link #stop()} shuts down in order, to a deadline.
 *
 * <ul>
 * <li><b>Start.</b> The agent's metadata is published through a
 * {@link MetadataPublication} (which republishes an entry that vanished or changed), or
 * through NIXL's own etcd exchange ({@link NixlEtcdMetadata}). A failure that may pass by
 * itself ({@link NixlException#retryable()}, such as a registry that is not listening
 * yet) does not fail the start: it is logged and retried in the background, and the
 * publication's state shows it until it lands.</li>
 * <li><b>Stop.</b> The {@link Drain} refuses new transfers and waits, until the shutdown
 * timeout, for the transfers in flight and then for the work of its
 * {@link DrainParticipant}s (such as a KV producer's leases: consumers still reading
 * leased blocks); what is left is logged, cancelled or released. Then the metadata is
 * withdrawn, the users of registered memory are closed in order (KV producer, connector,
 * KV cache), and the agent is closed.</li>
 * </ul>
 *
 * <pre>{@code
 * AgentLifecycle lifecycle = AgentLifecycle.builder(agent)
 *     .exchange(exchange)
 *     .shutdownTimeout(Duration.ofSeconds(30))
 *     .closeBeforeAgent(List.of(producer, cache))
 *     .build();
 * lifecycle.start();
 * ...
 * lifecycle.stop(); // or close()
 * }</pre>
 *
 * Its methods are safe to call from any thread; {@link #stop()} runs once.
 */
public final class AgentLifecycle implements AutoCloseable {

	/** How long {@link #stop()} waits for transfers and participants by default. */
	public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

	private static final System.Logger logger = System.getLogger(AgentLifecycle.class.getName());

	private final NixlAgent agent;

	private final Drain drain;

	private final List<DrainParticipant> participants;

	private final @Nullable MetadataPublication publication;

	private final @Nullable NixlEtcdMetadata nixlEtcd;

	private final boolean publishAtStart;

	private final Duration shutdownTimeout;

	private final List<AutoCloseable> memoryUsers;

	/** Whether the agent's metadata was published through {@link #nixlEtcd}. */
	private volatile boolean nixlEtcdPublished;

	private volatile boolean running;

	private boolean stopped;

	private AgentLifecycle(Builder builder) {
		this.agent = builder.agent;
		this.drain = (builder.drain != null) ? builder.drain : Drain.attach(builder.agent);
		this.participants = List.copyOf(builder.participants);
		this.nixlEtcd = builder.nixlEtcd;
		if (builder.publication != null) {
			this.publication = builder.publication;
		}
		else if (builder.exchange != null) {
			this.publication = MetadataPublication.builder(builder.exchange, builder.agent)
				.checkInterval(builder.checkInterval)
				.build();
		}
		else {
			this.publication = null;
		}
		this.publishAtStart = builder.publishAtStart;
		this.shutdownTimeout = builder.shutdownTimeout;
		this.memoryUsers = List.copyOf(builder.memoryUsers);
	}

	/**
	 * Starts building the lifecycle of an agent.
	 * @param agent the agent, which {@link #stop()} closes
	 * @return a builder
	 */
	public static Builder builder(NixlAgent agent) {
		return new Builder(agent);
	}

	/**
	 * Publishes the agent's metadata, unless publishing at start is off, and marks the
	 * lifecycle running.
	 * @throws NixlException when publishing failed in a way that does not pass by itself
	 * (the publication is then closed)
	 * @throws IllegalStateException when the lifecycle stopped
	 */
	public synchronized void start() {
		if (this.stopped) {
			throw new IllegalStateException("the lifecycle of NIXL agent '" + this.agent.name() + "' stopped");
		}
		if (this.publishAtStart && this.nixlEtcd != null && !this.nixlEtcdPublished) {
			this.nixlEtcd.publish();
			this.nixlEtcdPublished = true;
		}
		MetadataPublication target = this.publication;
		if (this.publishAtStart && target != null && target.state().status() == MetadataPublication.Status.NEW) {
			try {
				target.publish();
			}
			catch (NixlException ex) {
				if (!ex.retryable()) {
					target.close();
					throw ex;
				}
				// the publication keeps trying in the background; its state shows it
				logger.log(Level.WARNING,
						"Could not publish the metadata of NIXL agent '" + this.agent.name()
								+ "' at start; the application starts and publishing is retried in the background: "
								+ ex.getMessage());
			}
			catch (RuntimeException ex) {
				target.close();
				throw ex;
			}
		}
		this.running = true;
	}

	/**
	 * Publishes the agent's metadata now, also when publishing at start is off: for an
	 * application that publishes once it knows a peer that needs it, such as a consumer
	 * whose producer serves the registry. From then on the entry is kept published and
	 * withdrawn at stop like one published at start.
	 * @throws IllegalStateException when there is no metadata exchange or the lifecycle
	 * is not running
	 * @throws NixlException when publishing failed (it is retried in the background)
	 */
	public void publish() {
		MetadataPublication target = this.publication;
		if (target == null && this.nixlEtcd == null) {
			throw new IllegalStateException("no metadata exchange to publish to");
		}
		if (!this.running) {
			throw new IllegalStateException("NIXL agent '" + this.agent.name() + "' is not running");
		}
		if (this.nixlEtcd != null) {
			this.nixlEtcd.publish();
			this.nixlEtcdPublished = true;
		}
		if (target != null) {
			target.publish();
		}
	}

	/**
	 * Republishes the agent's metadata, for memory registered after start that peers
	 * should learn of through the exchange. Does nothing when the metadata was not
	 * published.
	 */
	public void republish() {
		if (this.nixlEtcd != null && this.nixlEtcdPublished) {
			this.nixlEtcd.publish();
		}
		MetadataPublication target = this.publication;
		if (target != null && isPublishing(target.state().status())) {
			target.publish();
		}
	}

	/**
	 * Returns the publication that keeps the agent's entry in the exchange: its state
	 * says whether the entry is published now.
	 * @return the publication, {@code null} when there is no metadata exchange or the
	 * exchange is NIXL's own
	 */
	public @Nullable MetadataPublication publication() {
		return this.publication;
	}

	private static boolean isPublishing(MetadataPublication.Status status) {
		return status == MetadataPublication.Status.PUBLISHED || status == MetadataPublication.Status.NOT_PUBLISHED;
	}

	/**
	 * Stops, once: drains (new transfers refused; transfers in flight and the
	 * participants' work waited for until the shutdown timeout, then cancelled or
	 * released), withdraws the metadata, closes the users of registered memory in order
	 * and closes the agent. Failures of one step are logged and do not skip the next.
	 * @return what the drain left when the timeout passed (empty when everything
	 * finished, or when the lifecycle had stopped already)
	 */
	public DrainResult stop() {
		synchronized (this) {
			if (this.stopped) {
				return new DrainResult(List.of(), List.of(), Duration.ZERO);
			}
			this.stopped = true;
			this.running = false;
		}
		DrainResult drained = this.drain.drain(this.shutdownTimeout, this.participants);
		if (!drained.transfersLeft().isEmpty()) {
			logger.log(Level.WARNING,
					"NIXL agent '" + this.agent.name() + "' still had " + drained.transfersLeft().size()
							+ " transfer(s) in flight after the shutdown timeout of " + this.shutdownTimeout
							+ "; they are cancelled");
		}
		for (DrainResult.Pending pending : drained.participantsLeft()) {
			logger.log(Level.WARNING, "NIXL agent '" + this.agent.name() + "' still held " + pending.work()
					+ " after the shutdown timeout of " + this.shutdownTimeout + "; they are released");
		}
		withdraw();
		for (AutoCloseable user : this.memoryUsers) {
			try {
				user.close();
			}
			catch (Exception ex) {
				logger.log(Level.WARNING, "Closing " + user + " failed", ex);
			}
		}
		this.agent.close();
		return drained;
	}

	private void withdraw() {
		if (this.nixlEtcd != null && this.nixlEtcdPublished) {
			try {
				this.nixlEtcd.invalidate();
				this.nixlEtcdPublished = false;
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Could not withdraw the metadata of NIXL agent '" + this.agent.name()
						+ "' from etcd: " + ex.getMessage());
			}
		}
		MetadataPublication target = this.publication;
		if (target != null) {
			try {
				target.withdraw();
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Could not withdraw the metadata of NIXL agent '" + this.agent.name() + "': "
						+ ex.getMessage());
			}
			finally {
				target.close();
			}
		}
	}

	/** Stops, as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	/**
	 * Whether the lifecycle started and has not begun to stop.
	 * @return {@code true} between {@link #start()} and {@link #stop()}
	 */
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Whether new transfers are refused.
	 * @return {@code true} once stopping began
	 */
	public boolean isStopping() {
		return this.drain.isDraining();
	}

	/**
	 * Builds an {@link AgentLifecycle}. Without an exchange, a publication or NIXL's etcd
	 * exchange nothing is published; without a drain one is {@linkplain Drain#attach
	 * attached} to the agent when built.
	 */
	public static final class Builder {

		private final NixlAgent agent;

		private @Nullable Drain drain;

		private List<? extends DrainParticipant> participants = List.of();

		private @Nullable MetadataExchange exchange;

		private @Nullable MetadataPublication publication;

		private @Nullable NixlEtcdMetadata nixlEtcd;

		private boolean publishAtStart = true;

		private Duration checkInterval = MetadataPublication.DEFAULT_CHECK_INTERVAL;

		private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;

		private List<AutoCloseable> memoryUsers = List.of();

		private Builder(NixlAgent agent) {
			this.agent = Objects.requireNonNull(agent, "agent");
		}

		/**
		 * Sets the drain, which must already hear the agent's posts (be among its
		 * transfer listeners).
		 * @param drain the drain
		 * @return this builder
		 */
		public Builder drain(Drain drain) {
			this.drain = Objects.requireNonNull(drain, "drain");
			return this;
		}

		/**
		 * Sets whose work {@link #stop()} waits for after the transfers, in order.
		 * @param participants the participants
		 * @return this builder
		 */
		public Builder participants(List<? extends DrainParticipant> participants) {
			this.participants = List.copyOf(participants);
			return this;
		}

		/**
		 * Publishes the agent's metadata through an exchange, checked every
		 * {@link #checkInterval(Duration)}. Replaces a {@link #publication} set before.
		 * @param exchange the exchange
		 * @return this builder
		 */
		public Builder exchange(MetadataExchange exchange) {
			this.exchange = Objects.requireNonNull(exchange, "exchange");
			this.publication = null;
			return this;
		}

		/**
		 * Keeps the agent's metadata published through a publication built by the caller
		 * (with documents beside the metadata, for example); the lifecycle publishes it
		 * at start and closes it at stop. Replaces an {@link #exchange} set before.
		 * @param publication the publication
		 * @return this builder
		 */
		public Builder publication(MetadataPublication publication) {
			this.publication = Objects.requireNonNull(publication, "publication");
			this.exchange = null;
			return this;
		}

		/**
		 * Publishes the agent's metadata through NIXL's own etcd exchange at start (and
		 * on {@link AgentLifecycle#publish()} and {@link AgentLifecycle#republish()}) and
		 * withdraws it at stop; NIXL reports no outcome of either, so there is no
		 * {@link AgentLifecycle#publication()} to watch.
		 * @param nixlEtcd the agent's {@link NixlAgent#etcdMetadata() NIXL etcd exchange}
		 * @return this builder
		 */
		public Builder nixlEtcd(NixlEtcdMetadata nixlEtcd) {
			this.nixlEtcd = Objects.requireNonNull(nixlEtcd, "nixlEtcd");
			return this;
		}

		/**
		 * Sets whether {@link AgentLifecycle#start()} publishes (default {@code true});
		 * off, the application publishes with {@link AgentLifecycle#publish()}.
		 * @param publishAtStart whether to publish at start
		 * @return this builder
		 */
		public Builder publishAtStart(boolean publishAtStart) {
			this.publishAtStart = publishAtStart;
			return this;
		}

		/**
		 * Sets how often the entry published through an {@link #exchange} is checked
		 * (default {@link MetadataPublication#DEFAULT_CHECK_INTERVAL}; see
		 * {@link MetadataPublication.Builder#checkInterval}).
		 * @param checkInterval the interval
		 * @return this builder
		 */
		public Builder checkInterval(Duration checkInterval) {
			this.checkInterval = Objects.requireNonNull(checkInterval, "checkInterval");
			return this;
		}

		/**
		 * Sets how long {@link AgentLifecycle#stop()} waits for transfers in flight and
		 * the participants' work (default {@link #DEFAULT_SHUTDOWN_TIMEOUT}).
		 * @param shutdownTimeout the timeout, not negative
		 * @return this builder
		 */
		public Builder shutdownTimeout(Duration shutdownTimeout) {
			if (shutdownTimeout.isNegative()) {
				throw new IllegalArgumentException("shutdownTimeout must not be negative, was " + shutdownTimeout);
			}
			this.shutdownTimeout = shutdownTimeout;
			return this;
		}

		/**
		 * Sets the users of registered memory (KV producer, connector, KV cache), closed
		 * in this order after the metadata is withdrawn and before the agent.
		 * @param memoryUsers the users
		 * @return this builder
		 */
		public Builder closeBeforeAgent(List<? extends AutoCloseable> memoryUsers) {
			this.memoryUsers = new ArrayList<>(memoryUsers);
			return this;
		}

		/**
		 * Builds the lifecycle.
		 * @return the lifecycle, not started
		 */
		public AgentLifecycle build() {
			return new AgentLifecycle(this);
		}

	}

}
