package dev.nixl4j.cli;

import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.List;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code nixl4j} command line tool: {@code info}, {@code doctor}, {@code selftest},
 * {@code bench}, {@code kv-bench}, {@code memcpy} and {@code registry-bench}.
 * {@code bin/nixl4j} in the repository starts it; run {@code nixl4j <command> --help} for
 * a command's options.
 *
 * <p>
 * Exit status: {@value #EXIT_OK} success (for {@code doctor}: READY),
 * {@value #EXIT_FAILURE} a failed check or benchmark, {@value #EXIT_USAGE} a command line
 * that cannot be run, {@value #EXIT_ENVIRONMENT_NOT_READY} the environment is not ready
 * (library missing or not loadable, native access off), {@value #EXIT_BACKEND_NOT_READY}
 * a backend is not ready, {@value #EXIT_NO_CUDA} device memory was asked for and no CUDA
 * device or driver was found.
 */
public final class Nixl4jCli {

	/** Success. */
	public static final int EXIT_OK = 0;

	/** A check, transfer or verification failed. */
	public static final int EXIT_FAILURE = 1;

	/** The command line cannot be run as given. */
	public static final int EXIT_USAGE = 2;

	/** The environment is not ready, or NIXL could not be loaded at all. */
	public static final int EXIT_ENVIRONMENT_NOT_READY = 3;

	/** A backend is not ready. */
	public static final int EXIT_BACKEND_NOT_READY = 4;

	/**
	 * Device memory was asked for ({@code bench} or {@code kv-bench} with
	 * {@code --memory vram}) and no CUDA driver, runtime or device was found: nothing was
	 * measured.
	 */
	public static final int EXIT_NO_CUDA = 5;

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
	 * @param out where results, help and the version go
	 * @param err where errors go
	 * @return the exit status
	 */
	public static int run(String[] args, PrintStream out, PrintStream err) {
		PrintWriter outWriter = new PrintWriter(new OutputStreamWriter(out, out.charset()), true);
		PrintWriter errWriter = new PrintWriter(new OutputStreamWriter(err, err.charset()), true);
		CommandLine commandLine = Nixl4jCommand.commandLine(out)
			.setOut(outWriter)
			.setErr(errWriter)
			.setParameterExceptionHandler(Nixl4jCli::usageError)
			.setExecutionExceptionHandler((ex, command, parseResult) -> failure(ex, command));
		try {
			return commandLine.execute(args);
		}
		finally {
			outWriter.flush();
			errWriter.flush();
			out.flush();
		}
	}

	private static int usageError(ParameterException ex, String[] args) {
		CommandLine command = ex.getCommandLine();
		String name = command.getCommandSpec().qualifiedName();
		boolean tool = command.getCommandSpec().parent() == null;
		String message = ex.getMessage();
		if (tool && ex instanceof UnmatchedArgumentException unmatched) {
			List<String> arguments = unmatched.getUnmatched();
			if (!arguments.isEmpty() && !arguments.getFirst().startsWith("-")) {
				message = "unknown command '" + arguments.getFirst() + "'";
			}
		}
		PrintWriter err = command.getErr();
		err.println(name + ": " + message);
		UnmatchedArgumentException.printSuggestions(ex, err);
		err.println("Run '" + name + " --help' for " + (tool ? "its commands." : "its options."));
		return EXIT_USAGE;
	}

	private static int failure(Exception ex, CommandLine command) {
		String name = command.getCommandSpec().qualifiedName();
		if (ex instanceof NixlException nixl) {
			command.getErr().println(name + ": " + nixl.getMessage());
			return (nixl.status() == NixlStatus.LIBRARY_UNAVAILABLE || nixl.status() == NixlStatus.NATIVE_ACCESS_DENIED)
					? EXIT_ENVIRONMENT_NOT_READY : EXIT_FAILURE;
		}
		command.getErr().println(name + ": " + ex);
		return EXIT_FAILURE;
	}

}
