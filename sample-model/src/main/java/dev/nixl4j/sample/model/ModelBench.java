package dev.nixl4j.sample.model;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Measures a model's prefill and decode speed: runs a prompt of arbitrary token ids
 * through the model, then decodes greedily, and prints tokens per second for each repeat.
 * <p>
 * Arguments: the GGUF file, the prompt length (default 128), the number of decoded tokens
 * (default 64), the threads (default: available processors) and the repeats (default 3).
 */
public final class ModelBench {

	private ModelBench() {
	}

	/**
	 * Runs the benchmark.
	 * @param args model path, prompt length, decode tokens, threads, repeats
	 * @throws IOException if the model cannot be read
	 */
	public static void main(String[] args) throws IOException {
		PrintStream out = System.out;
		if (args.length < 1 || args.length > 5) {
			out.println("usage: ModelBench model.gguf [prompt-length [decode-tokens [threads [repeats]]]]");
			System.exit(2);
			return;
		}
		Path path = Path.of(args[0]);
		int prompt = (args.length > 1) ? Integer.parseInt(args[1]) : 128;
		int decode = (args.length > 2) ? Integer.parseInt(args[2]) : 64;
		int threads = (args.length > 3) ? Integer.parseInt(args[3]) : Runtime.getRuntime().availableProcessors();
		int repeats = (args.length > 4) ? Integer.parseInt(args[4]) : 3;
		if (prompt < 1 || decode < 0 || repeats < 1) {
			throw new IllegalArgumentException("prompt length >= 1, decode tokens >= 0 and repeats >= 1 please");
		}
		try (LlamaModel model = LlamaModel.load(path, threads)) {
			LlamaConfig config = model.config();
			int[] tokens = new int[prompt];
			for (int i = 0; i < prompt; i++) {
				tokens[i] = (int) ((1L + 7919L * i) % config.vocabulary());
			}
			int blockSize = 16;
			int pages = (prompt + decode + blockSize - 1) / blockSize;
			out.printf(Locale.ROOT, "%s: %d layers, embedding %d, vocabulary %d; %d threads, %s float lanes%n",
					path.getFileName(), config.layers(), config.embedding(), config.vocabulary(), threads,
					Kernels.F.length());
			Sampler greedy = Sampler.greedy();
			for (int r = 0; r < repeats; r++) {
				try (Arena arena = Arena.ofShared()) {
					KvPages kv = KvPages.allocate(arena, config, blockSize, pages);
					long start = System.nanoTime();
					long cpuStart = cpuNanos();
					float[] logits = model.forward(tokens, 0, kv);
					long prefilled = System.nanoTime();
					long cpuPrefilled = cpuNanos();
					int next = greedy.next(logits);
					for (int i = 0; i < decode; i++) {
						next = greedy.next(model.forward(new int[] { next }, prompt + i, kv));
					}
					long decoded = System.nanoTime();
					long cpuDecoded = cpuNanos();
					out.printf(Locale.ROOT,
							"repeat %d: prefill %d tokens %.1f tok/s (%.2f CPU ms/token),"
									+ " decode %d tokens %.1f tok/s (%.2f CPU ms/token)%n",
							r + 1, prompt, prompt / ((prefilled - start) / 1e9),
							(cpuPrefilled - cpuStart) / 1e6 / prompt, decode,
							decode / Math.max(1e-9, (decoded - prefilled) / 1e9),
							(cpuDecoded - cpuPrefilled) / 1e6 / Math.max(1, decode));
				}
			}
		}
	}

	/** The process's CPU time (all threads), or -1 where the JVM does not tell. */
	private static long cpuNanos() {
		return (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os)
				? os.getProcessCpuTime() : -1;
	}

}
