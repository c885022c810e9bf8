package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * The notification messages of the KV protocol, all UTF-8 and starting with a
 * configurable prefix:
 * <ul>
 * <li>{@code <prefix>done:<requestId>:<leaseId>:<rank>}: carried by a consumer's READ, so
 * the producer gets it only after the data landed;</li>
 * <li>{@code <prefix>ack:<requestId>:<leaseId>:<rank>:HELD|EXPIRED|RELEASED|UNKNOWN}: the
 * producer's answer, sent on its own;</li>
 * <li>{@code <prefix>release:<requestId>:<leaseId>:<rank>}: a consumer that will not
 * finish its pull gives the lease back, sent on its own;</li>
 * <li>{@code <prefix>push:<requestId>}: carried by a producer's WRITE.</li>
 * </ul>
 * Request ids therefore may not contain {@code ':'}.
 */
final class KvMessages {

	/** The prefix used unless one is configured. */
	static final String DEFAULT_PREFIX = "nixl4j.kv/";

	static final int MAX_REQUEST_ID = 256;

	private KvMessages() {
	}

	static void requireRequestId(@Nullable String requestId) {
		if (requestId == null || requestId.isEmpty()) {
			throw new IllegalArgumentException("requestId must not be empty");
		}
		if (requestId.length() > MAX_REQUEST_ID) {
			throw new IllegalArgumentException(
					"requestId must be at most " + MAX_REQUEST_ID + " characters, was " + requestId.length());
		}
		for (int i = 0; i < requestId.length(); i++) {
			char c = requestId.charAt(i);
			if (c == ':' || c < 0x20 || c == 0x7f) {
				throw new IllegalArgumentException("requestId must not contain ':' or control characters: '"
						+ requestId.replaceAll("\\p{Cntrl}", "?") + "'");
			}
		}
	}

	static void requirePrefix(String prefix) {
		if (prefix.isEmpty() || prefix.length() > 64 || prefix.chars().anyMatch(c -> c < 0x20 || c == ':')) {
			throw new IllegalArgumentException(
					"the notification prefix must be 1 to 64 characters without ':' or control" + " characters");
		}
	}

	static String donePrefix(String prefix) {
		return prefix + "done:";
	}

	static byte[] done(String prefix, String requestId, long leaseId, int rank) {
		return bytes(donePrefix(prefix) + requestId + ":" + leaseId + ":" + rank);
	}

	static String releasePrefix(String prefix) {
		return prefix + "release:";
	}

	static byte[] release(String prefix, String requestId, long leaseId, int rank) {
		return bytes(releasePrefix(prefix) + requestId + ":" + leaseId + ":" + rank);
	}

	static String ackPrefix(String prefix, String requestId, long leaseId, int rank) {
		return prefix + "ack:" + requestId + ":" + leaseId + ":" + rank + ":";
	}

	static byte[] ack(String prefix, String requestId, long leaseId, int rank, LeaseConfirmation confirmation) {
		return bytes(ackPrefix(prefix, requestId, leaseId, rank) + confirmation.name());
	}

	static String push(String prefix, String requestId) {
		return prefix + "push:" + requestId;
	}

	/**
	 * Reads a done message.
	 * @return the message, or {@code null} when it is not one
	 */
	static @Nullable Done parseDone(String prefix, String message) {
		return parseLeaseMessage(donePrefix(prefix), message);
	}

	/**
	 * Reads a release message.
	 * @return the message (same fields as a done message), or {@code null} when it is not
	 * one
	 */
	static @Nullable Done parseRelease(String prefix, String message) {
		return parseLeaseMessage(releasePrefix(prefix), message);
	}

	private static @Nullable Done parseLeaseMessage(String head, String message) {
		if (!message.startsWith(head)) {
			return null;
		}
		String[] fields = message.substring(head.length()).split(":", -1);
		if (fields.length != 3) {
			return null;
		}
		try {
			requireRequestId(fields[0]);
			return new Done(fields[0], Long.parseLong(fields[1]), Integer.parseInt(fields[2]));
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	/**
	 * Reads the confirmation at the end of an ack.
	 * @return it, or {@code null} when the tail is not one
	 */
	static @Nullable LeaseConfirmation parseAck(String ackPrefix, String message) {
		if (!message.startsWith(ackPrefix)) {
			return null;
		}
		try {
			return LeaseConfirmation.valueOf(message.substring(ackPrefix.length()));
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/** A parsed done or release message. */
	record Done(String requestId, long leaseId, int rank) {
	}

}
