package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Backend;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.PluginInfo;
import dev.nixl4j.TransferTelemetry;
import dev.nixl4j.XferOp;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.Connection;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import dev.nixl4j.internal.embedded.LocalRegistrations.Access;
import dev.nixl4j.internal.embedded.LocalRegistrations.AccessDenied;
import dev.nixl4j.internal.engine.EngineDriver;
import org.jspecify.annotations.Nullable;

/**
 * The embedded engine's driver: one agent in pure Java.
 * {@link dev.nixl4j.internal.engine.AgentCore} has checked every argument before a call
 * gets here; what arrives from peers (over TCP, or from an agent in the same JVM) is
 * checked here, against the registration ids and keys this agent gave out, before any
 * memory is touched.
 */
public final class EmbeddedDriver implements EngineDriver {

	/** Prefix of the reason connections fail with when their agent closes. */
	static final String CLOSING = "the agent was closed";

	private static final System.Logger logger = System.getLogger(EmbeddedDriver.class.getName());

	/** Reports faults to the log while no agent listens (a driver used on its own). */
	private static final FaultListener LOGGED = new FaultListener() {

		@Override
		public void survived(String thread, Throwable error) {
			logger.log(Level.WARNING, "one unit of work of the " + thread + " thread failed; the thread goes on",
					error);
		}

		@Override
		public void fatal(String thread, Throwable error) {
			logger.log(Level.ERROR, "the " + thread + " thread cannot go on", error);
		}

	};

	private static final SecureRandom random = new SecureRandom();

	/** Agents of this JVM by instance id, for in-process copies. */
	private static final Map<String, EmbeddedDriver> inProcess = new ConcurrentHashMap<>();

	private static final Set<String> PLUGINS = Set.of(EmbeddedMetadata.BACKEND);

	/** Plugin names accepted as the embedded backend: NIXL's default backend is UCX. */
	private static final Set<String> ALIASES = Set.of(EmbeddedMetadata.BACKEND, "UCX");

	private final AgentConfig config;

	private final Connection connection;

	private final ConnectionAcceptor acceptor;

	private final List<Backend> backends = new ArrayList<>();

	private final AtomicLong ids = new AtomicLong();

	private final LocalRegistrations registrations = new LocalRegistrations();

	private final LoadedPeers peers;

	private final Map<Long, Request> requests = new ConcurrentHashMap<>();

	private final Map<Long, Prepared> prepared = new ConcurrentHashMap<>();

	private final NotificationInbox inbox = new NotificationInbox(this::servesPeer);

	private volatile FaultListener faults = LOGGED;

	private volatile boolean closed;

	/**
	 * The backend parameter that offers and uses the same-host path (see
	 * {@link SameHostPath}).
	 */
	static final String SAME_HOST = "same_host";

	/**
	 * Whether {@link dev.nixl4j.EmbeddedOptions#sameHost()} is on or the EMBEDDED backend
	 * was created with {@code same_host=true}.
	 */
	private volatile boolean sameHost;

	private final String hostIdentity = SameHostPath.localIdentity();

	private EmbeddedDriver(AgentConfig config) throws IOException {
		this.config = config;
		this.sameHost = config.embedded().sameHost();
		this.peers = new LoadedPeers(config.name());
		byte[] instance = secret();
		byte[] token = secret();
		this.acceptor = new ConnectionAcceptor(this, config.embedded(), token);
		InetSocketAddress bound = this.acceptor.address();
		this.connection = new Connection(instance, token, bound.getAddress().getHostAddress(), bound.getPort());
		inProcess.put(this.connection.instanceId(), this);
	}

	/**
	 * Creates an embedded agent's driver and starts its listener.
	 * @param config the agent configuration
	 * @return the driver
	 * @throws NixlException {@link NixlStatus#UNAVAILABLE} when the listen address cannot
	 * be bound
	 */
	public static EmbeddedDriver open(AgentConfig config) {
		try {
			return new EmbeddedDriver(config);
		}
		catch (IOException ex) {
			throw new NixlException(NixlStatus.UNAVAILABLE, "create_agent", config.name(), null,
					"the embedded engine cannot listen on " + config.embedded().listenAddress() + ": "
							+ ex.getMessage(),
					ex);
		}
	}

	private static byte[] secret() {
		byte[] bytes = new byte[EmbeddedMetadata.SECRET_BYTES];
		random.nextBytes(bytes);
		return bytes;
	}

	String name() {
		return this.config.name();
	}

	Duration connectTimeout() {
		Duration stall = this.config.stallTimeout();
		return (stall.compareTo(Duration.ofSeconds(10)) < 0) ? stall : Duration.ofSeconds(10);
	}

	void wakeUp() {
		this.inbox.wakeUp();
	}

	FaultListener faults() {
		return this.faults;
	}

	private boolean servesPeer(String peer) {
		return this.acceptor.serves(peer);
	}

	/** The notifications waiting for this agent's progress loop. */
	NotificationInbox inbox() {
		return this.inbox;
	}

	/** The memory this agent registered, which peers' requests may touch. */
	LocalRegistrations registrations() {
		return this.registrations;
	}

	/**
	 * Fails connections to peers that stayed silent too long, and forgets dropped peers
	 * that kept their connections here open. Called by the listener's accepting thread.
	 */
	void checkDeadlines(long now) {
		this.peers.checkDeadlines(now, this.config.embedded().responseTimeout());
		this.inbox.checkDeadlines(now);
	}

	/**
	 * Counts the TCP connections this agent serves now (for diagnostics and tests).
	 * @return the count
	 */
	public int servedConnections() {
		return this.acceptor.servedConnections();
	}

	/**
	 * Counts the connections the listener closed at once because it held
	 * {@link dev.nixl4j.EmbeddedOptions#maxConnections()} (for diagnostics and tests).
	 * @return the count since the agent started
	 */
	public long refusedConnections() {
		return this.acceptor.refusedConnections();
	}

	/**
	 * Counts the connections the listener closed because they missed the hello deadline
	 * or a request's frame deadline (for diagnostics and tests).
	 * @return the count since the agent started
	 */
	public long timedOutConnections() {
		return this.acceptor.timedOutConnections();
	}

	/**
	 * Replaces the factory of the listener's serving threads: a seam for tests of a
	 * failed thread start.
	 */
	void serveThreads(ThreadFactory factory) {
		this.acceptor.serveThreads(factory);
	}

	/**
	 * Closes the listener's server socket as if it broke: a seam for tests of a fatal
	 * fault.
	 */
	void breakListener() throws IOException {
		this.acceptor.breakServerSocket();
	}

	/**
	 * Returns the address this agent listens on.
	 * @return the bound address
	 */
	public InetSocketAddress listenAddress() {
		return this.acceptor.address();
	}

	@Override
	public Engine engine() {
		return Engine.EMBEDDED;
	}

	@Override
	public String description() {
		return "embedded engine (pure Java, DRAM only), listening on " + this.connection.host() + ":"
				+ this.connection.port();
	}

	@Override
	public void progressListener(Runnable wakeUp) {
		this.inbox.progressListener(wakeUp);
	}

	@Override
	public void faultListener(FaultListener faults) {
		this.faults = faults;
	}

	@Override
	public List<String> availablePlugins() {
		return List.copyOf(PLUGINS);
	}

	@Override
	public PluginInfo pluginInfo(String plugin) {
		if (!ALIASES.contains(plugin)) {
			throw new NixlException(NixlStatus.ERROR_NOT_FOUND, NixlException.GET_PLUGIN_PARAMS, name(), null,
					"plugin '" + plugin + "' is not available in the embedded engine; available: "
							+ availablePlugins());
		}
		return new PluginInfo(EmbeddedMetadata.BACKEND, Map.of(), Set.of(MemoryType.DRAM));
	}

	@Override
	public synchronized Backend createBackend(String plugin, Map<String, String> parameters) {
		if (!ALIASES.contains(plugin)) {
			throw new NixlException(NixlStatus.ERROR_BACKEND, NixlException.CREATE_BACKEND, name(), null,
					"the embedded engine " + "cannot create a '" + plugin + "' backend; available: "
							+ availablePlugins());
		}
		String sameHostParameter = parameters.get(SAME_HOST);
		boolean sameHostOn = "true".equals(sameHostParameter);
		if (sameHostParameter != null && !sameHostOn && !"false".equals(sameHostParameter)) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, NixlException.CREATE_BACKEND, name(), null,
					"the EMBEDDED backend parameter " + SAME_HOST + " is true or false, not '" + sameHostParameter
							+ "'");
		}
		Backend backend = new Backend(EmbeddedMetadata.BACKEND, parameters, Set.of(MemoryType.DRAM));
		this.backends.add(backend);
		if (sameHostOn) {
			this.sameHost = true;
		}
		return backend;
	}

	@Override
	public long register(DescriptorList regions, List<MemorySegment> segments) {
		if (regions.memoryType() != MemoryType.DRAM) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, "register_mem", name(), null, "the embedded engine moves "
					+ "DRAM only, not " + regions.memoryType() + "; " + regions.memoryType() + " needs native NIXL");
		}
		synchronized (this) {
			if (this.backends.isEmpty()) {
				throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "register_mem", name(), null,
						"no backend of this agent supports DRAM memory: create the EMBEDDED backend first");
			}
		}
		List<MemorySegment> views = segments.isEmpty()
				? regions.descriptors().stream().map(EmbeddedDriver::view).toList() : List.copyOf(segments);
		long id = this.ids.incrementAndGet();
		this.registrations.add(new RegisteredMemory(id, secret(), regions.descriptors(), views));
		return id;
	}

	/** A segment over memory registered by address: the caller vouched for it. */
	private static MemorySegment view(MemoryDescriptor descriptor) {
		return MemorySegment.ofAddress(descriptor.address()).reinterpret(descriptor.length());
	}

	@Override
	public void deregister(long registration) {
		this.registrations.remove(registration);
	}

	@Override
	public byte[] localMetadata() {
		List<RemoteRegion> regions = this.registrations.regions();
		Connection offered = this.sameHost
				? this.connection
					.withSameHost(new EmbeddedMetadata.SameHost(this.hostIdentity, ProcessHandle.current().pid()))
				: this.connection;
		return EmbeddedMetadata.write(name(), offered, regions);
	}

	@Override
	public byte[] localPartialMetadata(DescriptorList regions) {
		return EmbeddedMetadata.write(name(), null, this.registrations.regions(regions.descriptors()));
	}

	@Override
	public String loadRemoteMetadata(byte[] metadata) {
		return this.peers.load(metadata, this.sameHost, this.hostIdentity);
	}

	/**
	 * Why transfers to a peer do not take the same-host path, or {@code null} while they
	 * do: for tests.
	 */
	SameHostPath.@Nullable Fallback sameHostFallback(String remoteAgent) {
		return this.peers.get("same_host", remoteAgent).sameHost.off();
	}

	/** Counts the transfers to a peer that took the same-host path: for tests. */
	long sameHostTransfers(String remoteAgent) {
		return this.peers.get("same_host", remoteAgent).sameHost.transfers();
	}

	/**
	 * Says where the memory of a same-host peer's request lies, for the peer to map it;
	 * called once {@link LocalRegistrations#access} accepted the request's keys and
	 * ranges.
	 * @param regions the request's descriptors
	 * @return one location per descriptor (see {@link Wire}), or {@code null} when this
	 * agent does not offer the path or some of the memory is not shareable
	 */
	byte @Nullable [] sameHostLocations(List<RemoteRegion> regions) {
		return this.sameHost ? this.registrations.sameHostLocations(regions) : null;
	}

	@Override
	public boolean hasRemoteMetadata(String remoteAgent) {
		return this.peers.contains(remoteAgent);
	}

	@Override
	public void invalidateRemoteMetadata(String remoteAgent) {
		this.peers.invalidate(remoteAgent);
	}

	@Override
	public long createRequest(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent) {
		RemotePeer peer = this.peers.get("create_xfer_req", remoteAgent);
		return track(new Request(op, peer, localSegments(local.descriptors()),
				this.peers.regions("create_xfer_req", peer, remote.descriptors())));
	}

	private long track(Request request) {
		long handle = this.ids.incrementAndGet();
		this.requests.put(handle, request);
		return handle;
	}

	private List<MemorySegment> localSegments(List<MemoryDescriptor> descriptors) {
		List<MemorySegment> segments = new ArrayList<>(descriptors.size());
		for (MemoryDescriptor descriptor : descriptors) {
			MemorySegment segment = this.registrations.slice(descriptor);
			if (segment == null) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "create_xfer_req", name(), null,
						"local " + descriptor + " is not inside registered memory");
			}
			segments.add(segment);
		}
		return segments;
	}

	@Override
	public long prepare(@Nullable String remoteAgent, DescriptorList descriptors) {
		long handle = this.ids.incrementAndGet();
		if (remoteAgent == null) {
			this.prepared.put(handle, new Prepared(null, localSegments(descriptors.descriptors()), List.of()));
		}
		else {
			RemotePeer peer = this.peers.get("prep_xfer_dlist", remoteAgent);
			this.prepared.put(handle, new Prepared(peer, List.of(),
					this.peers.regions("prep_xfer_dlist", peer, descriptors.descriptors())));
		}
		return handle;
	}

	@Override
	public void releasePrepared(long prepared) {
		this.prepared.remove(prepared);
	}

	@Override
	public long makeRequest(XferOp op, long local, int[] localIndices, long remote, int[] remoteIndices) {
		Prepared localList = this.prepared.get(local);
		Prepared remoteList = this.prepared.get(remote);
		if (localList == null || remoteList == null || remoteList.peer == null) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "make_xfer_req", name(), null,
					"unknown prepared list handle");
		}
		List<MemorySegment> segments = new ArrayList<>(localIndices.length);
		for (int index : localIndices) {
			segments.add(localList.segments.get(index));
		}
		List<RemoteRegion> regions = new ArrayList<>(remoteIndices.length);
		for (int index : remoteIndices) {
			regions.add(remoteList.regions.get(index));
		}
		return track(new Request(op, remoteList.peer, segments, regions));
	}

	@Override
	public int post(long handle, byte @Nullable [] notification) {
		Request request = this.requests.get(handle);
		if (request == null) {
			return NixlStatus.ERROR_INVALID_STATE.code();
		}
		long wireId = this.ids.incrementAndGet();
		synchronized (request) {
			request.wireId = wireId;
			request.notification = notification;
			request.detail = null;
			request.postedMicros = this.config.telemetry() ? ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())
					: 0;
			request.postStart = System.nanoTime();
			request.status = Request.IN_PROGRESS;
		}
		if (notification != null && notification.length > Wire.MAX_NOTIFICATION_BYTES) {
			return fail(request, wireId, NixlStatus.ERROR_INVALID_PARAM, "the notification is " + notification.length
					+ " bytes, over the embedded engine's limit of " + Wire.MAX_NOTIFICATION_BYTES);
		}
		RemotePeer peer = request.peer;
		if (!this.peers.isLoaded(peer)) {
			return fail(request, wireId, NixlStatus.ERROR_NOT_FOUND,
					"the metadata of '" + peer.name + "' was invalidated since the transfer was made");
		}
		EmbeddedDriver target = inProcessTarget(peer);
		if (target != null) {
			copyInProcess(request, wireId, target);
		}
		else {
			peer.link(this).post(request, wireId, notification);
		}
		request.postEnd = System.nanoTime();
		return request.status;
	}

	/**
	 * The peer's agent when it lives in this JVM and in-process copies are on, else
	 * {@code null}.
	 */
	private @Nullable EmbeddedDriver inProcessTarget(RemotePeer peer) {
		return this.config.embedded().inProcessCopies() ? inProcess.get(peer.instanceId) : null;
	}

	private int fail(Request request, long wireId, NixlStatus status, String why) {
		request.finish(wireId, status.code(), why);
		request.postEnd = System.nanoTime();
		return status.code();
	}

	/**
	 * Moves a request's data to or from an agent of this JVM, checked like a request from
	 * the network.
	 */
	private void copyInProcess(Request request, long wireId, EmbeddedDriver target) {
		Access access;
		try {
			if (!target.acceptsToken(request.peer.connection.token())) {
				throw new AccessDenied(NixlStatus.ERROR_BACKEND, "the token differs from the metadata loaded here");
			}
			access = target.registrations.access(request.remote, null);
		}
		catch (AccessDenied denied) {
			request.finish(wireId, denied.status(), "refused by '" + request.peer.name + "': " + denied.getMessage());
			return;
		}
		try {
			List<MemorySegment> remote = access.segments();
			for (int i = 0; i < remote.size(); i++) {
				if (request.op == XferOp.WRITE) {
					MemorySegment.copy(request.local.get(i), 0, remote.get(i), 0, remote.get(i).byteSize());
				}
				else {
					MemorySegment.copy(remote.get(i), 0, request.local.get(i), 0, remote.get(i).byteSize());
				}
			}
		}
		catch (IllegalStateException ex) {
			request.finish(wireId, NixlStatus.ERROR_BACKEND.code(),
					"memory of the transfer is gone: " + ex.getMessage());
			return;
		}
		finally {
			access.close();
		}
		byte[] notification = request.notification;
		if (notification != null) {
			target.inbox.deliver(name(), notification);
		}
		request.finish(wireId, Request.SUCCESS, null);
	}

	boolean acceptsToken(byte[] token) {
		return !this.closed && java.security.MessageDigest.isEqual(this.connection.token(), token);
	}

	@Override
	public int status(long handle) {
		Request request = this.requests.get(handle);
		return (request != null) ? request.status : NixlStatus.ERROR_INVALID_STATE.code();
	}

	@Override
	public @Nullable String failureDetail(long handle) {
		Request request = this.requests.get(handle);
		return (request != null) ? request.detail : null;
	}

	@Override
	public int release(long handle) {
		Request request = this.requests.remove(handle);
		if (request == null) {
			return Request.SUCCESS;
		}
		if (request.cancel()) {
			// its data is on the wire: cut the connection so no thread touches the memory
			// after this
			request.peer.close("the connection to '" + request.peer.name
					+ "' was reset: a transfer was cancelled while its data was moving");
		}
		request.awaitNoIo();
		return Request.SUCCESS;
	}

	@Override
	public TransferTelemetry telemetry(long handle) {
		Request request = this.requests.get(handle);
		if (request == null || !this.config.telemetry()) {
			throw new NixlException(NixlStatus.ERROR_NO_TELEMETRY, "get_xfer_telemetry", name(),
					(request != null) ? request.peer.name : null,
					"telemetry is off for this agent (AgentConfig.telemetry)");
		}
		long finished = request.finished;
		return new TransferTelemetry(request.postedMicros, Duration.ofNanos(request.postEnd - request.postStart),
				Duration.ofNanos(Math.max(1, finished - request.postStart)), request.bytes, request.remote.size());
	}

	@Override
	public void sendNotification(String remoteAgent, byte[] message) {
		RemotePeer peer = this.peers.get("gen_notif", remoteAgent);
		if (message.length > Wire.MAX_NOTIFICATION_BYTES) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "gen_notif", name(), remoteAgent, "the message is "
					+ message.length + " bytes, over the embedded engine's limit of " + Wire.MAX_NOTIFICATION_BYTES);
		}
		EmbeddedDriver target = inProcessTarget(peer);
		if (target != null && target.acceptsToken(peer.connection.token())) {
			target.inbox.deliver(name(), message);
		}
		else {
			peer.link(this).notify(message);
		}
	}

	@Override
	public int drainNotifications(NotificationSink sink) {
		return this.inbox.drain(sink);
	}

	@Override
	public void close() {
		this.closed = true;
		this.inbox.close();
		inProcess.remove(this.connection.instanceId(), this);
		this.acceptor.close();
		this.peers.close(CLOSING);
		this.requests.clear();
		this.prepared.clear();
		this.registrations.close();
	}

	private record Prepared(@Nullable RemotePeer peer, List<MemorySegment> segments, List<RemoteRegion> regions) {
	}

}
