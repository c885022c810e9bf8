package dev.nixl4j.sample.load;

import java.net.URI;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * What the load generator does.
 *
 * @param decode the decode worker's base URL
 * @param prefill the prefill worker's base URL, for its health, or {@code null}
 * @param requests timed requests
 * @param concurrency requests in flight at once
 * @param promptTokens tokens of the longest prompt; request {@code i} has
 * {@code promptTokens - i % 16} tokens, so that last blocks are full and partial
 * @param warmup requests before the timed ones (checked, not counted)
 * @param maxTokens characters generated per request
 * @param readyWait how long to wait for the workers to be ready
 * @param timeout how long one request may take
 * @param json whether to print one JSON document instead of text
 * @param plot the PNG of latency over the run that the command line writes, or
 * {@code null} for none
 * @param model the language model file the workers serve, to run each prompt in this
 * process too and compare the tokens; {@code null} for the toy model
 * @param tokenPrompts with the model, whether to send prompts of exactly
 * {@code promptTokens} token ids instead of chat prompts
 */
public record LoadOptions(URI decode, @Nullable URI prefill, int requests, int concurrency, int promptTokens,
		int warmup, int maxTokens, Duration readyWait, Duration timeout, boolean json, @Nullable Path plot,
		@Nullable Path model, boolean tokenPrompts) {

	/** Where the latency plot goes without {@code --plot}: the working directory. */
	public static final String DEFAULT_PLOT = "nixl4j-load-latency.png";

	/** The usage text. */
	public static final String USAGE = """
			Usage: java -jar nixl4j-sample.jar load [options]

			Sends concurrent POST /generate requests to a decode worker and checks every answer: the
			KV bytes' CRC32C and the generated text must be what the prompt gives, the block and byte
			counts what its length gives. Prints requests/s, GB/s and latency percentiles; exits 1
			when any request failed or did not check out. With the decode worker's token in
			NIXL_DECODE_TOKEN it sends its requests as a worker's (held to the decode worker's total
			only, not to the share of one caller without a token, and answered with the agents'
			names) and reads the bytes the decode worker read from its meters, which ask for it.

			  --url URL            the decode worker (default http://127.0.0.1:8082)
			  --prefill URL        the prefill worker, to wait for and report its health (optional)
			  --requests N         timed requests (default 32)
			  --concurrency N      requests in flight at once (default 4)
			  --prompt-tokens N    tokens of the longest prompt (default 512: 32 blocks, 64 MiB)
			  --warmup N           checked requests before the timed ones (default 2)
			  --max-tokens N       characters generated per request (default 32)
			  --wait SECONDS       how long to wait for the workers to be ready (default 60)
			  --timeout SECONDS    how long one request may take (default 60)
			  --json               print one JSON document
			  --plot FILE          the PNG of latency over the run: each request's latency and
			                       transfer latency, rolling p50 and p99 (default
			                       ./nixl4j-load-latency.png; the report names it)
			  --no-plot            no PNG (the last of --plot and --no-plot counts)
			  --model FILE         the language model (GGUF) the workers serve: chat prompts,
			                       each answer's tokens compared with the same model run in this
			                       process (greedy); --max-tokens counts tokens
			  --token-prompts      with --model: prompts of exactly --prompt-tokens token ids
			""";

	private static final Set<String> VALUED = Set.of("--url", "--prefill", "--requests", "--concurrency",
			"--prompt-tokens", "--warmup", "--max-tokens", "--wait", "--timeout", "--plot", "--model");

	/**
	 * Parses the command line.
	 * @param args the arguments after {@code load}
	 * @return the options
	 * @throws IllegalArgumentException naming the option that is unknown, missing a value
	 * or out of range
	 */
	public static LoadOptions parse(String[] args) {
		Map<String, String> values = new TreeMap<>();
		boolean json = false;
		boolean noPlot = false;
		boolean tokenPrompts = false;
		for (int i = 0; i < args.length; i++) {
			String arg = args[i];
			if (arg.equals("--json")) {
				json = true;
			}
			else if (arg.equals("--token-prompts")) {
				tokenPrompts = true;
			}
			else if (arg.equals("--no-plot")) {
				// the last of --plot and --no-plot counts, so that a script's default
				// yields
				values.remove("--plot");
				noPlot = true;
			}
			else if (VALUED.contains(arg)) {
				if (i + 1 == args.length) {
					throw new IllegalArgumentException(arg + " needs a value");
				}
				values.put(arg, args[++i]);
				noPlot = noPlot && !arg.equals("--plot");
			}
			else {
				throw new IllegalArgumentException("unknown option '" + arg + "'");
			}
		}
		String prefill = values.get("--prefill");
		Path plot = noPlot ? null : path(values.getOrDefault("--plot", DEFAULT_PLOT), "--plot");
		return new LoadOptions(uri(values.getOrDefault("--url", "http://127.0.0.1:8082"), "--url"),
				(prefill != null) ? uri(prefill, "--prefill") : null, count(values, "--requests", 32, 1, 1_000_000),
				count(values, "--concurrency", 4, 1, 1024), count(values, "--prompt-tokens", 512, 1, 1 << 20),
				count(values, "--warmup", 2, 0, 1_000_000), count(values, "--max-tokens", 32, 0, 4096),
				Duration.ofSeconds(count(values, "--wait", 60, 0, 3600)),
				Duration.ofSeconds(count(values, "--timeout", 60, 1, 3600)), json, plot, model(values.get("--model")),
				tokenPrompts);
	}

	private static @Nullable Path model(@Nullable String value) {
		if (value == null) {
			return null;
		}
		try {
			return Path.of(value).toAbsolutePath().normalize();
		}
		catch (InvalidPathException ex) {
			throw new IllegalArgumentException("--model is not a file name: '" + value + "'", ex);
		}
	}

	private static Path path(String value, String name) {
		if (!value.endsWith(".png")) {
			throw new IllegalArgumentException(name + " must name a .png file, was '" + value + "'");
		}
		try {
			return Path.of(value).toAbsolutePath().normalize();
		}
		catch (InvalidPathException ex) {
			throw new IllegalArgumentException(name + " is not a file name: '" + value + "'", ex);
		}
	}

	private static int count(Map<String, String> values, String name, int fallback, int min, int max) {
		String value = values.get(name);
		if (value == null) {
			return fallback;
		}
		try {
			int n = Integer.parseInt(value);
			if (n < min || n > max) {
				throw new IllegalArgumentException(name + " must lie in [" + min + ", " + max + "], was " + n);
			}
			return n;
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(name + " must be a whole number, was '" + value + "'");
		}
	}

	private static URI uri(String value, String name) {
		URI uri;
		try {
			uri = URI.create(value.endsWith("/") ? value.substring(0, value.length() - 1) : value);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(name + " is not a URL: '" + value + "'", ex);
		}
		if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
			throw new IllegalArgumentException(name + " must be an http or https URL, was '" + value + "'");
		}
		return uri;
	}

}
