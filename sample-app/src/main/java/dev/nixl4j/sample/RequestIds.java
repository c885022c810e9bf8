package dev.nixl4j.sample;

import org.jspecify.annotations.Nullable;

/**
 * The rule for request ids: 1 to 128 characters, no {@code ':'} (the KV helpers' notifications
 * use it as a separator) and no control characters.
 */
public final class RequestIds {

	/** The longest request id. */
	public static final int MAX_LENGTH = 128;

	private RequestIds() {
	}

	/**
	 * Checks a request id.
	 * @param requestId the id
	 * @return the id
	 * @throws SampleException (400) when it breaks the rule
	 */
	public static String require(@Nullable String requestId) {
		if (requestId == null || requestId.isEmpty() || requestId.length() > MAX_LENGTH) {
			throw SampleException.badRequest("requestId must have 1 to " + MAX_LENGTH + " characters");
		}
		for (int i = 0; i < requestId.length(); i++) {
			char c = requestId.charAt(i);
			if (c == ':' || Character.isISOControl(c)) {
				throw SampleException.badRequest("requestId must not contain ':' or control characters");
			}
		}
		return requestId;
	}

}
