package dev.nixl4j.autoconfigure;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;

import dev.nixl4j.Drain;
import dev.nixl4j.DrainParticipant;
import dev.nixl4j.DrainResult;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Publishes the agent's metadata when the application starts and keeps it published (a
 * {@link MetadataPublication} republishes an entry that vanished or changed; a failure at
 * start that may pass by itself, {@link NixlException#retryable()}, such as a registry
 * that is not listening yet, does not fail the start but is retried in the background),
 * and shuts NIXL down gracefully when it stops: its {@link Drain} refuses new transfers
 * and lets transfers in flight and the work of its {@link DrainParticipant}s (such as the
 * KV producer's leases: consumers still reading leased blocks) finish until
 * {@code nixl.shutdown.timeout}, the metadata is withdrawn, the users of registered
 * memory (KV producer, connector, KV cache) are closed, and the agent is destroyed.
 *
 * <p>
 * With NIXL's own etcd exchange ({@link NixlEtcdMetadata}) the agent's metadata is
 * published through it at start (and on {@link #publish()} and {@link #republish()}) and
 * withdrawn at stop; NIXL reports no outcome of either, so there is no
 * {@link #publication()} to watch.
 *
 * <p>
 * It stops after the web server's graceful shutdown (requests still running may finish
 * their transfers) and before the web server stops (peers can still fetch this agent's
 * metadata while its transfers drain).
 */
public class NixlLifecycle implements SmartLifecycle {

	/** The phase: between the web server's graceful shutdown and its stop. */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1536;

	private static final System.Logger logger = System.getLogger(NixlLifecycle.class.getName());

	private final NixlAgent agent;

	private final @Nullable MetadataPublication publication;

	private final @Nullable NixlEtcdMetadata nixlEtcd;

	/** Whether the agent's metadata was published through {@link #nixlEtcd}. */
	private volatile boolean nixlEtcdPublished;

	private final boolean publish;

	/** The property that says where the exchange lives, and its value; for the report. */
	private @Nullable String exchangeProperty;

	private @Nullable String exchangeValue;

	private final Duration timeout;

	private final List<AutoCloseable> memoryUsers;

	private final Drain drain;

	private final List<DrainParticipant> participants;

	private volatile boolean running;

	/**
	 * Creates the lifecycle, whose publication checks the agent's entry every
	 * {@link MetadataPublication#DEFAULT_CHECK_INTERVAL}, and {@linkplain Drain#attach
	 * attaches} a drain without participants to the agent.
	 * @param agent the agent
	 * @param exchange the metadata exchange, or {@code null} for none
	 * @param publish whether the agent's metadata is published at start
	 * @param timeout how long stop waits for transfers in flight
	 * @param memoryUsers closed, in order, before the agent
	 */
	public NixlLifecycle(NixlAgent agent, @Nullable MetadataExchange exchange, boolean publish, Duration timeout,
			List<AutoCloseable> memoryUsers) {
		this(agent, exchange, publish, MetadataPublication.DEFAULT_CHECK_INTERVAL, timeout, memoryUsers);
	}

	/**
	 * Creates the lifecycle and {@linkplain Drain#attach attaches} a drain without
	 * participants to the agent.
	 * @param agent the agent
	 * @param exchange the metadata exchange, or {@code null} for none
	 * @param publish whether the agent's metadata is published at start
	 * @param checkInterval how often the published entry is checked (see
	 * {@link MetadataPublication.Builder#checkInterval})
	 * @param timeout how long stop waits for transfers in flight
	 * @param memoryUsers closed, in order, before the agent
	 */
	public NixlLifecycle(NixlAgent agent, @Nullable MetadataExchange exchange, boolean publish, Duration checkInterval,
			Duration timeout, List<AutoCloseable> memoryUsers) {
		this(agent, Drain.attach(agent), List.of(), exchange, publish, checkInterval, timeout, memoryUsers);
	}

	/**
	 * Creates the lifecycle with a drain that is already among the agent's transfer
	 * listeners.
	 * @param agent the agent
	 * @param drain the drain, which must hear the agent's posts
	 * @param participants whose work stop waits for after the transfers, in order
	 * @param exchange the metadata exchange, or {@code null} for none
	 * @param publish whether the agent's metadata is published at start
	 * @param checkInterval how often the published entry is checked (see
	 * {@link MetadataPublication.Builder#checkInterval})
	 * @param timeout how long stop waits for transfers in flight and the participants'
	 * work
	 * @param memoryUsers closed, in order, before the agent
	 */
	public NixlLifecycle(NixlAgent agent, Drain drain, List<? extends DrainParticipant> participants,
			@Nullable MetadataExchange exchange, boolean publish, Duration checkInterval, Duration timeout,
			List<AutoCloseable> memoryUsers) {
		this(agent, drain, participants, (exchange != null)
				? MetadataPublication.builder(exchange, agent).checkInterval(checkInterval).build() : null, null,
				publish, timeout, memoryUsers);
	}

	/**
	 * Creates the lifecycle of an agent that publishes through NIXL's own etcd exchange,
	 * and {@linkplain Drain#attach attaches} a drain without participants to the agent.
	 * @param agent the agent
	 * @param nixlEtcd the agent's {@link NixlAgent#etcdMetadata() NIXL etcd exchange}
	 * @param publish whether the agent's metadata is published at start
	 * @param timeout how long stop waits for transfers in flight
	 * @param memoryUsers closed, in order, before the agent
	 */
	public NixlLifecycle(NixlAgent agent, NixlEtcdMetadata nixlEtcd, boolean publish, Duration timeout,
			List<AutoCloseable> memoryUsers) {
		this(agent, Drain.attach(agent), List.of(), nixlEtcd, publish, timeout, memoryUsers);
	}

	/**
	 * Creates the lifecycle of an agent that publishes through NIXL's own etcd exchange,
	 * with a drain that is already among the agent's transfer listeners.
	 * @param agent the agent
	 * @param drain the drain, which must hear the agent's posts
	 * @param participants whose work stop waits for after the transfers, in order
	 * @param nixlEtcd the agent's {@link NixlAgent#etcdMetadata() NIXL etcd exchange}
	 * @param publish whether the agent's metadata is published at start
	 * @param timeout how long stop waits for transfers in flight and the participants'
	 * work
	 * @param memoryUsers closed, in order, before the agent
	 */
	public NixlLifecycle(NixlAgent agent, Drain drain, List<? extends DrainParticipant> participants,
			NixlEtcdMetadata nixlEtcd, boolean publish, Duration timeout, List<AutoCloseable> memoryUsers) {
		this(agent, drain, participants, null, nixlEtcd, publish, timeout, memoryUsers);
	}

	/**
	 * Creates the lifecycle of an agent whose metadata a publication keeps (one built
	 * with documents beside the metadata, for example), with a drain that is already
	 * among the agent's transfer listeners. The lifecycle publishes it at start and
	 * closes it at stop.
	 * @param agent the agent
	 * @param drain the drain, which must hear the agent's posts
	 * @param participants whose work stop waits for after the transfers, in order
	 * @param publication the publication of the agent's metadata
	 * @param publish whether the agent's metadata is published at start
	 * @param timeout how long stop waits for transfers in flight and the participants'
	 * work
	 * @param memoryUsers closed, in order, before the agent
	 */
	public NixlLifecycle(NixlAgent agent, Drain drain, List<? extends DrainParticipant> participants,
			MetadataPublication publication, boolean publish, Duration timeout, List<AutoCloseable> memoryUsers) {
		this(agent, drain, participants, publication, null, publish, timeout, memoryUsers);
	}

	private NixlLifecycle(NixlAgent agent, Drain drain, List<? extends DrainParticipant> participants,
			@Nullable MetadataPublication publication, @Nullable NixlEtcdMetadata nixlEtcd, boolean publish,
			Duration timeout, List<AutoCloseable> memoryUsers) {
		this.agent = agent;
		this.drain = drain;
		this.participants = List.copyOf(participants);
		this.publication = publication;
		this.nixlEtcd = nixlEtcd;
		this.publish = publish;
		this.timeout = timeout;
		this.memoryUsers = List.copyOf(memoryUsers);
	}

	/**
	 * Names the property that says where the metadata exchange lives, so that an exchange
	 * that cannot be reached at start is reported against it
	 * ({@link MetadataExchangeUnavailableException}).
	 * @param property the property's name
	 * @param value its value
	 * @return this lifecycle
	 */
	NixlLifecycle exchangeLocation(String property, String value) {
		this.exchangeProperty = property;
		this.exchangeValue = value;
		return this;
	}

	@Override
	public void start() {
		if (this.publish && this.nixlEtcd != null && !this.nixlEtcdPublished) {
			this.nixlEtcd.publish();
			this.nixlEtcdPublished = true;
		}
		if (this.publish && this.publication != null
				&& this.publication.state().status() == MetadataPublication.Status.NEW) {
			try {
				this.publication.publish();
			}
			catch (NixlException ex) {
				if (!ex.retryable()) {
					this.publication.close();
					if (this.exchangeProperty != null && this.exchangeValue != null
							&& (ex.status() == NixlStatus.UNAVAILABLE || ex.status() == NixlStatus.TIMEOUT)) {
						throw new MetadataExchangeUnavailableException(this.exchangeProperty, this.exchangeValue, ex);
					}
					throw ex;
				}
				// the publication keeps trying in the background; health reports it until
				// it lands
				logger.log(Level.WARNING,
						"Could not publish the metadata of NIXL agent '" + this.agent.name()
								+ "' at start; the application starts and publishing is retried in the background: "
								+ ex.getMessage());
			}
			catch (RuntimeException ex) {
				this.publication.close();
				throw ex;
			}
		}
		this.running = true;
	}

	/**
	 * Publishes the agent's metadata now, also when publishing at start is off
	 * ({@code nixl.metadata.publish=false}): for an application that publishes once it
	 * knows a peer that needs it, such as a consumer whose producer serves the registry.
	 * Metadata published this way is withdrawn at stop like metadata published at start.
	 * From then on the entry is kept published like one published at start.
	 * @throws IllegalStateException when there is no metadata exchange or the lifecycle
	 * stopped
	 * @throws NixlException when publishing failed (it is retried in the background)
	 */
	public void publish() {
		MetadataPublication target = this.publication;
		if (target == null && this.nixlEtcd == null) {
			throw new IllegalStateException("no metadata exchange to publish to (nixl.metadata.exchange is none)");
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
		if (this.publication != null && isPublishing(this.publication.state().status())) {
			this.publication.publish();
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

	@Override
	public void stop() {
		this.running = false;
		DrainResult drained = this.drain.drain(this.timeout, this.participants);
		if (!drained.transfersLeft().isEmpty()) {
			logger.log(Level.WARNING,
					"NIXL agent '" + this.agent.name() + "' still had " + drained.transfersLeft().size()
							+ " transfer(s) in flight after the shutdown timeout of " + this.timeout
							+ "; they are cancelled");
		}
		for (DrainResult.Pending pending : drained.participantsLeft()) {
			logger.log(Level.WARNING, "NIXL agent '" + this.agent.name() + "' still held " + pending.work()
					+ " after the shutdown timeout of " + this.timeout + "; they are released");
		}
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
		if (this.publication != null) {
			try {
				this.publication.withdraw();
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Could not withdraw the metadata of NIXL agent '" + this.agent.name() + "': "
						+ ex.getMessage());
			}
			finally {
				this.publication.close();
			}
		}
		for (AutoCloseable user : this.memoryUsers) {
			try {
				user.close();
			}
			catch (Exception ex) {
				logger.log(Level.WARNING, "Closing " + user + " failed", ex);
			}
		}
		this.agent.close();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * Whether new transfers are refused.
	 * @return {@code true} once stopping began
	 */
	public boolean isStopping() {
		return this.drain.isDraining();
	}

}
