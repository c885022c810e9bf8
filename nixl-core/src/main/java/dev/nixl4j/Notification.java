package dev.nixl4j;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * A notification message received from a remote agent: either attached to a transfer
 * (delivered only after the transfer's data landed) or sent on its own.
 *
 * @param remoteAgent the agent that sent it
 * @param message the message bytes
 */
public record Notification(String remoteAgent, byte[] message) {

	/**
	 * Copies the message.
	 * @param remoteAgent the sender
	 * @param message the bytes
	 */
	public Notification {
		message = message.clone();
	}

	@Override
	public byte[] message() {
		return this.message.clone();
	}

	/**
	 * Returns the message decoded as UTF-8.
	 * @return the text
	 */
	public String text() {
		return new String(this.message, StandardCharsets.UTF_8);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof Notification that && this.remoteAgent.equals(that.remoteAgent)
				&& Arrays.equals(this.message, that.message);
	}

	@Override
	public int hashCode() {
		return 31 * this.remoteAgent.hashCode() + Arrays.hashCode(this.message);
	}

	@Override
	public String toString() {
		return "Notification[from '" + this.remoteAgent + "', " + this.message.length + " bytes]";
	}

}
