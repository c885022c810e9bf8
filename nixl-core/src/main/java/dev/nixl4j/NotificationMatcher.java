package dev.nixl4j;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Selects the notifications a waiter wants: from one remote agent (or any), with an exact
 * message (tag) or a message prefix.
 */
public final class NotificationMatcher {

	private final @Nullable String remoteAgent;

	private final byte[] bytes;

	private final boolean prefix;

	private NotificationMatcher(@Nullable String remoteAgent, byte[] bytes, boolean prefix) {
		this.remoteAgent = remoteAgent;
		this.bytes = bytes.clone();
		this.prefix = prefix;
	}

	/**
	 * Matches a message equal to a tag.
	 * @param remoteAgent the sender, or {@code null} for any sender
	 * @param tag the exact message, UTF-8
	 * @return the matcher
	 */
	public static NotificationMatcher exact(@Nullable String remoteAgent, String tag) {
		return new NotificationMatcher(remoteAgent, tag.getBytes(StandardCharsets.UTF_8), false);
	}

	/**
	 * Matches a message equal to a tag.
	 * @param remoteAgent the sender, or {@code null} for any sender
	 * @param tag the exact message
	 * @return the matcher
	 */
	public static NotificationMatcher exact(@Nullable String remoteAgent, byte[] tag) {
		return new NotificationMatcher(remoteAgent, tag, false);
	}

	/**
	 * Matches a message that starts with a prefix.
	 * @param remoteAgent the sender, or {@code null} for any sender
	 * @param prefix the prefix, UTF-8 (empty matches every message)
	 * @return the matcher
	 */
	public static NotificationMatcher prefix(@Nullable String remoteAgent, String prefix) {
		return new NotificationMatcher(remoteAgent, prefix.getBytes(StandardCharsets.UTF_8), true);
	}

	/**
	 * Returns the sender this matcher accepts.
	 * @return the sender, or empty when it accepts any
	 */
	public Optional<String> remoteAgent() {
		return Optional.ofNullable(this.remoteAgent);
	}

	/**
	 * Whether a notification matches.
	 * @param remote the sender
	 * @param message the message bytes
	 * @return {@code true} if it matches
	 */
	public boolean matches(String remote, byte[] message) {
		if (this.remoteAgent != null && !this.remoteAgent.equals(remote)) {
			return false;
		}
		if (!this.prefix) {
			return Arrays.equals(this.bytes, message);
		}
		return message.length >= this.bytes.length
				&& Arrays.equals(this.bytes, 0, this.bytes.length, message, 0, this.bytes.length);
	}

	@Override
	public String toString() {
		return (this.prefix ? "prefix '" : "tag '") + new String(this.bytes, StandardCharsets.UTF_8) + "' from "
				+ ((this.remoteAgent != null) ? "'" + this.remoteAgent + "'" : "any agent");
	}

}
