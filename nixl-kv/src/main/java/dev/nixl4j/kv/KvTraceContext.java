package dev.nixl4j.kv;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The W3C trace context (<a href="https://www.w3.org/TR/trace-context/">Trace
 * Context</a>) that a KV hand-off carries from one worker to the other: in the lease's
 * {@link KvTransferParams} (the producer's context, which the consumer's pull continues)
 * and in the consumer's done message (the pull's context, which the producer's answer
 * continues).
 *
 * <p>
 * Both values come from other processes, so they are checked strictly before they are
 * kept: {@link #parse} drops a {@code traceparent} that is not exactly the W3C form
 * ({@code 2 hex version, not ff}-{@code 32 hex trace id, not all zero}-{@code 16 hex
 * parent id, not all zero}-{@code 2 hex flags}, lower case, {@value #TRACEPARENT_LENGTH}
 * characters) and a {@code tracestate} that is longer than
 * {@value #MAX_TRACESTATE_LENGTH} characters, has more than
 * {@value #MAX_TRACESTATE_MEMBERS} members or a member that is not {@code key=value} as
 * W3C defines them. Nothing malformed reaches a log or a tracer.
 *
 * @param traceparent the {@code traceparent} value
 * @param tracestate the {@code tracestate} value, {@code ""} for none
 */
public record KvTraceContext(String traceparent, String tracestate) {

	/** The length of a {@code traceparent} value. */
	public static final int TRACEPARENT_LENGTH = 55;

	/** The longest {@code tracestate} value kept. */
	public static final int MAX_TRACESTATE_LENGTH = 512;

	/** The most {@code tracestate} list members kept (W3C's limit). */
	public static final int MAX_TRACESTATE_MEMBERS = 32;

	/**
	 * Checks the values.
	 * @param traceparent the {@code traceparent} value
	 * @param tracestate the {@code tracestate} value, {@code ""} for none
	 * @throws IllegalArgumentException when either is malformed (the values are not
	 * repeated in the message)
	 */
	public KvTraceContext {
		if (!isTraceparent(traceparent)) {
			throw new IllegalArgumentException("traceparent is not a W3C traceparent of version 00 form");
		}
		if (!isTracestate(Objects.requireNonNull(tracestate, "tracestate"))) {
			throw new IllegalArgumentException("tracestate is not a W3C tracestate of at most " + MAX_TRACESTATE_LENGTH
					+ " characters and " + MAX_TRACESTATE_MEMBERS + " members");
		}
	}

	/**
	 * Reads a trace context received from another process: a malformed
	 * {@code traceparent} drops the whole context, a malformed {@code tracestate} only
	 * itself.
	 * @param traceparent the {@code traceparent} value, or {@code null}
	 * @param tracestate the {@code tracestate} value, or {@code null}
	 * @return the context, or {@code null} when there is no valid {@code traceparent}
	 */
	public static @Nullable KvTraceContext parse(@Nullable String traceparent, @Nullable String tracestate) {
		if (traceparent == null || !isTraceparent(traceparent)) {
			return null;
		}
		return new KvTraceContext(traceparent, (tracestate != null && isTracestate(tracestate)) ? tracestate : "");
	}

	/**
	 * Returns the trace id of the {@code traceparent}.
	 * @return 32 lower-case hex digits
	 */
	public String traceId() {
		return this.traceparent.substring(3, 35);
	}

	/**
	 * Returns the parent (span) id of the {@code traceparent}.
	 * @return 16 lower-case hex digits
	 */
	public String parentId() {
		return this.traceparent.substring(36, 52);
	}

	/**
	 * Whether a value is a {@code traceparent} as W3C defines it, in the form of version
	 * {@code 00} (later versions are read as version 00 when they have that length).
	 * @param value the value
	 * @return whether it is one
	 */
	public static boolean isTraceparent(@Nullable String value) {
		if (value == null || value.length() != TRACEPARENT_LENGTH || value.charAt(2) != '-' || value.charAt(35) != '-'
				|| value.charAt(52) != '-') {
			return false;
		}
		if (!hex(value, 0, 2) || value.startsWith("ff") || !hex(value, 3, 35) || !hex(value, 36, 52)
				|| !hex(value, 53, 55)) {
			return false;
		}
		return !zeros(value, 3, 35) && !zeros(value, 36, 52);
	}

	/**
	 * Whether a value is a {@code tracestate} this library keeps: at most
	 * {@value #MAX_TRACESTATE_LENGTH} characters, at most
	 * {@value #MAX_TRACESTATE_MEMBERS} comma-separated {@code key=value} members (empty
	 * members allowed), keys and values as W3C defines them.
	 * @param value the value
	 * @return whether it is one
	 */
	public static boolean isTracestate(String value) {
		if (value.length() > MAX_TRACESTATE_LENGTH) {
			return false;
		}
		if (value.isEmpty()) {
			return true;
		}
		String[] members = value.split(",", -1);
		if (members.length > MAX_TRACESTATE_MEMBERS) {
			return false;
		}
		for (String member : members) {
			String trimmed = member.strip();
			if (!trimmed.isEmpty() && !isMember(trimmed)) {
				return false;
			}
		}
		return true;
	}

	private static boolean isMember(String member) {
		int equals = member.indexOf('=');
		if (equals <= 0 || equals > 256 || member.length() - equals - 1 > 256 || equals == member.length() - 1) {
			return false;
		}
		char first = member.charAt(0);
		if (!((first >= 'a' && first <= 'z') || (first >= '0' && first <= '9'))) {
			return false;
		}
		for (int i = 1; i < equals; i++) {
			char c = member.charAt(i);
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/'
					|| c == '@')) {
				return false;
			}
		}
		for (int i = equals + 1; i < member.length(); i++) {
			char c = member.charAt(i);
			if (c < 0x20 || c > 0x7e || c == ',' || c == '=') {
				return false;
			}
		}
		return member.charAt(member.length() - 1) != ' ';
	}

	private static boolean hex(String value, int from, int to) {
		for (int i = from; i < to; i++) {
			char c = value.charAt(i);
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return false;
			}
		}
		return true;
	}

	private static boolean zeros(String value, int from, int to) {
		for (int i = from; i < to; i++) {
			if (value.charAt(i) != '0') {
				return false;
			}
		}
		return true;
	}

	@Override
	public String toString() {
		return "KvTraceContext[" + this.traceparent + "]";
	}

}
