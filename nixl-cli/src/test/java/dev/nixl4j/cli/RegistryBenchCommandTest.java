package dev.nixl4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.json.JsonReader;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import dev.nixl4j.testsupport.EtcdServer;
import dev.nixl4j.testsupport.EtcdServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nixl4j registry-bench} in small real runs: a registry in a child JVM and an etcd
 * process, ten agents each, every fetched value compared with what its agent published;
 * and the bounds of its options.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RegistryBenchCommandTest {

	/** An etcd named by its endpoint, for the test that needs one. */
	@RegisterExtension
	static final EtcdServerExtension etcdServer = new EtcdServerExtension();

	/** Every number as a double: the document's figures are compared as doubles. */
	private static final JsonReader JSON = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();

	private final ByteArrayOutputStream out = new ByteArrayOutputStream();

	private final ByteArrayOutputStream err = new ByteArrayOutputStream();

	private int run(String... args) {
		return Nixl4jCli.run(args, new PrintStream(this.out, true, StandardCharsets.UTF_8),
				new PrintStream(this.err, true, StandardCharsets.UTF_8));
	}

	@Test
	void tenAgentsInTheHttpRegistryAnswerEveryFetchWithTheBytesTheyPublished() {
		assertEveryFetchVerified("http");
	}

	@Test
	void tenAgentsInEtcdAnswerEveryFetchWithTheBytesTheyPublished() {
		EtcdServer.require();
		assertEveryFetchVerified("etcd");
	}

	@Test
	void anEtcdNamedByItsEndpointIsMeasuredAndLeftWithoutTheBenchmarksKeys() throws Exception {
		EtcdServer etcd = etcdServer.server();
		assertEveryFetchVerified("etcd", "--etcd-endpoint", etcd.endpoint());

		try (Client client = Client.builder().endpoints(etcd.endpoint()).build()) {
			ByteSequence prefix = ByteSequence.from("/nixl4j-registry-bench/", StandardCharsets.UTF_8);
			long keys = client.getKVClient()
				.get(prefix, GetOption.builder().isPrefix(true).withCountOnly(true).build())
				.get(10, TimeUnit.SECONDS)
				.getCount();
			assertThat(keys).isZero();
		}
	}

	@SuppressWarnings("unchecked")
	private void assertEveryFetchVerified(String exchange, String... more) {
		List<String> arguments = new ArrayList<>(List.of("registry-bench", "--exchange", exchange, "--agents", "10",
				"--fetches", "60", "--warmup", "10", "--warmup-time", "10ms", "--prime-time", "10ms", "--threads",
				"1,4", "--operations", "fetch,document", "--json"));
		arguments.addAll(List.of(more));
		int status = run(arguments.toArray(String[]::new));

		String output = this.out.toString(StandardCharsets.UTF_8);
		assertThat(status).as(output + this.err.toString(StandardCharsets.UTF_8)).isZero();
		Map<String, Object> document = (Map<String, Object>) JSON.read(output.strip());
		assertThat(document).containsEntry("tool", "nixl4j registry-bench").containsEntry("metadataBytes", 4096.0);
		List<Map<String, Object>> results = (List<Map<String, Object>>) document.get("results");
		assertThat(results).extracting(row -> row.get("operation") + "/" + row.get("threads"))
			.containsExactly("fetch/1.0", "fetch/4.0", "document/1.0", "document/4.0");
		for (Map<String, Object> row : results) {
			assertThat(row).containsEntry("exchange", exchange)
				.containsEntry("agents", 10.0)
				.containsEntry("fetches", 60.0)
				.containsEntry("verified", 60.0)
				.containsEntry("mismatched", 0.0);
			assertThat((Double) row.get("p50Micros")).isPositive().isLessThanOrEqualTo((Double) row.get("p99Micros"));
			assertThat((Double) row.get("meanMicros")).isPositive();
			assertThat((Double) row.get("fetchesPerSecond")).isPositive();
		}
	}

	@Test
	void helpListsTheOptionsAndTheToolListsTheCommandButNotItsServer() {
		assertThat(run("registry-bench", "--help")).isZero();
		assertThat(this.out.toString(StandardCharsets.UTF_8)).startsWith("Usage: nixl4j registry-bench")
			.contains("--exchange", "--agents", "--threads", "--operations", "--fetches", "--warmup", "--metadata-size",
					"--document-size", "--etcd-endpoint", "--json", "3   etcd asked for");
		this.out.reset();
		assertThat(run("--help")).isZero();
		assertThat(this.out.toString(StandardCharsets.UTF_8)).contains("registry-bench")
			.doesNotContain("registry-bench-server");
	}

	@Test
	void withoutEtcdInstalledItSaysHowToGetOneAndExitsWithEnvironmentNotReady(@TempDir Path directory)
			throws Exception {
		List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), Nixl4jCli.class.getName(), "registry-bench", "--exchange",
				"etcd");

		ProcessRun run = ProcessRun.run(command, directory,
				(environment) -> environment.put("ETCD_BINARY", directory.resolve("no-etcd").toString()));

		assertThat(run.exitCode()).as(run.describe()).isEqualTo(Nixl4jCli.EXIT_ENVIRONMENT_NOT_READY);
		assertThat(run.err()).contains("etcd is not installed", "src/etcd/install-etcd.sh", "--etcd-endpoint",
				"--exchange http");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|',
			value = { "--agents|0|--agents", "--agents|10001|--agents", "--agents|10,x|--agents",
					"--threads|0|--threads", "--threads|65|--threads", "--fetches|0|--fetches",
					"--warmup-time|2m|--warmup-time", "--warmup-time|0s|--warmup-time", "--prime-time|6m|--prime-time",
					"--fetches|10000001|--fetches", "--warmup|-1|--warmup", "--metadata-size|2m|--metadata-size",
					"--metadata-size|64|--metadata-size", "--document-size|65k|--document-size",
					"--exchange|redis|--exchange", "--operations|watch|--operations" })
	void aValueOutOfItsBoundsIsAUsageErrorNamingTheOption(String option, String value, String named) {
		int status = run("registry-bench", option, value);

		assertThat(status).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains(named);
		assertThat(this.out.toString(StandardCharsets.UTF_8)).isEmpty();
	}

	@Test
	void moreRegisteredBytesThanTheBoundIsAUsageError() {
		int status = run("registry-bench", "--agents", "10000", "--metadata-size", "8k");

		assertThat(status).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("--agents 10000", "--metadata-size 8192",
				"over the bound");
	}

	@Test
	void fewerFetchesThanThreadsIsAUsageError() {
		int status = run("registry-bench", "--fetches", "3", "--threads", "1,4");

		assertThat(status).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("--fetches (3)", "--threads (4)");
	}

}
