package dev.nixl4j.internal.ffm;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The parameters nixl4j gives NIXL's UCX backend where the caller did not set them: UCX's
 * thread pool, so that one large transfer is copied by several threads.
 * <p>
 * With {@code num_threads} above 0 the UCX plugin starts that many threads, each with its
 * own UCX worker, and splits a transfer of at least {@code split_batch_size} descriptors
 * into chunks posted and progressed in parallel (a smaller transfer runs as without the
 * pool, on the caller's worker). nixl4j asks for one thread per available processor, at
 * most {@value #MAX_THREADS}, and none on a single processor, and for a split size of
 * {@value #SPLIT_BATCH_SIZE} descriptors, so that a pull of contiguous KV blocks (merged
 * into one descriptor per layer and K or V, 64 for the default layout) is split too. A
 * parameter the caller set is passed as it is; with {@code num_threads=0}, which turns
 * the pool off, nothing is added.
 * <p>
 * Nothing is added either when NIXL creates UCX's workers for one thread at a time
 * ({@code UCS_THREAD_MODE_SERIALIZED}: without NIXL's progress thread, unless the agent's
 * thread sync is {@code RW}): the pool's threads progress their workers while the
 * caller's thread creates endpoints and unpacks remote keys on the same workers when it
 * loads a peer's metadata, which only multi-threaded workers allow.
 */
final class UcxDefaults {

	/** The plugin these defaults apply to. */
	static final String PLUGIN = "UCX";

	/** The UCX plugin's parameter for the size of its thread pool. */
	static final String NUM_THREADS = "num_threads";

	/**
	 * The UCX plugin's parameter for the smallest transfer, in descriptors, it splits.
	 */
	static final String SPLIT_BATCH_SIZE_PARAMETER = "split_batch_size";

	/** The largest thread pool asked for by default. */
	static final int MAX_THREADS = 4;

	/** The split size asked for by default. */
	static final int SPLIT_BATCH_SIZE = 32;

	private UcxDefaults() {
	}

	/**
	 * Returns the parameters to create a backend with: the caller's, plus the pool's
	 * defaults where the plugin is UCX and the caller did not set them.
	 * @param plugin the plugin name
	 * @param parameters the caller's parameters
	 * @param processors the processors available to the process
	 * @param multiThreadedWorkers whether NIXL creates UCX's workers multi-threaded (its
	 * progress thread is on, or the thread sync is {@code RW})
	 * @return the parameters, in the caller's order followed by the defaults added
	 */
	static Map<String, String> apply(String plugin, Map<String, String> parameters, int processors,
			boolean multiThreadedWorkers) {
		if (!PLUGIN.equals(plugin) || !multiThreadedWorkers) {
			return parameters;
		}
		Map<String, String> result = new LinkedHashMap<>(parameters);
		String set = parameters.get(NUM_THREADS);
		if (set == null) {
			int threads = Math.min(processors, MAX_THREADS);
			if (threads < 2) {
				return parameters;
			}
			result.put(NUM_THREADS, Integer.toString(threads));
		}
		else if (set.strip().equals("0")) {
			return parameters;
		}
		result.putIfAbsent(SPLIT_BATCH_SIZE_PARAMETER, Integer.toString(SPLIT_BATCH_SIZE));
		return result;
	}

}
