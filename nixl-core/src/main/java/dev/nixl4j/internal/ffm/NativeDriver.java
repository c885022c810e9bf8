package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Backend;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NativeLibraryInfo;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.PluginInfo;
import dev.nixl4j.ThreadSync;
import dev.nixl4j.TransferTelemetry;
import dev.nixl4j.XferOp;
import dev.nixl4j.internal.engine.EngineDriver;
import dev.nixl4j.internal.engine.EtcdExchangeDriver;
import org.jspecify.annotations.Nullable;

import static dev.nixl4j.internal.ffm.NativeCalls.SUCCESS;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The native engine: one {@code nixlAgent} of NIXL's C API. Handles are the native
 * pointers. {@link dev.nixl4j.internal.engine.AgentCore} has checked every argument
 * before a call gets here.
 *
 * <p>
 * The driver creates and destroys the agent and posts, polls and releases its requests
 * itself, so that a post is one call and one downcall; the other jobs belong to the
 * agent's {@link NativeBackends plugins and backends}, {@link NativeRegistrations memory
 * registrations}, {@link NativeMetadata metadata}, {@link NativeRequests request making}
 * and {@link NativeNotifications notifications}.
 */
public final class NativeDriver implements EngineDriver {

	private final String name;

	private final NativeLibrary library;

	private final NativeLibraryInfo libraryInfo;

	private final MemorySegment agent;

	private final boolean etcdConfigured;

	private final NativeBackends backends;

	private final NativeRegistrations registrations;

	private final NativeMetadata metadata;

	private final NativeRequests requests;

	private final NativeNotifications notifications;

	/**
	 * Optional arguments of a post with a notification, kept from one post to the next so
	 * that a post does not create and destroy them: a post takes it (or creates its own
	 * when another post holds it), sets the message, and gives it back. NIXL copies the
	 * message during the post.
	 */
	private final AtomicReference<@Nullable MemorySegment> spareOptArgs = new AtomicReference<>();

	/**
	 * Optional arguments of every post without a notification, set once to carry none and
	 * never changed afterwards: NIXL only reads them during a post, so posts on any
	 * thread share them, and such a post makes one downcall. They are passed rather than
	 * none at all because NIXL carries a request's previous notification over to a post
	 * without optional arguments.
	 */
	private final MemorySegment silentOptArgs;

	private NativeDriver(String name, NativeLibrary library, NativeLibraryInfo libraryInfo, MemorySegment agent,
			boolean etcdConfigured, boolean multiThreadedWorkers) {
		this.name = name;
		this.etcdConfigured = etcdConfigured;
		this.library = library;
		this.libraryInfo = libraryInfo;
		this.agent = agent;
		this.backends = new NativeBackends(name, agent, libraryInfo.pluginDirectory(), multiThreadedWorkers);
		this.registrations = new NativeRegistrations(name, agent);
		this.metadata = new NativeMetadata(name, agent, this.registrations);
		this.requests = new NativeRequests(name, agent);
		try {
			this.notifications = new NativeNotifications(name, agent);
		}
		catch (Throwable ex) {
			destroyAgent(agent);
			throw rethrow(ex, "create_notif_map");
		}
		MemorySegment silent = null;
		try {
			silent = createOptArgs();
			check((int) Capi.OPT_ARGS_SET_HAS_NOTIF.invokeExact(silent, false), "opt_args_set_has_notif");
		}
		catch (Throwable ex) {
			try {
				if (silent != null) {
					destroyOptArgs(silent);
				}
				this.notifications.destroyMap();
			}
			catch (Throwable again) {
				ex.addSuppressed(again);
			}
			finally {
				destroyAgent(agent);
			}
			throw rethrow(ex, "create_opt_args");
		}
		this.silentOptArgs = silent;
	}

	/**
	 * Loads NIXL if needed, sets the configured native environment and creates a native
	 * agent. Synchronized so that the environment NIXL reads while creating the agent is
	 * this configuration's, not that of an agent created at the same time; the variables
	 * NIXL reads only then ({@link NativeLibrary#AGENT_VARIABLES}) are put back
	 * afterwards.
	 * @param config the agent configuration
	 * @return the driver
	 * @throws NixlException {@link NixlStatus#LIBRARY_UNAVAILABLE} when NIXL cannot load
	 */
	public static synchronized NativeDriver open(AgentConfig config) {
		Map<String, java.util.Optional<String>> agentVariables = NativeLibrary.agentVariables();
		try {
			return create(config, NativeLibrary.load(config.nativeLibraryDirectory(), config.nativeEnvironment()));
		}
		finally {
			NativeLibrary.restoreAgentVariables(agentVariables);
		}
	}

	private static NativeDriver create(AgentConfig config, NativeLibrary library) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment cfg = arena.allocate(Capi.AGENT_CONFIG);
			cfg.set(JAVA_BOOLEAN, offset("enable_prog_thread"), config.nativeProgressThread());
			cfg.set(JAVA_BOOLEAN, offset("enable_listen_thread"), config.listener());
			cfg.set(JAVA_INT, offset("listen_port"), config.listenerPort());
			cfg.set(JAVA_INT, offset("thread_sync"), config.threadSync().code());
			cfg.set(JAVA_INT, offset("num_workers"), 1);
			cfg.set(JAVA_LONG, offset("pthr_delay_us"), micros(config.nativeProgressDelay()));
			cfg.set(JAVA_LONG, offset("lthr_delay_us"), 100_000L);
			cfg.set(JAVA_BOOLEAN, offset("capture_telemetry"), config.telemetry());
			MemorySegment out = arena.allocate(ADDRESS);
			int rc = (int) Capi.CREATE_CONFIGURED_AGENT.invokeExact(arena.allocateFrom(config.name()), cfg, out);
			if (rc != SUCCESS) {
				throw new NixlException(NixlStatus.ofCode(rc), "create_agent", config.name(), null,
						"NIXL could not create the agent (" + library + ")");
			}
			NativeLibraryInfo info = new NativeLibraryInfo(library.version(), library.path(), library.source(),
					library.pluginDirectory(config.nativeEnvironment()));
			return new NativeDriver(config.name(), library, info, out.get(ADDRESS, 0),
					config.nativeEnvironment().containsKey(NixlEtcdMetadata.ENDPOINTS_VARIABLE),
					config.nativeProgressThread() || config.threadSync() == ThreadSync.RW);
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "create_agent", config.name(), null);
		}
	}

	private static long offset(String field) {
		return Capi.AGENT_CONFIG.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement(field));
	}

	private static long micros(Duration duration) {
		return duration.toNanos() / 1000;
	}

	@Override
	public Engine engine() {
		return Engine.NATIVE;
	}

	@Override
	public String description() {
		return this.library.toString();
	}

	@Override
	public Optional<NativeLibraryInfo> nativeLibrary() {
		return Optional.of(this.libraryInfo);
	}

	@Override
	public List<String> availablePlugins() {
		return this.backends.availablePlugins();
	}

	@Override
	public PluginInfo pluginInfo(String plugin) {
		return this.backends.pluginInfo(plugin);
	}

	@Override
	public Backend createBackend(String plugin, Map<String, String> requested) {
		return this.backends.createBackend(plugin, requested);
	}

	@Override
	public long register(DescriptorList regions, List<MemorySegment> segments) {
		return this.registrations.register(regions);
	}

	@Override
	public void deregister(long registration) {
		this.registrations.deregister(registration);
	}

	@Override
	public byte[] localMetadata() {
		return this.metadata.localMetadata();
	}

	@Override
	public byte[] localPartialMetadata(DescriptorList regions) {
		return this.metadata.localPartialMetadata(regions);
	}

	@Override
	public String loadRemoteMetadata(byte[] metadata) {
		return this.metadata.loadRemoteMetadata(metadata);
	}

	@Override
	public boolean hasRemoteMetadata(String remoteAgent) {
		return this.metadata.hasRemoteMetadata(remoteAgent);
	}

	@Override
	public void invalidateRemoteMetadata(String remoteAgent) {
		this.metadata.invalidateRemoteMetadata(remoteAgent);
	}

	/**
	 * Returns NIXL's etcd exchange of this agent when it was created with
	 * {@code NIXL_ETCD_ENDPOINTS}: without it NIXL has no etcd client for the agent.
	 */
	@Override
	public @Nullable EtcdExchangeDriver etcdExchange() {
		return this.etcdConfigured ? this.metadata : null;
	}

	@Override
	public long createRequest(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent) {
		return this.requests.createRequest(op, local, remote, remoteAgent);
	}

	@Override
	public long prepare(@Nullable String remoteAgent, DescriptorList descriptors) {
		return this.requests.prepare(remoteAgent, descriptors);
	}

	@Override
	public void releasePrepared(long prepared) {
		this.requests.releasePrepared(prepared);
	}

	@Override
	public long makeRequest(XferOp op, long local, int[] localIndices, long remote, int[] remoteIndices) {
		return this.requests.makeRequest(op, local, localIndices, remote, remoteIndices);
	}

	@Override
	public int post(long request, byte @Nullable [] notification) {
		if (notification == null) {
			try {
				return (int) Capi.POST_XFER_REQ.invokeExact(this.agent, MemorySegment.ofAddress(request),
						this.silentOptArgs);
			}
			catch (Throwable ex) {
				throw rethrow(ex, "post_xfer_req");
			}
		}
		MemorySegment opt = this.spareOptArgs.getAndSet(null);
		try {
			if (opt == null) {
				opt = createOptArgs();
			}
			try (Arena arena = Arena.ofConfined()) {
				MemorySegment message = arena.allocateFrom(ValueLayout.JAVA_BYTE, notification);
				check((int) Capi.OPT_ARGS_SET_NOTIF_MSG.invokeExact(opt, message, (long) notification.length),
						"opt_args_set_notif_msg");
			}
			check((int) Capi.OPT_ARGS_SET_HAS_NOTIF.invokeExact(opt, true), "opt_args_set_has_notif");
			return (int) Capi.POST_XFER_REQ.invokeExact(this.agent, MemorySegment.ofAddress(request), opt);
		}
		catch (Throwable ex) {
			throw rethrow(ex, "post_xfer_req");
		}
		finally {
			if (opt != null && !this.spareOptArgs.compareAndSet(null, opt)) {
				destroyOptArgs(opt);
			}
		}
	}

	private MemorySegment createOptArgs() throws Throwable {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_OPT_ARGS.invokeExact(out), "create_opt_args");
			return out.get(ADDRESS, 0);
		}
	}

	private void destroyOptArgs(MemorySegment opt) {
		try {
			int ignored = (int) Capi.DESTROY_OPT_ARGS.invokeExact(opt);
		}
		catch (Throwable ex) {
			throw rethrow(ex, "destroy_opt_args");
		}
	}

	@Override
	public int status(long request) {
		try {
			return (int) Capi.GET_XFER_STATUS.invokeExact(this.agent, MemorySegment.ofAddress(request));
		}
		catch (Throwable ex) {
			throw rethrow(ex, "get_xfer_status");
		}
	}

	@Override
	public int release(long request) {
		try {
			MemorySegment handle = MemorySegment.ofAddress(request);
			int rc = (int) Capi.RELEASE_XFER_REQ.invokeExact(this.agent, handle);
			int ignored = (int) Capi.DESTROY_XFER_REQ.invokeExact(handle);
			return rc;
		}
		catch (Throwable ex) {
			throw rethrow(ex, "release_xfer_req");
		}
	}

	@Override
	public TransferTelemetry telemetry(long request) {
		return this.requests.telemetry(request);
	}

	@Override
	public void sendNotification(String remoteAgent, byte[] message) {
		this.notifications.sendNotification(remoteAgent, message);
	}

	@Override
	public int drainNotifications(NotificationSink sink) {
		return this.notifications.drainNotifications(sink);
	}

	@Override
	public void close() {
		try {
			MemorySegment opt = this.spareOptArgs.getAndSet(null);
			if (opt != null) {
				destroyOptArgs(opt);
			}
			destroyOptArgs(this.silentOptArgs);
			this.notifications.destroyMap();
			this.backends.destroyAll();
		}
		catch (Throwable ex) {
			throw rethrow(ex, "destroy_agent");
		}
		finally {
			destroyAgent(this.agent);
			this.notifications.freeScratch();
		}
	}

	private void destroyAgent(MemorySegment handle) {
		try {
			int rc = (int) Capi.DESTROY_AGENT.invokeExact(handle);
			check(rc, "destroy_agent");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "destroy_agent");
		}
	}

	private void check(int rc, String operation) {
		NativeCalls.check(rc, operation, this.name, null, "");
	}

	private RuntimeException rethrow(Throwable ex, String operation) {
		return NativeCalls.failure(ex, operation, this.name, null);
	}

}
