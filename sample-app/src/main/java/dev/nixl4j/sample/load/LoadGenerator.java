package dev.nixl4j.sample.load;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.ToyModel;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Drives a decode worker with concurrent {@code POST /generate} requests and checks every
 * answer independently of the workers: from the prompt it sent, it computes the CRC32C
 * that the KV blocks must have and the text that must come back. Run it with
 * {@code java -jar nixl4j-sample.jar load --help}.
 */
public final class LoadGenerator {

	private static final JsonMapper JSON = JsonMapper.builder()
		.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
		.build();

	private static final String TEXT = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,;0123456789";

	private final LoadOptions options;

	private final HttpClient http;

	private final @Nullable String token;

	private @Nullable ModelCheck modelCheck;

	/**
	 * Creates a load generator that presents the decode worker's token from the
	 * environment ({@code NIXL_DECODE_TOKEN}, as the workers get it), when it is set.
	 * @param options what to do
	 */
	public LoadGenerator(LoadOptions options) {
		this(options, System.getenv("NIXL_DECODE_TOKEN"));
	}

	/**
	 * Creates a load generator.
	 * @param options what to do
	 * @param token the decode worker's token, or {@code null}: with it, the requests are
	 * a worker's (held to the decode worker's total only, answered with agent names) and
	 * the report has the bytes read from {@code /actuator/metrics}, which asks for it;
	 * without it the requests are those of a caller without a token, held to that
	 * caller's share ({@code sample.generate.*}), and the report says that the bytes read
	 * could not be read
	 */
	public LoadGenerator(LoadOptions options, @Nullable String token) {
		this.options = options;
		this.token = (token == null || token.isBlank()) ? null : token;
		this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
	}

	/**
	 * Runs the command line: the load, the latency plot when one is asked for (by default
	 * in the working directory), then the report, which names the plot.
	 * @param args the arguments after {@code load}
	 * @param out where the report goes
	 * @param err where errors go
	 * @return 0 when every request checked out and the plot was written, 1 when not, 2
	 * for a bad command line
	 */
	public static int run(String[] args, PrintStream out, PrintStream err) {
		if (List.of(args).contains("--help")) {
			out.print(LoadOptions.USAGE);
			return 0;
		}
		LoadOptions options;
		try {
			options = LoadOptions.parse(args);
		}
		catch (IllegalArgumentException ex) {
			err.println("load: " + ex.getMessage());
			err.print(LoadOptions.USAGE);
			return 2;
		}
		Path plot = options.plot();
		if (plot != null && (plot.getParent() == null || !Files.isDirectory(plot.getParent())
				|| !Files.isWritable(plot.getParent()))) {
			// before the load rather than after it, which may have taken long
			err.println("load: --plot " + plot + ": no writable directory " + plot.getParent());
			return 2;
		}
		try {
			LoadReport report = new LoadGenerator(options).run();
			String plotError = null;
			if (plot != null) {
				try {
					LatencyPlot.write(report, plot);
				}
				catch (IOException | RuntimeException ex) {
					plotError = "could not write the latency plot to " + plot + ": " + ex;
				}
			}
			out.println(options.json() ? report.toJson() : report.toText());
			if (plotError != null) {
				err.println("load: " + plotError);
				return 1;
			}
			return report.ok() ? 0 : 1;
		}
		catch (LoadException ex) {
			err.println("load: " + ex.getMessage());
			return 1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			err.println("load: interrupted");
			return 1;
		}
	}

	/**
	 * Waits for the workers, sends the warm-up and the timed requests, checks every
	 * answer and reads the workers' health and the decode worker's bytes read.
	 * @return the report
	 * @throws LoadException when a worker does not become ready in time
	 * @throws InterruptedException when interrupted
	 */
	public LoadReport run() throws InterruptedException {
		Path model = this.options.model();
		if (model == null) {
			return runLoad(null);
		}
		try (ModelCheck check = loadModel(model)) {
			this.modelCheck = check;
			return runLoad(check);
		}
		finally {
			this.modelCheck = null;
		}
	}

	private ModelCheck loadModel(Path model) {
		try {
			return ModelCheck.load(model, this.options);
		}
		catch (IOException | RuntimeException ex) {
			throw new LoadException("cannot load the model " + model + " to compare the answers with: " + ex);
		}
	}

	private LoadReport runLoad(@Nullable ModelCheck check) throws InterruptedException {
		long deadline = System.nanoTime() + this.options.readyWait().toNanos();
		awaitReady(this.options.decode(), deadline);
		if (this.options.prefill() != null) {
			awaitReady(this.options.prefill(), deadline);
		}
		if (check != null) {
			// the one-process runs once the workers have started (and before their load):
			// they do not share the processors with either
			check.prepare();
		}
		double readBefore = bytesRead();
		for (int i = 0; i < this.options.warmup(); i++) {
			RequestResult warm = send(-1 - i);
			if (!warm.ok()) {
				throw new LoadException("warm-up request " + (i + 1) + " failed: " + warm.error());
			}
		}
		List<RequestResult> results = new ArrayList<>(this.options.requests());
		long start = System.nanoTime();
		try (ExecutorService pool = Executors.newFixedThreadPool(this.options.concurrency())) {
			List<Future<RequestResult>> futures = new ArrayList<>();
			for (int i = 0; i < this.options.requests(); i++) {
				int index = i;
				futures.add(pool.submit(() -> send(index)));
			}
			for (Future<RequestResult> future : futures) {
				results.add(result(future));
			}
		}
		long wallNanos = System.nanoTime() - start;
		double readAfter = bytesRead();
		return new LoadReport(this.options, results, start, wallNanos, health(this.options.decode()),
				(this.options.prefill() != null) ? health(this.options.prefill()) : null,
				Double.isNaN(readBefore) || Double.isNaN(readAfter) ? -1 : (long) (readAfter - readBefore),
				(check != null) ? new LoadReport.ModelRun(check.name(), check.references()) : null);
	}

	private RequestResult result(Future<RequestResult> future) throws InterruptedException {
		try {
			return future.get(this.options.timeout().toNanos() * 2, TimeUnit.NANOSECONDS);
		}
		catch (ExecutionException ex) {
			return RequestResult.failed(-1, 0, System.nanoTime(), "the request threw " + ex.getCause());
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			return RequestResult.failed(-1, 0, System.nanoTime(), "no answer within " + this.options.timeout());
		}
	}

	/**
	 * Sends one request and checks its answer.
	 * @param index the request's number (negative for warm-up requests)
	 * @return what happened
	 */
	public RequestResult send(int index) {
		ModelCheck check = this.modelCheck;
		int tokens = Math.max(1, this.options.promptTokens() - Math.floorMod(index, 16));
		String prompt = (check != null) ? "" : prompt(index, tokens);
		// the decode worker makes the id: only a holder of the workers' token may choose
		// one
		GenerateRequest request = (check != null) ? check.request(index)
				: new GenerateRequest(null, prompt, null, this.options.maxTokens(), null);
		long start = System.nanoTime();
		HttpResponse<String> response;
		try {
			HttpRequest.Builder post = HttpRequest.newBuilder(this.options.decode().resolve("/generate"))
				.timeout(this.options.timeout())
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(request)));
			if (this.token != null) {
				post.header("Authorization", "Bearer " + this.token);
			}
			response = this.http.send(post.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			return RequestResult.failedSince(index, start, "POST /generate failed: " + ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return RequestResult.failedSince(index, start, "interrupted");
		}
		if (response.statusCode() != 200) {
			return RequestResult.failedSince(index, start,
					"status " + response.statusCode() + ": " + abbreviate(response.body()));
		}
		long end = System.nanoTime();
		GenerateResponse answer;
		try {
			answer = JSON.readValue(response.body(), GenerateResponse.class);
		}
		catch (RuntimeException ex) {
			return new RequestResult(index, end - start, end, null, "unreadable answer: " + ex.getMessage());
		}
		String wrong = (check != null) ? check.check(index, answer) : check(prompt, tokens, answer);
		return new RequestResult(index, end - start, end, (wrong != null) ? null : answer, wrong);
	}

	/** Checks an answer against what its prompt gives; returns what is wrong, or null. */
	private @Nullable String check(String prompt, int tokens, GenerateResponse answer) {
		KvCacheLayout layout = answer.layout().toLayout();
		ToyModel model = new ToyModel(layout);
		int[] ids = ToyModel.tokens(prompt, null, Integer.MAX_VALUE);
		if (answer.promptTokens() != tokens || ids.length != tokens) {
			return "the decode worker counted " + answer.promptTokens() + " tokens, the prompt has " + tokens;
		}
		if (!answer.verified()) {
			return "the decode worker did not verify the blocks";
		}
		if (answer.blocks() != model.blocksFor(tokens) || answer.bytes() != answer.blocks() * model.bytesPerBlock()) {
			return "expected " + model.blocksFor(tokens) + " blocks of " + model.bytesPerBlock() + " bytes, got "
					+ answer.blocks() + " blocks and " + answer.bytes() + " bytes";
		}
		long crc = model.expectedCrc32c(ids);
		if (answer.kvCrc32c() != crc) {
			return String.format(Locale.ROOT, "KV CRC32C %08x, expected %08x", answer.kvCrc32c(), crc);
		}
		String text = ToyModel.generate(crc, tokens, this.options.maxTokens());
		if (!text.equals(answer.text())) {
			return "generated text '" + answer.text() + "', expected '" + text + "'";
		}
		return null;
	}

	private static String prompt(int index, int tokens) {
		SplittableRandom random = new SplittableRandom(0x5eed_0000L + index);
		StringBuilder text = new StringBuilder(tokens);
		for (int i = 0; i < tokens; i++) {
			text.append(TEXT.charAt(random.nextInt(TEXT.length())));
		}
		return text.toString();
	}

	private void awaitReady(URI worker, long deadline) throws InterruptedException {
		String last = "no answer yet";
		while (true) {
			try {
				HttpResponse<String> response = this.http
					.send(HttpRequest.newBuilder(worker.resolve("/actuator/health/readiness"))
						.timeout(Duration.ofSeconds(5))
						.build(), HttpResponse.BodyHandlers.ofString());
				if (response.statusCode() == 200) {
					return;
				}
				last = "status " + response.statusCode();
			}
			catch (IOException ex) {
				last = ex.toString();
			}
			if (System.nanoTime() - deadline >= 0) {
				throw new LoadException(
						worker + " was not ready within " + this.options.readyWait() + " (" + last + ")");
			}
			TimeUnit.MILLISECONDS.sleep(200);
		}
	}

	private String health(URI worker) {
		JsonNode node = getJson(worker.resolve("/actuator/health"));
		return (node != null) ? node.path("status").asString() : "unknown";
	}

	/** The decode worker's nixl.transfer.bytes of completed READs, or NaN. */
	private double bytesRead() {
		if (this.token == null) {
			return Double.NaN;
		}
		JsonNode node = getJson(
				this.options.decode()
					.resolve("/actuator/metrics/nixl.transfer.bytes?tag=op:read&tag=outcome:completed"),
				"Authorization", "Bearer " + this.token);
		if (node == null) {
			return Double.NaN;
		}
		for (JsonNode measurement : node.path("measurements")) {
			return measurement.path("value").asDouble();
		}
		return Double.NaN;
	}

	private @Nullable JsonNode getJson(URI uri, String... headers) {
		try {
			HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5));
			if (headers.length > 0) {
				request.headers(headers);
			}
			HttpResponse<String> response = this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
			return (response.statusCode() == 200) ? JSON.readTree(response.body()) : null;
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	private static String abbreviate(String body) {
		String flat = body.replaceAll("\\s+", " ");
		return (flat.length() > 400) ? flat.substring(0, 400) + "..." : flat;
	}

	/**
	 * One request's outcome.
	 *
	 * @param index its number
	 * @param nanos its latency as the client saw it
	 * @param doneNanos when the answer (or the failure) came, in
	 * {@link System#nanoTime()}
	 * @param answer the answer when it checked out
	 * @param error what went wrong, else {@code null}
	 */
	public record RequestResult(int index, long nanos, long doneNanos, @Nullable GenerateResponse answer,
			@Nullable String error) {

		static RequestResult failedSince(int index, long start, String error) {
			long now = System.nanoTime();
			return new RequestResult(index, now - start, now, null, error);
		}

		static RequestResult failed(int index, long nanos, long doneNanos, String error) {
			return new RequestResult(index, nanos, doneNanos, null, error);
		}

		/**
		 * Returns whether the request checked out.
		 * @return {@code true} when it did
		 */
		public boolean ok() {
			return this.error == null;
		}

	}

	/**
	 * The workers could not be driven (not ready, warm-up failed).
	 */
	public static final class LoadException extends RuntimeException {

		private static final long serialVersionUID = 1L;

		LoadException(String message) {
			super(message);
		}

	}

}
