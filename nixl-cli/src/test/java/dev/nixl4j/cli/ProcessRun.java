package dev.nixl4j.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A finished child process: its exit status and what it printed.
 *
 * @param exitCode the exit status
 * @param out its standard output
 * @param err its standard error
 */
record ProcessRun(int exitCode, String out, String err) {

	/**
	 * Runs a command to completion; output goes through files so that neither stream can
	 * fill up and block the child.
	 * @param command the command
	 * @param directory its working directory, which also receives the output files
	 * @param environment changes to the inherited environment
	 * @return the finished run
	 * @throws IOException when it cannot start
	 * @throws InterruptedException when interrupted while waiting
	 */
	static ProcessRun run(List<String> command, Path directory, Consumer<Map<String, String>> environment)
			throws IOException, InterruptedException {
		Path out = Files.createTempFile(directory, "out", ".txt");
		Path err = Files.createTempFile(directory, "err", ".txt");
		ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile())
			.redirectOutput(out.toFile())
			.redirectError(err.toFile())
			.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
		environment.accept(builder.environment());
		Process process = builder.start();
		if (!process.waitFor(5, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new IllegalStateException("did not finish: " + command);
		}
		return new ProcessRun(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
				Files.readString(err, StandardCharsets.UTF_8));
	}

	/**
	 * Describes the run for assertion messages.
	 * @return exit status and both outputs
	 */
	String describe() {
		return "exit " + this.exitCode + "\n--- stdout\n" + this.out + "\n--- stderr\n" + this.err;
	}

}
