package dev.nixl4j.internal.ffm;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Downcall handles for the functions of NIXL's C API that nixl4j uses, checked against
 * {@code libnixl_capi.so} of NIXL 1.5.1 (its exported symbols and, where versions of the
 * header disagree, its machine code). Every function returns a {@code nixl_capi_status_t}
 * ({@code int}).
 *
 * <p>
 * Initialised on first use, which {@link NativeDriver} makes only after
 * {@link NativeLibrary#load} succeeded. A symbol missing from the loaded library breaks
 * only the functions that need it: each call of its handle throws a new
 * {@link MissingSymbolException}, which {@link NativeCalls#failure} turns into the
 * {@link dev.nixl4j.NixlStatus#NOT_SUPPORTED} exception of that call.
 */
final class Capi {

	private static final Linker LINKER = Linker.nativeLinker();

	private static final NativeLibrary LIBRARY = Objects.requireNonNull(NativeLibrary.loadedLibrary(),
			"NativeLibrary.load must succeed first");

	private static final SymbolLookup LOOKUP = LIBRARY.lookup();

	/**
	 * {@code nixl_capi_agent_config_t}: bool enable_prog_thread, bool
	 * enable_listen_thread, int listen_port, int thread_sync, unsigned num_workers,
	 * uint64 pthr_delay_us, uint64 lthr_delay_us, bool capture_telemetry (natural
	 * alignment, 40 bytes).
	 */
	static final StructLayout AGENT_CONFIG = MemoryLayout.structLayout(JAVA_BOOLEAN.withName("enable_prog_thread"),
			JAVA_BOOLEAN.withName("enable_listen_thread"), MemoryLayout.paddingLayout(2),
			JAVA_INT.withName("listen_port"), JAVA_INT.withName("thread_sync"), JAVA_INT.withName("num_workers"),
			JAVA_LONG.withName("pthr_delay_us"), JAVA_LONG.withName("lthr_delay_us"),
			JAVA_BOOLEAN.withName("capture_telemetry"), MemoryLayout.paddingLayout(7));

	/** {@code struct nixl_capi_xfer_telemetry_s}: five uint64 fields. */
	static final StructLayout TELEMETRY = MemoryLayout.structLayout(JAVA_LONG.withName("start_time_us"),
			JAVA_LONG.withName("post_duration_us"), JAVA_LONG.withName("xfer_duration_us"),
			JAVA_LONG.withName("total_bytes"), JAVA_LONG.withName("desc_count"));

	// agent
	static final MethodHandle CREATE_CONFIGURED_AGENT = fn("nixl_capi_create_configured_agent", ADDRESS, ADDRESS,
			ADDRESS);
	static final MethodHandle DESTROY_AGENT = fn("nixl_capi_destroy_agent", ADDRESS);

	// plugins, backends, parameters
	static final MethodHandle GET_AVAILABLE_PLUGINS = fn("nixl_capi_get_available_plugins", ADDRESS, ADDRESS);
	static final MethodHandle STRING_LIST_SIZE = fn("nixl_capi_string_list_size", ADDRESS, ADDRESS);
	static final MethodHandle STRING_LIST_GET = fn("nixl_capi_string_list_get", ADDRESS, JAVA_LONG, ADDRESS);
	static final MethodHandle DESTROY_STRING_LIST = fn("nixl_capi_destroy_string_list", ADDRESS);
	static final MethodHandle GET_PLUGIN_PARAMS = fn("nixl_capi_get_plugin_params", ADDRESS, ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle GET_BACKEND_PARAMS = fn("nixl_capi_get_backend_params", ADDRESS, ADDRESS, ADDRESS,
			ADDRESS);
	static final MethodHandle MEM_LIST_SIZE = fn("nixl_capi_mem_list_size", ADDRESS, ADDRESS);
	static final MethodHandle MEM_LIST_GET = fn("nixl_capi_mem_list_get", ADDRESS, JAVA_LONG, ADDRESS);
	static final MethodHandle DESTROY_MEM_LIST = fn("nixl_capi_destroy_mem_list", ADDRESS);
	static final MethodHandle CREATE_PARAMS = fn("nixl_capi_create_params", ADDRESS);
	static final MethodHandle PARAMS_ADD = fn("nixl_capi_params_add", ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle PARAMS_IS_EMPTY = fn("nixl_capi_params_is_empty", ADDRESS, ADDRESS);
	static final MethodHandle PARAMS_CREATE_ITERATOR = fn("nixl_capi_params_create_iterator", ADDRESS, ADDRESS);
	static final MethodHandle PARAMS_ITERATOR_NEXT = fn("nixl_capi_params_iterator_next", ADDRESS, ADDRESS, ADDRESS,
			ADDRESS);
	static final MethodHandle PARAMS_DESTROY_ITERATOR = fn("nixl_capi_params_destroy_iterator", ADDRESS);
	static final MethodHandle DESTROY_PARAMS = fn("nixl_capi_destroy_params", ADDRESS);
	static final MethodHandle CREATE_BACKEND = fn("nixl_capi_create_backend", ADDRESS, ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle DESTROY_BACKEND = fn("nixl_capi_destroy_backend", ADDRESS);

	// optional arguments
	static final MethodHandle CREATE_OPT_ARGS = fn("nixl_capi_create_opt_args", ADDRESS);
	static final MethodHandle DESTROY_OPT_ARGS = fn("nixl_capi_destroy_opt_args", ADDRESS);
	static final MethodHandle OPT_ARGS_ADD_BACKEND = fn("nixl_capi_opt_args_add_backend", ADDRESS, ADDRESS);
	static final MethodHandle OPT_ARGS_SET_NOTIF_MSG = fn("nixl_capi_opt_args_set_notif_msg", ADDRESS, ADDRESS,
			JAVA_LONG);
	static final MethodHandle OPT_ARGS_SET_HAS_NOTIF = fn("nixl_capi_opt_args_set_has_notif", ADDRESS, JAVA_BOOLEAN);

	// descriptor lists
	static final MethodHandle CREATE_XFER_DLIST = fn("nixl_capi_create_xfer_dlist", JAVA_INT, ADDRESS);
	static final MethodHandle XFER_DLIST_ADD_DESC = fn("nixl_capi_xfer_dlist_add_desc", ADDRESS, JAVA_LONG, JAVA_LONG,
			JAVA_LONG);
	static final MethodHandle DESTROY_XFER_DLIST = fn("nixl_capi_destroy_xfer_dlist", ADDRESS);
	static final MethodHandle CREATE_REG_DLIST = fn("nixl_capi_create_reg_dlist", JAVA_INT, ADDRESS);
	static final MethodHandle REG_DLIST_ADD_DESC = fn("nixl_capi_reg_dlist_add_desc", ADDRESS, JAVA_LONG, JAVA_LONG,
			JAVA_LONG, ADDRESS, JAVA_LONG);
	static final MethodHandle DESTROY_REG_DLIST = fn("nixl_capi_destroy_reg_dlist", ADDRESS);

	// memory
	static final MethodHandle REGISTER_MEM = fn("nixl_capi_register_mem", ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle DEREGISTER_MEM = fn("nixl_capi_deregister_mem", ADDRESS, ADDRESS, ADDRESS);

	// metadata
	static final MethodHandle GET_LOCAL_MD = fn("nixl_capi_get_local_md", ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle GET_LOCAL_PARTIAL_MD = fn("nixl_capi_get_local_partial_md", ADDRESS, ADDRESS, ADDRESS,
			ADDRESS, ADDRESS);
	static final MethodHandle LOAD_REMOTE_MD = fn("nixl_capi_load_remote_md", ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
	static final MethodHandle INVALIDATE_REMOTE_MD = fn("nixl_capi_invalidate_remote_md", ADDRESS, ADDRESS);
	static final MethodHandle CHECK_REMOTE_MD = fn("nixl_capi_check_remote_md", ADDRESS, ADDRESS, ADDRESS);

	// NIXL's built-in metadata exchange (etcd): send_local_md(agent, opt),
	// fetch_remote_md(agent, const char* remote, opt), invalidate_local_md(agent, opt);
	// opt may be NULL
	static final MethodHandle SEND_LOCAL_MD = fn("nixl_capi_send_local_md", ADDRESS, ADDRESS);
	static final MethodHandle FETCH_REMOTE_MD = fn("nixl_capi_fetch_remote_md", ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle INVALIDATE_LOCAL_MD = fn("nixl_capi_invalidate_local_md", ADDRESS, ADDRESS);

	// transfers
	static final MethodHandle CREATE_XFER_REQ = fn("nixl_capi_create_xfer_req", ADDRESS, JAVA_INT, ADDRESS, ADDRESS,
			ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle PREP_XFER_DLIST = fn("nixl_capi_prep_xfer_dlist", ADDRESS, ADDRESS, ADDRESS, ADDRESS,
			ADDRESS);
	static final MethodHandle RELEASE_XFER_DLIST_HANDLE = fn("nixl_capi_release_xfer_dlist_handle", ADDRESS, ADDRESS);
	static final MethodHandle MAKE_XFER_REQ = fn("nixl_capi_make_xfer_req", ADDRESS, JAVA_INT, ADDRESS, ADDRESS,
			JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS);
	static final MethodHandle POST_XFER_REQ = fn("nixl_capi_post_xfer_req", ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle GET_XFER_STATUS = fn("nixl_capi_get_xfer_status", ADDRESS, ADDRESS);
	static final MethodHandle RELEASE_XFER_REQ = fn("nixl_capi_release_xfer_req", ADDRESS, ADDRESS);
	static final MethodHandle DESTROY_XFER_REQ = fn("nixl_capi_destroy_xfer_req", ADDRESS);
	static final MethodHandle GET_XFER_TELEMETRY = fn("nixl_capi_get_xfer_telemetry", ADDRESS, ADDRESS, ADDRESS);

	// notifications
	static final MethodHandle CREATE_NOTIF_MAP = fn("nixl_capi_create_notif_map", ADDRESS);
	static final MethodHandle DESTROY_NOTIF_MAP = fn("nixl_capi_destroy_notif_map", ADDRESS);
	static final MethodHandle GET_NOTIFS = fn("nixl_capi_get_notifs", ADDRESS, ADDRESS, ADDRESS);
	static final MethodHandle NOTIF_MAP_SIZE = fn("nixl_capi_notif_map_size", ADDRESS, ADDRESS);
	static final MethodHandle NOTIF_MAP_GET_AGENT_AT = fn("nixl_capi_notif_map_get_agent_at", ADDRESS, JAVA_LONG,
			ADDRESS);
	static final MethodHandle NOTIF_MAP_GET_NOTIFS_SIZE = fn("nixl_capi_notif_map_get_notifs_size", ADDRESS, ADDRESS,
			ADDRESS);
	static final MethodHandle NOTIF_MAP_GET_NOTIF = fn("nixl_capi_notif_map_get_notif", ADDRESS, ADDRESS, JAVA_LONG,
			ADDRESS, ADDRESS);
	static final MethodHandle NOTIF_MAP_CLEAR = fn("nixl_capi_notif_map_clear", ADDRESS);
	static final MethodHandle GEN_NOTIF = fn("nixl_capi_gen_notif", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);

	/** libc {@code free}, for buffers NIXL 1.5 allocates with {@code malloc}. */
	static final MethodHandle FREE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("free"),
			FunctionDescriptor.ofVoid(ADDRESS));

	private Capi() {
	}

	private static MethodHandle fn(String name, MemoryLayout... arguments) {
		return Downcalls.bind(LOOKUP, LIBRARY.path().toString(), name, FunctionDescriptor.of(JAVA_INT, arguments));
	}

}
