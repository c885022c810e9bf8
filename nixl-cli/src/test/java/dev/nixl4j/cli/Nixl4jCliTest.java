package dev.nixl4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.XferOp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The command line itself, without loading NIXL: help, usage errors and option parsing.
 */
class Nixl4jCliTest {

	private final ByteArrayOutputStream out = new ByteArrayOutputStream();

	private final ByteArrayOutputStream err = new ByteArrayOutputStream();

	private int run(String... args) {
		return Nixl4jCli.run(args, new PrintStream(this.out, true, StandardCharsets.UTF_8),
				new PrintStream(this.err, true, StandardCharsets.UTF_8));
	}

	@ParameterizedTest
	@ValueSource(strings = { "info", "doctor", "selftest", "bench", "kv-bench", "memcpy" })
	void everyCommandHasHelp(String command) {
		assertThat(run(command, "--help")).isZero();
		assertThat(this.out.toString(StandardCharsets.UTF_8)).startsWith("Usage: nixl4j " + command);
	}

	@Test
	void theToolListsItsCommands() {
		assertThat(run("--help")).isZero();
		assertThat(this.out.toString(StandardCharsets.UTF_8)).contains("info", "doctor", "selftest", "bench", "kv-bench", "memcpy")
			.doesNotContain("bench-target", "kv-bench-producer");
	}

	@Test
	void anUnknownCommandIsAUsageError() {
		assertThat(run("frobnicate")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("unknown command 'frobnicate'");
	}

	@Test
	void anUnknownOptionIsAUsageError() {
		assertThat(run("bench", "--turbo")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("unknown option '--turbo'");
	}

	@Test
	void aBadBenchOptionIsAUsageErrorBeforeAnythingLoads() {
		assertThat(run("bench", "--processes", "3")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("--processes takes 1 or 2");
	}

	@Test
	void sizesTakeBinarySuffixes() {
		assertThat(Arguments.parseBytes("--x", "4096")).isEqualTo(4096);
		assertThat(Arguments.parseBytes("--x", "4k")).isEqualTo(4096);
		assertThat(Arguments.parseBytes("--x", "64MiB")).isEqualTo(64L << 20);
		assertThat(Arguments.parseBytes("--x", "1g")).isEqualTo(1L << 30);
		assertThatThrownBy(() -> Arguments.parseBytes("--x", "lots")).isInstanceOf(UsageException.class);
	}

	@Test
	void benchDefaultsFollowNixlbench() {
		BenchOptions options = BenchOptions.from(parse(List.of(), BenchOptions.VALUED));

		assertThat(options.ops()).containsExactly(XferOp.WRITE, XferOp.READ);
		assertThat(options.blockSizes()).hasSize(15).startsWith(4096L).endsWith(64L << 20);
		assertThat(options.iterations(1 << 20)).isEqualTo(1000);
		assertThat(options.iterations(2 << 20)).isEqualTo(1000 / 16);
		assertThat(options.warmup(1 << 20)).isEqualTo(100);
		assertThat(options.batch()).isEqualTo(1);
	}

	@Test
	void aBackendParameterBelongsToTheBackendNamedBeforeIt() {
		Arguments arguments = parse(List.of("--backend-param", "a=1", "--backend", "POSIX", "--backend-param",
				"use_uring=true", "--env", "UCX_TLS=tcp", "--env", "UCX_MODULES=*"), AgentOptions.NAMES);

		AgentConfig config = AgentOptions.config(arguments, "cli-test");

		assertThat(config.backends()).containsExactly(new BackendConfig("UCX", Map.of("a", "1")),
				new BackendConfig("POSIX", Map.of("use_uring", "true")));
		assertThat(config.nativeEnvironment()).containsEntry("UCX_TLS", "tcp").containsEntry("UCX_MODULES", "*");
	}

	private static Arguments parse(List<String> tokens, java.util.Set<String> valued) {
		return Arguments.parse(tokens, valued, java.util.Set.of(BenchOptions.JSON));
	}

}
