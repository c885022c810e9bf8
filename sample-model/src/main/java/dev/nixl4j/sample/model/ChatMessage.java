package dev.nixl4j.sample.model;

import java.util.Objects;

/**
 * One message of a chat conversation.
 *
 * @param role who wrote it: {@code system}, {@code user} or {@code assistant}
 * @param content the text
 */
public record ChatMessage(String role, String content) {

	/**
	 * Creates a message.
	 * @param role who wrote it
	 * @param content the text
	 */
	public ChatMessage {
		Objects.requireNonNull(role, "role");
		Objects.requireNonNull(content, "content");
	}

}
