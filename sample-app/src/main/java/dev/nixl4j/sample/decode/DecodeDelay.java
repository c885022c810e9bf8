package dev.nixl4j.sample.decode;

import java.time.Duration;

import dev.nixl4j.sample.SampleException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/**
 * The test knob {@code decodeDelayMillis} (accepted from token holders only): how long a
 * request holds its lease before it pulls, bounded by
 * {@code sample.decode.max-decode-delay}.
 */
final class DecodeDelay {

	private DecodeDelay() {
	}

	/** Checks the delay asked for; {@link Duration#ZERO} when none was. */
	static Duration of(@Nullable Long millis, Duration max) {
		if (millis != null && (millis < 0 || millis > max.toMillis())) {
			throw SampleException.badRequest("decodeDelayMillis must lie in [0, " + max.toMillis()
					+ "] (sample.decode.max-decode-delay), was " + millis);
		}
		return (millis == null) ? Duration.ZERO : Duration.ofMillis(millis);
	}

	static void sleep(Duration delay) {
		if (delay.isZero()) {
			return;
		}
		try {
			Thread.sleep(delay);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "Interrupted", "the request was interrupted", ex);
		}
	}

}
