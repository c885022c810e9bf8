package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * The {@code nixl4j} command line tool: {@code info}, {@code doctor}, {@code selftest},
 * {@code bench}, {@code kv-bench} and {@code memcpy}. {@code bin/nixl4j} in the repository starts it; run
 * {@code nixl4j <command> --help} for a command's options.
 *
 * <p>Exit status: {@value #EXIT_OK} success (for {@code doctor}: READY), {@value #EXIT_FAILURE}
 * a failed check or benchmark, {@value #EXIT_USAGE} a command line that cannot be run,
 * {@value #EXIT_ENVIRONMENT_NOT_READY} the environment is not ready (library missing or not
 * loadable, native access off), {@value #EXIT_BACKEND_NOT_READY} a backend is not ready.
 */
public final class Nixl4jCli {

	/** Success. */
	public static final int EXIT_OK = 0;

	/** A check, transfer or verification failed. */
	public static final int EXIT_FAILURE = 1;

	/** The command line cannot be run as given. */
	public static final int EXIT_USAGE = 2;

	/** {@link Readiness#ENVIRONMENT_NOT_READY}, or NIXL could not be loaded at all. */
	public static final int EXIT_ENVIRONMENT_NOT_READY = 3;

	/** {@link Readiness#BACKEND_NOT_READY}. */
	public static final int EXIT_BACKEND_NOT_READY = 4;

	private static final List<Command> COMMANDS = List.of(new InfoCommand(), new DoctorCommand(),
			new SelftestCommand(), new BenchCommand(), new KvBenchCommand(), new MemcpyCommand());

	/** The child sides of {@code bench --processes 2} and {@code kv-bench}; not listed, started by the benchmarks. */
	private static final List<Command> CHILD_COMMANDS = List.of(new BenchTargetCommand(), new KvBenchProducerCommand());

	private Nixl4jCli() {
	}

	/**
	 * Runs the tool and exits with its status.
	 * @param args the command and its options
	 */
	public static void main(String[] args) {
		int status = run(args, System.out, System.err);
		System.out.flush();
		System.exit(status);
	}

	/**
	 * Runs the tool without exiting the JVM.
	 * @param args the command and its options
	 * @param out where results go
	 * @param err where errors and usage go
	 * @return the exit status
	 */
	public static int run(String[] args, PrintStream out, PrintStream err) {
		if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
			out.print(usage());
			return (args.length == 0) ? EXIT_USAGE : EXIT_OK;
		}
		Command command = find(args[0]);
		if (command == null) {
			err.println("nixl4j: unknown command '" + args[0] + "'");
			err.print(usage());
			return EXIT_USAGE;
		}
		Arguments arguments;
		try {
			arguments = Arguments.parse(Arrays.asList(args).subList(1, args.length), command.valuedOptions(),
					command.flagOptions());
		}
		catch (UsageException ex) {
			err.println("nixl4j " + command.name() + ": " + ex.getMessage());
			err.println("Run 'nixl4j " + command.name() + " --help' for its options.");
			return EXIT_USAGE;
		}
		if (arguments.flag(Arguments.HELP)) {
			out.print(command.help());
			return EXIT_OK;
		}
		try {
			return command.run(arguments, out);
		}
		catch (UsageException ex) {
			err.println("nixl4j " + command.name() + ": " + ex.getMessage());
			return EXIT_USAGE;
		}
		catch (NixlException ex) {
			err.println("nixl4j " + command.name() + ": " + ex.getMessage());
			return (ex.status() == NixlStatus.LIBRARY_UNAVAILABLE) ? EXIT_ENVIRONMENT_NOT_READY : EXIT_FAILURE;
		}
		catch (Exception ex) {
			err.println("nixl4j " + command.name() + ": " + ex);
			return EXIT_FAILURE;
		}
	}

	private static @Nullable Command find(String name) {
		return Stream.concat(COMMANDS.stream(), CHILD_COMMANDS.stream())
			.filter(command -> command.name().equals(name))
			.findFirst()
			.orElse(null);
	}

	private static String usage() {
		StringBuilder text = new StringBuilder("Usage: nixl4j <command> [options]\n\nCommands:\n");
		for (Command command : COMMANDS) {
			text.append(String.format("  %-9s %s%n", command.name(), command.summary()));
		}
		text.append("""

				Run 'nixl4j <command> --help' for a command's options.
				Exit status: 0 success (doctor: READY), 1 failure, 2 usage error,
				3 environment not ready (library missing or not loadable, native access off),
				4 backend not ready.
				""");
		return text.toString();
	}

}
