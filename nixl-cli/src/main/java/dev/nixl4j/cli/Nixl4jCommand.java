package dev.nixl4j.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Properties;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The {@code nixl4j} command itself: its subcommands, and the help, version and exit
 * statuses every one of them shares.
 */
@Command(name = "nixl4j", scope = ScopeType.INHERIT, mixinStandardHelpOptions = true,
		versionProvider = Nixl4jCommand.Version.class, abbreviateSynopsis = true, synopsisSubcommandLabel = "COMMAND",
		sortOptions = false, descriptionHeading = "%n", parameterListHeading = "%nParameters:%n",
		optionListHeading = "%nOptions:%n", commandListHeading = "%nCommands:%n",
		exitCodeListHeading = "%nExit status:%n",
		description = { "Checks, tests and measures NIXL from Java.", "",
				"Run 'nixl4j COMMAND --help' for a command's options." },
		subcommands = { InfoCommand.class, DoctorCommand.class, SelftestCommand.class, BenchCommand.class,
				KvBenchCommand.class, MemcpyCommand.class, CommandLine.HelpCommand.class, BenchTargetCommand.class,
				KvBenchProducerCommand.class, KvBenchConsumerCommand.class, RegistryBenchCommand.class,
				RegistryBenchServerCommand.class },
		exitCodeList = { "0:success (doctor: READY)", "1:a check, transfer or verification failed",
				"2:usage error: the command line cannot be run as given",
				"3:environment not ready (library missing or not loadable, native access off)", "4:backend not ready",
				"5:bench or kv-bench with --memory vram: no CUDA device or driver was found" })
final class Nixl4jCommand implements Callable<Integer> {

	private final PrintStream out;

	// picocli injects it before call() runs
	@Spec
	@SuppressWarnings("NullAway.Init")
	private CommandSpec spec;

	/**
	 * Creates the command.
	 * @param out where the subcommands print their results
	 */
	Nixl4jCommand(PrintStream out) {
		this.out = out;
	}

	/**
	 * Creates the command line of the tool, which reads enum values in any case and lets
	 * the last of a repeated option win.
	 * @param out where the subcommands print their results
	 * @return the command line, with picocli's own output and error handling
	 */
	static CommandLine commandLine(PrintStream out) {
		return new CommandLine(new Nixl4jCommand(out)).setCaseInsensitiveEnumValuesAllowed(true)
			.setOverwrittenOptionsAllowed(true);
	}

	/**
	 * Returns where results go.
	 * @return the output
	 */
	PrintStream out() {
		return this.out;
	}

	/** Without a command: the usage, as an error. */
	@Override
	public Integer call() {
		this.spec.commandLine().usage(this.spec.commandLine().getErr());
		return Nixl4jCli.EXIT_USAGE;
	}

	/** This build's version, and the JVM's. */
	static final class Version implements IVersionProvider {

		@Override
		public String[] getVersion() throws IOException {
			Properties properties = new Properties();
			try (InputStream in = Nixl4jCommand.class.getResourceAsStream("version.properties")) {
				if (in != null) {
					properties.load(in);
				}
			}
			return new String[] { "nixl4j " + properties.getProperty("version", "(version unknown)"),
					"Java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")" };
		}

	}

}
