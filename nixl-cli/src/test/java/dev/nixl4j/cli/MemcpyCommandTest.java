package dev.nixl4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.json.JsonReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nixl4j memcpy}: a small real run, as a table and as JSON, and its usage errors.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MemcpyCommandTest {

	/** Every number as a double: the document's figures are compared as doubles. */
	private static final JsonReader JSON = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();

	private final ByteArrayOutputStream out = new ByteArrayOutputStream();

	private final ByteArrayOutputStream err = new ByteArrayOutputStream();

	private int run(String... args) {
		return Nixl4jCli.run(args, new PrintStream(this.out, true, StandardCharsets.UTF_8),
				new PrintStream(this.err, true, StandardCharsets.UTF_8));
	}

	@Test
	@SuppressWarnings("unchecked")
	void jsonHasOneRowPerSizeWithTheCopiesMadeAndTheirBandwidth() {
		int status = run("memcpy", "--min", "4k", "--max", "16k", "--bytes", "1m", "--json");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		assertThat(output.strip().lines()).hasSize(1);
		Map<String, Object> document = (Map<String, Object>) JSON.read(output.strip());
		assertThat(document).containsEntry("tool", "nixl4j memcpy")
			.containsEntry("threads", 1.0)
			.containsEntry("bytesPerSize", (double) (1 << 20));
		List<Map<String, Object>> results = (List<Map<String, Object>>) document.get("results");
		assertThat(results).extracting(row -> row.get("blockSize")).containsExactly(4096.0, 8192.0, 16384.0);
		assertThat(results).extracting(row -> row.get("copies")).containsExactly(256.0, 128.0, 64.0);
		assertThat(results).allSatisfy(row -> assertThat((Double) row.get("bandwidthGBps")).isPositive());
	}

	@Test
	void withoutJsonItPrintsATableRowPerSize() {
		int status = run("memcpy", "--min", "4k", "--max", "8k", "--bytes", "1m");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		List<String> lines = output.strip().lines().map(String::strip).toList();
		assertThat(lines).hasSize(3);
		assertThat(lines.getFirst()).startsWith("Block Size (B)").contains("Copies", "B/W (GB/Sec)");
		assertThat(lines.get(1)).matches("4096 +256 +[0-9]+\\.[0-9]{3}");
		assertThat(lines.get(2)).matches("8192 +128 +[0-9]+\\.[0-9]{3}");
	}

	@Test
	void aLargestSizeBelowTheSmallestIsAUsageError() {
		assertThat(run("memcpy", "--min", "64k", "--max", "4k", "--json")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("--max must not be smaller than --min");
		assertThat(this.out.toString(StandardCharsets.UTF_8)).isEmpty();
	}

}
