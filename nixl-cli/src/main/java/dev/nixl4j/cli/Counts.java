package dev.nixl4j.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Readers of whole-number options with a lower bound, so that a bad count is reported
 * with the option's name before anything runs.
 */
final class Counts {

	private Counts() {
	}

	private static int parse(String text, int minimum) {
		try {
			int value = Integer.parseInt(text.strip());
			if (value >= minimum) {
				return value;
			}
		}
		catch (NumberFormatException ex) {
			// reported below, with the text as given
		}
		throw new TypeConversionException("'" + text + "' is not a whole number of " + minimum + " or more");
	}

	/** A whole number of 0 or more. */
	static final class AtLeastZero implements ITypeConverter<Integer> {

		@Override
		public Integer convert(String text) {
			return parse(text, 0);
		}

	}

	/** A whole number of 1 or more. */
	static final class AtLeastOne implements ITypeConverter<Integer> {

		@Override
		public Integer convert(String text) {
			return parse(text, 1);
		}

	}

}
