package dev.nixl4j.sample;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import dev.nixl4j.sample.llm.SmolLm2;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Bad configuration stops a worker at start-up, in the worker's own process setup, and
 * Spring Boot's failure report names the property (or environment variable) and the
 * value, with no stack trace.
 */
class SampleConfigurationFailureTests {

	private static final String TOKEN = "sample-config-token-0123456789";

	private static final String PREFILL_TOKEN = "sample-config-prefill-token-0123456789";

	@Test
	void anEmptyDecodeTokenNamesTheVariablesAndTheProperty() {
		String output = startFails("decode", "NIXL_DECODE_TOKEN=");
		assertThat(output).contains("NIXL_DECODE_TOKEN").contains("sample.token").contains("is empty");
	}

	@Test
	void aBlankPrefillTokenNamesTheVariablesAndTheProperty() {
		String output = startFails("prefill", "NIXL_PREFILL_TOKEN=   ", "NIXL_DECODE_TOKEN=" + TOKEN);
		assertThat(output).contains("NIXL_PREFILL_TOKEN").contains("sample.token");
	}

	@Test
	void aPrefillWorkerWithoutTheDecodeWorkersTokenNamesTheVariable() {
		String output = startFails("prefill", "NIXL_PREFILL_TOKEN=" + PREFILL_TOKEN, "NIXL_DECODE_TOKEN=");
		assertThat(output).contains("NIXL_DECODE_TOKEN");
	}

	@Test
	void aNegativeTransferTimeoutIsNamedWithItsValue() {
		String output = startFails("decode", "NIXL_DECODE_TOKEN=" + TOKEN, "sample.decode.transfer-timeout=-1s");
		assertThat(output).contains("Property: sample.decode.transfer-timeout")
			.contains("Value: \"PT-1S\"")
			.contains("must be a positive duration");
	}

	@Test
	void aPromptCapBeyondTheStatedMaximumIsNamedWithItsValue() {
		String output = startFails("prefill", "NIXL_PREFILL_TOKEN=" + PREFILL_TOKEN, "NIXL_DECODE_TOKEN=" + TOKEN,
				"sample.max-prompt-tokens=2000000000");
		assertThat(output).contains("Property: sample.max-prompt-tokens")
			.contains("Value: \"2000000000\"")
			.contains("must be between 1 and " + SampleProperties.MAX_PROMPT_TOKENS);
	}

	@Test
	void aPrefillUrlWithoutAHostIsNamedWithItsValue() {
		String output = startFails("decode", "NIXL_DECODE_TOKEN=" + TOKEN, "sample.decode.prefill-url=prefill-worker");
		assertThat(output).contains("Property: sample.decode.prefill-url").contains("prefill-worker");
	}

	@Test
	void aModelFileThatCannotBeReadIsNamed() {
		String output = startFails("decode", "NIXL_DECODE_TOKEN=" + TOKEN, "sample.model.path=/nonexistent/model.gguf");
		assertThat(output).contains("sample.model.path").contains("/nonexistent/model.gguf");
	}

	@Test
	void aKvCacheOfAnotherShapeThanTheModelsNamesThePropertyThatDiffers() {
		String output = startFails("decode", "NIXL_DECODE_TOKEN=" + TOKEN, "sample.model.path=" + SmolLm2.path(),
				"nixl.kv.layers=30", "nixl.kv.kv-heads=4", "nixl.kv.head-dim=64", "nixl.kv.dtype-size=4");
		assertThat(output).contains("nixl.kv.kv-heads is 4, the model needs 3");
	}

	/**
	 * Starts a worker that must fail, with what it writes to standard out (where Spring
	 * Boot's failure report goes) captured.
	 * @return what the start wrote
	 */
	private static String startFails(String role, String... properties) {
		SpringApplicationBuilder application = new SpringApplicationBuilder(SampleApplication.class).profiles(role)
			.properties("server.port=0", "nixl.agent.engine=embedded", "nixl.kv.blocks=8")
			.properties(properties);
		// as command-line arguments too, above the profiles' own files
		String[] arguments = Arrays.stream(properties).map((property) -> "--" + property).toArray(String[]::new);
		ByteArrayOutputStream captured = new ByteArrayOutputStream();
		PrintStream original = System.out;
		System.setOut(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8) {

			@Override
			public void write(byte[] buffer, int offset, int length) {
				original.write(buffer, offset, length);
				synchronized (captured) {
					captured.write(buffer, offset, length);
				}
			}

			@Override
			public void write(int b) {
				original.write(b);
				synchronized (captured) {
					captured.write(b);
				}
			}

		});
		try {
			assertThatException().isThrownBy(() -> application.run(arguments));
		}
		finally {
			System.setOut(original);
		}
		String output;
		synchronized (captured) {
			output = captured.toString(StandardCharsets.UTF_8);
		}
		assertThat(output).contains("APPLICATION FAILED TO START").doesNotContain("\tat org.springframework");
		return output;
	}

}
