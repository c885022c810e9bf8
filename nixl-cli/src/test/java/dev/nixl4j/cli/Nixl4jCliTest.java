package dev.nixl4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.XferOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.TypeConversionException;

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
		assertThat(this.out.toString(StandardCharsets.UTF_8))
			.contains("info", "doctor", "selftest", "bench", "kv-bench", "memcpy", "registry-bench")
			.contains("Exit status:", "0   success", "2   usage error", "3   environment not ready",
					"4   backend not ready")
			.doesNotContain("bench-target", "kv-bench-producer", "kv-bench-consumer", "registry-bench-server");
	}

	@Test
	void anUnknownCommandIsAUsageError() {
		assertThat(run("frobnicate")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("unknown command 'frobnicate'");
	}

	@Test
	void anUnknownOptionIsAUsageErrorNamingIt() {
		assertThat(run("bench", "--turbo")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("nixl4j bench: Unknown option: '--turbo'")
			.contains("Run 'nixl4j bench --help' for its options.");
		assertThat(this.out.toString(StandardCharsets.UTF_8)).isEmpty();
	}

	@Test
	void aStrayArgumentIsAUsageError() {
		assertThat(run("doctor", "now")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("'now'");
	}

	@Test
	void withoutACommandTheToolPrintsItsUsageAsAnError() {
		assertThat(run()).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).startsWith("Usage: nixl4j").contains("doctor");
	}

	@Test
	void aBadBenchOptionIsAUsageErrorBeforeAnythingLoads() {
		assertThat(run("bench", "--processes", "3")).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("--processes takes 1 or 2");
	}

	@ParameterizedTest
	@CsvSource({ "memcpy,--min,lots", "memcpy,--bytes,0", "bench,--max-block,12q", "bench-target,--size,-4k" })
	void aBadSizeIsAUsageErrorNamingTheOptionAndTheValue(String command, String option, String value) {
		assertThat(run(command, option, value)).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8))
			.contains("Invalid value for option '" + option + "': '" + value + "' is not a positive size");
	}

	@ParameterizedTest
	@CsvSource({ "selftest,--timeout,soon", "selftest,--timeout,0s", "kv-bench,--timeout,-5s",
			"kv-bench-producer,--lease,10 parsecs" })
	void aBadDurationIsAUsageErrorNamingTheOptionAndTheValue(String command, String option, String value) {
		assertThat(run(command, option, value)).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8))
			.contains("Invalid value for option '" + option + "': '" + value + "' is not a positive duration");
	}

	@ParameterizedTest
	@CsvSource({ "bench,--engine,warp", "bench,--op,sideways", "doctor,--memory-type,ram", "bench,--batch,0",
			"kv-bench,--requests,many", "selftest,--backend-param,no-equals", "info,--env,UCX_TLS" })
	void aBadValueIsAUsageErrorNamingTheOptionAndTheValue(String command, String option, String value) {
		assertThat(run(command, option, value)).isEqualTo(Nixl4jCli.EXIT_USAGE);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("'" + option + "'").contains(value);
	}

	@ParameterizedTest
	@ValueSource(strings = { "info", "doctor", "selftest", "bench", "kv-bench", "memcpy", "registry-bench",
			"bench-target", "kv-bench-producer", "kv-bench-consumer", "registry-bench-server" })
	void everyCommandPrintsTheVersion(String command) {
		assertThat(run(command, "--version")).isZero();
		assertThat(this.out.toString(StandardCharsets.UTF_8)).startsWith("nixl4j ").doesNotContain("unknown");
	}

	@Test
	void helpListsEachCommandsOptionsAndExitStatuses() {
		Map<String, List<String>> options = Map.of("info", List.of("--env", "--native-dir"), "doctor",
				List.of("--memory-type", "--engine", "--backend", "--backend-param", "--env", "--progress-delay-us",
						"--progress-thread", "--native-dir"),
				"selftest", List.of("--timeout", "--engine", "--backend"), "bench",
				List.of("--op", "--min-block", "--max-block", "--batch", "--iterations", "--warmup",
						"--large-block-factor", "--processes", "--completion", "--json", "--engine"),
				"kv-bench", List.of("--requests", "--blocks", "--run", "--warmup", "--timeout", "--json", "--engine"),
				"memcpy", List.of("--min", "--max", "--bytes", "--json"));
		options.forEach((command, names) -> {
			this.out.reset();
			assertThat(run(command, "--help")).isZero();
			String help = this.out.toString(StandardCharsets.UTF_8);
			for (String name : names) {
				assertThat(help).as(command).containsPattern("\\s" + name + "[= ]");
			}
			assertThat(help).as(command).contains("--help", "--version", "Exit status:", "2   usage error");
		});
	}

	@Test
	void theHelpCommandShowsACommandsHelp() {
		assertThat(run("help", "memcpy")).isZero();
		assertThat(this.out.toString(StandardCharsets.UTF_8)).startsWith("Usage: nixl4j memcpy").contains("--bytes");
	}

	@Test
	void sizesTakeBinarySuffixes() {
		assertThat(ByteSize.parse("4096")).isEqualTo(4096);
		assertThat(ByteSize.parse("4k")).isEqualTo(4096);
		assertThat(ByteSize.parse("64MiB")).isEqualTo(64L << 20);
		assertThat(ByteSize.parse("1g")).isEqualTo(1L << 30);
		assertThatThrownBy(() -> ByteSize.parse("lots")).isInstanceOf(TypeConversionException.class);
		assertThatThrownBy(() -> ByteSize.parse("9000000000g")).isInstanceOf(TypeConversionException.class);
	}

	@Test
	void durationsTakeUnitsOrIso8601() {
		assertThat(DurationOption.parse("250us")).isEqualTo(Duration.ofNanos(250_000));
		assertThat(DurationOption.parse("500ms")).isEqualTo(Duration.ofMillis(500));
		assertThat(DurationOption.parse("30s")).isEqualTo(Duration.ofSeconds(30));
		assertThat(DurationOption.parse("2m")).isEqualTo(Duration.ofMinutes(2));
		assertThat(DurationOption.parse("1h")).isEqualTo(Duration.ofHours(1));
		assertThat(DurationOption.parse("PT1.5S")).isEqualTo(Duration.ofMillis(1500));
		assertThatThrownBy(() -> DurationOption.parse("30")).isInstanceOf(TypeConversionException.class);
		assertThatThrownBy(() -> DurationOption.parse("PT0S")).isInstanceOf(TypeConversionException.class);
	}

	@Test
	void benchDefaultsFollowNixlbench() {
		BenchOptions options = ((BenchCommand) parse("bench")).options();

		assertThat(options.ops()).containsExactly(XferOp.WRITE, XferOp.READ);
		assertThat(options.blockSizes()).hasSize(15).startsWith(4096L).endsWith(64L << 20);
		assertThat(options.iterations(1 << 20)).isEqualTo(1000);
		assertThat(options.iterations(2 << 20)).isEqualTo(1000 / 16);
		assertThat(options.warmup(1 << 20)).isEqualTo(100);
		assertThat(options.batch()).isEqualTo(1);
		assertThat(options.processes()).isEqualTo(1);
		assertThat(options.json()).isFalse();
		assertThat(options.completion()).isEqualTo(BenchOptions.Completion.FUTURE);
	}

	@Test
	void benchWaitsOnTheCallersThreadWhenAsked() {
		assertThat(((BenchCommand) parse("bench", "--completion", "caller")).options().completion())
			.isEqualTo(BenchOptions.Completion.CALLER);
		assertThat(run("bench", "--completion", "sometime")).isEqualTo(Nixl4jCli.EXIT_USAGE);
	}

	@Test
	void theLastValueOfARepeatedOptionWins() {
		BenchOptions options = ((BenchCommand) parse("bench", "--op", "read", "--op=WRITE", "--json")).options();

		assertThat(options.ops()).containsExactly(XferOp.WRITE);
		assertThat(options.json()).isTrue();
	}

	@Test
	void aBackendParameterBelongsToTheBackendNamedBeforeIt() {
		AgentOptions options = agentOptions("--backend-param", "a=1", "--backend", "POSIX", "--backend-param",
				"use_uring=true", "--env", "UCX_TLS=tcp", "--env", "UCX_MODULES=*", "--engine", "embedded");

		AgentConfig config = options.config("cli-test");

		assertThat(config.backends()).containsExactly(new BackendConfig("UCX", Map.of("a", "1")),
				new BackendConfig("POSIX", Map.of("use_uring", "true")));
		assertThat(config.nativeEnvironment()).containsEntry("UCX_TLS", "tcp").containsEntry("UCX_MODULES", "*");
		assertThat(config.engine()).isEqualTo(Engine.EMBEDDED);
	}

	@Test
	void aChildProcessGetsTheSameAgentConfiguration() {
		AgentOptions options = agentOptions("--backend-param", "a=1", "--backend", "POSIX", "--backend-param",
				"use_uring=true", "--env", "UCX_TLS=tcp", "--progress-delay-us", "0", "--progress-thread", "false",
				"--native-dir", "/opt/nixl/lib", "--engine", "auto");

		AgentConfig child = agentOptions(options.tokens().toArray(String[]::new)).config("cli-test");

		assertThat(child).isEqualTo(options.config("cli-test"));
		assertThat(child.nativeProgressThread()).isFalse();
		assertThat(agentOptions().config("cli-test").nativeProgressThread()).isTrue();
	}

	@Test
	void sameHostTurnsOnTheEmbeddedSameHostPathHereAndInTheChild() {
		AgentOptions options = agentOptions("--engine", "embedded", "--same-host");

		assertThat(options.sameHost()).isTrue();
		assertThat(options.config("cli-test").embedded().sameHost()).isTrue();
		assertThat(agentOptions(options.tokens().toArray(String[]::new)).config("cli-test"))
			.isEqualTo(options.config("cli-test"));
		assertThat(agentOptions("--engine", "embedded").config("cli-test").embedded().sameHost()).isFalse();
	}

	private static AgentOptions agentOptions(String... args) {
		List<String> tokens = new java.util.ArrayList<>(List.of("bench-target"));
		tokens.addAll(List.of(args));
		return (AgentOptions) spec(tokens.toArray(String[]::new)).mixins().get("agentOptions").userObject();
	}

	private static Object parse(String... args) {
		return spec(args).userObject();
	}

	private static CommandSpec spec(String... args) {
		return Nixl4jCommand.commandLine(System.out).parseArgs(args).subcommand().commandSpec();
	}

}
