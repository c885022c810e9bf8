package dev.nixl4j.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A command of the {@code nixl4j} tool: it prints its results to the tool's output and
 * returns its exit status.
 */
abstract class Subcommand implements Callable<Integer> {

	// picocli injects both before call() runs
	@ParentCommand
	@SuppressWarnings("NullAway.Init")
	private Nixl4jCommand tool;

	@Spec
	@SuppressWarnings("NullAway.Init")
	private CommandSpec spec;

	/**
	 * Returns where results go.
	 * @return the tool's output
	 */
	final PrintStream out() {
		return this.tool.out();
	}

	/**
	 * Returns a usage error of this command, for options that are valid one by one but
	 * not together; the tool prints it and exits with {@link Nixl4jCli#EXIT_USAGE}.
	 * @param message what is wrong, naming the options
	 * @return the exception to throw
	 */
	/**
	 * Says on the error stream that device memory was asked for and CUDA is missing.
	 * @param missing what {@code dev.nixl4j.cuda} found instead of a device
	 * @return {@link Nixl4jCli#EXIT_NO_CUDA}
	 */
	final int noCuda(String missing) {
		this.spec.commandLine()
			.getErr()
			.println(this.spec.qualifiedName() + ": --memory vram: no CUDA device or driver was found, nothing was "
					+ "measured (CUDA " + missing + ")");
		return Nixl4jCli.EXIT_NO_CUDA;
	}

	final ParameterException usageError(String message) {
		return new ParameterException(this.spec.commandLine(), message);
	}

	/**
	 * Serves the line protocol of a benchmark's child process: one command per line of
	 * standard input, words separated by spaces; {@code QUIT} answers {@code BYE} and
	 * ends, a command the handler does not know answers {@code ERROR}. Output is flushed
	 * after every answer.
	 * @param out where answers go
	 * @param handler answers one command
	 * @return {@link Nixl4jCli#EXIT_OK} on {@code QUIT} or at the end of the input
	 * @throws Exception what the handler threw
	 */
	static int serveCommands(PrintStream out, CommandHandler handler) throws Exception {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null) {
			String[] command = line.strip().split(" ");
			if (command[0].equals("QUIT")) {
				out.println("BYE");
				out.flush();
				return Nixl4jCli.EXIT_OK;
			}
			if (!handler.handle(command)) {
				out.println("ERROR unknown command '" + command[0] + "'");
			}
			out.flush();
		}
		return Nixl4jCli.EXIT_OK;
	}

	/** Answers one command of a child process's line protocol. */
	@FunctionalInterface
	interface CommandHandler {

		/**
		 * Answers a command.
		 * @param command the command's words, the first naming it
		 * @return {@code false} when the command is unknown
		 * @throws IOException when answering failed
		 */
		boolean handle(String[] command) throws IOException;

	}

}
