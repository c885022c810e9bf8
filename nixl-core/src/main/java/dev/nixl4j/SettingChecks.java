package dev.nixl4j;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The checks that nixl4j's settings share, each with the words of its rejection. Builders
 * and constructors throw {@link IllegalArgumentException} through the {@code require}
 * methods; a configuration layer that reports a setting under its own name (such as
 * Spring Boot's {@code nixl.*} properties) asks the {@code problem} methods and says the
 * same thing.
 */
public final class SettingChecks {

	private SettingChecks() {
	}

	/**
	 * Says what is wrong with a duration that must be more than zero.
	 * @param value the duration, or {@code null}
	 * @return the problem (without the setting's name), or {@code null} when the value is
	 * positive
	 */
	public static @Nullable String positiveProblem(@Nullable Duration value) {
		return (value == null || !value.isPositive()) ? "must be a positive duration" : null;
	}

	/**
	 * Says what is wrong with a duration that must not be negative.
	 * @param value the duration, or {@code null}
	 * @return the problem (without the setting's name), or {@code null} when the value is
	 * zero or more
	 */
	public static @Nullable String notNegativeProblem(@Nullable Duration value) {
		return (value == null || value.isNegative()) ? "must be zero or a positive duration" : null;
	}

	/**
	 * Checks that a duration is more than zero.
	 * @param value the duration
	 * @param name the setting's name, for the message
	 * @return the duration
	 * @throws IllegalArgumentException naming the setting when the duration is zero or
	 * negative
	 */
	public static Duration requirePositive(Duration value, String name) {
		return require(value, name, positiveProblem(Objects.requireNonNull(value, name)));
	}

	/**
	 * Checks that a duration is not negative.
	 * @param value the duration
	 * @param name the setting's name, for the message
	 * @return the duration
	 * @throws IllegalArgumentException naming the setting when the duration is negative
	 */
	public static Duration requireNotNegative(Duration value, String name) {
		return require(value, name, notNegativeProblem(Objects.requireNonNull(value, name)));
	}

	private static Duration require(Duration value, String name, @Nullable String problem) {
		if (problem != null) {
			throw new IllegalArgumentException(name + " " + problem + ", was " + value);
		}
		return value;
	}

}
