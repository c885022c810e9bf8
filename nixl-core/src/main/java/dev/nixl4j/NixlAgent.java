package dev.nixl4j;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * A NIXL agent: owns backends and registered memory, exchanges metadata with peers, and
 * moves data between its memory and theirs with one-sided READ and WRITE transfers.
 *
 * <p>
 * The usual flow: {@link #register(MemorySegment...) register} memory, send
 * {@link #localMetadata()} to the peer, which {@link #loadRemoteMetadata(AgentMetadata)
 * loads} it, then create and post {@link Transfer}s between {@link DescriptorList}s. Each
 * agent runs one progress loop that polls transfers and drains notifications, so callers
 * never poll.
 *
 * <p>
 * An agent is thread-safe. Closing it cancels transfers in flight, releases prepared
 * lists, deregisters memory and destroys the native agent; every later call throws
 * {@link NixlStatus#CLOSED}.
 */
public interface NixlAgent extends AutoCloseable {

	/**
	 * Creates an agent.
	 * @param config the configuration
	 * @return the agent
	 * @throws NixlException when no engine can serve the configuration, or a backend
	 * fails
	 */
	static NixlAgent create(AgentConfig config) {
		return Engines.create(config);
	}

	/**
	 * Returns the agent's name.
	 * @return the name
	 */
	String name();

	/**
	 * Returns the engine that backs this agent (never {@link Engine#AUTO}).
	 * @return the engine
	 */
	Engine engine();

	/**
	 * Describes what backs the engine: for the native engine the NIXL library and where
	 * it was loaded from, for the embedded engine its listen address.
	 * @return a one-line description
	 */
	String engineDescription();

	/**
	 * Returns the NIXL library this agent runs on.
	 * @return the library and where it was found; empty for the embedded engine
	 */
	Optional<NativeLibraryInfo> nativeLibrary();

	/**
	 * Returns the configuration the agent was created with.
	 * @return the configuration
	 */
	AgentConfig config();

	/**
	 * Lists the plugins the engine can create backends from.
	 * @return plugin names
	 */
	List<String> availablePlugins();

	/**
	 * Describes a plugin: default parameters and supported memory types.
	 * @param plugin the plugin name
	 * @return its description
	 */
	PluginInfo pluginInfo(String plugin);

	/**
	 * Creates a backend. On the native engine, while NIXL's progress thread is on (the
	 * default) or the thread sync is {@link ThreadSync#RW}, a {@code UCX} backend whose
	 * parameters leave out {@code num_threads} and {@code split_batch_size} runs UCX's
	 * thread pool (one thread per available processor, at most 4, and a split size of 32
	 * descriptors); {@code num_threads=0} turns it off. {@link Backend#parameters()}
	 * reports what NIXL got.
	 * @param plugin the plugin name
	 * @param parameters parameters (empty for defaults)
	 * @return the backend
	 */
	Backend createBackend(String plugin, Map<String, String> parameters);

	/**
	 * Returns the backends created so far.
	 * @return the backends
	 */
	List<Backend> backends();

	/**
	 * Registers host memory.
	 * @param segments native segments
	 * @return the registration
	 */
	Registration register(MemorySegment... segments);

	/**
	 * Registers memory given by address (for VRAM and other memory Java cannot see). The
	 * caller vouches for the addresses.
	 * @param regions the regions
	 * @return the registration
	 */
	Registration register(DescriptorList regions);

	/**
	 * Returns the agent's full metadata for peers.
	 * @return the metadata
	 */
	AgentMetadata localMetadata();

	/**
	 * Returns metadata that describes only some registrations, of one memory type,
	 * without connection information: a peer that loaded the full metadata once loads it
	 * to learn of memory registered since.
	 * @param registrations the registrations to describe
	 * @return the metadata
	 */
	AgentMetadata localMetadata(Registration... registrations);

	/**
	 * Loads a peer's metadata so that transfers to it can be created. The bytes are
	 * checked for NIXL's framing before they reach native code.
	 * @param metadata the peer's metadata
	 * @return the peer's agent name
	 */
	String loadRemoteMetadata(AgentMetadata metadata);

	/**
	 * Returns NIXL's built-in etcd exchange of this agent: present for an agent of the
	 * native engine created with etcd endpoints ({@link NixlEtcdMetadata#configure}),
	 * empty otherwise.
	 * @return the exchange
	 */
	Optional<NixlEtcdMetadata> etcdMetadata();

	/**
	 * Whether metadata of a peer is loaded.
	 * @param remoteAgent the peer
	 * @return {@code true} if transfers to it can be created
	 */
	boolean hasRemoteMetadata(String remoteAgent);

	/**
	 * Forgets a peer's metadata; transfers to it fail from then on. Needed before loading
	 * the metadata of a restarted peer with the same name.
	 * @param remoteAgent the peer
	 */
	void invalidateRemoteMetadata(String remoteAgent);

	/**
	 * Lists the peers whose metadata is loaded.
	 * @return the peer names
	 */
	List<String> remoteAgents();

	/**
	 * Creates a transfer without posting it.
	 * @param op READ or WRITE
	 * @param local local descriptors, inside registered memory
	 * @param remote remote descriptors, inside the peer's registered memory
	 * @param remoteAgent the peer
	 * @param notification message the peer receives once the data landed, or {@code null}
	 * @return the transfer
	 */
	Transfer createTransfer(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent,
			byte @Nullable [] notification);

	/**
	 * Creates and posts a transfer.
	 * @param op READ or WRITE
	 * @param local local descriptors
	 * @param remote remote descriptors
	 * @param remoteAgent the peer
	 * @param notification message for the peer, or {@code null}
	 * @return the posted transfer; its {@link Transfer#completion()} tells when it is
	 * done
	 */
	default Transfer transfer(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent,
			byte @Nullable [] notification) {
		Transfer transfer = createTransfer(op, local, remote, remoteAgent, notification);
		try {
			transfer.post();
			return transfer;
		}
		catch (RuntimeException ex) {
			transfer.close();
			throw ex;
		}
	}

	/**
	 * Prepares local descriptors for repeated transfers.
	 * @param descriptors descriptors inside registered memory
	 * @return the prepared list
	 */
	PreparedList prepareLocal(DescriptorList descriptors);

	/**
	 * Prepares a peer's descriptors for repeated transfers.
	 * @param remoteAgent the peer, whose metadata is loaded
	 * @param descriptors descriptors inside the peer's registered memory
	 * @return the prepared list
	 */
	PreparedList prepareRemote(String remoteAgent, DescriptorList descriptors);

	/**
	 * Creates a transfer from prepared lists, selecting descriptors by index: local
	 * {@code localIndices[i]} pairs with remote {@code remoteIndices[i]}.
	 * @param op READ or WRITE
	 * @param local the prepared local list
	 * @param localIndices indices into it
	 * @param remote the prepared remote list
	 * @param remoteIndices indices into it
	 * @param notification message for the peer, or {@code null}
	 * @return the transfer, not posted
	 */
	Transfer createTransfer(XferOp op, PreparedList local, int[] localIndices, PreparedList remote, int[] remoteIndices,
			byte @Nullable [] notification);

	/**
	 * Sends a notification on its own (no data).
	 * @param remoteAgent the peer, whose metadata is loaded
	 * @param message the message
	 */
	void sendNotification(String remoteAgent, byte[] message);

	/**
	 * Waits asynchronously for a notification. Each received notification is delivered
	 * once: to a {@linkplain #subscribeNotifications subscription} that accepts it, else
	 * to the oldest waiter that matches it, or else kept in the mailbox for a later
	 * waiter. The mailbox is bounded per sender ({@link AgentConfig#mailboxPerSender()})
	 * and in total ({@link AgentConfig#mailboxCapacity()}): over a bound, unclaimed
	 * messages are dropped and counted ({@link AgentStatistics#notificationsDropped()}),
	 * the oldest of the sender that holds the most first.
	 * @param matcher which notification
	 * @param timeout deadline; the future then fails with {@link NixlStatus#TIMEOUT}
	 * @return a future of the notification
	 */
	CompletableFuture<Notification> expectNotification(NotificationMatcher matcher, Duration timeout);

	/**
	 * Subscribes to the notifications a matcher accepts: from now until the subscription
	 * is closed, each one goes to the handler, before any {@linkplain #expectNotification
	 * waiter} and before the mailbox, so it never waits behind unclaimed messages of
	 * other peers, and is never dropped. Notifications the matcher accepts that already
	 * wait in the mailbox go to the handler too. Each notification goes to one
	 * subscription only: the oldest open one that accepts it.
	 *
	 * <p>
	 * The handler runs on the agent's progress thread, one notification at a time in the
	 * order they were received: it must be short and must not block (hand longer work to
	 * an executor), or it delays every transfer and notification of the agent. A handler
	 * that throws is logged and the notification counts as handled.
	 * @param matcher which notifications
	 * @param handler what receives them
	 * @return the subscription; close it to stop the deliveries
	 */
	NotificationSubscription subscribeNotifications(NotificationMatcher matcher, Consumer<Notification> handler);

	/**
	 * Takes one unclaimed notification from the mailbox.
	 * @param matcher which notification
	 * @return the notification, or empty if none waits
	 */
	Optional<Notification> pollNotification(NotificationMatcher matcher);

	/**
	 * Returns the transfers in flight now.
	 * @return a snapshot
	 */
	List<Transfer> inFlightTransfers();

	/**
	 * Adds a listener that hears every later post of this agent's transfers.
	 * @param listener the listener
	 */
	void addTransferListener(TransferListener listener);

	/**
	 * Removes a listener; posts it accepted still end with a call to it.
	 * @param listener the listener
	 */
	void removeTransferListener(TransferListener listener);

	/**
	 * Returns live counters of finished transfers and notifications.
	 * @return the statistics, updated as transfers end
	 */
	AgentStatistics statistics();

	/**
	 * Returns live registrations.
	 * @return a snapshot
	 */
	List<Registration> registrations();

	/**
	 * Whether the agent is open.
	 * @return {@code false} once closed
	 */
	boolean isOpen();

	/**
	 * Returns whether the agent can move data: {@link AgentState#ACTIVE} while it is open
	 * and its internal threads run, {@link AgentState#FAILED} once one of them could not
	 * go on, {@link AgentState#CLOSED} once closed. Cheap and never blocks, for health
	 * checks.
	 * @return the state
	 */
	AgentState state();

	/**
	 * Returns why the agent failed: a {@link NixlException} of status
	 * {@link NixlStatus#FAILED} that names the internal thread, with what it threw as its
	 * cause.
	 * @return the failure, or empty while the agent has not failed
	 */
	Optional<NixlException> failure();

	/**
	 * Closes the agent and every native resource it owns. Closing twice is harmless.
	 */
	@Override
	void close();

}
