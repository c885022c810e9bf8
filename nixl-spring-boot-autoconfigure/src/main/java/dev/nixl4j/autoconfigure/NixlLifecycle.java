package dev.nixl4j.autoconfigure;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Publishes the agent's metadata when the application starts and keeps it published (a
 * {@link MetadataPublication} republishes an entry that vanished or changed; a failure at start
 * that may pass by itself, {@link NixlException#retryable()}, such as a registry that is not
 * listening yet, does not fail the start but is retried in the background), and shuts NIXL down gracefully
 * when it stops: new transfers are refused, transfers in flight and the KV producer's leases
 * (consumers still reading leased blocks) may finish until {@code nixl.shutdown.timeout}, the
 * metadata is withdrawn, the users of registered memory
 * (KV producer, connector, KV cache) are closed, and the agent is destroyed.
 *
 * <p>With NIXL's own etcd exchange ({@link NixlEtcdMetadata}) the agent's metadata is published
 * through it at start (and on {@link #publish()} and {@link #republish()}) and withdrawn at stop;
 * NIXL reports no outcome of either, so there is no {@link #publication()} to watch.
 *
 * <p>It stops after the web server's graceful shutdown (requests still running may finish their
 * transfers) and before the web server stops (peers can still fetch this agent's metadata while
 * its transfers drain).
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

	private final Duration timeout;

	private final List<AutoCloseable> memoryUsers;

	private final Gate gate = new Gate();

	private volatile boolean running;

	/**
	 * Creates the lifecycle, whose publication checks the agent's entry every
	 * {@link MetadataPublication#DEFAULT_CHECK_INTERVAL}, and starts counting the agent's transfers.
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
	 * Creates the lifecycle and starts counting the agent's transfers.
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
		this.agent = agent;
		this.publication = (exchange != null)
				? MetadataPublication.builder(exchange, agent).checkInterval(checkInterval).build() : null;
		this.nixlEtcd = null;
		this.publish = publish;
		this.timeout = timeout;
		this.memoryUsers = List.copyOf(memoryUsers);
		agent.addTransferListener(this.gate);
	}

	/**
	 * Creates the lifecycle of an agent that publishes through NIXL's own etcd exchange, and
	 * starts counting the agent's transfers.
	 * @param agent the agent
	 * @param nixlEtcd the agent's {@link NixlAgent#etcdMetadata() NIXL etcd exchange}
	 * @param publish whether the agent's metadata is published at start
	 * @param timeout how long stop waits for transfers in flight
	 * @param memoryUsers closed, in order, before the agent
	 */
	public NixlLifecycle(NixlAgent agent, NixlEtcdMetadata nixlEtcd, boolean publish, Duration timeout,
			List<AutoCloseable> memoryUsers) {
		this.agent = agent;
		this.publication = null;
		this.nixlEtcd = nixlEtcd;
		this.publish = publish;
		this.timeout = timeout;
		this.memoryUsers = List.copyOf(memoryUsers);
		agent.addTransferListener(this.gate);
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
					throw ex;
				}
				// the publication keeps trying in the background; health reports it until it lands
				logger.log(Level.WARNING, "Could not publish the metadata of NIXL agent '" + this.agent.name()
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
	 * ({@code nixl.metadata.publish=false}): for an application that publishes once it knows a peer
	 * that needs it, such as a consumer whose producer serves the registry. Metadata published
	 * this way is withdrawn at stop like metadata published at start.
	 * From then on the entry is kept published like one published at start.
	 * @throws IllegalStateException when there is no metadata exchange or the lifecycle stopped
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
	 * Republishes the agent's metadata, for memory registered after start that peers should learn
	 * of through the exchange. Does nothing when the metadata was not published.
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
	 * Returns the publication that keeps the agent's entry in the exchange: its state says
	 * whether the entry is published now.
	 * @return the publication, {@code null} when there is no metadata exchange or the exchange is
	 * NIXL's own
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
		this.gate.close();
		long deadline = System.nanoTime() + this.timeout.toNanos();
		boolean drained = this.gate.awaitIdle(this.timeout);
		if (!drained) {
			logger.log(Level.WARNING, "NIXL agent '" + this.agent.name() + "' still had "
					+ this.agent.inFlightTransfers().size() + " transfer(s) in flight after the shutdown timeout of "
					+ this.timeout + "; they are cancelled");
		}
		for (AutoCloseable user : this.memoryUsers) {
			// Consumers may still be reading leased blocks: let them finish, within the same timeout.
			if (user instanceof KvProducer producer
					&& !producer.awaitLeasesEnded(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
				logger.log(Level.WARNING, "NIXL agent '" + this.agent.name() + "' still held " + producer.activeLeases()
						+ " KV lease(s) after the shutdown timeout of " + this.timeout + "; they are released");
			}
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
		return this.gate.isClosed();
	}

	/**
	 * Counts the agent's posts in flight and refuses new ones once closed.
	 */
	private final class Gate implements TransferListener {

		private final ReentrantLock lock = new ReentrantLock();

		private final Condition idle = this.lock.newCondition();

		private int inFlight;

		private boolean closed;

		@Override
		public void beforePost(Transfer transfer) {
			this.lock.lock();
			try {
				if (this.closed) {
					throw new NixlException(NixlStatus.UNAVAILABLE, "post_xfer_req", NixlLifecycle.this.agent.name(),
							transfer.remoteAgent(), "the application is shutting down and accepts no new transfers");
				}
				this.inFlight++;
			}
			finally {
				this.lock.unlock();
			}
		}

		@Override
		public void postRefused(Transfer transfer, RuntimeException reason) {
			ended();
		}

		@Override
		public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
				@Nullable NixlException failure) {
			ended();
		}

		private void ended() {
			this.lock.lock();
			try {
				this.inFlight--;
				if (this.inFlight == 0) {
					this.idle.signalAll();
				}
			}
			finally {
				this.lock.unlock();
			}
		}

		void close() {
			this.lock.lock();
			try {
				this.closed = true;
			}
			finally {
				this.lock.unlock();
			}
		}

		boolean isClosed() {
			this.lock.lock();
			try {
				return this.closed;
			}
			finally {
				this.lock.unlock();
			}
		}

		boolean awaitIdle(Duration timeout) {
			long remaining = timeout.toNanos();
			this.lock.lock();
			try {
				while (this.inFlight > 0) {
					if (remaining <= 0) {
						return false;
					}
					remaining = this.idle.awaitNanos(remaining);
				}
				return true;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			finally {
				this.lock.unlock();
			}
		}

	}

}
