package dev.nixl4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.json.JsonReader;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * {@code nixl4j kv-bench} in its smallest form: this JVM pulls from a producer in a real
 * child JVM, on each engine, and every request must have been verified and its lease
 * completed.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class KvBenchCommandTest {

	/** Every number as a double: the document's figures are compared as doubles. */
	private static final JsonReader JSON = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();

	private final ByteArrayOutputStream out = new ByteArrayOutputStream();

	private final ByteArrayOutputStream err = new ByteArrayOutputStream();

	private int run(String... args) {
		return Nixl4jCli.run(args, new PrintStream(this.out, true, StandardCharsets.UTF_8),
				new PrintStream(this.err, true, StandardCharsets.UTF_8));
	}

	@ParameterizedTest
	@ValueSource(strings = { "embedded", "native" })
	@SuppressWarnings("unchecked")
	void theSmallestRunPullsVerifiedBlocksFromAChildProcess(String engine) {
		if (engine.equals("native")) {
			NativeNixl.require();
		}

		int status = run("kv-bench", "--engine", engine, "--requests", "2", "--blocks", "1", "--warmup", "1", "--json");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		Map<String, Object> document = (Map<String, Object>) JSON.read(output.strip());
		assertThat(document).containsEntry("tool", "nixl4j kv-bench")
			.containsEntry("engine", engine.toUpperCase(java.util.Locale.ROOT))
			.containsEntry("memory", "DRAM")
			.containsEntry("blocksPerRequest", 1.0)
			.containsEntry("descriptorsPerRequest", 64.0)
			.containsEntry("descriptorBytes", 32768.0)
			.containsEntry("bytesPerRequest", (double) (2 << 20))
			.containsEntry("requests", 2.0)
			.containsEntry("verifiedRequests", 3.0)
			.containsEntry("completedLeases", 3.0)
			.containsEntry("expiredLeases", 0.0)
			.containsEntry("ok", true);
		assertThat((Double) document.get("bandwidthGBps")).isPositive();
		assertThat((Double) document.get("p50LatencyUs")).isPositive();
		assertThat((Double) document.get("p99LatencyUs")).isGreaterThanOrEqualTo((Double) document.get("p50LatencyUs"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "bench", "kv-bench" })
	void deviceMemoryWithoutCudaMeasuresNothingAndExitsWithItsOwnStatus(String command) {
		CudaReport cuda = Cuda.report();
		assumeFalse(cuda.usable(), "a CUDA device is present here: the path without CUDA cannot be taken");

		int status = run(command, "--memory", "vram", "--json");

		String errors = this.err.toString(StandardCharsets.UTF_8);
		assertThat(status).as(errors).isEqualTo(Nixl4jCli.EXIT_NO_CUDA);
		assertThat(this.out.toString(StandardCharsets.UTF_8)).isEmpty();
		assertThat(errors).contains("nixl4j " + command + ": --memory vram: no CUDA device or driver was found")
			.contains(cuda.summary());
	}

	@Test
	@SuppressWarnings("unchecked")
	void theEmbeddedEnginesSameHostPathPullsVerifiedBlocksFromAChildProcess() {
		int status = run("kv-bench", "--engine", "embedded", "--same-host", "--requests", "3", "--blocks", "2",
				"--warmup", "1", "--json");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		Map<String, Object> document = (Map<String, Object>) JSON.read(output.strip());
		assertThat(document).containsEntry("engine", "EMBEDDED")
			.containsEntry("verifiedRequests", 4.0)
			.containsEntry("completedLeases", 4.0)
			.containsEntry("expiredLeases", 0.0)
			.containsEntry("ok", true);
	}

	@ParameterizedTest
	@ValueSource(strings = { "native", "embedded" })
	@SuppressWarnings("unchecked")
	void runsOfConsecutiveBlocksArePulledAndVerified(String engine) {
		if (engine.equals("native")) {
			NativeNixl.require();
		}

		int status = run("kv-bench", "--engine", engine, "--requests", "2", "--blocks", "6", "--run", "3", "--warmup",
				"1", "--json");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		Map<String, Object> document = (Map<String, Object>) JSON.read(output.strip());
		assertThat(document).containsEntry("blockRun", 3.0)
			.containsEntry("bytesPerRequest", (double) (12 << 20))
			.containsEntry("verifiedRequests", 3.0)
			.containsEntry("completedLeases", 3.0)
			.containsEntry("ok", true);
	}

	@ParameterizedTest
	@ValueSource(strings = { "embedded", "native" })
	@SuppressWarnings("unchecked")
	void crc32cIntegrityIsCheckedByEveryPullAndNamedInTheDocument(String engine) {
		if (engine.equals("native")) {
			NativeNixl.require();
		}

		int status = run("kv-bench", "--engine", engine, "--requests", "2", "--blocks", "4", "--warmup", "1",
				"--integrity", "crc32c", "--json");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		Map<String, Object> document = (Map<String, Object>) JSON.read(output.strip());
		assertThat(document).containsEntry("integrity", "crc32c")
			.containsEntry("verifiedRequests", 3.0)
			.containsEntry("completedLeases", 3.0)
			.containsEntry("ok", true);
	}

	@ParameterizedTest
	@ValueSource(strings = { "embedded", "native" })
	@SuppressWarnings("unchecked")
	void severalConsumerProcessesWithRequestsInFlightPullVerifiedBlocksFromOneProducer(String engine) {
		if (engine.equals("native")) {
			NativeNixl.require();
		}

		int status = run("kv-bench", "--engine", engine, "--consumers", "2", "--in-flight", "2", "--blocks", "2",
				"--requests", "4", "--warmup", "1", "--json");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		Map<String, Object> document = (Map<String, Object>) JSON.read(output.strip());
		assertThat(document).containsEntry("consumers", 2.0)
			.containsEntry("inFlight", 2.0)
			.containsEntry("requests", 4.0)
			.containsEntry("timedRequests", 8.0)
			.containsEntry("postedRequests", 10.0)
			.containsEntry("verifiedRequests", 10.0)
			.containsEntry("completedLeases", 10.0)
			.containsEntry("expiredLeases", 0.0)
			.containsEntry("ok", true);
		assertThat((Double) document.get("aggregateBandwidthGBps")).isPositive();
		assertThat((Double) document.get("timedSeconds")).isPositive();
		assertThat((Double) document.get("p99LatencyUs")).isGreaterThanOrEqualTo((Double) document.get("p50LatencyUs"));
	}

	@Test
	void theTextOfSeveralConsumersNamesTheAggregateBandwidth() {
		int status = run("kv-bench", "--engine", "embedded", "--consumers", "2", "--blocks", "1", "--requests", "2",
				"--warmup", "0");

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		assertThat(output).contains("4/4", "leases: 4 completed, 0 expired")
			.containsPattern("aggregate: [0-9.]+ GB/s over [0-9.]+ s; 2 consumer processes x 1 requests in flight");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "--consumers 0|--consumers must be within 1..8, got 0",
			"--consumers 9|--consumers must be within 1..8, got 9",
			"--in-flight 0|--in-flight must be within 1..64, got 0",
			"--in-flight 65|--in-flight must be within 1..64, got 65",
			"--in-flight 8 --blocks 256|--in-flight x --blocks must be at most 1024 (2 GiB of cache per consumer), got 8 x 256",
			"--consumers 4 --in-flight 4 --blocks 256|--consumers x --in-flight x --blocks must be at most 2048 (4 GiB of consumer caches), got 4 x 4 x 256" })
	void consumersAndRequestsInFlightOutOfBoundsAreAUsageError(String options, String message) {
		String[] args = ("kv-bench " + options).split(" ");

		assertThat(run(args)).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("nixl4j kv-bench: " + message);
	}

	@Test
	void aConsumerCountThatIsNotANumberIsAUsageError() {
		assertThat(run("kv-bench", "--consumers", "two")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("'--consumers'", "two");
	}

	@Test
	void anUnknownIntegrityIsAUsageError() {
		assertThat(run("kv-bench", "--integrity", "md5")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("'--integrity'", "md5");
	}

	@Test
	void aRunLongerThanTheRequestIsAUsageError() {
		assertThat(run("kv-bench", "--blocks", "4", "--run", "5")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8))
			.contains("nixl4j kv-bench: --run must be at most --blocks (4), got 5");
	}

	@Test
	void blocksBeyondTheCapAreAUsageError() {
		assertThat(run("kv-bench", "--blocks", "5000")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8))
			.contains("nixl4j kv-bench: --blocks must be within 1..1024, got 5000");
	}

}
