package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.fail;

/**
 * Finds the real model file and the Python venv with the independent references
 * ({@code src/model/install-model-venv.sh}), and runs a reference script over JSON lines.
 * Missing model or venv: the test is skipped with the reason, unless {@code CI=true},
 * where it fails.
 */
final class ModelReference {

	private ModelReference() {
	}

	private static boolean ci() {
		return "true".equals(System.getenv("CI"));
	}

	/**
	 * The real model's file, tokenizer and chat template, and the references' python, for
	 * the tests that compare them with the Python references.
	 *
	 * @param model the model file
	 * @param python the venv's python
	 * @param file the opened file
	 * @param tokenizer its tokenizer
	 * @param template its chat template
	 */
	record Opened(Path model, Path python, GgufFile file, BpeTokenizer tokenizer, ChatTemplate template) {
	}

	private static Opened opened;

	/**
	 * Opens the model file once for this JVM (it stays mapped until the JVM exits); call
	 * it from each test ({@code @BeforeEach}), so that a missing model or venv shows as
	 * each test skipped with the reason.
	 */
	static synchronized Opened open() throws IOException, InterruptedException {
		if (opened == null) {
			Path model = model();
			Path python = python();
			GgufFile file = GgufFile.open(model);
			opened = new Opened(model, python, file, BpeTokenizer.fromGguf(file), ChatTemplate.fromGguf(file));
		}
		return opened;
	}

	/** The model file, fetched under CI. */
	static Path model() throws IOException, InterruptedException {
		Path script = Path.of(System.getProperty("smollm2.fetch.script", "../src/model/fetch-smollm2.sh"));
		Result cached = run(List.of("bash", script.toString(), "--cached-only"), 60);
		if (cached.exit() == 0) {
			return Path.of(cached.output());
		}
		if (cached.exit() != 3) {
			fail(script + " --cached-only exited with " + cached.exit() + ": " + cached.output());
		}
		if (!ci()) {
			Assumptions.abort("SmolLM2's model file is not in the cache (fetch it: " + script + ")");
		}
		Result fetched = run(List.of("bash", script.toString()), 600);
		if (fetched.exit() != 0) {
			fail(script + " exited with " + fetched.exit() + ": " + fetched.output());
		}
		return Path.of(fetched.output());
	}

	/** The venv's python, from the install script (a no-op once installed). */
	static Path python() throws IOException, InterruptedException {
		Path script = Path.of(System.getProperty("model.venv.script", "../src/model/install-model-venv.sh"));
		Result installed = run(List.of("bash", script.toString()), 600);
		if (installed.exit() != 0 || installed.output().isEmpty()) {
			String reason = script + " exited with " + installed.exit() + " (see the build's output)";
			if (ci()) {
				fail(reason);
			}
			Assumptions.abort("the model venv is not available: " + reason);
		}
		return Path.of(installed.output());
	}

	/** A reference script in {@code src/model}. */
	static Path script(String name) {
		Path venvScript = Path.of(System.getProperty("model.venv.script", "../src/model/install-model-venv.sh"));
		return venvScript.toAbsolutePath().getParent().resolve(name);
	}

	/**
	 * Runs {@code python script model} with one request per line on stdin and returns its
	 * stdout lines, failing the test if it exits with an error or answers another number
	 * of lines.
	 */
	static List<String> jsonLines(Path python, Path script, Path model, List<String> requests, long timeoutSeconds)
			throws IOException, InterruptedException {
		Path in = Files.createTempFile("reference", ".in.jsonl");
		Path out = Files.createTempFile("reference", ".out.jsonl");
		try {
			Files.write(in, requests, StandardCharsets.UTF_8);
			Process process = new ProcessBuilder(python.toString(), script.toString(), model.toString())
				.redirectInput(in.toFile())
				.redirectOutput(out.toFile())
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
			if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				fail(script + " did not finish within " + timeoutSeconds + " s");
			}
			if (process.exitValue() != 0) {
				fail(script + " exited with " + process.exitValue() + " (see the build's output)");
			}
			List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
			if (lines.size() != requests.size()) {
				fail(script + " answered " + lines.size() + " lines to " + requests.size() + " requests");
			}
			return lines;
		}
		finally {
			Files.deleteIfExists(in);
			Files.deleteIfExists(out);
		}
	}

	private record Result(int exit, String output) {
	}

	private static Result run(List<String> command, long timeoutSeconds) throws IOException, InterruptedException {
		Path out = Files.createTempFile("model-reference", ".out");
		try {
			Process process = new ProcessBuilder(command).redirectOutput(out.toFile())
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
			if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				fail(command + " did not finish within " + timeoutSeconds + " s");
			}
			return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8).strip());
		}
		finally {
			Files.deleteIfExists(out);
		}
	}

	private static final char[] HEX = "0123456789abcdef".toCharArray();

	/** A JSON string literal, ASCII only (other chars as UTF-16 escapes). */
	static String jsonString(String s) {
		StringBuilder b = new StringBuilder(s.length() + 2).append('"');
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);
			if (c == '"' || c == '\\') {
				b.append('\\').append(c);
			}
			else if (c >= 0x20 && c < 0x7F) {
				b.append(c);
			}
			else {
				b.append("\\u")
					.append(HEX[c >>> 12])
					.append(HEX[(c >>> 8) & 15])
					.append(HEX[(c >>> 4) & 15])
					.append(HEX[c & 15]);
			}
		}
		return b.append('"').toString();
	}

	/** The ids of an answer {@code {"ids": [...]}}; an error answer fails the test. */
	static int[] ids(String answer, String request) {
		int open = answer.indexOf('[');
		int close = answer.lastIndexOf(']');
		if (!answer.startsWith("{\"ids\": [") || close < open) {
			fail("the reference answered " + answer + " to " + request);
		}
		String body = answer.substring(open + 1, close).strip();
		if (body.isEmpty()) {
			return new int[0];
		}
		String[] parts = body.split(",");
		int[] ids = new int[parts.length];
		for (int i = 0; i < parts.length; i++) {
			ids[i] = Integer.parseInt(parts[i].strip());
		}
		return ids;
	}

	/** The text of an answer {@code {"text": "..."}} (ASCII-only JSON). */
	static String text(String answer, String request) {
		String prefix = "{\"text\": \"";
		if (!answer.startsWith(prefix) || !answer.endsWith("\"}")) {
			fail("the reference answered " + answer + " to " + request);
		}
		String body = answer.substring(prefix.length(), answer.length() - 2);
		StringBuilder b = new StringBuilder(body.length());
		for (int i = 0; i < body.length(); i++) {
			char c = body.charAt(i);
			if (c != '\\') {
				b.append(c);
				continue;
			}
			char e = body.charAt(++i);
			switch (e) {
				case 'n' -> b.append('\n');
				case 't' -> b.append('\t');
				case 'r' -> b.append('\r');
				case 'b' -> b.append('\b');
				case 'f' -> b.append('\f');
				case 'u' -> {
					b.append((char) Integer.parseInt(body.substring(i + 1, i + 5), 16));
					i += 4;
				}
				default -> b.append(e);
			}
		}
		return b.toString();
	}

	/** The requests as JSON lines {@code {"key": value}}. */
	static List<String> requests(String key, List<String> jsonValues) {
		List<String> lines = new ArrayList<>(jsonValues.size());
		for (String value : jsonValues) {
			lines.add("{\"" + key + "\": " + value + "}");
		}
		return lines;
	}

}
