package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Finds the real model file and the Python venv with the independent references for the
 * tests that compare the engine with them. The scripts' paths come from surefire's system
 * properties ({@code smollm2.fetch.script}, {@code model.venv.script}). Missing model or
 * venv: the test is skipped with the reason, unless {@code CI=true}, where the scripts
 * fetch and install them and a failure fails the test.
 */
final class ReferenceScripts {

	private static final boolean CI = "true".equals(System.getenv("CI"));

	private ReferenceScripts() {
	}

	/** The result of one script run: its exit status and its stdout, stripped. */
	record Result(int exit, String output) {
	}

	/** The cached SmolLM2 model file (fetched first under CI). */
	static Path model() throws IOException, InterruptedException {
		Path script = Path.of(System.getProperty("smollm2.fetch.script", "../src/model/fetch-smollm2.sh"));
		assertThat(script).as("the fetch script").isRegularFile();
		Result cached = run(List.of("bash", script.toString(), "--cached-only"), null, 60);
		if (cached.exit() == 0) {
			return Path.of(cached.output());
		}
		if (cached.exit() != 3) {
			fail(script + " --cached-only exited with " + cached.exit() + ": " + cached.output());
		}
		if (!CI) {
			Assumptions.abort("SmolLM2's model file is not in the cache (fetch it: " + script + ")");
		}
		Result fetched = run(List.of("bash", script.toString()), null, 600);
		if (fetched.exit() != 0) {
			fail(script + " exited with " + fetched.exit() + " (see the build's output)");
		}
		return Path.of(fetched.output());
	}

	/**
	 * The install script of the references' venv (its directory also holds the scripts).
	 */
	static Path venvScript() {
		Path script = Path.of(System.getProperty("model.venv.script", "../src/model/install-model-venv.sh"));
		assertThat(script).as("the venv install script").isRegularFile();
		return script;
	}

	/** The venv's python; installs it if missing (outside CI a failed install skips). */
	static Path python() throws IOException, InterruptedException {
		Path script = venvScript();
		Result installed = run(List.of("bash", script.toString()), null, 900);
		if (installed.exit() != 0) {
			if (!CI) {
				Assumptions.abort("the references' venv is not installed and " + script + " failed (exit "
						+ installed.exit() + "); install it by running the script");
			}
			fail(script + " exited with " + installed.exit() + " (see the build's output)");
		}
		Path python = Path.of(installed.output());
		assertThat(python).as("the venv's python").isRegularFile();
		return python;
	}

	/**
	 * Runs a command with {@code input} on its stdin; its stderr goes to the build's
	 * output. Fails the test if it runs longer than {@code timeoutSeconds}.
	 */
	static Result run(List<String> command, String input, long timeoutSeconds)
			throws IOException, InterruptedException {
		Path out = Files.createTempFile("reference", ".out");
		Path in = Files.createTempFile("reference", ".in");
		try {
			Files.writeString(in, (input != null) ? input : "", StandardCharsets.UTF_8);
			Process process = new ProcessBuilder(command).redirectInput(in.toFile())
				.redirectOutput(out.toFile())
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
			if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				fail(command + " did not finish within " + timeoutSeconds + " s");
			}
			return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8).strip());
		}
		finally {
			Files.deleteIfExists(out);
			Files.deleteIfExists(in);
		}
	}

	/** {@code s} as a JSON string literal. */
	static String jsonString(String s) {
		StringBuilder sb = new StringBuilder("\"");
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);
			switch (c) {
				case '"' -> sb.append("\\\"");
				case '\\' -> sb.append("\\\\");
				case '\n' -> sb.append("\\n");
				case '\r' -> sb.append("\\r");
				case '\t' -> sb.append("\\t");
				default -> {
					if (c < 0x20) {
						sb.append(String.format("\\u%04x", (int) c));
					}
					else {
						sb.append(c);
					}
				}
			}
		}
		return sb.append('"').toString();
	}

}
