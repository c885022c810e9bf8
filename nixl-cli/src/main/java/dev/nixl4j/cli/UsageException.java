package dev.nixl4j.cli;

/**
 * A command line that cannot be run as given; the command line tool prints the message and the
 * command's usage and exits with {@link Nixl4jCli#EXIT_USAGE}.
 */
final class UsageException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what is wrong, in words
	 */
	UsageException(String message) {
		super(message);
	}

}
