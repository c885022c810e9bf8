package dev.nixl4j.sample.load;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The load generator's command line: defaults, values, and errors that name the option.
 */
class LoadGeneratorCommandLineTests {

	@Test
	void defaultsAndValues() {
		LoadOptions defaults = LoadOptions.parse(new String[0]);
		assertThat(defaults.decode()).isEqualTo(URI.create("http://127.0.0.1:8082"));
		assertThat(defaults.prefill()).isNull();
		assertThat(defaults.requests()).isEqualTo(32);
		assertThat(defaults.concurrency()).isEqualTo(4);
		assertThat(defaults.promptTokens()).isEqualTo(512);
		assertThat(defaults.readyWait()).isEqualTo(Duration.ofSeconds(60));
		LoadOptions given = LoadOptions.parse(new String[] { "--url", "http://decode:9000/", "--prefill", "https://p:1",
				"--requests", "7", "--concurrency", "2", "--prompt-tokens", "33", "--warmup", "0", "--json" });
		assertThat(given.decode()).isEqualTo(URI.create("http://decode:9000"));
		assertThat(given.prefill()).isEqualTo(URI.create("https://p:1"));
		assertThat(given.requests()).isEqualTo(7);
		assertThat(given.warmup()).isZero();
		assertThat(given.json()).isTrue();
	}

	@Test
	void theLatencyPlotGoesToTheWorkingDirectoryUnlessToldOtherwise(@TempDir Path folder) {
		assertThat(LoadOptions.parse(new String[0]).plot())
			.isEqualTo(Path.of("nixl4j-load-latency.png").toAbsolutePath());
		Path given = folder.resolve("run.png");
		assertThat(LoadOptions.parse(new String[] { "--plot", given.toString() }).plot()).isEqualTo(given);
		assertThat(LoadOptions.parse(new String[] { "--no-plot" }).plot()).isNull();
		// the last of --plot and --no-plot counts: a script's default gives way to its
		// user's
		assertThat(LoadOptions.parse(new String[] { "--plot", given.toString(), "--no-plot" }).plot()).isNull();
		assertThat(LoadOptions.parse(new String[] { "--no-plot", "--plot", given.toString() }).plot()).isEqualTo(given);
		assertThatIllegalArgumentException().isThrownBy(() -> LoadOptions.parse(new String[] { "--plot", "run.svg" }))
			.withMessage("--plot must name a .png file, was 'run.svg'");
	}

	@Test
	void aPlotThatCannotBeWrittenIsRefusedBeforeTheLoad(@TempDir Path folder) {
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		Path plot = folder.resolve("missing").resolve("run.png");
		int exit = LoadGenerator.run(
				new String[] { "--url", "http://127.0.0.1:1", "--wait", "0", "--plot", plot.toString() },
				new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
				new PrintStream(err, true, StandardCharsets.UTF_8));
		assertThat(exit).isEqualTo(2);
		assertThat(err.toString(StandardCharsets.UTF_8))
			.startsWith("load: --plot " + plot + ": no writable directory " + plot.getParent());
	}

	@Test
	void errorsNameTheOption() {
		assertThatIllegalArgumentException().isThrownBy(() -> LoadOptions.parse(new String[] { "--bogus" }))
			.withMessage("unknown option '--bogus'");
		assertThatIllegalArgumentException().isThrownBy(() -> LoadOptions.parse(new String[] { "--requests" }))
			.withMessage("--requests needs a value");
		assertThatIllegalArgumentException().isThrownBy(() -> LoadOptions.parse(new String[] { "--requests", "0" }))
			.withMessage("--requests must lie in [1, 1000000], was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> LoadOptions.parse(new String[] { "--concurrency", "x" }))
			.withMessage("--concurrency must be a whole number, was 'x'");
		assertThatIllegalArgumentException().isThrownBy(() -> LoadOptions.parse(new String[] { "--url", "ftp://x" }))
			.withMessage("--url must be an http or https URL, was 'ftp://x'");
	}

	@Test
	void aBadCommandLineExitsWithTwoAndTheUsage() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int exit = LoadGenerator.run(new String[] { "--requests", "-1" },
				new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
		assertThat(exit).isEqualTo(2);
		assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("load: --requests must lie in")
			.contains("Usage: java -jar nixl4j-sample.jar load");
		assertThat(LoadGenerator.run(new String[] { "--help" }, new PrintStream(out, true, StandardCharsets.UTF_8),
				new PrintStream(err, true, StandardCharsets.UTF_8)))
			.isZero();
	}

	@Test
	void aDecodeWorkerThatIsNotThereFailsAfterTheWait() {
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int exit = LoadGenerator.run(new String[] { "--url", "http://127.0.0.1:1", "--wait", "0", "--no-plot" },
				new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
				new PrintStream(err, true, StandardCharsets.UTF_8));
		assertThat(exit).isEqualTo(1);
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("http://127.0.0.1:1 was not ready within PT0S");
	}

}
