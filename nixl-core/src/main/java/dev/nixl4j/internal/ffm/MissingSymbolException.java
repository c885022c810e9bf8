package dev.nixl4j.internal.ffm;

/**
 * What the downcall handle of a function the loaded library does not export throws
 * ({@link Downcalls#bind}): {@link NativeCalls#failure} turns it into the
 * {@link dev.nixl4j.NixlException} of the call that needed the function, naming the
 * call's operation, agent and peer. Created for each such call, without a stack trace of
 * its own: the exception the caller sees is created in the caller's frame.
 */
final class MissingSymbolException extends Exception {

	private final String symbol;

	private final String library;

	MissingSymbolException(String symbol, String library) {
		super(library + " does not export " + symbol, null, false, false);
		this.symbol = symbol;
		this.library = library;
	}

	String symbol() {
		return this.symbol;
	}

	String library() {
		return this.library;
	}

}
