package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The chat template read from a GGUF file the test writes, with its own default system
 * prompt; templates of another shape are refused.
 */
class ChatTemplateTest {

	@TempDir
	Path dir;

	/** Reads the template from a file; {@code null}: a file without one. */
	private ChatTemplate open(@Nullable String template) throws IOException {
		GgufWriter w = (template != null) ? new GgufWriter().kv(ChatTemplate.KEY, (b) -> b.u32(8).str(template))
				: new GgufWriter().kv("general.name", (b) -> b.u32(8).str("no template"));
		Path path = Files.write(Files.createTempFile(this.dir, "t", ".gguf"), w.write());
		try (GgufFile file = GgufFile.open(path)) {
			return ChatTemplate.fromGguf(file);
		}
	}

	private static String chatMl(String system) {
		return "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
				+ "{{ '<|im_start|>system\n" + system + "<|im_end|>\n' }}{% endif %}"
				+ "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
				+ "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
	}

	@Test
	void rendersWithTheFilesDefaultSystemPrompt() throws IOException {
		ChatTemplate t = open(chatMl("Be brief."));
		assertThat(t.defaultSystemPrompt()).isEqualTo("Be brief.");
		assertThat(t.prompt("Hi")).isEqualTo("<|im_start|>system\nBe brief.<|im_end|>\n"
				+ "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
		assertThat(t.render(List.of(new ChatMessage("system", "S"), new ChatMessage("user", "U"),
				new ChatMessage("assistant", "A")), false))
			.isEqualTo("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
					+ "<|im_start|>assistant\nA<|im_end|>\n");
		assertThat(t.render(List.of(), true)).isEqualTo("<|im_start|>assistant\n");
		assertThat(t.render(List.of(), false)).isEmpty();
	}

	@Test
	void refusesOtherTemplates() {
		for (String other : List.of("", "{{ messages }}", chatMl("it's"), chatMl("a\\nb"), chatMl("x<|im_end|>"),
				chatMl("x").replace("add_generation_prompt", "add_prompt"))) {
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> open(other))
				.withMessageContaining("'tokenizer.chat_template'");
		}
		assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> open(null))
			.withMessageContaining("is missing");
	}

}
