package dev.nixl4j.internal.engine;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.AgentState;
import dev.nixl4j.AgentStatistics;
import dev.nixl4j.Backend;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.BackendCreationException;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.NotificationSubscription;
import dev.nixl4j.PluginInfo;
import dev.nixl4j.PreparedList;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;
import dev.nixl4j.NativeLibraryInfo;
import dev.nixl4j.metadata.MetadataFraming;

/**
 * The {@link NixlAgent} every engine shares: checks arguments in Java before any engine
 * call, keeps native handles away from a destroyed agent, runs the progress loop,
 * dispatches notifications and tracks registrations and transfers.
 *
 * <p>
 * Its concerns are each in a class of their own: {@link AgentOpenState} (open, failed,
 * closed, and the lock that keeps the engine alive under a call),
 * {@link DescriptorChecks}, {@link RemoteMemory} (what loaded peers registered),
 * {@link AgentStatisticsCounter}, {@link AgentFaults} (what internal threads report) and
 * {@link ListenerFanOut}.
 */
public final class AgentCore implements NixlAgent {

	private static final System.Logger logger = System.getLogger(AgentCore.class.getName());

	private final AgentConfig config;

	private final EngineDriver driver;

	private final AgentOpenState lifecycle;

	private final @Nullable NixlEtcdMetadata etcdMetadata;

	private final List<Backend> backends = new CopyOnWriteArrayList<>();

	private final List<RegistrationImpl> registrations = new CopyOnWriteArrayList<>();

	private final Set<PreparedListImpl> preparedLists = ConcurrentHashMap.newKeySet();

	private final Set<TransferImpl> transfers = ConcurrentHashMap.newKeySet();

	private final DescriptorChecks checks;

	private final RemoteMemory remotes;

	private final NotificationDispatcher notifications;

	private final ProgressLoop progressLoop;

	private final AgentStatisticsCounter statistics;

	private final ListenerFanOut listeners = new ListenerFanOut();

	/**
	 * Whether the last notification drain failed; read and written by the progress loop
	 * only.
	 */
	private boolean drainFailing;

	private final AgentFaults faults;

	/**
	 * Creates the agent over a driver and creates the configured backends.
	 * @param config the configuration
	 * @param driver the engine's driver, owned by this agent from now on
	 */
	public AgentCore(AgentConfig config, EngineDriver driver) {
		this.config = config;
		this.driver = driver;
		this.lifecycle = new AgentOpenState(config.name());
		this.checks = new DescriptorChecks(config.name(), this.registrations, this.preparedLists);
		this.remotes = new RemoteMemory(this.checks);
		this.notifications = new NotificationDispatcher(config.name(), config.mailboxCapacity(),
				config.mailboxPerSender());
		this.statistics = new AgentStatisticsCounter(this.notifications);
		this.faults = new AgentFaults(config.name(), this.lifecycle, this.statistics, this.notifications,
				this.transfers);
		this.progressLoop = new ProgressLoop(this);
		EtcdExchangeDriver etcdExchange = driver.etcdExchange();
		this.etcdMetadata = (etcdExchange != null) ? new EtcdMetadataCapability(this, etcdExchange) : null;
		driver.progressListener(this.progressLoop::wakeUp);
		driver.faultListener(this.faults);
		try {
			List<BackendConfig> configured = config.backends();
			for (int i = 0; i < configured.size(); i++) {
				this.backends.add(createBackend(driver, configured.get(i).plugin(), configured.get(i).parameters(), i));
			}
		}
		catch (RuntimeException ex) {
			driver.close();
			throw ex;
		}
		this.progressLoop.start();
	}

	AgentOpenState lifecycle() {
		return this.lifecycle;
	}

	ListenerFanOut listeners() {
		return this.listeners;
	}

	/**
	 * Returns what the agent's internal threads report to: the progress loop and the
	 * engine's own threads.
	 * @return the fault listener
	 */
	EngineDriver.FaultListener faults() {
		return this.faults;
	}

	@Override
	public String name() {
		return this.config.name();
	}

	@Override
	public Engine engine() {
		return this.driver.engine();
	}

	@Override
	public AgentConfig config() {
		return this.config;
	}

	@Override
	public String engineDescription() {
		return this.driver.description();
	}

	@Override
	public Optional<NativeLibraryInfo> nativeLibrary() {
		return this.driver.nativeLibrary();
	}

	@Override
	public AgentStatistics statistics() {
		return this.statistics;
	}

	@Override
	public void addTransferListener(TransferListener listener) {
		this.listeners.add(listener);
	}

	@Override
	public void removeTransferListener(TransferListener listener) {
		this.listeners.remove(listener);
	}

	@Override
	public List<String> availablePlugins() {
		return this.lifecycle.guarded("get_available_plugins", this.driver::availablePlugins);
	}

	@Override
	public PluginInfo pluginInfo(String plugin) {
		return this.lifecycle.guarded(NixlException.GET_PLUGIN_PARAMS, () -> this.driver.pluginInfo(plugin));
	}

	@Override
	public Backend createBackend(String plugin, Map<String, String> parameters) {
		Backend backend = this.lifecycle.guarded(NixlException.CREATE_BACKEND,
				() -> createBackend(this.driver, plugin, parameters, -1));
		this.backends.add(backend);
		return backend;
	}

	/**
	 * Creates a backend, turning the driver's failure into one that names the backend:
	 * the engines word their failures differently, and callers must not have to read the
	 * words.
	 */
	private static Backend createBackend(EngineDriver driver, String plugin, Map<String, String> parameters,
			int index) {
		try {
			return driver.createBackend(plugin, parameters);
		}
		catch (BackendCreationException ex) {
			throw ex;
		}
		catch (NixlException ex) {
			BackendCreationException named = new BackendCreationException(ex.status(), ex.agent(), plugin, parameters,
					index, ex.detail(), ex.getCause());
			named.setStackTrace(ex.getStackTrace());
			throw named;
		}
	}

	@Override
	public List<Backend> backends() {
		return List.copyOf(this.backends);
	}

	@Override
	public Registration register(MemorySegment... segments) {
		if (segments.length == 0) {
			throw new IllegalArgumentException("register needs at least one segment");
		}
		for (MemorySegment segment : segments) {
			if (!segment.scope().isAlive()) {
				throw new IllegalArgumentException("cannot register a segment whose arena is closed");
			}
		}
		return register(DescriptorList.of(segments), List.of(segments));
	}

	@Override
	public Registration register(DescriptorList regions) {
		return register(regions, List.of());
	}

	private Registration register(DescriptorList regions, List<MemorySegment> segments) {
		return this.lifecycle.guarded("register_mem", () -> {
			long handle = this.driver.register(regions, segments);
			RegistrationImpl registration = new RegistrationImpl(this, regions, handle, segments);
			this.registrations.add(registration);
			return registration;
		});
	}

	void deregister(RegistrationImpl registration) {
		this.lifecycle.readLock().lock();
		try {
			if (this.registrations.remove(registration) && this.lifecycle.isOpen()) {
				this.driver.deregister(registration.handle());
			}
		}
		finally {
			this.lifecycle.readLock().unlock();
		}
	}

	@Override
	public AgentMetadata localMetadata() {
		return AgentMetadata.of(this.lifecycle.guarded("get_local_md", this.driver::localMetadata));
	}

	@Override
	public AgentMetadata localMetadata(Registration... registrations) {
		DescriptorList list = this.checks.partialMetadataRegions(registrations);
		return AgentMetadata
			.of(this.lifecycle.guarded("get_local_partial_md", () -> this.driver.localPartialMetadata(list)));
	}

	@Override
	public String loadRemoteMetadata(AgentMetadata metadata) {
		byte[] bytes = metadata.toByteArray();
		MetadataFraming.ParsedMetadata parsed = MetadataFraming.parse(bytes);
		return this.lifecycle.guarded("load_remote_md", () -> {
			String remote;
			try {
				remote = this.driver.loadRemoteMetadata(bytes);
			}
			catch (NixlException ex) {
				// A refused update can make NIXL drop the peer it had: keep the Java view
				// in step.
				if (!this.driver.hasRemoteMetadata(parsed.agentName())) {
					this.remotes.forget(parsed.agentName());
				}
				throw ex;
			}
			this.remotes.loaded(remote, parsed);
			return remote;
		});
	}

	@Override
	public Optional<NixlEtcdMetadata> etcdMetadata() {
		return Optional.ofNullable(this.etcdMetadata);
	}

	@Override
	public boolean hasRemoteMetadata(String remoteAgent) {
		return this.lifecycle.guarded("check_remote_md", () -> this.driver.hasRemoteMetadata(remoteAgent));
	}

	@Override
	public void invalidateRemoteMetadata(String remoteAgent) {
		this.lifecycle.guarded("invalidate_remote_md", () -> {
			boolean known = this.remotes.knows(remoteAgent);
			try {
				this.driver.invalidateRemoteMetadata(remoteAgent);
			}
			catch (NixlException ex) {
				// The engine may have dropped the peer on its own (a disconnect, a
				// refused update);
				// forgetting a peer this agent knew is then already done.
				if (!known || ex.status() != NixlStatus.ERROR_NOT_FOUND) {
					throw ex;
				}
			}
			finally {
				// only after the engine: a peer missing from remoteAgents() is gone from
				// the engine too
				this.remotes.forget(remoteAgent);
			}
		});
	}

	@Override
	public List<String> remoteAgents() {
		return this.remotes.agents();
	}

	@Override
	public Transfer createTransfer(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent,
			byte @Nullable [] notification) {
		String operation = "create_xfer_req";
		// Checked under the lifecycle lock: an agent closing meanwhile gives CLOSED, not
		// "not registered".
		return this.lifecycle.guarded(operation, () -> {
			this.checks.checkPairs(operation, remoteAgent, local.descriptors(), remote.descriptors());
			List<RegistrationImpl> pinned = this.checks.localRegistrations(operation, local);
			this.remotes.check(operation, remoteAgent, remote);
			long handle = this.driver.createRequest(op, local, remote, remoteAgent);
			return track(new TransferImpl(this, this.driver, op, remoteAgent, local.totalBytes(), pinned, notification,
					handle));
		});
	}

	@Override
	public PreparedList prepareLocal(DescriptorList descriptors) {
		return this.lifecycle.guarded("prep_xfer_dlist",
				() -> prepare(null, descriptors, this.checks.localRegistrations("prep_xfer_dlist", descriptors)));
	}

	@Override
	public PreparedList prepareRemote(String remoteAgent, DescriptorList descriptors) {
		this.remotes.check("prep_xfer_dlist", remoteAgent, descriptors);
		return prepare(remoteAgent, descriptors, List.of());
	}

	private PreparedList prepare(@Nullable String remoteAgent, DescriptorList descriptors,
			List<RegistrationImpl> pinned) {
		return this.lifecycle.guarded("prep_xfer_dlist", () -> {
			long handle = this.driver.prepare(remoteAgent, descriptors);
			PreparedListImpl list = new PreparedListImpl(this, remoteAgent, descriptors, pinned, handle);
			this.preparedLists.add(list);
			return list;
		});
	}

	void releasePrepared(PreparedListImpl list, long handle) {
		this.lifecycle.readLock().lock();
		try {
			if (this.preparedLists.remove(list) && this.lifecycle.isOpen()) {
				this.driver.releasePrepared(handle);
			}
		}
		finally {
			this.lifecycle.readLock().unlock();
		}
	}

	@Override
	public Transfer createTransfer(XferOp op, PreparedList local, int[] localIndices, PreparedList remote,
			int[] remoteIndices, byte @Nullable [] notification) {
		String operation = "make_xfer_req";
		return this.lifecycle.guarded(operation, () -> {
			PreparedListImpl localList = this.checks.ownList(operation, local, false);
			PreparedListImpl remoteList = this.checks.ownList(operation, remote, true);
			// ownList(..., true) refused a list that names no remote agent
			String remoteAgent = Objects.requireNonNull(remoteList.remoteAgent());
			if (localIndices.length == 0) {
				throw this.checks.invalid(operation, remoteAgent, "a transfer needs at least one descriptor index");
			}
			List<MemoryDescriptor> localSelected = DescriptorChecks.select(operation, remoteAgent, "local", localList,
					localIndices);
			List<MemoryDescriptor> remoteSelected = DescriptorChecks.select(operation, remoteAgent, "remote",
					remoteList, remoteIndices);
			this.checks.checkPairs(operation, remoteAgent, localSelected, remoteSelected);
			int[] localCopy = localIndices.clone();
			int[] remoteCopy = remoteIndices.clone();
			long bytes = localSelected.stream().mapToLong(MemoryDescriptor::length).sum();
			long handle = this.driver.makeRequest(op, localList.handle(operation), localCopy,
					remoteList.handle(operation), remoteCopy);
			return track(new TransferImpl(this, this.driver, op, remoteAgent, bytes, localList.registrations(),
					notification, handle));
		});
	}

	private TransferImpl track(TransferImpl transfer) {
		this.transfers.add(transfer);
		return transfer;
	}

	void progress(TransferImpl transfer) {
		this.progressLoop.submit(transfer);
		NixlException failed = this.lifecycle.failure();
		if (failed != null) {
			// posted while the agent failed, after fail() aborted what was in flight: the
			// progress
			// loop may be gone, so nobody else would end it
			transfer.abort(failed);
		}
	}

	void transferEnded(TransferImpl transfer, TransferState state, boolean notified, @Nullable NixlException failure) {
		this.statistics.record(transfer, state, notified);
		if (notified && state == TransferState.COMPLETED) {
			this.progressLoop.expectReply();
		}
		if (state == TransferState.STALLED && failure != null) {
			logger.log(Level.WARNING, failure.getMessage());
		}
	}

	void transferClosed(TransferImpl transfer) {
		this.transfers.remove(transfer);
	}

	@Override
	public void sendNotification(String remoteAgent, byte[] message) {
		byte[] copy = message.clone();
		this.lifecycle.guarded("gen_notif", () -> {
			this.lifecycle.ensureActive("gen_notif");
			this.driver.sendNotification(remoteAgent, copy);
		});
		this.statistics.notificationSent();
	}

	@Override
	public CompletableFuture<Notification> expectNotification(NotificationMatcher matcher, Duration timeout) {
		this.lifecycle.ensureActive("get_notifs");
		CompletableFuture<Notification> future = this.notifications.expect(matcher, timeout);
		NixlException failed = this.lifecycle.failure();
		if (failed != null) {
			// the agent failed after the check above, perhaps after its waiters were
			// failed
			this.notifications.failWaiters(failed);
		}
		this.progressLoop.wakeUp();
		return future;
	}

	@Override
	public NotificationSubscription subscribeNotifications(NotificationMatcher matcher,
			Consumer<Notification> handler) {
		this.lifecycle.ensureActive("get_notifs");
		NotificationSubscription subscription = this.notifications.subscribe(matcher, handler);
		if (this.lifecycle.failure() != null || !this.lifecycle.isOpen()) {
			// the agent failed or closed after the check above: nothing would deliver
			subscription.close();
		}
		this.progressLoop.wakeUp();
		return subscription;
	}

	@Override
	public Optional<Notification> pollNotification(NotificationMatcher matcher) {
		this.lifecycle.ensureOpen("get_notifs");
		return this.notifications.poll(matcher);
	}

	boolean hasNotificationWaiters() {
		return this.notifications.hasWaiters();
	}

	/** Called by the progress loop only. */
	boolean drainNotifications() {
		// An agent without backends (they may be created later) cannot receive
		// notifications, and
		// NIXL answers every drain with an error and a log line: do not ask until one
		// exists.
		this.notifications.startPass();
		if (this.backends.isEmpty()) {
			return false;
		}
		try {
			boolean drained = this.driver.drainNotifications(this.notifications) > 0;
			this.drainFailing = false;
			return drained;
		}
		catch (NixlException ex) {
			// The loop retries every few milliseconds: say it once per run of failures,
			// not each time.
			if (!this.drainFailing) {
				this.drainFailing = true;
				logger.log(Level.WARNING,
						ex.getMessage() + " (further failures are not logged until a drain succeeds)");
			}
			return false;
		}
	}

	@Override
	public List<Transfer> inFlightTransfers() {
		return List.copyOf(inFlight());
	}

	/**
	 * Returns the transfers in progress. Found among all open transfers by their state
	 * rather than kept in a set of their own, so that a post adds nothing to a shared
	 * collection.
	 */
	private List<TransferImpl> inFlight() {
		List<TransferImpl> inFlight = new ArrayList<>();
		for (TransferImpl transfer : this.transfers) {
			if (transfer.state() == TransferState.IN_PROGRESS) {
				inFlight.add(transfer);
			}
		}
		return inFlight;
	}

	@Override
	public List<Registration> registrations() {
		return List.copyOf(this.registrations);
	}

	@Override
	public boolean isOpen() {
		return this.lifecycle.isOpen();
	}

	@Override
	public AgentState state() {
		return this.lifecycle.state();
	}

	@Override
	public Optional<NixlException> failure() {
		return Optional.ofNullable(this.lifecycle.failure());
	}

	@Override
	public void close() {
		this.lifecycle.writeLock().lock();
		try {
			if (!this.lifecycle.isOpen()) {
				return;
			}
			// a transfer whose engine call throws must not keep the agent open, its
			// thread running
			// and its engine unclosed
			for (TransferImpl transfer : inFlight()) {
				try {
					transfer.cancel();
				}
				catch (RuntimeException | Error ex) {
					logger.log(Level.WARNING, "Agent '" + name() + "': cancelling " + transfer + " on close threw", ex);
				}
			}
			this.progressLoop.stop();
			for (TransferImpl transfer : List.copyOf(this.transfers)) {
				try {
					transfer.close();
				}
				catch (RuntimeException | Error ex) {
					logger.log(Level.WARNING, "Agent '" + name() + "': closing " + transfer + " on close threw", ex);
				}
			}
			for (PreparedListImpl list : List.copyOf(this.preparedLists)) {
				list.close();
			}
			for (RegistrationImpl registration : List.copyOf(this.registrations)) {
				registration.forceClose();
			}
			this.lifecycle.closed();
			this.notifications.close();
			this.driver.close();
		}
		finally {
			this.lifecycle.writeLock().unlock();
		}
	}

	@Override
	public String toString() {
		return "NixlAgent['" + name() + "', " + engine() + ", " + this.registrations.size() + " registration(s), "
				+ inFlight().size() + " transfer(s) in flight]";
	}

}
