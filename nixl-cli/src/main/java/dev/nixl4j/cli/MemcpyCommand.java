package dev.nixl4j.cli;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.nixl4j.json.JsonWriter;
import dev.nixl4j.readiness.Patterns;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j memcpy}: the bandwidth of one thread copying native memory with
 * {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long, long)}, the
 * yardstick for transfers on one host: a transfer through shared memory or a kernel copy
 * cannot beat one copy.
 */
@Command(name = "memcpy", description = { "Single-thread MemorySegment.copy bandwidth, the reference for bench.", "",
		"Copies between two page-aligned native segments on one thread, for sizes doubling from --min to --max, and "
				+ "prints the bandwidth of each (GB = 10^9 bytes). Each size copies about --bytes in total after a warm-up "
				+ "of a tenth of that." },
		exitCodeList = { "0:measured", "2:usage error" })
final class MemcpyCommand extends Subcommand {

	@Option(names = "--min", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "4k",
			description = "smallest block (default ${DEFAULT-VALUE})")
	private long min;

	@Option(names = "--max", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "64m",
			description = "largest block (default ${DEFAULT-VALUE})")
	private long max;

	@Option(names = "--bytes", paramLabel = "TOTAL", converter = ByteSize.class, defaultValue = "8g",
			description = "bytes copied per size (default ${DEFAULT-VALUE})")
	private long total;

	@Mixin
	private OutputOptions output = new OutputOptions();

	@Override
	public Integer call() {
		if (this.max < this.min) {
			throw usageError("--max must not be smaller than --min");
		}
		PrintStream out = out();
		if (!this.output.json()) {
			out.printf("%-20s%-15s%-15s%n", "Block Size (B)", "Copies", "B/W (GB/Sec)");
		}
		List<Map<String, Object>> results = new ArrayList<>();
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment source = arena.allocate(this.max, 4096);
			MemorySegment destination = arena.allocate(this.max, 4096);
			Patterns.fill(source, 1);
			destination.fill((byte) 0);
			for (long size = this.min; size <= this.max; size *= 2) {
				long copies = Math.max(10, this.total / size);
				copy(source, destination, size, Math.max(1, copies / 10));
				long start = System.nanoTime();
				copy(source, destination, size, copies);
				long nanos = System.nanoTime() - start;
				double gbps = (double) size * copies / nanos;
				if (this.output.json()) {
					Map<String, Object> row = new LinkedHashMap<>();
					row.put("blockSize", size);
					row.put("copies", copies);
					row.put("bandwidthGBps", OutputOptions.figure(gbps));
					results.add(row);
				}
				else {
					out.printf(Locale.ROOT, "%-20d%-15d%-15.3f%n", size, copies, gbps);
				}
			}
		}
		if (this.output.json()) {
			Map<String, Object> document = new LinkedHashMap<>();
			document.put("tool", "nixl4j memcpy");
			document.put("threads", 1);
			document.put("bytesPerSize", this.total);
			document.put("results", results);
			out.println(JsonWriter.write(document));
		}
		return Nixl4jCli.EXIT_OK;
	}

	private static void copy(MemorySegment source, MemorySegment destination, long size, long copies) {
		for (long i = 0; i < copies; i++) {
			MemorySegment.copy(source, 0, destination, 0, size);
		}
	}

}
