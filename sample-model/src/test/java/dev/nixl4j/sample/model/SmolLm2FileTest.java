package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Reads the real model file, SmolLM2-135M-Instruct (Q4_1), from the cache that
 * {@code src/model/fetch-smollm2.sh} fills (the script checks its size and SHA-256 each
 * time). Not in the cache: skipped, unless {@code CI=true}, where the test runs the
 * script to fetch it and fails if that fails.
 */
class SmolLm2FileTest {

	private static Path model;

	@BeforeAll
	static void findModel() throws IOException, InterruptedException {
		model = locate();
	}

	/**
	 * Returns the cached model file, aborts the calling test when it is not cached
	 * (unless {@code CI=true}, where it fetches the file or fails).
	 */
	static Path locate() throws IOException, InterruptedException {
		Path script = Path.of(System.getProperty("smollm2.fetch.script", "../src/model/fetch-smollm2.sh"));
		assertThat(script).as("the fetch script").isRegularFile();
		Fetched cached = run(script, "--cached-only", 60);
		if (cached.exit() == 0) {
			return Path.of(cached.output());
		}
		if (cached.exit() != 3) {
			fail(script + " --cached-only exited with " + cached.exit() + ": " + cached.output());
		}
		if (!"true".equals(System.getenv("CI"))) {
			Assumptions.abort("SmolLM2's model file is not in the cache (fetch it: " + script + ")");
		}
		Fetched fetched = run(script, null, 600);
		if (fetched.exit() != 0) {
			fail(script + " exited with " + fetched.exit() + " (see the build's output): " + fetched.output());
		}
		return Path.of(fetched.output());
	}

	private record Fetched(int exit, String output) {
	}

	/** Runs the script; its stderr goes to the build's output, its stdout is the path. */
	private static Fetched run(Path script, String argument, long timeoutSeconds)
			throws IOException, InterruptedException {
		List<String> command = (argument != null) ? List.of("bash", script.toString(), argument)
				: List.of("bash", script.toString());
		Path out = Files.createTempFile("fetch-smollm2", ".out");
		try {
			Process process = new ProcessBuilder(command).redirectOutput(out.toFile())
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
			if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				fail(script + " did not finish within " + timeoutSeconds + " s");
			}
			return new Fetched(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8).strip());
		}
		finally {
			Files.deleteIfExists(out);
		}
	}

	@Test
	void hasSmolLm2sArchitectureAndTokenizer() throws IOException {
		long start = System.nanoTime();
		try (GgufFile file = GgufFile.open(model)) {
			long opened = System.nanoTime();
			GgufMetadata m = file.metadata();
			assertThat(file.size()).isEqualTo(98_362_432L);
			assertThat(m.getString("general.architecture")).isEqualTo("llama");
			assertThat(m.getInt("llama.block_count")).isEqualTo(30);
			assertThat(m.getInt("llama.embedding_length")).isEqualTo(576);
			assertThat(m.getInt("llama.feed_forward_length")).isEqualTo(1536);
			assertThat(m.getInt("llama.attention.head_count")).isEqualTo(9);
			assertThat(m.getInt("llama.attention.head_count_kv")).isEqualTo(3);
			assertThat(m.getFloat("llama.rope.freq_base")).isEqualTo(100000f);
			List<String> tokens = m.getStringArray("tokenizer.ggml.tokens");
			assertThat(tokens).hasSize(49152);
			assertThat(m.getStringArray("tokenizer.ggml.merges")).hasSize(48900);
			long read = System.nanoTime();

			assertThat(file.tensors()).filteredOn((t) -> t.type() == GgmlType.Q4_1).hasSize(210);
			GgufTensorInfo embedding = file.tensor("token_embd.weight");
			assertThat(embedding.type()).isEqualTo(GgmlType.Q8_0);
			assertThat(embedding.dimensions()).containsExactly(576, 49152);
			assertThat(file.findTensor("output.weight")).isEmpty();
			for (GgufTensorInfo t : file.tensors()) {
				assertThat(t.offset() + t.byteSize()).as(t.name()).isLessThanOrEqualTo(file.size() - file.dataOffset());
			}

			// Every row of the embedding and of one Q4_1 tensor dequantizes to finite
			// values.
			float[] row = new float[576];
			long dequantStart = System.nanoTime();
			for (long r = 0; r < embedding.rowCount(); r++) {
				file.dequantizeRow(embedding, r, row, 0);
				assertFinite(row, embedding.name(), r);
			}
			long dequantEnd = System.nanoTime();
			GgufTensorInfo q41 = file.tensors().stream().filter((t) -> t.type() == GgmlType.Q4_1).findFirst().get();
			float[] q41Row = new float[(int) q41.rowLength()];
			for (long r = 0; r < q41.rowCount(); r++) {
				file.dequantizeRow(q41, r, q41Row, 0);
				assertFinite(q41Row, q41.name(), r);
			}
			System.out.printf(
					"SmolLM2 GGUF: %d tensors, %d keys; open %.1f ms, vocabulary and merges read %.1f ms,"
							+ " token_embd.weight (Q8_0, %d rows) dequantized in %.1f ms%n",
					file.tensors().size(), m.keys().size(), (opened - start) / 1e6, (read - opened) / 1e6,
					embedding.rowCount(), (dequantEnd - dequantStart) / 1e6);
		}
	}

	private static void assertFinite(float[] values, String tensor, long row) {
		for (float value : values) {
			if (!Float.isFinite(value)) {
				fail(tensor + " row " + row + " has " + value);
			}
		}
	}

}
