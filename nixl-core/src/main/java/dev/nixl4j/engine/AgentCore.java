package dev.nixl4j.engine;

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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.AgentState;
import dev.nixl4j.AgentStatistics;
import dev.nixl4j.Backend;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.PluginInfo;
import dev.nixl4j.PreparedList;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * The {@link NixlAgent} every engine shares: checks arguments in Java before any engine call,
 * keeps native handles away from a destroyed agent, runs the progress loop, dispatches
 * notifications and tracks registrations and transfers.
 *
 * <p>Lifetimes: every engine call of the control path and every post holds the read side of
 * {@link #lifecycle()}; {@link #close()} takes the write side, so the engine is destroyed only
 * when no call is inside it.
 */
public final class AgentCore implements NixlAgent {

	private static final System.Logger logger = System.getLogger(AgentCore.class.getName());

	private final AgentConfig config;

	private final EngineDriver driver;

	private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

	private volatile boolean open = true;

	private final List<Backend> backends = new CopyOnWriteArrayList<>();

	private final List<RegistrationImpl> registrations = new CopyOnWriteArrayList<>();

	private final Set<PreparedListImpl> preparedLists = ConcurrentHashMap.newKeySet();

	private final Set<TransferImpl> transfers = ConcurrentHashMap.newKeySet();

	private final Set<TransferImpl> inFlight = ConcurrentHashMap.newKeySet();

	private final Map<String, MetadataFraming.ParsedMetadata> remotes = new ConcurrentHashMap<>();

	private final NotificationDispatcher notifications;

	private final ProgressLoop progressLoop;

	private final Statistics statistics = new Statistics();

	private final List<TransferListener> listeners = new CopyOnWriteArrayList<>();

	/** Whether the last notification drain failed; read and written by the progress loop only. */
	private boolean drainFailing;

	/** Why the agent failed, once one of its threads could not go on; never reset. */
	private volatile @Nullable NixlException failure;

	/** The thread whose fault failed the agent; written before {@link #failure}. */
	private volatile String failedThread = "";

	private final Faults faults = new Faults();

	/**
	 * Creates the agent over a driver and creates the configured backends.
	 * @param config the configuration
	 * @param driver the engine's driver, owned by this agent from now on
	 */
	public AgentCore(AgentConfig config, EngineDriver driver) {
		this.config = config;
		this.driver = driver;
		this.notifications = new NotificationDispatcher(config.name(), config.mailboxCapacity());
		this.progressLoop = new ProgressLoop(this);
		driver.progressListener(this.progressLoop::wakeUp);
		driver.faultListener(this.faults);
		try {
			for (BackendConfig backend : config.backends()) {
				this.backends.add(driver.createBackend(backend.plugin(), backend.parameters()));
			}
		}
		catch (RuntimeException ex) {
			driver.close();
			throw ex;
		}
		this.progressLoop.start();
	}

	ReentrantReadWriteLock lifecycle() {
		return this.lifecycle;
	}

	void ensureOpen(String operation) {
		if (!this.open) {
			throw new NixlException(NixlStatus.CLOSED, operation, this.config.name(), null, "the agent was closed");
		}
	}

	/**
	 * Throws unless the agent is open and has not failed: the check of everything that moves data
	 * or waits for it (posts, notifications).
	 */
	void ensureActive(String operation) {
		ensureOpen(operation);
		NixlException failed = this.failure;
		if (failed != null) {
			throw new NixlException(NixlStatus.FAILED, operation, name(), null,
					"the agent failed and can no longer move data (" + this.failedThread
							+ " thread stopped); close it and create a new one",
					failed.getCause());
		}
	}

	/**
	 * Returns what the agent's internal threads report to: the progress loop and the engine's own
	 * threads.
	 * @return the fault listener
	 */
	EngineDriver.FaultListener faults() {
		return this.faults;
	}

	private <T> T guarded(String operation, Supplier<T> call) {
		this.lifecycle.readLock().lock();
		try {
			ensureOpen(operation);
			return call.get();
		}
		finally {
			this.lifecycle.readLock().unlock();
		}
	}

	private void guarded(String operation, Runnable call) {
		guarded(operation, () -> {
			call.run();
			return null;
		});
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
	public AgentStatistics statistics() {
		return this.statistics;
	}

	@Override
	public void addTransferListener(TransferListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	@Override
	public void removeTransferListener(TransferListener listener) {
		this.listeners.remove(listener);
	}

	List<TransferListener> transferListeners() {
		return this.listeners;
	}

	@Override
	public List<String> availablePlugins() {
		return guarded("get_available_plugins", this.driver::availablePlugins);
	}

	@Override
	public PluginInfo pluginInfo(String plugin) {
		return guarded("get_plugin_params", () -> this.driver.pluginInfo(plugin));
	}

	@Override
	public Backend createBackend(String plugin, Map<String, String> parameters) {
		Backend backend = guarded("create_backend", () -> this.driver.createBackend(plugin, parameters));
		this.backends.add(backend);
		return backend;
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
		return guarded("register_mem", () -> {
			long handle = this.driver.register(regions, segments);
			RegistrationImpl registration = new RegistrationImpl(this, regions, handle, segments);
			this.registrations.add(registration);
			return registration;
		});
	}

	void deregister(RegistrationImpl registration) {
		this.lifecycle.readLock().lock();
		try {
			if (this.registrations.remove(registration) && this.open) {
				this.driver.deregister(registration.handle());
			}
		}
		finally {
			this.lifecycle.readLock().unlock();
		}
	}

	@Override
	public AgentMetadata localMetadata() {
		return AgentMetadata.of(guarded("get_local_md", this.driver::localMetadata));
	}

	@Override
	public AgentMetadata localMetadata(Registration... registrations) {
		if (registrations.length == 0) {
			throw new IllegalArgumentException("partial metadata needs at least one registration");
		}
		List<MemoryDescriptor> regions = new ArrayList<>();
		MemoryType type = registrations[0].memoryType();
		for (int i = 0; i < registrations.length; i++) {
			if (!(registrations[i] instanceof RegistrationImpl impl) || !this.registrations.contains(impl)) {
				throw new IllegalArgumentException("registration " + i + " is not an open registration of agent '"
						+ name() + "'");
			}
			if (impl.memoryType() != type) {
				throw new IllegalArgumentException("partial metadata covers one memory type; registration " + i + " is "
						+ impl.memoryType() + ", registration 0 is " + type);
			}
			regions.addAll(impl.regions().descriptors());
		}
		DescriptorList list = new DescriptorList(type, regions);
		return AgentMetadata.of(guarded("get_local_partial_md", () -> this.driver.localPartialMetadata(list)));
	}

	@Override
	public String loadRemoteMetadata(AgentMetadata metadata) {
		byte[] bytes = metadata.toByteArray();
		MetadataFraming.ParsedMetadata parsed = MetadataFraming.parse(bytes);
		return guarded("load_remote_md", () -> {
			String remote;
			try {
				remote = this.driver.loadRemoteMetadata(bytes);
			}
			catch (NixlException ex) {
				// A refused update can make NIXL drop the peer it had: keep the Java view in step.
				if (!this.driver.hasRemoteMetadata(parsed.agentName())) {
					this.remotes.remove(parsed.agentName());
				}
				throw ex;
			}
			this.remotes.merge(remote, parsed, AgentCore::update);
			return remote;
		});
	}

	/**
	 * Full metadata (it carries connection information) replaces what was known of a peer;
	 * partial metadata adds the sections it describes.
	 */
	private static MetadataFraming.ParsedMetadata update(MetadataFraming.ParsedMetadata known,
			MetadataFraming.ParsedMetadata loaded) {
		if (!loaded.connections().isEmpty()) {
			return loaded;
		}
		List<MetadataFraming.MemorySection> sections = new ArrayList<>(known.sections());
		sections.addAll(loaded.sections());
		return new MetadataFraming.ParsedMetadata(known.agentName(), known.connections(), sections);
	}

	@Override
	public boolean hasRemoteMetadata(String remoteAgent) {
		return guarded("check_remote_md", () -> this.driver.hasRemoteMetadata(remoteAgent));
	}

	@Override
	public void invalidateRemoteMetadata(String remoteAgent) {
		guarded("invalidate_remote_md", () -> {
			boolean known = this.remotes.containsKey(remoteAgent);
			try {
				this.driver.invalidateRemoteMetadata(remoteAgent);
			}
			catch (NixlException ex) {
				// The engine may have dropped the peer on its own (a disconnect, a refused update);
				// forgetting a peer this agent knew is then already done.
				if (!known || ex.status() != NixlStatus.ERROR_NOT_FOUND) {
					throw ex;
				}
			}
			finally {
				// only after the engine: a peer missing from remoteAgents() is gone from the engine too
				this.remotes.remove(remoteAgent);
			}
		});
	}

	@Override
	public List<String> remoteAgents() {
		return List.copyOf(this.remotes.keySet());
	}

	@Override
	public Transfer createTransfer(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent,
			byte @Nullable [] notification) {
		String operation = "create_xfer_req";
		// Checked under the lifecycle lock: an agent closing meanwhile gives CLOSED, not "not registered".
		return guarded(operation, () -> {
			checkPairs(operation, remoteAgent, local.descriptors(), remote.descriptors());
			List<RegistrationImpl> pinned = localRegistrations(operation, local);
			checkRemote(operation, remoteAgent, remote);
			long handle = this.driver.createRequest(op, local, remote, remoteAgent);
			return track(new TransferImpl(this, this.driver, op, remoteAgent, local.totalBytes(), pinned, notification,
					handle));
		});
	}

	@Override
	public PreparedList prepareLocal(DescriptorList descriptors) {
		return guarded("prep_xfer_dlist",
				() -> prepare(null, descriptors, localRegistrations("prep_xfer_dlist", descriptors)));
	}

	@Override
	public PreparedList prepareRemote(String remoteAgent, DescriptorList descriptors) {
		checkRemote("prep_xfer_dlist", remoteAgent, descriptors);
		return prepare(remoteAgent, descriptors, List.of());
	}

	private PreparedList prepare(@Nullable String remoteAgent, DescriptorList descriptors,
			List<RegistrationImpl> pinned) {
		return guarded("prep_xfer_dlist", () -> {
			long handle = this.driver.prepare(remoteAgent, descriptors);
			PreparedListImpl list = new PreparedListImpl(this, remoteAgent, descriptors, pinned, handle);
			this.preparedLists.add(list);
			return list;
		});
	}

	void releasePrepared(PreparedListImpl list, long handle) {
		this.lifecycle.readLock().lock();
		try {
			if (this.preparedLists.remove(list) && this.open) {
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
		return guarded(operation, () -> {
			PreparedListImpl localList = ownList(operation, local, false);
			PreparedListImpl remoteList = ownList(operation, remote, true);
			String remoteAgent = remoteList.remoteAgent();
			if (localIndices.length == 0) {
				throw invalid(operation, remoteAgent, "a transfer needs at least one descriptor index");
			}
			List<MemoryDescriptor> localSelected = select(operation, remoteAgent, "local", localList, localIndices);
			List<MemoryDescriptor> remoteSelected = select(operation, remoteAgent, "remote", remoteList,
					remoteIndices);
			checkPairs(operation, remoteAgent, localSelected, remoteSelected);
			int[] localCopy = localIndices.clone();
			int[] remoteCopy = remoteIndices.clone();
			long bytes = localSelected.stream().mapToLong(MemoryDescriptor::length).sum();
			long handle = this.driver.makeRequest(op, localList.handle(operation), localCopy,
					remoteList.handle(operation), remoteCopy);
			return track(new TransferImpl(this, this.driver, op, remoteAgent, bytes, localList.registrations(),
					notification, handle));
		});
	}

	private PreparedListImpl ownList(String operation, PreparedList list, boolean remote) {
		if (!(list instanceof PreparedListImpl impl) || !this.preparedLists.contains(impl)) {
			throw invalid(operation, null, "the prepared list is not an open list of agent '" + name() + "'");
		}
		if (remote != (impl.remoteAgent() != null)) {
			throw invalid(operation, impl.remoteAgent(),
					"expected a " + (remote ? "remote" : "local") + " prepared list, got " + impl);
		}
		return impl;
	}

	private static List<MemoryDescriptor> select(String operation, @Nullable String remoteAgent, String side,
			PreparedListImpl list, int[] indices) {
		List<MemoryDescriptor> descriptors = list.descriptors().descriptors();
		List<MemoryDescriptor> selected = new ArrayList<>(indices.length);
		for (int i = 0; i < indices.length; i++) {
			int index = indices[i];
			if (index < 0 || index >= descriptors.size()) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, remoteAgent, side + " index " + i
						+ " is " + index + ", outside the prepared list of " + descriptors.size() + " descriptor(s)");
			}
			selected.add(descriptors.get(index));
		}
		return selected;
	}

	private TransferImpl track(TransferImpl transfer) {
		this.transfers.add(transfer);
		return transfer;
	}

	private void checkPairs(String operation, @Nullable String remoteAgent, List<MemoryDescriptor> local,
			List<MemoryDescriptor> remote) {
		if (local.size() != remote.size()) {
			throw invalid(operation, remoteAgent, "local and remote descriptor counts differ: " + local.size() + " vs "
					+ remote.size());
		}
		for (int i = 0; i < local.size(); i++) {
			if (local.get(i).length() != remote.get(i).length()) {
				throw invalid(operation, remoteAgent, "descriptor " + i + " differs in length: local "
						+ local.get(i).length() + " vs remote " + remote.get(i).length() + " bytes");
			}
		}
	}

	/** Finds the registration of every local descriptor; refuses descriptors outside them. */
	private List<RegistrationImpl> localRegistrations(String operation, DescriptorList local) {
		List<RegistrationImpl> found = new ArrayList<>(2);
		List<MemoryDescriptor> descriptors = local.descriptors();
		RegistrationImpl last = null;
		for (int i = 0; i < descriptors.size(); i++) {
			MemoryDescriptor descriptor = descriptors.get(i);
			if (last == null || !last.contains(local.memoryType(), descriptor)) {
				last = findRegistration(local.memoryType(), descriptor);
				if (last == null) {
					throw invalid(operation, null, "local descriptor " + i + " (" + descriptor + ", "
							+ local.memoryType() + ") is not inside memory registered with this agent");
				}
				if (!found.contains(last)) {
					found.add(last);
				}
			}
		}
		return found;
	}

	private @Nullable RegistrationImpl findRegistration(MemoryType type, MemoryDescriptor descriptor) {
		for (RegistrationImpl registration : this.registrations) {
			if (registration.isOpen() && registration.contains(type, descriptor)) {
				return registration;
			}
		}
		return null;
	}

	/**
	 * Checks remote descriptors against the metadata loaded through this agent. Metadata loaded
	 * some other way (for example NIXL's own etcd exchange) is left to NIXL to check.
	 */
	private void checkRemote(String operation, String remoteAgent, DescriptorList remote) {
		MetadataFraming.ParsedMetadata parsed = this.remotes.get(remoteAgent);
		if (parsed == null) {
			return;
		}
		List<MemoryDescriptor> descriptors = remote.descriptors();
		for (int i = 0; i < descriptors.size(); i++) {
			MemoryDescriptor descriptor = descriptors.get(i);
			if (!parsed.covers(null, remote.memoryType().code(), descriptor.address(), descriptor.length(),
					descriptor.deviceId())) {
				throw invalid(operation, remoteAgent, "remote descriptor " + i + " (" + descriptor + ", "
						+ remote.memoryType() + ") is not inside memory that '" + remoteAgent + "' registered");
			}
		}
	}

	private NixlException invalid(String operation, @Nullable String remoteAgent, String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, name(), remoteAgent, detail);
	}

	void transferStarted(TransferImpl transfer) {
		this.inFlight.add(transfer);
	}

	void progress(TransferImpl transfer) {
		this.progressLoop.submit(transfer);
		NixlException failed = this.failure;
		if (failed != null) {
			// posted while the agent failed, after fail() aborted what was in flight: the progress
			// loop may be gone, so nobody else would end it
			transfer.abort(failed);
		}
	}

	void transferEnded(TransferImpl transfer, TransferState state, boolean notified, @Nullable NixlException failure) {
		this.inFlight.remove(transfer);
		this.statistics.record(transfer, state, notified);
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
		guarded("gen_notif", () -> {
			ensureActive("gen_notif");
			this.driver.sendNotification(remoteAgent, copy);
		});
		this.statistics.notificationSent();
	}

	@Override
	public CompletableFuture<Notification> expectNotification(NotificationMatcher matcher, Duration timeout) {
		ensureActive("get_notifs");
		CompletableFuture<Notification> future = this.notifications.expect(matcher, timeout);
		NixlException failed = this.failure;
		if (failed != null) {
			// the agent failed after the check above, perhaps after its waiters were failed
			this.notifications.failWaiters(failed);
		}
		this.progressLoop.wakeUp();
		return future;
	}

	@Override
	public Optional<Notification> pollNotification(NotificationMatcher matcher) {
		ensureOpen("get_notifs");
		return this.notifications.poll(matcher);
	}

	boolean hasNotificationWaiters() {
		return this.notifications.hasWaiters();
	}

	/** Called by the progress loop only. */
	boolean drainNotifications() {
		// An agent without backends (they may be created later) cannot receive notifications, and
		// NIXL answers every drain with an error and a log line: do not ask until one exists.
		if (this.backends.isEmpty() || !this.notifications.hasRoom()) {
			return false;
		}
		try {
			boolean drained = this.driver.drainNotifications(this.notifications) > 0;
			this.drainFailing = false;
			return drained;
		}
		catch (NixlException ex) {
			// The loop retries every few milliseconds: say it once per run of failures, not each time.
			if (!this.drainFailing) {
				this.drainFailing = true;
				logger.log(Level.WARNING, ex.getMessage() + " (further failures are not logged until a drain succeeds)");
			}
			return false;
		}
	}

	@Override
	public List<Transfer> inFlightTransfers() {
		return List.copyOf(this.inFlight);
	}

	@Override
	public List<Registration> registrations() {
		return List.copyOf(this.registrations);
	}

	@Override
	public boolean isOpen() {
		return this.open;
	}

	@Override
	public AgentState state() {
		if (!this.open) {
			return AgentState.CLOSED;
		}
		return (this.failure != null) ? AgentState.FAILED : AgentState.ACTIVE;
	}

	@Override
	public Optional<NixlException> failure() {
		return Optional.ofNullable(this.failure);
	}

	@Override
	public void close() {
		this.lifecycle.writeLock().lock();
		try {
			if (!this.open) {
				return;
			}
			// a transfer whose engine call throws must not keep the agent open, its thread running
			// and its engine unclosed
			for (TransferImpl transfer : List.copyOf(this.inFlight)) {
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
			this.open = false;
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
				+ this.inFlight.size() + " transfer(s) in flight]";
	}

	/**
	 * Counters of finished transfers and notifications.
	 */
	private final class Statistics implements AgentStatistics {

		private static final TransferState[] OUTCOMES = AgentStatistics.OUTCOMES.toArray(TransferState[]::new);

		private final AtomicLongArray transfers = new AtomicLongArray(XferOp.values().length * OUTCOMES.length);

		private final AtomicLongArray bytes = new AtomicLongArray(XferOp.values().length * OUTCOMES.length);

		private final AtomicLong notificationsSent = new AtomicLong();

		private final AtomicLong internalErrors = new AtomicLong();

		void record(TransferImpl transfer, TransferState outcome, boolean notified) {
			int slot = slot(transfer.op(), outcome);
			if (slot >= 0) {
				this.transfers.incrementAndGet(slot);
				this.bytes.addAndGet(slot, transfer.byteSize());
			}
			if (notified && outcome == TransferState.COMPLETED) {
				this.notificationsSent.incrementAndGet();
			}
		}

		void notificationSent() {
			this.notificationsSent.incrementAndGet();
		}

		private static int slot(XferOp op, TransferState outcome) {
			for (int i = 0; i < OUTCOMES.length; i++) {
				if (OUTCOMES[i] == outcome) {
					return op.ordinal() * OUTCOMES.length + i;
				}
			}
			return -1;
		}

		@Override
		public long transfers(XferOp op, TransferState outcome) {
			int slot = slot(op, outcome);
			return (slot >= 0) ? this.transfers.get(slot) : 0;
		}

		@Override
		public long bytes(XferOp op, TransferState outcome) {
			int slot = slot(op, outcome);
			return (slot >= 0) ? this.bytes.get(slot) : 0;
		}

		@Override
		public long notificationsSent() {
			return this.notificationsSent.get();
		}

		@Override
		public long notificationsReceived() {
			return AgentCore.this.notifications.received();
		}

		@Override
		public long internalErrors() {
			return this.internalErrors.get();
		}

	}

	/**
	 * Logs, counts and acts on what the agent's internal threads report. A thread that keeps
	 * failing logs its stack trace at most once a second; the rest are counted.
	 */
	private final class Faults implements EngineDriver.FaultListener {

		private static final long LOG_INTERVAL_NANOS = 1_000_000_000L;

		private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

		@Override
		public void survived(String thread, Throwable error) {
			AgentCore.this.statistics.internalErrors.incrementAndGet();
			long now = System.nanoTime();
			Long last = this.lastLogged.get(thread);
			if (last == null || now - last >= LOG_INTERVAL_NANOS) {
				this.lastLogged.put(thread, now);
				logger.log(Level.ERROR, "Agent '" + name() + "': one unit of work of its " + thread
						+ " thread failed; the thread goes on (errors so far: " + statistics().internalErrors() + ")", error);
			}
		}

		@Override
		public void fatal(String thread, Throwable error) {
			AgentCore.this.statistics.internalErrors.incrementAndGet();
			fail(thread, error);
		}

	}

	/**
	 * Turns the agent {@link AgentState#FAILED}: from now on posts and notification waits are
	 * refused, transfers in flight fail and notification waiters fail at once. Only the first call
	 * counts.
	 */
	private void fail(String thread, Throwable error) {
		NixlException failed = new NixlException(NixlStatus.FAILED, "agent", name(), null,
				"its " + thread + " thread cannot go on (" + error + ")", error);
		synchronized (this.faults) {
			if (this.failure != null || !this.open) {
				return;
			}
			this.failedThread = thread;
			this.failure = failed;
		}
		// waiters and transfers first: logging goes through the application's handlers, which may
		// throw as well
		this.notifications.failWaiters(failed);
		for (TransferImpl transfer : List.copyOf(this.inFlight)) {
			try {
				transfer.abort(failed);
			}
			catch (Throwable ex) {
				// a listener threw after the transfer ended: the next transfer must still end
				this.faults.survived(thread, ex);
			}
		}
		logger.log(Level.ERROR, "Agent '" + name() + "' failed and can no longer move data: its " + thread
				+ " thread cannot go on. Close the agent and create a new one.", error);
	}

	/**
	 * Runs an engine-specific call (one the {@link EngineDriver} contract does not have, such as
	 * NIXL's built-in etcd exchange) under the agent's lifecycle, like every other engine call.
	 * @param <D> the driver type the call needs
	 * @param <R> the call's result
	 * @param operation the operation, in NIXL's words, for errors
	 * @param driverType the driver type the call needs
	 * @param call the call
	 * @return its result
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED} when this agent's engine is not of that
	 * type, {@link NixlStatus#CLOSED} when the agent is closed
	 */
	public <D, R> R engineCall(String operation, Class<D> driverType, java.util.function.Function<D, R> call) {
		if (!driverType.isInstance(this.driver)) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, operation, name(), null,
					"the " + this.driver.engine() + " engine of this agent does not offer " + operation);
		}
		return guarded(operation, () -> call.apply(driverType.cast(this.driver)));
	}

}
