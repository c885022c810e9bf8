package dev.nixl4j.cli;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import dev.nixl4j.readiness.Patterns;

/**
 * {@code nixl4j memcpy}: the bandwidth of one thread copying native memory with
 * {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long, long)}, the yardstick for
 * transfers on one host: a transfer through shared memory or a kernel copy cannot beat one copy.
 */
final class MemcpyCommand implements Command {

	private static final String MIN = "--min";

	private static final String MAX = "--max";

	private static final String BYTES = "--bytes";

	private static final String JSON = "--json";

	@Override
	public String name() {
		return "memcpy";
	}

	@Override
	public String summary() {
		return "single-thread MemorySegment.copy bandwidth, the reference for bench";
	}

	@Override
	public String help() {
		return """
				Usage: nixl4j memcpy [--min SIZE] [--max SIZE] [--bytes TOTAL] [--json]

				Copies between two page-aligned native segments on one thread, for sizes doubling
				from --min (default 4k) to --max (default 64m), and prints the bandwidth of each
				(GB = 10^9 bytes). Each size copies about --bytes in total (default 8g) after a
				warm-up of a tenth of that. --json prints one JSON document instead of the table.
				""";
	}

	@Override
	public Set<String> valuedOptions() {
		return Set.of(MIN, MAX, BYTES);
	}

	@Override
	public Set<String> flagOptions() {
		return Set.of(JSON);
	}

	@Override
	public int run(Arguments arguments, PrintStream out) {
		long min = arguments.bytes(MIN, 4 << 10);
		long max = arguments.bytes(MAX, 64 << 20);
		long total = arguments.bytes(BYTES, 8L << 30);
		boolean json = arguments.flag(JSON);
		if (max < min) {
			throw new UsageException(MAX + " must not be smaller than " + MIN);
		}
		if (!json) {
			out.printf("%-20s%-15s%-15s%n", "Block Size (B)", "Copies", "B/W (GB/Sec)");
		}
		List<Map<String, Object>> results = new ArrayList<>();
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment source = arena.allocate(max, 4096);
			MemorySegment destination = arena.allocate(max, 4096);
			Patterns.fill(source, 1);
			destination.fill((byte) 0);
			for (long size = min; size <= max; size *= 2) {
				long copies = Math.max(10, total / size);
				copy(source, destination, size, Math.max(1, copies / 10));
				long start = System.nanoTime();
				copy(source, destination, size, copies);
				long nanos = System.nanoTime() - start;
				double gbps = (double) size * copies / nanos;
				if (json) {
					Map<String, Object> row = new LinkedHashMap<>();
					row.put("blockSize", size);
					row.put("copies", copies);
					row.put("bandwidthGBps", gbps);
					results.add(row);
				}
				else {
					out.printf(Locale.ROOT, "%-20d%-15d%-15.3f%n", size, copies, gbps);
				}
			}
		}
		if (json) {
			Map<String, Object> document = new LinkedHashMap<>();
			document.put("tool", "nixl4j memcpy");
			document.put("threads", 1);
			document.put("bytesPerSize", total);
			document.put("results", results);
			out.println(Json.write(document));
		}
		return Nixl4jCli.EXIT_OK;
	}

	private static void copy(MemorySegment source, MemorySegment destination, long size, long copies) {
		for (long i = 0; i < copies; i++) {
			MemorySegment.copy(source, 0, destination, 0, size);
		}
	}

}
