package dev.nixl4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The options of one command, in the order given: {@code --name value}, {@code --name=value} or a
 * flag {@code --name}. Order matters for options that refer to an earlier one (a backend
 * parameter belongs to the backend named before it).
 */
final class Arguments {

	/** The help flag every command accepts. */
	static final String HELP = "--help";

	private final List<Option> options;

	private Arguments(List<Option> options) {
		this.options = List.copyOf(options);
	}

	/**
	 * Parses tokens.
	 * @param tokens the command line after the command name
	 * @param valued options that take a value
	 * @param flags options that take none ({@value #HELP} is always accepted)
	 * @return the options
	 * @throws UsageException for an unknown option, a missing value or a stray argument
	 */
	static Arguments parse(List<String> tokens, Set<String> valued, Set<String> flags) {
		List<Option> options = new ArrayList<>();
		for (int i = 0; i < tokens.size(); i++) {
			String token = tokens.get(i);
			if (token.equals("-h") || token.equals(HELP)) {
				options.add(new Option(HELP, null));
				continue;
			}
			if (!token.startsWith("--")) {
				throw new UsageException("unexpected argument '" + token + "'");
			}
			int equals = token.indexOf('=');
			String name = (equals > 0) ? token.substring(0, equals) : token;
			if (flags.contains(name) && equals < 0) {
				options.add(new Option(name, null));
			}
			else if (valued.contains(name)) {
				if (equals > 0) {
					options.add(new Option(name, token.substring(equals + 1)));
				}
				else if (i + 1 < tokens.size()) {
					options.add(new Option(name, tokens.get(++i)));
				}
				else {
					throw new UsageException(name + " needs a value");
				}
			}
			else {
				throw new UsageException("unknown option '" + name + "'");
			}
		}
		return new Arguments(options);
	}

	/**
	 * Returns every option, in order.
	 * @return the options
	 */
	List<Option> options() {
		return this.options;
	}

	/**
	 * Whether a flag was given.
	 * @param name the flag
	 * @return {@code true} if present
	 */
	boolean flag(String name) {
		return this.options.stream().anyMatch(option -> option.name().equals(name));
	}

	/**
	 * Returns every value of a repeatable option.
	 * @param name the option
	 * @return its values, in order
	 */
	List<String> values(String name) {
		return this.options.stream().filter(option -> option.name().equals(name)).map(Option::text).toList();
	}

	/**
	 * Returns the last value of an option.
	 * @param name the option
	 * @return the value, or {@code null} when absent
	 */
	@Nullable String last(String name) {
		List<String> values = values(name);
		return values.isEmpty() ? null : values.getLast();
	}

	/**
	 * Returns an option's value or a default.
	 * @param name the option
	 * @param fallback the default
	 * @return the value
	 */
	String value(String name, String fallback) {
		String value = last(name);
		return (value != null) ? value : fallback;
	}

	/**
	 * Returns a whole-number option (0 or more).
	 * @param name the option
	 * @param fallback the default
	 * @return the value
	 */
	int count(String name, int fallback) {
		String value = last(name);
		if (value == null) {
			return fallback;
		}
		try {
			int parsed = Integer.parseInt(value);
			if (parsed < 0) {
				throw new NumberFormatException();
			}
			return parsed;
		}
		catch (NumberFormatException ex) {
			throw new UsageException(name + " needs a whole number of 0 or more, got '" + value + "'");
		}
	}

	/**
	 * Returns a byte-size option.
	 * @param name the option
	 * @param fallback the default
	 * @return the size in bytes
	 */
	long bytes(String name, long fallback) {
		String value = last(name);
		return (value != null) ? parseBytes(name, value) : fallback;
	}

	/**
	 * Parses a size: a number of bytes with an optional binary suffix ({@code k}, {@code m},
	 * {@code g}, also written {@code KiB}, {@code MiB}, {@code GiB}).
	 * @param name the option, for the error message
	 * @param text the text
	 * @return bytes
	 */
	static long parseBytes(String name, String text) {
		String lower = text.strip().toLowerCase(Locale.ROOT);
		long unit = 1;
		for (String[] suffix : new String[][] { { "kib", "k", "10" }, { "mib", "m", "20" }, { "gib", "g", "30" } }) {
			String cut = lower.endsWith(suffix[0]) ? suffix[0] : lower.endsWith(suffix[1]) ? suffix[1] : null;
			if (cut != null) {
				lower = lower.substring(0, lower.length() - cut.length());
				unit = 1L << Integer.parseInt(suffix[2]);
				break;
			}
		}
		try {
			long value = Long.parseLong(lower.strip());
			if (value <= 0 || value > Long.MAX_VALUE / unit) {
				throw new NumberFormatException();
			}
			return value * unit;
		}
		catch (NumberFormatException ex) {
			throw new UsageException(name + " needs a positive size such as 4096, 64k or 64m, got '" + text + "'");
		}
	}

	/**
	 * One option as given.
	 *
	 * @param name the option, with its dashes
	 * @param value its value, or {@code null} for a flag
	 */
	record Option(String name, @Nullable String value) {

		/**
		 * Returns the value of an option that has one.
		 * @return the value
		 */
		String text() {
			if (this.value == null) {
				throw new UsageException(this.name + " needs a value");
			}
			return this.value;
		}

	}

}
