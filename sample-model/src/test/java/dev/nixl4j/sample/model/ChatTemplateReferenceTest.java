package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java chat template against the GGUF's own {@code tokenizer.chat_template} rendered
 * by jinja2 ({@code src/model/render_chat_template.py}), and the prompt's tokens against
 * Hugging Face {@code tokenizers}.
 */
class ChatTemplateReferenceTest {

	private static Path model;

	private static Path python;

	private static ChatTemplate template;

	private static BpeTokenizer tokenizer;

	@BeforeEach
	void open() throws IOException, InterruptedException {
		ModelReference.Opened real = ModelReference.open();
		model = real.model();
		python = real.python();
		template = real.template();
		tokenizer = real.tokenizer();
	}

	private static List<List<ChatMessage>> conversations() {
		List<List<ChatMessage>> conversations = new ArrayList<>();
		conversations.add(List.of());
		conversations.add(List.of(new ChatMessage("user", "Hi")));
		conversations.add(List.of(new ChatMessage("system", "You are terse."), new ChatMessage("user", "Hi")));
		conversations.add(List.of(new ChatMessage("system", "")));
		conversations.add(List.of(new ChatMessage("assistant", "I speak first.")));
		conversations.add(List.of(new ChatMessage("user", "a"), new ChatMessage("system", "a late system message")));
		conversations.add(List.of(new ChatMessage("user", "")));
		conversations.add(List.of(new ChatMessage("user", "quotes ' \" {{ x }} {% if %} \\n <|im_end|> é 😀\n\n")));
		Random random = new Random(42);
		TokenizerCorpus corpus = new TokenizerCorpus(43);
		List<String> texts = corpus.strings(2);
		String[] roles = { "user", "assistant" };
		for (int c = 0; c < 20; c++) {
			List<ChatMessage> messages = new ArrayList<>();
			if (random.nextBoolean()) {
				messages.add(new ChatMessage("system", texts.get(random.nextInt(texts.size()))));
			}
			int turns = 1 + random.nextInt(6);
			for (int t = 0; t < turns; t++) {
				messages.add(new ChatMessage(roles[t % 2], texts.get(random.nextInt(texts.size()))));
			}
			conversations.add(messages);
		}
		return conversations;
	}

	@Test
	void rendersAsJinja2RendersTheFilesTemplate() throws IOException, InterruptedException {
		List<List<ChatMessage>> conversations = conversations();
		List<String> requests = new ArrayList<>();
		List<String> expected = new ArrayList<>();
		for (List<ChatMessage> conversation : conversations) {
			for (boolean generationPrompt : new boolean[] { false, true }) {
				StringBuilder json = new StringBuilder("{\"messages\": [");
				for (int i = 0; i < conversation.size(); i++) {
					ChatMessage message = conversation.get(i);
					json.append((i > 0) ? ", " : "")
						.append("{\"role\": ")
						.append(ModelReference.jsonString(message.role()))
						.append(", \"content\": ")
						.append(ModelReference.jsonString(message.content()))
						.append('}');
				}
				requests
					.add(json.append("], \"add_generation_prompt\": ").append(generationPrompt).append('}').toString());
				expected.add(template.render(conversation, generationPrompt));
			}
		}
		List<String> answers = ModelReference.jsonLines(python, ModelReference.script("render_chat_template.py"), model,
				requests, 120);
		for (int i = 0; i < requests.size(); i++) {
			assertThat(expected.get(i)).as(requests.get(i))
				.isEqualTo(ModelReference.text(answers.get(i), requests.get(i)));
		}
		System.out.printf("Chat template: %d renderings identical to jinja2's%n", requests.size());
	}

	@Test
	void promptStartsWithImStartAndNoBos() throws IOException, InterruptedException {
		String prompt = template.prompt("What is the capital of France?");
		assertThat(template.defaultSystemPrompt()).startsWith("You are a helpful AI assistant named SmolLM");
		int[] ids = tokenizer.encode(prompt);
		assertThat(tokenizer.piece(1)).isEqualTo("<|im_start|>");
		assertThat(ids[0]).isEqualTo(1);
		assertThat(Arrays.stream(ids).filter((id) -> id == 1).count()).isEqualTo(3); // system,
																						// user,
																						// assistant
		assertThat(ids[ids.length - 1]).as("the prompt ends with 'assistant\\n'").isNotEqualTo(tokenizer.eosId());
		String request = "{\"encode\": " + ModelReference.jsonString(prompt) + "}";
		List<String> answer = ModelReference.jsonLines(python, ModelReference.script("hf_tokenize.py"), model,
				List.of(request), 120);
		assertThat(ids).isEqualTo(ModelReference.ids(answer.get(0), request));
		assertThat(tokenizer.decode(ids)).isEqualTo(prompt);
	}

}
