package dev.nixl4j.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.json.JsonReader;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bin/nixl4j} run as a user runs it, from a directory outside the repository,
 * against native NIXL: doctor, selftest and bench, whose JSON is read back and checked.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class LauncherTest {

	/** Every number as a double: the document's figures are compared as doubles. */
	private static final JsonReader JSON = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();

	private static final List<String> COLUMNS = List.of("bandwidthGBps", "avgLatencyUs", "avgPrepUs", "p99PrepUs",
			"avgPostUs", "p99PostUs", "avgTxUs", "p99TxUs", "medianPostToCompletionUs");

	@TempDir
	Path work;

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Test
	void doctorExitsWithZeroWhenReady() throws Exception {
		ProcessRun run = nixl4j("doctor");

		assertThat(run.exitCode()).as(run.describe()).isZero();
		assertThat(run.out()).startsWith("NIXL readiness: READY");
	}

	@Test
	void infoNamesTheLibraryAndWhereItWasLoadedFrom() throws Exception {
		ProcessRun run = nixl4j("info");

		assertThat(run.exitCode()).as(run.describe()).isZero();
		assertThat(run.out()).as(run.describe()).contains("library: ").contains("loaded from: ").contains("UCX");
		if (!Files.exists(Path.of("/opt/nvidia/nvda_nixl"))) {
			// with no NIXL on the host, the one bundled on the launcher's class path
			assertThat(run.out()).as(run.describe()).contains("loaded from: class path (nixl-native-linux-x86_64 ");
		}
	}

	@Test
	void selftestPassesEveryCheck() throws Exception {
		ProcessRun run = nixl4j("selftest");

		assertThat(run.exitCode()).as(run.describe()).isZero();
		assertThat(run.out()).as(run.describe()).contains("selftest: all 9 checks passed").doesNotContain("FAIL");
	}

	@Test
	void benchInOneProcessPrintsVerifiedRowsAsJson() throws Exception {
		checkBench(1, 1);
	}

	@Test
	void benchWithTheTargetInAChildProcessPrintsVerifiedRowsAsJson() throws Exception {
		checkBench(2, 2);
	}

	@Test
	void benchWaitingOnTheCallersThreadPrintsVerifiedRowsAsJson() throws Exception {
		checkBench(2, 1, "--completion", "caller");
	}

	@Test
	void benchOverTheEmbeddedSameHostPathPrintsVerifiedRowsAsJson() throws Exception {
		checkBench(2, 1, "--engine", "embedded", "--same-host");
	}

	@SuppressWarnings("unchecked")
	private void checkBench(int processes, int batch, String... more) throws Exception {
		List<String> args = new ArrayList<>(
				List.of("bench", "--processes", Integer.toString(processes), "--batch", Integer.toString(batch),
						"--min-block", "4k", "--max-block", "64k", "--iterations", "20", "--warmup", "2", "--json"));
		args.addAll(List.of(more));
		ProcessRun run = nixl4j(args.toArray(String[]::new));

		assertThat(run.exitCode()).as(run.describe()).isZero();
		Map<String, Object> document = (Map<String, Object>) JSON.read(run.out().strip());
		assertThat(document).containsEntry("tool", "nixl4j bench")
			.containsEntry("processes", (double) processes)
			.containsEntry("memory", "DRAM -> DRAM")
			.containsEntry("completion", List.of(more).contains("caller") ? "caller" : "future");
		List<Map<String, Object>> results = (List<Map<String, Object>>) document.get("results");
		assertThat(results).hasSize(2 * 5);
		List<String> seen = new ArrayList<>();
		for (Map<String, Object> row : results) {
			seen.add(row.get("op") + " " + ((Double) row.get("blockSize")).longValue());
			assertThat(row).containsEntry("batchSize", (double) batch)
				.containsEntry("iterations", 20.0)
				.containsEntry("verified", true)
				.containsKeys(COLUMNS.toArray(String[]::new));
			for (String column : COLUMNS) {
				assertThat((Double) row.get(column)).as(column + " of " + row).isFinite().isNotNegative();
			}
			assertThat((Double) row.get("bandwidthGBps")).as("bandwidth of " + row).isPositive();
			assertThat((Double) row.get("medianPostToCompletionUs")).as("median of " + row).isPositive();
			assertThat((Double) row.get("allocatedBytesPerPost")).as("allocation of " + row).isNotNegative();
			assertThat((Double) row.get("progressAllocatedBytesPerPost")).as("allocation of " + row).isNotNegative();
			double block = (Double) row.get("blockSize");
			// Both columns come from the same wall time: GB/s x (us per block) x 1000 =
			// bytes per block.
			// B/W is printed with three decimals, so allow its rounding (0.0005 GB/s) on
			// top of 1 %.
			double latencyUs = (Double) row.get("avgLatencyUs");
			double bytesPerBlock = (Double) row.get("bandwidthGBps") * latencyUs * 1000;
			double rounding = 0.0005 * latencyUs * 1000;
			assertThat(bytesPerBlock).as("B/W x Avg Lat. of " + row)
				.isCloseTo(block, org.assertj.core.data.Offset.offset(block * 0.01 + rounding));
		}
		assertThat(seen).containsExactly("WRITE 4096", "WRITE 8192", "WRITE 16384", "WRITE 32768", "WRITE 65536",
				"READ 4096", "READ 8192", "READ 16384", "READ 32768", "READ 65536");
	}

	private ProcessRun nixl4j(String... arguments) throws Exception {
		Path launcher = Path.of("").toAbsolutePath().getParent().resolve("bin").resolve("nixl4j");
		assertThat(launcher).isRegularFile();
		List<String> command = new ArrayList<>(List.of("bash", launcher.toString()));
		command.addAll(List.of(arguments));
		Path directory = Files.createTempDirectory(this.work, "cwd");
		return ProcessRun.run(command, directory, environment -> {
			environment.put("JAVA_HOME", System.getProperty("java.home"));
			for (String variable : List.of("NIXL_LIB_DIR", "NIXL_PREFIX", "VIRTUAL_ENV", "CONDA_PREFIX")) {
				environment.remove(variable);
			}
		});
	}

}
