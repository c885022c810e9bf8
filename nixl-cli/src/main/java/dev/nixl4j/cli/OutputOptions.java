package dev.nixl4j.cli;

import picocli.CommandLine.Option;

/**
 * The output format of the commands that print results: text tables for people, or one JSON
 * document for scripts.
 */
final class OutputOptions {

	@Option(names = "--json", description = "print one JSON document instead of text")
	private boolean json;

	/**
	 * Whether to print JSON.
	 * @return {@code true} for one JSON document, {@code false} for text
	 */
	boolean json() {
		return this.json;
	}

}
