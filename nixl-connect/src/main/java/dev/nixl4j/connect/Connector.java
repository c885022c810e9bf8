package dev.nixl4j.connect;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Registration;
import dev.nixl4j.SettingChecks;
import org.jspecify.annotations.Nullable;

/**
 * Creates paired operations over one {@link NixlAgent}, in the manner of Dynamo's
 * {@code nixl_connect.Connector}: one agent per connector, shared by all its operations.
 *
 * <pre>{@code
 * // worker A: expose memory
 * try (ReadableOperation readable = connector.createReadable(Descriptor.of(segment))) {
 *     send(readable.metadata().toJson());
 *     readable.await(Duration.ofSeconds(30));   // the peer read it
 * }
 * // worker B: read it
 * try (ReadOperation read = connector.beginRead(RdmaMetadata.fromJson(json), Descriptor.of(buffer))) {
 *     read.await(Duration.ofSeconds(30));
 * }
 * }</pre>
 *
 * <p>
 * Notifications are dispatched by the agent, each to exactly one waiting operation, so
 * any number of operations can share the connector. Peers' metadata is loaded once and
 * reference counted (see {@link #createReadable(List, Duration)} and
 * {@link #beginRead(RdmaMetadata, List)}). A connector created from an
 * {@link AgentConfig} owns its agent and closes it; one that wraps an agent leaves it
 * open. Closing the connector cancels its unfinished operations.
 */
public final class Connector implements AutoCloseable {

	/**
	 * How long a passive operation waits for its peer unless told otherwise: 5 minutes.
	 */
	public static final Duration DEFAULT_LEASE = Duration.ofMinutes(5);

	/**
	 * How long a peer stays loaded after the last operation using it ended, unless told
	 * otherwise: 2 seconds. NIXL sends the notification of a transfer when the transfer
	 * completes; invalidating the peer at once would close the connection the
	 * notification may still be queued on.
	 */
	public static final Duration DEFAULT_PEER_LINGER = Duration.ofSeconds(2);

	/**
	 * The longest a connector waits, after a lease expired, for a late notification to
	 * discard.
	 */
	static final Duration LATE_NOTIFICATION_GRACE = Duration.ofMinutes(5);

	private static final Logger logger = System.getLogger(Connector.class.getName());

	private final NixlAgent agent;

	private final boolean ownsAgent;

	private final Duration lease;

	private final RemoteAgents remoteAgents;

	private final Set<Operation> operations = ConcurrentHashMap.newKeySet();

	private final AtomicLong lateNotifications = new AtomicLong();

	private volatile boolean open = true;

	private Connector(NixlAgent agent, boolean ownsAgent, Duration lease, Duration peerLinger) {
		this.agent = agent;
		this.ownsAgent = ownsAgent;
		this.lease = requirePositive(lease);
		this.remoteAgents = new RemoteAgents(agent, peerLinger);
	}

	/**
	 * Creates a connector with its own agent, the default lease and the default peer
	 * linger; {@link #builder(AgentConfig)} sets them.
	 * @param config the agent's configuration
	 * @return the connector; closing it closes the agent
	 */
	public static Connector create(AgentConfig config) {
		return builder(config).build();
	}

	/**
	 * Wraps an existing agent, with the default lease and the default peer linger;
	 * {@link #builder(NixlAgent)} sets them.
	 * @param agent the agent; closing the connector leaves it open
	 * @return the connector
	 */
	public static Connector wrap(NixlAgent agent) {
		return builder(agent).build();
	}

	/**
	 * Starts building a connector with its own agent, created from {@code config} when
	 * the connector is built.
	 * @param config the agent's configuration
	 * @return the builder; closing the connector it builds closes the agent
	 */
	public static Builder builder(AgentConfig config) {
		return new Builder(null, Objects.requireNonNull(config, "config"));
	}

	/**
	 * Starts building a connector over an existing agent.
	 * @param agent the agent; closing the connector leaves it open
	 * @return the builder
	 */
	public static Builder builder(NixlAgent agent) {
		return new Builder(Objects.requireNonNull(agent, "agent"), null);
	}

	private static Duration requireNotNegative(Duration linger) {
		return SettingChecks.requireNotNegative(linger, "peerLinger");
	}

	private static Duration requirePositive(Duration lease) {
		return SettingChecks.requirePositive(lease, "lease");
	}

	/**
	 * Returns the agent all operations of this connector use.
	 * @return the agent
	 */
	public NixlAgent agent() {
		return this.agent;
	}

	/**
	 * Returns the agent's name.
	 * @return the name
	 */
	public String name() {
		return this.agent.name();
	}

	/**
	 * Returns the default lease of passive operations.
	 * @return the lease
	 */
	public Duration lease() {
		return this.lease;
	}

	/**
	 * Exposes local memory for a peer to read, with the default lease.
	 * @param descriptors the memory
	 * @return the operation, in progress; hand {@link ReadableOperation#metadata()} to
	 * the peer
	 */
	public ReadableOperation createReadable(Descriptor... descriptors) {
		return createReadable(List.of(descriptors), this.lease);
	}

	/**
	 * Exposes local memory for a peer to read. The memory is registered now and
	 * deregistered when the operation ends: on the peer's notification, on close, or when
	 * the lease expires ({@link OperationStatus#ERRORED}, {@link NixlStatus#TIMEOUT},
	 * "lease expired").
	 * @param descriptors the memory: at least one descriptor, all of one memory kind
	 * @param lease how long to wait for the peer
	 * @return the operation, in progress
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for an empty or mixed
	 * list, or the registration's failure
	 */
	public ReadableOperation createReadable(List<Descriptor> descriptors, Duration lease) {
		return start(new ReadableOperation(this, checkLocal("create_readable", descriptors), requirePositive(lease)));
	}

	/**
	 * Exposes local memory for a peer to write, with the default lease.
	 * @param descriptors the memory
	 * @return the operation, in progress; hand {@link WritableOperation#metadata()} to
	 * the peer
	 */
	public WritableOperation createWritable(Descriptor... descriptors) {
		return createWritable(List.of(descriptors), this.lease);
	}

	/**
	 * Exposes local memory for a peer to write; as
	 * {@link #createReadable(List, Duration)}.
	 * @param descriptors the memory: at least one descriptor, all of one memory kind
	 * @param lease how long to wait for the peer
	 * @return the operation, in progress
	 */
	public WritableOperation createWritable(List<Descriptor> descriptors, Duration lease) {
		return start(new WritableOperation(this, checkLocal("create_writable", descriptors), requirePositive(lease)));
	}

	/**
	 * Reads a peer's readable memory into local memory.
	 * @param remote the metadata of the peer's {@link ReadableOperation}
	 * @param descriptors where the data goes
	 * @return the operation, in progress
	 */
	public ReadOperation beginRead(RdmaMetadata remote, Descriptor... descriptors) {
		return beginRead(remote, List.of(descriptors));
	}

	/**
	 * Reads a peer's readable memory into local memory. The local list must pair with the
	 * remote one: same count, same size at each index; the metadata must be of a readable
	 * operation. The local memory is registered for the operation's duration; the peer's
	 * metadata is loaded unless what was loaded already describes the remote memory, and
	 * is invalidated when no operation of this connector uses it any more.
	 * @param remote the metadata of the peer's {@link ReadableOperation}
	 * @param descriptors where the data goes: at least one, all of one memory kind
	 * @return the operation, in progress; it completes when the data has arrived
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} when the lists do not
	 * pair or the metadata is of a writable operation, or the failure of registering,
	 * loading or posting
	 */
	public ReadOperation beginRead(RdmaMetadata remote, List<Descriptor> descriptors) {
		Objects.requireNonNull(remote, "remote");
		return start(new ReadOperation(this, remote, checkLocal("begin_read", descriptors)));
	}

	/**
	 * Writes local memory into a peer's writable memory.
	 * @param remote the metadata of the peer's {@link WritableOperation}
	 * @param descriptors the data
	 * @return the operation, in progress
	 */
	public WriteOperation beginWrite(RdmaMetadata remote, Descriptor... descriptors) {
		return beginWrite(remote, List.of(descriptors));
	}

	/**
	 * Writes local memory into a peer's writable memory; as
	 * {@link #beginRead(RdmaMetadata, List)} in the other direction. (Dynamo's
	 * {@code begin_write} takes the local descriptors first.)
	 * @param remote the metadata of the peer's {@link WritableOperation}
	 * @param descriptors the data: at least one, all of one memory kind
	 * @return the operation, in progress; it completes when the data has landed
	 */
	public WriteOperation beginWrite(RdmaMetadata remote, List<Descriptor> descriptors) {
		Objects.requireNonNull(remote, "remote");
		return start(new WriteOperation(this, remote, checkLocal("begin_write", descriptors)));
	}

	/**
	 * Returns the operations that have not ended.
	 * @return a snapshot
	 */
	public List<Operation> operations() {
		return List.copyOf(this.operations);
	}

	/**
	 * Returns the peers that active operations of this connector use now.
	 * @return agent names
	 */
	public List<String> peersInUse() {
		return this.remoteAgents.names();
	}

	/**
	 * Whether the connector is open.
	 * @return {@code false} once closed
	 */
	public boolean isOpen() {
		return this.open;
	}

	/**
	 * Cancels every unfinished operation (releasing their memory and peers) and closes
	 * the agent if the connector owns it. Closing twice is harmless.
	 */
	@Override
	public void close() {
		this.open = false;
		RuntimeException problem = null;
		for (Operation operation : List.copyOf(this.operations)) {
			try {
				operation.close();
			}
			catch (RuntimeException ex) {
				problem = (problem == null) ? ex : problem;
			}
		}
		if (this.ownsAgent) {
			this.agent.close();
		}
		else {
			try {
				this.remoteAgents.invalidateIdle();
			}
			catch (RuntimeException ex) {
				problem = (problem == null) ? ex : problem;
			}
		}
		if (problem != null) {
			throw problem;
		}
	}

	private <T extends Operation> T start(T operation) {
		track(operation);
		try {
			operation.start();
		}
		catch (RuntimeException ex) {
			abandon(operation, ex);
			throw ex;
		}
		return operation;
	}

	private void track(Operation operation) {
		if (!this.open) {
			throw new NixlException(NixlStatus.CLOSED, operation.operationName(), name(), null,
					"the connector was closed");
		}
		this.operations.add(operation);
		if (!this.open) {
			// closed meanwhile: close() may have missed it
			this.operations.remove(operation);
			throw new NixlException(NixlStatus.CLOSED, operation.operationName(), name(), null,
					"the connector was closed");
		}
	}

	private static void abandon(Operation operation, RuntimeException cause) {
		NixlException failure = (cause instanceof NixlException nixl) ? nixl
				: operation.failure(NixlStatus.UNKNOWN, String.valueOf(cause), cause);
		try {
			operation.finish(OperationStatus.ERRORED, failure);
		}
		catch (RuntimeException ex) {
			cause.addSuppressed(ex);
		}
	}

	void ended(Operation operation) {
		this.operations.remove(operation);
	}

	RemoteAgents remoteAgents() {
		return this.remoteAgents;
	}

	/**
	 * After a lease expired, consumes the notification of a peer that comes late (it may
	 * have read the memory before it was deregistered, or the transport may not revoke
	 * access), so that it does not wait in the agent's mailbox forever. Waits as long
	 * again as the lease, at most {@link #LATE_NOTIFICATION_GRACE}.
	 */
	void absorbLateNotification(String key, Duration lease) {
		if (!this.agent.isOpen()) {
			return;
		}
		Duration grace = (lease.compareTo(LATE_NOTIFICATION_GRACE) < 0) ? lease : LATE_NOTIFICATION_GRACE;
		try {
			this.agent.expectNotification(NotificationMatcher.exact(null, key), grace).thenAccept(late -> {
				this.lateNotifications.incrementAndGet();
				logger.log(Level.WARNING,
						"agent ''{0}'' notified the end of an operation of connector ''{1}'' "
								+ "whose lease had expired; the notification was discarded",
						late.remoteAgent(), name());
			});
		}
		catch (NixlException ex) {
			// closed meanwhile: nothing left to absorb
		}
	}

	/** How many notifications arrived after their operation's lease expired. */
	long lateNotifications() {
		return this.lateNotifications.get();
	}

	private static List<Descriptor> checkLocal(String operation, List<Descriptor> descriptors) {
		Objects.requireNonNull(descriptors, "descriptors");
		if (descriptors.isEmpty()) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null,
					"the local descriptor list must not be empty");
		}
		MemoryType type = descriptors.get(0).device().memoryType();
		for (int i = 1; i < descriptors.size(); i++) {
			Descriptor descriptor = Objects.requireNonNull(descriptors.get(i), "descriptor " + i);
			if (descriptor.device().memoryType() != type) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null,
						"the local descriptors must all be of one memory kind: descriptor 0 is on "
								+ descriptors.get(0).device() + ", descriptor " + i + " on " + descriptor.device());
			}
		}
		return List.copyOf(descriptors);
	}

	/**
	 * Registers an operation's memory: segments as segments (the registration keeps them
	 * reachable), the rest by address.
	 */
	List<Registration> register(String operation, List<Descriptor> descriptors) {
		List<MemorySegment> segments = new ArrayList<>();
		List<Descriptor> raw = new ArrayList<>();
		for (Descriptor descriptor : descriptors) {
			descriptor.segment().ifPresentOrElse(segments::add, () -> raw.add(descriptor));
		}
		List<Registration> registrations = new ArrayList<>(2);
		try {
			if (!segments.isEmpty()) {
				registrations.add(this.agent.register(segments.toArray(MemorySegment[]::new)));
			}
			if (!raw.isEmpty()) {
				MemoryType type = raw.get(0).device().memoryType();
				DescriptorList list = new DescriptorList(type,
						raw.stream().map(Descriptor::toMemoryDescriptor).toList());
				try {
					registrations.add(this.agent.register(list));
				}
				catch (NixlException ex) {
					if (type != MemoryType.VRAM) {
						throw ex;
					}
					throw new NixlException(ex.status(), operation, name(), null, "cannot register CUDA memory ("
							+ raw.stream().map(d -> d.device().wireName()).distinct().toList() + "): "
							+ ((this.agent.engine() == Engine.EMBEDDED)
									? "the embedded engine moves host memory only; CUDA memory needs the native engine"
									: "NIXL refused it; CUDA memory needs a backend built with CUDA support (UCX with "
											+ "its CUDA modules), a GPU and its driver")
							+ " (" + ex.getMessage() + ")", ex);
				}
			}
			return registrations;
		}
		catch (RuntimeException ex) {
			try {
				closeAll(registrations);
			}
			catch (RuntimeException inner) {
				ex.addSuppressed(inner);
			}
			throw ex;
		}
	}

	static void closeAll(List<Registration> registrations) {
		RuntimeException problem = null;
		for (Registration registration : registrations) {
			try {
				registration.close();
			}
			catch (RuntimeException ex) {
				if (problem == null) {
					problem = ex;
				}
				else {
					problem.addSuppressed(ex);
				}
			}
		}
		if (problem != null) {
			throw problem;
		}
	}

	@Override
	public String toString() {
		return "Connector[agent '" + name() + "', " + this.operations.size() + " operations]";
	}

	/**
	 * Builds a {@link Connector}: over an agent it wraps
	 * ({@link Connector#builder(NixlAgent)}) or over one it creates and owns
	 * ({@link Connector#builder(AgentConfig)}).
	 */
	public static final class Builder {

		private final @Nullable NixlAgent agent;

		private final @Nullable AgentConfig config;

		private Duration lease = DEFAULT_LEASE;

		private Duration peerLinger = DEFAULT_PEER_LINGER;

		private Builder(@Nullable NixlAgent agent, @Nullable AgentConfig config) {
			this.agent = agent;
			this.config = config;
		}

		/**
		 * Sets how long passive operations wait for their peer unless told otherwise;
		 * {@link Connector#DEFAULT_LEASE} by default.
		 * @param lease the lease, positive
		 * @return this builder
		 * @throws IllegalArgumentException when the lease is not positive
		 */
		public Builder lease(Duration lease) {
			this.lease = requirePositive(lease);
			return this;
		}

		/**
		 * Sets how long a peer stays loaded after the last operation using it ended;
		 * {@link Connector#DEFAULT_PEER_LINGER} by default. Zero invalidates it at once,
		 * which can drop that operation's notification in flight.
		 * @param peerLinger the linger, not negative
		 * @return this builder
		 * @throws IllegalArgumentException when the linger is negative
		 */
		public Builder peerLinger(Duration peerLinger) {
			this.peerLinger = requireNotNegative(peerLinger);
			return this;
		}

		/**
		 * Builds the connector; one built from an {@link AgentConfig} creates its agent
		 * now.
		 * @return the connector
		 */
		public Connector build() {
			NixlAgent agent = this.agent;
			if (agent != null) {
				return new Connector(agent, false, this.lease, this.peerLinger);
			}
			return new Connector(NixlAgent.create(Objects.requireNonNull(this.config)), true, this.lease,
					this.peerLinger);
		}

	}

}
