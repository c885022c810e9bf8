package dev.nixl4j.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.nixl4j.SettingChecks;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration option: a positive whole number with a unit ({@code 500ms},
 * {@code 30s}, {@code 2m}; units {@code us}, {@code ms}, {@code s}, {@code m}, {@code h})
 * or ISO-8601 ({@code PT30S}).
 */
final class DurationOption implements ITypeConverter<Duration> {

	private static final Pattern WITH_UNIT = Pattern.compile("(\\d{1,12})\\s*(us|ms|s|m|h)");

	private static final Map<String, ChronoUnit> UNITS = Map.of("us", ChronoUnit.MICROS, "ms", ChronoUnit.MILLIS, "s",
			ChronoUnit.SECONDS, "m", ChronoUnit.MINUTES, "h", ChronoUnit.HOURS);

	@Override
	public Duration convert(String text) {
		return parse(text);
	}

	/**
	 * Parses a duration.
	 * @param text the text
	 * @return the duration, more than zero
	 * @throws TypeConversionException when the text is no positive duration
	 */
	static Duration parse(String text) {
		String lower = text.strip().toLowerCase(Locale.ROOT);
		Duration duration = null;
		Matcher matcher = WITH_UNIT.matcher(lower);
		if (matcher.matches()) {
			duration = Duration.of(Long.parseLong(matcher.group(1)), UNITS.get(matcher.group(2)));
		}
		else if (lower.startsWith("pt")) {
			try {
				duration = Duration.parse(lower);
			}
			catch (DateTimeParseException ex) {
				// reported below, with the text as given
			}
		}
		if (duration == null || SettingChecks.positiveProblem(duration) != null) {
			throw new TypeConversionException(
					"'" + text + "' is not a positive duration such as 500ms, 30s, 2m or PT30S");
		}
		return duration;
	}

}
