package dev.nixl4j.cli;

import java.io.PrintStream;
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
	final ParameterException usageError(String message) {
		return new ParameterException(this.spec.commandLine(), message);
	}

}
