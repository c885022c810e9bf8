package dev.nixl4j.kv;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

import org.jspecify.annotations.Nullable;

/**
 * Checks, before a paged KV cache is allocated in host memory
 * ({@link PagedKvCache#allocate}), that the cache fits in the memory this process can
 * have beside the largest heap the JVM may grow: an allocation that does not fit would
 * end in an {@link OutOfMemoryError}, or in the kernel's OOM killer, after gigabytes of
 * touched pages.
 *
 * <p>
 * The memory is the smallest of the cgroup limits of the process ({@code memory.max} of
 * cgroup v2 from the process's own group up to the root, or {@code memory.limit_in_bytes}
 * of cgroup v1) and the machine's physical memory.
 */
final class KvCacheMemory {

	private static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup");

	/** cgroup v1 reports "no limit" as a page-rounded {@code Long.MAX_VALUE}. */
	private static final long UNLIMITED_V1 = 1L << 60;

	private KvCacheMemory() {
	}

	/**
	 * Fails when the cache cannot fit.
	 * @param agentName the agent the cache is for
	 * @param layout the layout to allocate
	 * @throws KvCacheTooLargeException with the cache's size and the limit
	 */
	static void check(String agentName, KvCacheLayout layout) {
		Limit limit = limit();
		check(agentName, layout, limit.bytes(), Runtime.getRuntime().maxMemory(), limit.source());
	}

	/**
	 * Fails when the cache cannot fit in the memory given.
	 * @param agentName the agent the cache is for
	 * @param layout the layout
	 * @param limitBytes the memory this process can have
	 * @param heapBytes the largest heap the JVM may grow
	 * @param limitSource where the limit comes from
	 * @throws KvCacheTooLargeException with the cache's size and the limit
	 */
	static void check(String agentName, KvCacheLayout layout, long limitBytes, long heapBytes, String limitSource) {
		String problem = problem(layout, limitBytes, heapBytes, limitSource);
		if (problem != null) {
			throw new KvCacheTooLargeException(agentName, problem, layout.totalBytes(),
					Math.max(limitBytes - heapBytes, 0));
		}
	}

	/**
	 * Says why a cache does not fit, or {@code null} when it does.
	 * @param layout the layout
	 * @param limitBytes the memory this process can have
	 * @param heapBytes the largest heap the JVM may grow
	 * @param limitSource where the limit comes from
	 * @return the problem, or {@code null}
	 */
	static @Nullable String problem(KvCacheLayout layout, long limitBytes, long heapBytes, String limitSource) {
		long available = limitBytes - heapBytes;
		long total = layout.totalBytes();
		if (total <= available) {
			return null;
		}
		long perBlock = total / layout.numBlocks();
		long fitting = Math.max(available, 0) / perBlock;
		return "the KV cache takes " + total + " bytes (" + mib(total) + " MiB: " + layout.numLayers() + " layers x "
				+ layout.regionsPerLayer() + " regions x " + layout.numBlocks() + " blocks x " + layout.blockLength()
				+ " bytes), but this process can have " + limitBytes + " bytes (" + mib(limitBytes) + " MiB, "
				+ limitSource + ") of which the heap may take " + heapBytes + " bytes (" + mib(heapBytes)
				+ " MiB, -Xmx); at most " + fitting + " blocks of this shape fit. Use fewer "
				+ "blocks (or a smaller layout) or a smaller heap, or raise the memory limit";
	}

	private static long mib(long bytes) {
		return bytes >> 20;
	}

	static Limit limit() {
		long physical = physicalMemory();
		OptionalLong cgroup = cgroupLimit();
		if (cgroup.isPresent() && cgroup.getAsLong() < physical) {
			return new Limit(cgroup.getAsLong(), "the cgroup memory limit");
		}
		return new Limit(physical, "the physical memory");
	}

	private static long physicalMemory() {
		OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
		if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
			return sun.getTotalMemorySize();
		}
		return Long.MAX_VALUE;
	}

	private static OptionalLong cgroupLimit() {
		try {
			List<String> groups = Files.readAllLines(Path.of("/proc/self/cgroup"));
			long smallest = Long.MAX_VALUE;
			for (String line : groups) {
				String[] parts = line.split(":", 3);
				if (parts.length != 3) {
					continue;
				}
				if (parts[0].equals("0") && parts[1].isEmpty()) {
					smallest = Math.min(smallest, v2Limit(parts[2]));
				}
				else if (List.of(parts[1].split(",")).contains("memory")) {
					String group = parts[2].startsWith("/") ? parts[2].substring(1) : parts[2];
					for (Path file : List.of(
							CGROUP_ROOT.resolve("memory").resolve(group).resolve("memory.limit_in_bytes"),
							CGROUP_ROOT.resolve("memory/memory.limit_in_bytes"))) {
						long v1 = read(file);
						if (v1 < UNLIMITED_V1) {
							smallest = Math.min(smallest, v1);
						}
					}
				}
			}
			return (smallest < Long.MAX_VALUE) ? OptionalLong.of(smallest) : OptionalLong.empty();
		}
		catch (IOException | RuntimeException ex) {
			return OptionalLong.empty();
		}
	}

	/** The smallest {@code memory.max} from a cgroup v2 group up to the root. */
	private static long v2Limit(String group) {
		long smallest = Long.MAX_VALUE;
		@Nullable Path dir = CGROUP_ROOT.resolve(group.startsWith("/") ? group.substring(1) : group).normalize();
		while (dir != null && dir.startsWith(CGROUP_ROOT)) {
			smallest = Math.min(smallest, read(dir.resolve("memory.max")));
			dir = dir.equals(CGROUP_ROOT) ? null : dir.getParent();
		}
		return smallest;
	}

	/**
	 * A limit file's value; {@link Long#MAX_VALUE} for "max", a missing or unreadable
	 * file.
	 */
	private static long read(Path file) {
		try {
			String value = Files.readString(file).trim();
			return value.equals("max") ? Long.MAX_VALUE : Long.parseLong(value);
		}
		catch (IOException | NumberFormatException ex) {
			return Long.MAX_VALUE;
		}
	}

	record Limit(long bytes, String source) {
	}

}
