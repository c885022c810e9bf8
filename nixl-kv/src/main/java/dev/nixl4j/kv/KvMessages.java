package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * The notification messages of the KV protocol, all UTF-8 and starting with a
 * configurable prefix: {@code done} (with a consumer's READ, and again on its own),
 * {@code ack} (the producer's answer), {@code release} (a consumer gives a lease back)
 * and {@code push} (with a producer's WRITE). Their fields and who sends what when:
 * docs/architecture.md, section "KV cache", "Messages". Request ids therefore may not
 * contain {@code ':'}.
 */
final class KvMessages {

	/** The prefix used unless one is configured. */
	static final String DEFAULT_PREFIX = "nixl4j.kv/";

	static final int MAX_REQUEST_ID = 256;

	/** The generation digest of a done message that carries none. */
	static final long NO_GENERATION = 0;

	/** The read id of a done message that carries none. */
	static final long NO_READ = 0;

	/** What starts the read id's field of a done message. */
	private static final String READ_FIELD = "r";

	/** What starts the trace field of a done message. */
	private static final String TRACE_FIELD = "t";

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
		return done(prefix, requestId, leaseId, rank, NO_GENERATION);
	}

	static byte[] done(String prefix, String requestId, long leaseId, int rank, long generation) {
		return done(prefix, requestId, leaseId, rank, generation, NO_READ);
	}

	static byte[] done(String prefix, String requestId, long leaseId, int rank, long generation, long read) {
		return done(prefix, requestId, leaseId, rank, generation, read, null);
	}

	static byte[] done(String prefix, String requestId, long leaseId, int rank, long generation, long read,
			@Nullable KvTraceContext trace) {
		StringBuilder message = new StringBuilder(donePrefix(prefix)).append(requestId)
			.append(':')
			.append(leaseId)
			.append(':')
			.append(rank);
		if (generation != NO_GENERATION) {
			message.append(':').append(Long.toHexString(generation));
		}
		if (read != NO_READ) {
			message.append(':').append(READ_FIELD).append(Long.toHexString(read));
		}
		if (trace != null) {
			message.append(':').append(TRACE_FIELD).append(trace.traceparent());
		}
		return bytes(message.toString());
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
		return parseLeaseMessage(donePrefix(prefix), message, true);
	}

	/**
	 * Reads a release message.
	 * @return the message (same fields as a done message), or {@code null} when it is not
	 * one
	 */
	static @Nullable Done parseRelease(String prefix, String message) {
		return parseLeaseMessage(releasePrefix(prefix), message, false);
	}

	private static @Nullable Done parseLeaseMessage(String head, String message, boolean generation) {
		if (!message.startsWith(head)) {
			return null;
		}
		String[] fields = message.substring(head.length()).split(":", -1);
		int count = fields.length;
		KvTraceContext trace = null;
		if (generation && count >= 4 && count <= 6 && fields[count - 1].startsWith(TRACE_FIELD)) {
			// malformed: dropped, the rest of the message still counts
			trace = KvTraceContext.parse(fields[count - 1].substring(TRACE_FIELD.length()), null);
			count--;
		}
		long read = NO_READ;
		if (generation && (count == 4 || count == 5) && fields[count - 1].startsWith(READ_FIELD)) {
			read = parseHex(fields[count - 1].substring(READ_FIELD.length()));
			if (read == NO_READ) {
				return null;
			}
			count--;
		}
		if (count != 3 && !(generation && count == 4)) {
			return null;
		}
		try {
			requireRequestId(fields[0]);
			long digest = NO_GENERATION;
			if (count == 4) {
				digest = parseHex(fields[3]);
				if (digest == NO_GENERATION) {
					return null;
				}
			}
			return new Done(fields[0], Long.parseLong(fields[1]), Integer.parseInt(fields[2]), digest, read, trace);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	/**
	 * Reads a generation digest or a read id: 1 to 16 lower-case hex digits, as
	 * {@link Long#toHexString} writes it.
	 * @return the value, 0 ({@link #NO_GENERATION}, {@link #NO_READ}) when the text is
	 * not one
	 */
	private static long parseHex(String text) {
		if (text.isEmpty() || text.length() > 16) {
			return NO_GENERATION;
		}
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return NO_GENERATION;
			}
		}
		return Long.parseUnsignedLong(text, 16);
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

	/**
	 * A parsed done or release message; {@code generation} is {@link #NO_GENERATION},
	 * {@code read} {@link #NO_READ} and {@code trace} {@code null} when it carries none
	 * (always for a release).
	 */
	record Done(String requestId, long leaseId, int rank, long generation, long read, @Nullable KvTraceContext trace) {

		Done(String requestId, long leaseId, int rank, long generation) {
			this(requestId, leaseId, rank, generation, NO_READ, null);
		}

		Done(String requestId, long leaseId, int rank, long generation, long read) {
			this(requestId, leaseId, rank, generation, read, null);
		}

	}

}
