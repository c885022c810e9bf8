package dev.nixl4j.cli;

import java.util.Locale;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a size option: a positive number of bytes with an optional binary suffix
 * ({@code k}, {@code m}, {@code g}, also written {@code KiB}, {@code MiB}, {@code GiB}).
 */
final class ByteSize implements ITypeConverter<Long> {

	private static final String[][] SUFFIXES = { { "kib", "k" }, { "mib", "m" }, { "gib", "g" } };

	@Override
	public Long convert(String text) {
		return parse(text);
	}

	/**
	 * Parses a size.
	 * @param text the text
	 * @return bytes, more than 0
	 * @throws TypeConversionException when the text is no positive size or overflows
	 */
	static long parse(String text) {
		String lower = text.strip().toLowerCase(Locale.ROOT);
		int shift = 0;
		for (int i = 0; i < SUFFIXES.length && shift == 0; i++) {
			for (String suffix : SUFFIXES[i]) {
				if (lower.endsWith(suffix)) {
					lower = lower.substring(0, lower.length() - suffix.length()).strip();
					shift = 10 * (i + 1);
					break;
				}
			}
		}
		try {
			long value = Long.parseLong(lower);
			if (value > 0 && value <= (Long.MAX_VALUE >> shift)) {
				return value << shift;
			}
		}
		catch (NumberFormatException ex) {
			// reported below, with the text as given
		}
		throw new TypeConversionException("'" + text + "' is not a positive size such as 4096, 64k or 64m");
	}

}
