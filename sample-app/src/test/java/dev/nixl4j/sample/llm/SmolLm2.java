package dev.nixl4j.sample.llm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.fail;

/**
 * Finds SmolLM2-135M-Instruct's model file for the sample's tests, through
 * {@code src/model/fetch-smollm2.sh} (system property {@code smollm2.fetch.script}),
 * which checks its size and SHA-256 each time. Not in the cache: the calling test is
 * skipped, unless {@code CI=true}, where the script fetches it and a failure fails the
 * test.
 */
public final class SmolLm2 {

	private static Path model;

	private SmolLm2() {
	}

	/**
	 * Returns the model file's path.
	 * @return the path
	 */
	public static synchronized Path path() {
		if (model == null) {
			model = find();
		}
		return model;
	}

	private static Path find() {
		Path script = Path.of(System.getProperty("smollm2.fetch.script", "../src/model/fetch-smollm2.sh"));
		if (!Files.isRegularFile(script)) {
			fail("the model's fetch script " + script + " is missing");
		}
		Fetched cached = run(script, true, 60);
		if (cached.exit() == 0) {
			return Path.of(cached.output());
		}
		if (cached.exit() != 3) {
			fail(script + " --cached-only exited with " + cached.exit() + ": " + cached.output());
		}
		if (!"true".equals(System.getenv("CI"))) {
			Assumptions.abort("SmolLM2's model file is not in the cache (fetch it: " + script + ")");
		}
		Fetched fetched = run(script, false, 600);
		if (fetched.exit() != 0) {
			fail(script + " exited with " + fetched.exit() + " (see the build's output): " + fetched.output());
		}
		return Path.of(fetched.output());
	}

	private record Fetched(int exit, String output) {
	}

	private static Fetched run(Path script, boolean cachedOnly, long timeoutSeconds) {
		List<String> command = new ArrayList<>(List.of("bash", script.toString()));
		if (cachedOnly) {
			command.add("--cached-only");
		}
		try {
			Path out = Files.createTempFile("fetch-smollm2", ".out");
			try {
				Process process = new ProcessBuilder(command).redirectOutput(out.toFile())
					.redirectError(ProcessBuilder.Redirect.INHERIT)
					.start();
				if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
					process.destroyForcibly();
					fail(script + " did not finish within " + timeoutSeconds + " s");
				}
				return new Fetched(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8).strip());
			}
			finally {
				Files.deleteIfExists(out);
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot run " + script + ": " + ex, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while running " + script, ex);
		}
	}

}
