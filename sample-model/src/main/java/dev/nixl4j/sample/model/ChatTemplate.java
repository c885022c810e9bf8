package dev.nixl4j.sample.model;

import java.util.List;

/**
 * The file's ChatML chat template ({@code tokenizer.chat_template}), implemented in Java
 * for its one shape: each message as {@code <|im_start|>role\ncontent<|im_end|>\n}, a
 * default system message first when the conversation does not start with one, and
 * {@code <|im_start|>assistant\n} at the end when a generation prompt is asked for. The
 * default system prompt is read from the template text; a template of any other shape is
 * refused.
 */
public final class ChatTemplate {

	static final String KEY = "tokenizer.chat_template";

	/** The template's text before the default system prompt. */
	static final String BEFORE_SYSTEM = "{% for message in messages %}"
			+ "{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n";

	/** The template's text after the default system prompt. */
	static final String AFTER_SYSTEM = "<|im_end|>\n' }}{% endif %}"
			+ "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
			+ "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

	/** The longest template text read. */
	static final int MAX_TEMPLATE_CHARS = 1 << 16;

	private final String defaultSystemPrompt;

	ChatTemplate(String template) {
		if (template.length() > MAX_TEMPLATE_CHARS || !template.startsWith(BEFORE_SYSTEM)
				|| !template.endsWith(AFTER_SYSTEM)
				|| template.length() < BEFORE_SYSTEM.length() + AFTER_SYSTEM.length()) {
			throw new GgufFormatException("metadata key '" + KEY
					+ "' is not the ChatML template with a default system prompt that this class implements");
		}
		String system = template.substring(BEFORE_SYSTEM.length(), template.length() - AFTER_SYSTEM.length());
		// A quote or backslash would end or escape the Jinja string literal: another
		// shape.
		if (system.indexOf('\'') >= 0 || system.indexOf('\\') >= 0 || system.contains("<|im_end|>")) {
			throw new GgufFormatException(
					"metadata key '" + KEY + "': the default system prompt holds a quote, a backslash or <|im_end|>");
		}
		this.defaultSystemPrompt = system;
	}

	/**
	 * Reads the chat template of a GGUF file.
	 * @param file the open file
	 * @return the template
	 * @throws GgufFormatException if {@code tokenizer.chat_template} is missing, not a
	 * string, or not of the ChatML shape this class implements
	 */
	public static ChatTemplate fromGguf(GgufFile file) {
		return new ChatTemplate(file.metadata().getString(KEY));
	}

	/**
	 * Returns the system prompt used when a conversation starts without one.
	 * @return the default system prompt
	 */
	public String defaultSystemPrompt() {
		return this.defaultSystemPrompt;
	}

	/**
	 * Renders a conversation as the template does.
	 * @param messages the messages, in order
	 * @param addGenerationPrompt whether to end with the start of an assistant message
	 * @return the text
	 */
	public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
		StringBuilder out = new StringBuilder();
		for (int i = 0; i < messages.size(); i++) {
			ChatMessage message = messages.get(i);
			if (i == 0 && !"system".equals(message.role())) {
				append(out, "system", this.defaultSystemPrompt);
			}
			append(out, message.role(), message.content());
		}
		if (addGenerationPrompt) {
			out.append("<|im_start|>assistant\n");
		}
		return out.toString();
	}

	/**
	 * Renders a single user message followed by the generation prompt: what the sample
	 * sends to the model.
	 * @param userMessage the user's message
	 * @return the text
	 */
	public String prompt(String userMessage) {
		return render(List.of(new ChatMessage("user", userMessage)), true);
	}

	private static void append(StringBuilder out, String role, String content) {
		out.append("<|im_start|>").append(role).append('\n').append(content).append("<|im_end|>\n");
	}

}
