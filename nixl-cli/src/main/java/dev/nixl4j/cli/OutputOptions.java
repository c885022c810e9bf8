package dev.nixl4j.cli;

import java.math.BigDecimal;
import java.math.RoundingMode;

import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * The output format of the commands that print results: text tables for people, or one
 * JSON document for scripts.
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

	/**
	 * Returns a measured figure as the JSON documents print it: with three decimals, as
	 * the tables do, or {@code null} when there is none (not a number or infinite).
	 * @param figure the figure
	 * @return the figure rounded to three decimals, or {@code null}
	 */
	static @Nullable BigDecimal figure(double figure) {
		if (Double.isNaN(figure) || Double.isInfinite(figure)) {
			return null;
		}
		return BigDecimal.valueOf(figure).setScale(3, RoundingMode.HALF_UP);
	}

}
