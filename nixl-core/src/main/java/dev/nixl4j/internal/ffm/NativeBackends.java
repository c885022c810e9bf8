package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.nixl4j.Backend;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.PluginInfo;

import static dev.nixl4j.internal.ffm.NativeCalls.SUCCESS;
import static dev.nixl4j.internal.ffm.NativeCalls.cString;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The plugins and backends of one native agent: which plugins NIXL finds, their
 * parameters, and the backends created from them, which the agent destroys when it
 * closes.
 */
final class NativeBackends {

	private final String name;

	private final MemorySegment agent;

	private final Path pluginDirectory;

	/**
	 * Whether NIXL creates UCX's workers multi-threaded: with its progress thread or
	 * {@link dev.nixl4j.ThreadSync#RW}. UCX's thread pool is a default only then
	 * ({@link UcxDefaults}).
	 */
	private final boolean multiThreadedWorkers;

	private final List<MemorySegment> backendHandles = new CopyOnWriteArrayList<>();

	NativeBackends(String name, MemorySegment agent, Path pluginDirectory, boolean multiThreadedWorkers) {
		this.name = name;
		this.agent = agent;
		this.pluginDirectory = pluginDirectory;
		this.multiThreadedWorkers = multiThreadedWorkers;
	}

	List<String> availablePlugins() {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.GET_AVAILABLE_PLUGINS.invokeExact(this.agent, out), "get_available_plugins", "");
			MemorySegment list = out.get(ADDRESS, 0);
			try {
				MemorySegment size = arena.allocate(JAVA_LONG);
				check((int) Capi.STRING_LIST_SIZE.invokeExact(list, size), "get_available_plugins", "");
				List<String> plugins = new ArrayList<>();
				MemorySegment item = arena.allocate(ADDRESS);
				for (long i = 0; i < size.get(JAVA_LONG, 0); i++) {
					check((int) Capi.STRING_LIST_GET.invokeExact(list, i, item), "get_available_plugins", "");
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
			throw NativeCalls.failure(ex, "get_available_plugins", this.name, null);
		}
	}

	PluginInfo pluginInfo(String plugin) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment mems = arena.allocate(ADDRESS);
			MemorySegment params = arena.allocate(ADDRESS);
			int rc = (int) Capi.GET_PLUGIN_PARAMS.invokeExact(this.agent, arena.allocateFrom(plugin), mems, params);
			if (rc != SUCCESS) {
				check(rc, NixlException.GET_PLUGIN_PARAMS,
						"plugin '" + plugin + "' is not available or could not be loaded ("
								+ PluginFiles.loadError(this.pluginDirectory, plugin) + "); available: "
								+ availablePlugins());
			}
			return new PluginInfo(plugin, consumeParams(params.get(ADDRESS, 0)), consumeMemList(mems.get(ADDRESS, 0)));
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, NixlException.GET_PLUGIN_PARAMS, this.name, null);
		}
	}

	Backend createBackend(String plugin, Map<String, String> requested) {
		Map<String, String> parameters = UcxDefaults.apply(plugin, requested,
				Runtime.getRuntime().availableProcessors(), this.multiThreadedWorkers);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_PARAMS.invokeExact(out), NixlException.CREATE_BACKEND, "");
			MemorySegment params = out.get(ADDRESS, 0);
			int rc;
			try {
				for (Map.Entry<String, String> entry : parameters.entrySet()) {
					check((int) Capi.PARAMS_ADD.invokeExact(params, arena.allocateFrom(entry.getKey()),
							arena.allocateFrom(entry.getValue())), NixlException.CREATE_BACKEND,
							"parameter " + entry.getKey());
				}
				rc = (int) Capi.CREATE_BACKEND.invokeExact(this.agent, arena.allocateFrom(plugin), params, out);
			}
			finally {
				int ignored = (int) Capi.DESTROY_PARAMS.invokeExact(params);
			}
			check(rc, NixlException.CREATE_BACKEND, "NIXL could not create a '" + plugin + "' backend with parameters "
					+ parameters.keySet() + " (see NIXL's log above for the reason)");
			MemorySegment backend = out.get(ADDRESS, 0);
			this.backendHandles.add(backend);
			MemorySegment mems = arena.allocate(ADDRESS);
			MemorySegment effective = arena.allocate(ADDRESS);
			check((int) Capi.GET_BACKEND_PARAMS.invokeExact(this.agent, backend, mems, effective), "get_backend_params",
					plugin);
			return new Backend(plugin, consumeParams(effective.get(ADDRESS, 0)), consumeMemList(mems.get(ADDRESS, 0)));
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, NixlException.CREATE_BACKEND, this.name, null);
		}
	}

	/**
	 * Destroys the backends created so far; the agent is destroyed after them.
	 * @throws Throwable what a downcall threw
	 */
	void destroyAll() throws Throwable {
		for (MemorySegment backend : this.backendHandles) {
			int ignored = (int) Capi.DESTROY_BACKEND.invokeExact(backend);
		}
		this.backendHandles.clear();
	}

	private Map<String, String> consumeParams(MemorySegment params) throws Throwable {
		Map<String, String> result = new LinkedHashMap<>();
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment empty = arena.allocate(JAVA_BOOLEAN);
			check((int) Capi.PARAMS_IS_EMPTY.invokeExact(params, empty), "params_is_empty", "");
			if (empty.get(JAVA_BOOLEAN, 0)) {
				return result;
			}
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.PARAMS_CREATE_ITERATOR.invokeExact(params, out), "params_create_iterator", "");
			MemorySegment iterator = out.get(ADDRESS, 0);
			try {
				MemorySegment key = arena.allocate(ADDRESS);
				MemorySegment value = arena.allocate(ADDRESS);
				MemorySegment hasNext = arena.allocate(JAVA_BOOLEAN);
				do {
					check((int) Capi.PARAMS_ITERATOR_NEXT.invokeExact(iterator, key, value, hasNext),
							"params_iterator_next", "");
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
			check((int) Capi.MEM_LIST_SIZE.invokeExact(list, size), "mem_list_size", "");
			MemorySegment type = arena.allocate(JAVA_INT);
			for (long i = 0; i < size.get(JAVA_LONG, 0); i++) {
				check((int) Capi.MEM_LIST_GET.invokeExact(list, i, type), "mem_list_get", "");
				types.add(MemoryType.ofCode(type.get(JAVA_INT, 0)));
			}
		}
		finally {
			int ignored = (int) Capi.DESTROY_MEM_LIST.invokeExact(list);
		}
		return types;
	}

	private void check(int rc, String operation, String detail) {
		NativeCalls.check(rc, operation, this.name, null, detail);
	}

}
