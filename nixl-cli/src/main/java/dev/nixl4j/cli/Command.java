package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.Set;

/**
 * A command of the {@code nixl4j} tool.
 */
interface Command {

	/**
	 * Returns the name typed on the command line.
	 * @return the name
	 */
	String name();

	/**
	 * Returns one line for the tool's command list.
	 * @return the summary
	 */
	String summary();

	/**
	 * Returns the text {@code --help} prints.
	 * @return the help
	 */
	String help();

	/**
	 * Returns the options that take a value.
	 * @return option names with dashes
	 */
	Set<String> valuedOptions();

	/**
	 * Returns the options that take none.
	 * @return option names with dashes
	 */
	Set<String> flagOptions();

	/**
	 * Runs the command.
	 * @param arguments the parsed options
	 * @param out where results go
	 * @return the exit status
	 * @throws Exception when the command cannot complete; the tool reports it and exits with
	 * {@link Nixl4jCli#EXIT_FAILURE}
	 */
	int run(Arguments arguments, PrintStream out) throws Exception;

}
