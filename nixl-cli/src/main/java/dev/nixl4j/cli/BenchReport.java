package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Backend;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.XferOp;
import dev.nixl4j.json.JsonWriter;
import org.jspecify.annotations.Nullable;

/**
 * Prints benchmark rows: a nixlbench-style table per direction, or one JSON document.
 */
final class BenchReport {

	private static final String[] COLUMNS = { "Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)",
			"Avg Prep (us)", "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)",
			"Med Post-to-Done (us)" };

	private static final int[] WIDTHS = { 20, 15, 15, 15, 15, 15, 15, 15, 15, 15, 22 };

	private final BenchOptions options;

	private final AgentConfig config;

	private final List<BackendConfig> backends;

	private final String library;

	private @Nullable XferOp current;

	/**
	 * Creates the report.
	 * @param options what is measured
	 * @param config the agents' configuration
	 * @param backends the initiator's backends with the parameters its engine got
	 * (nixl4j's defaults added to the configured ones)
	 * @param library the native library in use, for the header
	 */
	BenchReport(BenchOptions options, AgentConfig config, List<Backend> backends, String library) {
		this.options = options;
		this.config = config;
		this.backends = backends.stream()
			.map((backend) -> new BackendConfig(backend.plugin(), backend.parameters()))
			.toList();
		this.library = library;
	}

	/**
	 * Prints a row, preceded by the table header when the direction changes.
	 * @param row the row
	 * @param out where to print
	 */
	void printRow(BenchRow row, PrintStream out) {
		if (row.op() != this.current) {
			this.current = row.op();
			out.println();
			out.println(row.op() + ", " + memory() + ", " + this.options.processes() + " process(es), " + this.library);
			out.println("backends " + backends() + ", progress delay " + progressDelayMicros()
					+ " us, native environment " + this.config.nativeEnvironment());
			out.println(this.options.iterations() + " iterations (" + this.options.iterations(Long.MAX_VALUE)
					+ " above 1 MiB), " + this.options.warmup() + " warm-up (" + this.options.warmup(Long.MAX_VALUE)
					+ " above 1 MiB), completion " + this.options.completion().name().toLowerCase(Locale.ROOT));
			StringBuilder header = new StringBuilder();
			for (int i = 0; i < COLUMNS.length; i++) {
				header.append(pad(COLUMNS[i], WIDTHS[i]));
			}
			out.println(header.toString().stripTrailing());
			out.println("-".repeat(header.toString().stripTrailing().length()));
		}
		String[] cells = { Long.toString(row.blockSize()), Integer.toString(row.batchSize()),
				format(row.bandwidthGBps(), 3), format(row.avgLatencyUs(), 2), format(row.avgPrepUs(), 2),
				format(row.p99PrepUs(), 2), format(row.avgPostUs(), 2), format(row.p99PostUs(), 2),
				format(row.avgTxUs(), 2), format(row.p99TxUs(), 2), format(row.medianPostToCompletionUs(), 2) };
		StringBuilder line = new StringBuilder();
		for (int i = 0; i < cells.length; i++) {
			line.append(pad(cells[i], WIDTHS[i]));
		}
		if (!row.verified()) {
			line.append("  VERIFICATION FAILED");
		}
		out.println(line.toString().stripTrailing());
		out.println("  allocated per post: " + bytes(row.allocatedPerPost()) + " on the benchmark thread, "
				+ bytes(row.progressAllocatedPerPost()) + " on the progress thread");
	}

	private static String bytes(long count) {
		return (count < 0) ? "unknown" : count + " B";
	}

	/**
	 * Returns the whole run as JSON.
	 * @param rows the rows
	 * @return a JSON object with the settings and a {@code results} array
	 */
	String json(List<BenchRow> rows) {
		Map<String, Object> document = new LinkedHashMap<>();
		document.put("tool", "nixl4j bench");
		document.put("library", this.library);
		document.put("processes", this.options.processes());
		document.put("memory", memory());
		document.put("backends", this.backends.stream().map(backend -> {
			Map<String, Object> entry = new LinkedHashMap<>();
			entry.put("plugin", backend.plugin());
			entry.put("parameters", backend.parameters());
			return entry;
		}).toList());
		document.put("progressDelayUs", progressDelayMicros());
		document.put("nativeEnvironment", this.config.nativeEnvironment());
		document.put("iterations", this.options.iterations());
		document.put("warmup", this.options.warmup());
		document.put("largeBlockFactor", this.options.largeBlockFactor());
		document.put("completion", this.options.completion().name().toLowerCase(Locale.ROOT));
		document.put("results", rows.stream().map(BenchReport::json).toList());
		return JsonWriter.write(document);
	}

	private static Map<String, Object> json(BenchRow row) {
		Map<String, Object> entry = new LinkedHashMap<>();
		entry.put("op", row.op().name());
		entry.put("blockSize", row.blockSize());
		entry.put("batchSize", row.batchSize());
		entry.put("iterations", row.iterations());
		entry.put("warmup", row.warmup());
		entry.put("bandwidthGBps", OutputOptions.figure(row.bandwidthGBps()));
		entry.put("avgLatencyUs", OutputOptions.figure(row.avgLatencyUs()));
		entry.put("avgPrepUs", OutputOptions.figure(row.avgPrepUs()));
		entry.put("p99PrepUs", OutputOptions.figure(row.p99PrepUs()));
		entry.put("avgPostUs", OutputOptions.figure(row.avgPostUs()));
		entry.put("p99PostUs", OutputOptions.figure(row.p99PostUs()));
		entry.put("avgTxUs", OutputOptions.figure(row.avgTxUs()));
		entry.put("p99TxUs", OutputOptions.figure(row.p99TxUs()));
		entry.put("medianPostToCompletionUs", OutputOptions.figure(row.medianPostToCompletionUs()));
		entry.put("allocatedBytesPerPost", row.allocatedPerPost());
		entry.put("progressAllocatedBytesPerPost", row.progressAllocatedPerPost());
		entry.put("verified", row.verified());
		return entry;
	}

	private String backends() {
		return this.backends.stream().map(BackendConfig::toString).toList().toString();
	}

	private long progressDelayMicros() {
		return this.config.nativeProgressDelay().toNanos() / 1000;
	}

	private static String format(double value, int decimals) {
		return String.format(Locale.ROOT, "%." + decimals + "f", value);
	}

	private static String pad(String text, int width) {
		return (text.length() >= width) ? text + " " : text + " ".repeat(width - text.length());
	}

	/** Where both sides' memory lies: {@code DRAM -> DRAM} or {@code VRAM -> VRAM}. */
	private String memory() {
		return this.options.memory() + " -> " + this.options.memory();
	}

}
