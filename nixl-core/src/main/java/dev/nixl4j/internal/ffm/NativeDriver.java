package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Backend;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
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

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The native engine: one {@code nixlAgent} of NIXL's C API. Handles are the native
 * pointers. {@link dev.nixl4j.internal.engine.AgentCore} has checked every argument
 * before a call gets here.
 */
public final class NativeDriver implements EngineDriver, EtcdExchangeDriver {

	private static final int SUCCESS = 0;

	private static final int NOT_FOUND = -6;

	private static final MemorySegment NULL = MemorySegment.NULL;

	private final String name;

	private final NativeLibrary library;

	private final NativeLibraryInfo libraryInfo;

	private final MemorySegment agent;

	private final boolean etcdConfigured;

	private final List<MemorySegment> backendHandles = new CopyOnWriteArrayList<>();

	/** Scratch memory of the progress loop's notification drain (one thread). */
	private final Arena drainArena = Arena.ofShared();

	private final MemorySegment notifMap;

	private final MemorySegment drainCount;

	private final MemorySegment drainPointer;

	private final MemorySegment drainLength;

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

	/**
	 * Whether NIXL creates UCX's workers multi-threaded: with its progress thread or
	 * {@link ThreadSync#RW}. UCX's thread pool is a default only then
	 * ({@link UcxDefaults}).
	 */
	private final boolean multiThreadedWorkers;

	private NativeDriver(String name, NativeLibrary library, NativeLibraryInfo libraryInfo, MemorySegment agent,
			boolean etcdConfigured, boolean multiThreadedWorkers) {
		this.name = name;
		this.multiThreadedWorkers = multiThreadedWorkers;
		this.etcdConfigured = etcdConfigured;
		this.library = library;
		this.libraryInfo = libraryInfo;
		this.agent = agent;
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_NOTIF_MAP.invokeExact(out), "create_notif_map", null, "");
			this.notifMap = out.get(ADDRESS, 0);
		}
		catch (Throwable ex) {
			destroyAgent(agent);
			throw rethrow(ex, "create_notif_map");
		}
		MemorySegment silent = null;
		try {
			silent = createOptArgs();
			check((int) Capi.OPT_ARGS_SET_HAS_NOTIF.invokeExact(silent, false), "opt_args_set_has_notif", null, "");
		}
		catch (Throwable ex) {
			try {
				if (silent != null) {
					destroyOptArgs(silent);
				}
				int ignored = (int) Capi.DESTROY_NOTIF_MAP.invokeExact(this.notifMap);
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
		this.drainCount = this.drainArena.allocate(JAVA_LONG);
		this.drainPointer = this.drainArena.allocate(ADDRESS);
		this.drainLength = this.drainArena.allocate(JAVA_LONG);
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
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.GET_AVAILABLE_PLUGINS.invokeExact(this.agent, out), "get_available_plugins", null, "");
			MemorySegment list = out.get(ADDRESS, 0);
			try {
				MemorySegment size = arena.allocate(JAVA_LONG);
				check((int) Capi.STRING_LIST_SIZE.invokeExact(list, size), "get_available_plugins", null, "");
				List<String> plugins = new ArrayList<>();
				MemorySegment item = arena.allocate(ADDRESS);
				for (long i = 0; i < size.get(JAVA_LONG, 0); i++) {
					check((int) Capi.STRING_LIST_GET.invokeExact(list, i, item), "get_available_plugins", null, "");
					plugins.add(cString(item.get(ADDRESS, 0)));
				}
				plugins.sort(null);
				return plugins;
			}
			finally {
				int ignored = (int) Capi.DESTROY_STRING_LIST.invokeExact(list);
			}
		}
		catch (Throwable ex) {
			throw rethrow(ex, "get_available_plugins");
		}
	}

	@Override
	public PluginInfo pluginInfo(String plugin) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment mems = arena.allocate(ADDRESS);
			MemorySegment params = arena.allocate(ADDRESS);
			int rc = (int) Capi.GET_PLUGIN_PARAMS.invokeExact(this.agent, arena.allocateFrom(plugin), mems, params);
			if (rc != SUCCESS) {
				check(rc, NixlException.GET_PLUGIN_PARAMS, null,
						"plugin '" + plugin + "' is not available or could not be loaded ("
								+ PluginFiles.loadError(this.libraryInfo.pluginDirectory(), plugin) + "); available: "
								+ availablePlugins());
			}
			return new PluginInfo(plugin, consumeParams(params.get(ADDRESS, 0)), consumeMemList(mems.get(ADDRESS, 0)));
		}
		catch (Throwable ex) {
			throw rethrow(ex, NixlException.GET_PLUGIN_PARAMS);
		}
	}

	@Override
	public Backend createBackend(String plugin, Map<String, String> requested) {
		Map<String, String> parameters = UcxDefaults.apply(plugin, requested,
				Runtime.getRuntime().availableProcessors(), this.multiThreadedWorkers);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_PARAMS.invokeExact(out), NixlException.CREATE_BACKEND, null, "");
			MemorySegment params = out.get(ADDRESS, 0);
			int rc;
			try {
				for (Map.Entry<String, String> entry : parameters.entrySet()) {
					check((int) Capi.PARAMS_ADD.invokeExact(params, arena.allocateFrom(entry.getKey()),
							arena.allocateFrom(entry.getValue())), NixlException.CREATE_BACKEND, null,
							"parameter " + entry.getKey());
				}
				rc = (int) Capi.CREATE_BACKEND.invokeExact(this.agent, arena.allocateFrom(plugin), params, out);
			}
			finally {
				int ignored = (int) Capi.DESTROY_PARAMS.invokeExact(params);
			}
			check(rc, NixlException.CREATE_BACKEND, null, "NIXL could not create a '" + plugin
					+ "' backend with parameters " + parameters.keySet() + " (see NIXL's log above for the reason)");
			MemorySegment backend = out.get(ADDRESS, 0);
			this.backendHandles.add(backend);
			MemorySegment mems = arena.allocate(ADDRESS);
			MemorySegment effective = arena.allocate(ADDRESS);
			check((int) Capi.GET_BACKEND_PARAMS.invokeExact(this.agent, backend, mems, effective), "get_backend_params",
					null, plugin);
			return new Backend(plugin, consumeParams(effective.get(ADDRESS, 0)), consumeMemList(mems.get(ADDRESS, 0)));
		}
		catch (Throwable ex) {
			throw rethrow(ex, NixlException.CREATE_BACKEND);
		}
	}

	private Map<String, String> consumeParams(MemorySegment params) throws Throwable {
		Map<String, String> result = new LinkedHashMap<>();
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment empty = arena.allocate(JAVA_BOOLEAN);
			check((int) Capi.PARAMS_IS_EMPTY.invokeExact(params, empty), "params_is_empty", null, "");
			if (empty.get(JAVA_BOOLEAN, 0)) {
				return result;
			}
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.PARAMS_CREATE_ITERATOR.invokeExact(params, out), "params_create_iterator", null, "");
			MemorySegment iterator = out.get(ADDRESS, 0);
			try {
				MemorySegment key = arena.allocate(ADDRESS);
				MemorySegment value = arena.allocate(ADDRESS);
				MemorySegment hasNext = arena.allocate(JAVA_BOOLEAN);
				do {
					check((int) Capi.PARAMS_ITERATOR_NEXT.invokeExact(iterator, key, value, hasNext),
							"params_iterator_next", null, "");
					result.put(cString(key.get(ADDRESS, 0)), cString(value.get(ADDRESS, 0)));
				}
				while (hasNext.get(JAVA_BOOLEAN, 0));
			}
			finally {
				int ignored = (int) Capi.PARAMS_DESTROY_ITERATOR.invokeExact(iterator);
			}
		}
		finally {
			int ignored = (int) Capi.DESTROY_PARAMS.invokeExact(params);
		}
		return result;
	}

	private Set<MemoryType> consumeMemList(MemorySegment list) throws Throwable {
		Set<MemoryType> types = EnumSet.noneOf(MemoryType.class);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment size = arena.allocate(JAVA_LONG);
			check((int) Capi.MEM_LIST_SIZE.invokeExact(list, size), "mem_list_size", null, "");
			MemorySegment type = arena.allocate(JAVA_INT);
			for (long i = 0; i < size.get(JAVA_LONG, 0); i++) {
				check((int) Capi.MEM_LIST_GET.invokeExact(list, i, type), "mem_list_get", null, "");
				types.add(MemoryType.ofCode(type.get(JAVA_INT, 0)));
			}
		}
		finally {
			int ignored = (int) Capi.DESTROY_MEM_LIST.invokeExact(list);
		}
		return types;
	}

	@Override
	public long register(DescriptorList regions, List<MemorySegment> segments) {
		MemorySegment dlist = regDlist(regions);
		try {
			int rc = (int) Capi.REGISTER_MEM.invokeExact(this.agent, dlist, NULL);
			if (rc != SUCCESS) {
				int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
				check(rc, "register_mem", null,
						"NIXL refused to register " + regions.size() + " " + regions.memoryType() + " region(s) of "
								+ regions.totalBytes() + " bytes; no backend of this agent supports "
								+ regions.memoryType() + ", or the backend failed (see NIXL's log above)");
			}
			return dlist.address();
		}
		catch (Throwable ex) {
			throw rethrow(ex, "register_mem");
		}
	}

	@Override
	public void deregister(long registration) {
		MemorySegment dlist = MemorySegment.ofAddress(registration);
		try {
			int rc = (int) Capi.DEREGISTER_MEM.invokeExact(this.agent, dlist, NULL);
			int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
			check(rc, "deregister_mem", null, "NIXL could not deregister the memory");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "deregister_mem");
		}
	}

	private MemorySegment regDlist(DescriptorList regions) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_REG_DLIST.invokeExact(regions.memoryType().code(), out), "create_reg_dlist", null,
					"");
			MemorySegment dlist = out.get(ADDRESS, 0);
			for (MemoryDescriptor region : regions.descriptors()) {
				int rc = (int) Capi.REG_DLIST_ADD_DESC.invokeExact(dlist, region.address(), region.length(),
						region.deviceId(), NULL, 0L);
				if (rc != SUCCESS) {
					int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
					check(rc, "reg_dlist_add_desc", null, region.toString());
				}
			}
			return dlist;
		}
		catch (Throwable ex) {
			throw rethrow(ex, "create_reg_dlist");
		}
	}

	private MemorySegment xferDlist(DescriptorList descriptors) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_XFER_DLIST.invokeExact(descriptors.memoryType().code(), out), "create_xfer_dlist",
					null, "");
			MemorySegment dlist = out.get(ADDRESS, 0);
			for (MemoryDescriptor descriptor : descriptors.descriptors()) {
				int rc = (int) Capi.XFER_DLIST_ADD_DESC.invokeExact(dlist, descriptor.address(), descriptor.length(),
						descriptor.deviceId());
				if (rc != SUCCESS) {
					destroyXferDlist(dlist);
					check(rc, "xfer_dlist_add_desc", null, descriptor.toString());
				}
			}
			return dlist;
		}
		catch (Throwable ex) {
			throw rethrow(ex, "create_xfer_dlist");
		}
	}

	private void destroyXferDlist(MemorySegment dlist) {
		try {
			int ignored = (int) Capi.DESTROY_XFER_DLIST.invokeExact(dlist);
		}
		catch (Throwable ex) {
			throw rethrow(ex, "destroy_xfer_dlist");
		}
	}

	@Override
	public byte[] localMetadata() {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = arena.allocate(ADDRESS);
			MemorySegment length = arena.allocate(JAVA_LONG);
			check((int) Capi.GET_LOCAL_MD.invokeExact(this.agent, data, length), "get_local_md", null, "");
			return takeBuffer(data.get(ADDRESS, 0), length.get(JAVA_LONG, 0));
		}
		catch (Throwable ex) {
			throw rethrow(ex, "get_local_md");
		}
	}

	@Override
	public byte[] localPartialMetadata(DescriptorList regions) {
		MemorySegment dlist = regDlist(regions);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = arena.allocate(ADDRESS);
			MemorySegment length = arena.allocate(JAVA_LONG);
			check((int) Capi.GET_LOCAL_PARTIAL_MD.invokeExact(this.agent, dlist, data, length, NULL),
					"get_local_partial_md", null, "");
			return takeBuffer(data.get(ADDRESS, 0), length.get(JAVA_LONG, 0));
		}
		catch (Throwable ex) {
			throw rethrow(ex, "get_local_partial_md");
		}
		finally {
			try {
				int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
			}
			catch (Throwable ex) {
				throw rethrow(ex, "destroy_reg_dlist");
			}
		}
	}

	/** Copies a buffer NIXL allocated with malloc, then frees it. */
	private static byte[] takeBuffer(MemorySegment pointer, long length) throws Throwable {
		try {
			if (length < 0 || length > Integer.MAX_VALUE - 8) {
				throw new NixlException(NixlStatus.ERROR_INVALID_STATE, "get_local_md", null, null,
						"NIXL returned a buffer of impossible length " + length);
			}
			return pointer.reinterpret(length).toArray(ValueLayout.JAVA_BYTE);
		}
		finally {
			Capi.FREE.invokeExact(pointer);
		}
	}

	@Override
	public String loadRemoteMetadata(byte[] metadata) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = arena.allocateFrom(ValueLayout.JAVA_BYTE, metadata);
			MemorySegment name = arena.allocate(ADDRESS);
			int rc = (int) Capi.LOAD_REMOTE_MD.invokeExact(this.agent, data, (long) metadata.length, name);
			check(rc, "load_remote_md", null, "NIXL refused the metadata (" + metadata.length + " bytes); a peer "
					+ "already loaded under the same name with other connection details must be invalidated first");
			MemorySegment pointer = name.get(ADDRESS, 0);
			try {
				return cString(pointer);
			}
			finally {
				Capi.FREE.invokeExact(pointer);
			}
		}
		catch (Throwable ex) {
			throw rethrow(ex, "load_remote_md");
		}
	}

	@Override
	public boolean hasRemoteMetadata(String remoteAgent) {
		try (Arena arena = Arena.ofConfined()) {
			int rc = (int) Capi.CHECK_REMOTE_MD.invokeExact(this.agent, arena.allocateFrom(remoteAgent), NULL);
			if (rc == SUCCESS) {
				return true;
			}
			if (rc == NOT_FOUND) {
				return false;
			}
			check(rc, "check_remote_md", remoteAgent, "");
			return false;
		}
		catch (Throwable ex) {
			throw rethrow(ex, "check_remote_md", remoteAgent);
		}
	}

	@Override
	public void invalidateRemoteMetadata(String remoteAgent) {
		try (Arena arena = Arena.ofConfined()) {
			int rc = (int) Capi.INVALIDATE_REMOTE_MD.invokeExact(this.agent, arena.allocateFrom(remoteAgent));
			check(rc, "invalidate_remote_md", remoteAgent, "no metadata of this agent is loaded");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "invalidate_remote_md", remoteAgent);
		}
	}

	/**
	 * Returns this driver as NIXL's etcd exchange when the agent was created with
	 * {@code NIXL_ETCD_ENDPOINTS}: without it NIXL has no etcd client for the agent.
	 */
	@Override
	public @Nullable EtcdExchangeDriver etcdExchange() {
		return this.etcdConfigured ? this : null;
	}

	/**
	 * Publishes this agent's full metadata through NIXL's built-in exchange
	 * ({@code send_local_md}). NIXL stores it asynchronously, from its metadata worker.
	 * @throws NixlException when NIXL refused
	 */
	@Override
	public void sendLocalMetadata() {
		try {
			check((int) Capi.SEND_LOCAL_MD.invokeExact(this.agent, NULL), "send_local_md", null,
					"NIXL could not queue publishing the metadata to etcd (see NIXL's log above)");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "send_local_md");
		}
	}

	/**
	 * Asks NIXL's built-in exchange to fetch a peer's metadata and load it
	 * ({@code fetch_remote_md}). Asynchronous: {@link #hasRemoteMetadata} tells when it
	 * is loaded.
	 * @param remoteAgent the peer
	 */
	@Override
	public void fetchRemoteMetadata(String remoteAgent) {
		try (Arena arena = Arena.ofConfined()) {
			check((int) Capi.FETCH_REMOTE_MD.invokeExact(this.agent, arena.allocateFrom(remoteAgent), NULL),
					"fetch_remote_md", remoteAgent,
					"NIXL could not start fetching the metadata from etcd (see NIXL's " + "log above)");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "fetch_remote_md", remoteAgent);
		}
	}

	/**
	 * Withdraws this agent's metadata from NIXL's built-in exchange
	 * ({@code invalidate_local_md}): NIXL deletes the agent's keys asynchronously, and
	 * peers watching them forget the agent.
	 */
	@Override
	public void invalidateLocalMetadata() {
		try {
			check((int) Capi.INVALIDATE_LOCAL_MD.invokeExact(this.agent, NULL), "invalidate_local_md", null,
					"NIXL could not queue withdrawing the metadata from etcd (see NIXL's log above)");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "invalidate_local_md");
		}
	}

	@Override
	public long createRequest(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent) {
		MemorySegment localList = xferDlist(local);
		MemorySegment remoteList = null;
		try (Arena arena = Arena.ofConfined()) {
			remoteList = xferDlist(remote);
			MemorySegment out = arena.allocate(ADDRESS);
			int rc = (int) Capi.CREATE_XFER_REQ.invokeExact(this.agent, op.code(), localList, remoteList,
					arena.allocateFrom(remoteAgent), out, NULL);
			check(rc, "create_xfer_req", remoteAgent, "NIXL refused a " + op + " of " + local.size()
					+ " descriptor(s): the remote agent's metadata is not loaded, a remote descriptor is outside its "
					+ "registered memory, or no common backend serves these memory types");
			return out.get(ADDRESS, 0).address();
		}
		catch (Throwable ex) {
			throw rethrow(ex, "create_xfer_req", remoteAgent);
		}
		finally {
			destroyXferDlist(localList);
			if (remoteList != null) {
				destroyXferDlist(remoteList);
			}
		}
	}

	@Override
	public long prepare(@Nullable String remoteAgent, DescriptorList descriptors) {
		MemorySegment dlist = xferDlist(descriptors);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			int rc = (int) Capi.PREP_XFER_DLIST.invokeExact(this.agent,
					arena.allocateFrom((remoteAgent != null) ? remoteAgent : ""), dlist, out, NULL);
			check(rc, "prep_xfer_dlist", remoteAgent, "NIXL could not prepare " + descriptors.size()
					+ " descriptor(s); for a remote list its metadata must be loaded and cover every descriptor");
			return out.get(ADDRESS, 0).address();
		}
		catch (Throwable ex) {
			throw rethrow(ex, "prep_xfer_dlist", remoteAgent);
		}
		finally {
			destroyXferDlist(dlist);
		}
	}

	@Override
	public void releasePrepared(long prepared) {
		try {
			int rc = (int) Capi.RELEASE_XFER_DLIST_HANDLE.invokeExact(this.agent, MemorySegment.ofAddress(prepared));
			check(rc, "release_xfer_dlist_handle", null, "");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "release_xfer_dlist_handle");
		}
	}

	@Override
	public long makeRequest(XferOp op, long local, int[] localIndices, long remote, int[] remoteIndices) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment localIdx = arena.allocateFrom(JAVA_INT, localIndices);
			MemorySegment remoteIdx = arena.allocateFrom(JAVA_INT, remoteIndices);
			MemorySegment out = arena.allocate(ADDRESS);
			int rc = (int) Capi.MAKE_XFER_REQ.invokeExact(this.agent, op.code(), MemorySegment.ofAddress(local),
					localIdx, (long) localIndices.length, MemorySegment.ofAddress(remote), remoteIdx,
					(long) remoteIndices.length, out, NULL);
			check(rc, "make_xfer_req", null,
					"NIXL refused a " + op + " of " + localIndices.length + " prepared descriptor(s)");
			return out.get(ADDRESS, 0).address();
		}
		catch (Throwable ex) {
			throw rethrow(ex, "make_xfer_req");
		}
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
						"opt_args_set_notif_msg", null, "");
			}
			check((int) Capi.OPT_ARGS_SET_HAS_NOTIF.invokeExact(opt, true), "opt_args_set_has_notif", null, "");
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
			check((int) Capi.CREATE_OPT_ARGS.invokeExact(out), "create_opt_args", null, "");
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
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment t = arena.allocate(Capi.TELEMETRY);
			int rc = (int) Capi.GET_XFER_TELEMETRY.invokeExact(this.agent, MemorySegment.ofAddress(request), t);
			check(rc, "get_xfer_telemetry", null,
					"no telemetry for this transfer (telemetry must be on in AgentConfig, "
							+ "and the transfer must have been posted)");
			return new TransferTelemetry(t.get(JAVA_LONG, 0), Duration.ofNanos(t.get(JAVA_LONG, 8) * 1000),
					Duration.ofNanos(t.get(JAVA_LONG, 16) * 1000), t.get(JAVA_LONG, 24), t.get(JAVA_LONG, 32));
		}
		catch (Throwable ex) {
			throw rethrow(ex, "get_xfer_telemetry");
		}
	}

	@Override
	public void sendNotification(String remoteAgent, byte[] message) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = (message.length > 0) ? arena.allocateFrom(ValueLayout.JAVA_BYTE, message)
					: arena.allocate(1);
			int rc = (int) Capi.GEN_NOTIF.invokeExact(this.agent, arena.allocateFrom(remoteAgent), data,
					(long) message.length, NULL);
			check(rc, "gen_notif", remoteAgent,
					"NIXL could not send the notification (is the agent's metadata loaded?)");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "gen_notif", remoteAgent);
		}
	}

	@Override
	public int drainNotifications(NotificationSink sink) {
		try {
			check((int) Capi.GET_NOTIFS.invokeExact(this.agent, this.notifMap, NULL), "get_notifs", null, "");
			check((int) Capi.NOTIF_MAP_SIZE.invokeExact(this.notifMap, this.drainCount), "notif_map_size", null, "");
			long agents = this.drainCount.get(JAVA_LONG, 0);
			if (agents == 0) {
				return 0;
			}
			int delivered = 0;
			try {
				for (long i = 0; i < agents; i++) {
					check((int) Capi.NOTIF_MAP_GET_AGENT_AT.invokeExact(this.notifMap, i, this.drainPointer),
							"notif_map_get_agent_at", null, "");
					MemorySegment agentName = this.drainPointer.get(ADDRESS, 0);
					String remote = cString(agentName);
					check((int) Capi.NOTIF_MAP_GET_NOTIFS_SIZE.invokeExact(this.notifMap, agentName, this.drainCount),
							"notif_map_get_notifs_size", remote, "");
					long count = this.drainCount.get(JAVA_LONG, 0);
					for (long j = 0; j < count; j++) {
						check((int) Capi.NOTIF_MAP_GET_NOTIF.invokeExact(this.notifMap, agentName, j, this.drainPointer,
								this.drainLength), "notif_map_get_notif", remote, "");
						long length = this.drainLength.get(JAVA_LONG, 0);
						byte[] message = (length == 0) ? new byte[0]
								: this.drainPointer.get(ADDRESS, 0).reinterpret(length).toArray(ValueLayout.JAVA_BYTE);
						sink.accept(remote, message);
						delivered++;
					}
				}
			}
			finally {
				int ignored = (int) Capi.NOTIF_MAP_CLEAR.invokeExact(this.notifMap);
			}
			return delivered;
		}
		catch (Throwable ex) {
			throw rethrow(ex, "get_notifs");
		}
	}

	@Override
	public void close() {
		try {
			MemorySegment opt = this.spareOptArgs.getAndSet(null);
			if (opt != null) {
				destroyOptArgs(opt);
			}
			destroyOptArgs(this.silentOptArgs);
			int ignored = (int) Capi.DESTROY_NOTIF_MAP.invokeExact(this.notifMap);
			for (MemorySegment backend : this.backendHandles) {
				ignored = (int) Capi.DESTROY_BACKEND.invokeExact(backend);
			}
			this.backendHandles.clear();
		}
		catch (Throwable ex) {
			throw rethrow(ex, "destroy_agent");
		}
		finally {
			destroyAgent(this.agent);
			this.drainArena.close();
		}
	}

	private void destroyAgent(MemorySegment handle) {
		try {
			int rc = (int) Capi.DESTROY_AGENT.invokeExact(handle);
			check(rc, "destroy_agent", null, "");
		}
		catch (Throwable ex) {
			throw rethrow(ex, "destroy_agent");
		}
	}

	private void check(int rc, String operation, @Nullable String remoteAgent, String detail) {
		NativeCalls.check(rc, operation, this.name, remoteAgent, detail);
	}

	private RuntimeException rethrow(Throwable ex, String operation) {
		return NativeCalls.failure(ex, operation, this.name, null);
	}

	private RuntimeException rethrow(Throwable ex, String operation, @Nullable String remoteAgent) {
		return NativeCalls.failure(ex, operation, this.name, remoteAgent);
	}

	private static String cString(MemorySegment pointer) {
		return NativeCalls.cString(pointer);
	}

}
