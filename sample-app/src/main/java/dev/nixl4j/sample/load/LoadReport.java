package dev.nixl4j.sample.load;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.ModelAnswer;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a load run measured. GB = 10^9 bytes. Throughput figures divide by the wall time
 * of the timed requests; the per-transfer bandwidth divides their bytes by the sum of
 * their pull times.
 *
 * @param options what was run
 * @param results every timed request
 * @param startNanos when the timed requests began, in {@link System#nanoTime()}
 * @param wallNanos wall time of the timed requests
 * @param decodeHealth the decode worker's health status after the run
 * @param prefillHealth the prefill worker's, or {@code null} when not asked
 * @param bytesReadByDecode growth of the decode worker's {@code nixl.transfer.bytes} of
 * completed READs over the run, warm-up included, or -1 when it could not be read
 * @param model the language model's one-process runs the answers were compared with, or
 * {@code null} for the toy model
 */
public record LoadReport(LoadOptions options, List<RequestResult> results, long startNanos, long wallNanos,
		String decodeHealth, @Nullable String prefillHealth, long bytesReadByDecode, @Nullable ModelRun model) {

	/**
	 * A report of the toy model's load.
	 * @param options what was run
	 * @param results every timed request
	 * @param startNanos when the timed requests began
	 * @param wallNanos wall time of the timed requests
	 * @param decodeHealth the decode worker's health status after the run
	 * @param prefillHealth the prefill worker's, or {@code null}
	 * @param bytesReadByDecode growth of the decode worker's bytes read, or -1
	 */
	public LoadReport(LoadOptions options, List<RequestResult> results, long startNanos, long wallNanos,
			String decodeHealth, @Nullable String prefillHealth, long bytesReadByDecode) {
		this(options, results, startNanos, wallNanos, decodeHealth, prefillHealth, bytesReadByDecode, null);
	}

	/**
	 * Returns whether every request checked out.
	 * @return {@code true} when none failed
	 */
	public boolean ok() {
		return failed().isEmpty() && !this.results.isEmpty();
	}

	/**
	 * Returns the answers that checked out.
	 * @return the answers
	 */
	public List<GenerateResponse> answers() {
		return this.results.stream().map(RequestResult::answer).filter(Objects::nonNull).toList();
	}

	/**
	 * Returns the requests that failed or did not check out.
	 * @return the failures
	 */
	public List<RequestResult> failed() {
		return this.results.stream().filter((r) -> !r.ok()).toList();
	}

	/**
	 * Returns the bytes pulled by the requests that checked out.
	 * @return the bytes
	 */
	public long bytes() {
		return answers().stream().mapToLong(GenerateResponse::bytes).sum();
	}

	/**
	 * Returns requests that checked out per second of wall time.
	 * @return the rate
	 */
	public double requestsPerSecond() {
		return answers().size() / (this.wallNanos / 1e9);
	}

	/**
	 * Returns bytes pulled per second of wall time, in GB/s.
	 * @return the throughput
	 */
	public double throughputGBps() {
		return bytes() / (double) this.wallNanos;
	}

	/**
	 * Returns bytes pulled per second spent pulling, in GB/s.
	 * @return the per-transfer bandwidth
	 */
	public double transferGBps() {
		double millis = answers().stream().mapToDouble((a) -> a.timings().transfer()).sum();
		return (millis > 0) ? bytes() / (millis * 1e6) : 0;
	}

	/**
	 * Returns how much of the decode worker's time per request was the transfer: the sum
	 * of the pulls over the sum of the requests' times in the decode worker (prefill
	 * call, transfer, verification and the rest), of the requests that checked out.
	 * @return the share, 0 to 1, or NaN without answers
	 */
	public double transferShare() {
		double total = answers().stream().mapToDouble((a) -> a.timings().total()).sum();
		return (total > 0) ? answers().stream().mapToDouble((a) -> a.timings().transfer()).sum() / total : Double.NaN;
	}

	/**
	 * Returns a percentile of a timing of the requests that checked out, nearest rank.
	 * @param timing the timing, in milliseconds
	 * @param fraction the percentile as a fraction, e.g. 0.99
	 * @return the value in milliseconds, or NaN without answers
	 */
	public double percentile(ToDoubleFunction<GenerateResponse> timing, double fraction) {
		return nearestRank(answers().stream().mapToDouble(timing).toArray(), fraction);
	}

	/**
	 * Returns a percentile of the latency that the client saw.
	 * @param fraction the percentile as a fraction
	 * @return milliseconds, or NaN without answers
	 */
	public double clientPercentile(double fraction) {
		return nearestRank(
				this.results.stream().filter(RequestResult::ok).mapToDouble((r) -> r.nanos() / 1e6).toArray(),
				fraction);
	}

	/**
	 * Returns when a request's answer (or failure) came, counted from the start of the
	 * timed requests.
	 * @param result one of {@link #results()}
	 * @return seconds since the start
	 */
	public double secondsSinceStart(RequestResult result) {
		return (result.doneNanos() - this.startNanos) / 1e9;
	}

	static double nearestRank(double[] values, double fraction) {
		if (values.length == 0) {
			return Double.NaN;
		}
		Arrays.sort(values);
		int rank = (int) Math.ceil(fraction * values.length);
		return values[Math.clamp(rank - 1, 0, values.length - 1)];
	}

	private double mean(ToDoubleFunction<GenerateResponse> timing) {
		return answers().stream().mapToDouble(timing).average().orElse(Double.NaN);
	}

	/**
	 * Describes the prompts of the run.
	 * @return for example "prompts of 497 to 512 tokens", or with the language model
	 * "SmolLM2-135M-Instruct.Q4_1, 8 distinct prompts of 37 to 44 tokens"
	 */
	public String prompts() {
		ModelRun run = this.model;
		if (run == null) {
			return String.format(Locale.ROOT, "prompts of %d to %d tokens",
					Math.max(1, this.options.promptTokens() - 15), this.options.promptTokens());
		}
		return String.format(Locale.ROOT, "%s, %d distinct prompts of %d to %d tokens", run.name(),
				run.oneProcess().size(),
				run.oneProcess().stream().mapToInt(OneProcessRun::promptTokens).min().orElse(0),
				run.oneProcess().stream().mapToInt(OneProcessRun::promptTokens).max().orElse(0));
	}

	/**
	 * Returns the report as text.
	 * @return the text
	 */
	public String toText() {
		StringBuilder text = new StringBuilder();
		List<GenerateResponse> answers = answers();
		GenerateResponse first = answers.isEmpty() ? null : answers.getFirst();
		if (first != null) {
			text.append(String.format(Locale.ROOT, "engine: %s%n", first.engine()));
			text.append(String.format(Locale.ROOT, "prefill agent %s -> decode agent %s%n", first.producerAgent(),
					first.decodeAgent()));
			text.append(String.format(Locale.ROOT, "KV cache: %s, %d KiB per block (all layers, K and V)%n",
					first.layout().fingerprint(), first.bytes() / first.blocks() >> 10));
		}
		text.append(String.format(Locale.ROOT, "requests: %d (concurrency %d, %s, %d warm-up)%n", this.results.size(),
				this.options.concurrency(), prompts(), this.options.warmup()));
		if (this.model != null) {
			appendModel(text);
		}
		else {
			text.append(String.format(Locale.ROOT,
					"verified: %d of %d answers byte for byte (KV CRC32C and text recomputed from each prompt), %d failed%n",
					answers.size(), this.results.size(), failed().size()));
		}
		text.append(String.format(Locale.ROOT, "throughput: %.1f requests/s, %.3f GB/s (%.1f MiB pulled in %.2f s)%n",
				requestsPerSecond(), throughputGBps(), bytes() / 1048576.0, this.wallNanos / 1e9));
		text.append(String.format(Locale.ROOT,
				"transfer latency (READ of all blocks + lease confirmation): p50 %.1f ms, p99 %.1f ms; %.3f GB/s per transfer%n",
				percentile((a) -> a.timings().transfer(), 0.50), percentile((a) -> a.timings().transfer(), 0.99),
				transferGBps()));
		text.append(String.format(Locale.ROOT, "request latency (client): p50 %.1f ms, p99 %.1f ms%n",
				clientPercentile(0.50), clientPercentile(0.99)));
		text.append(String.format(Locale.ROOT,
				"mean per request: prefill call %.1f ms (fill %.1f), transfer %.1f, verification %.1f, total %.1f%n",
				mean((a) -> a.timings().prefillCall()), mean((a) -> a.timings().prefillFill()),
				mean((a) -> a.timings().transfer()), mean((a) -> a.timings().verification()),
				mean((a) -> a.timings().total())));
		text.append(String.format(Locale.ROOT,
				"transfer share: %.1f %% of the decode worker's time per request (the rest: prefill call, verification)%n",
				transferShare() * 100));
		text.append(String.format(Locale.ROOT,
				"actuator: decode health %s%s; decode nixl.transfer.bytes{op=read,outcome=completed} grew by %s%n",
				this.decodeHealth, (this.prefillHealth != null) ? ", prefill health " + this.prefillHealth : "",
				(this.bytesReadByDecode >= 0) ? this.bytesReadByDecode + " bytes"
						: "(not readable: it needs the decode worker's token in NIXL_DECODE_TOKEN)"));
		if (this.options.plot() != null) {
			text.append(String.format(Locale.ROOT, "latency plot: %s%n", this.options.plot()));
		}
		for (RequestResult failure : failed().subList(0, Math.min(5, failed().size()))) {
			text.append(String.format(Locale.ROOT, "FAILED request %d: %s%n", failure.index(), failure.error()));
		}
		text.append(ok() ? "OK: every request checked out" : "FAILED: not every request checked out");
		return text.toString();
	}

	private void appendModel(StringBuilder text) {
		ModelRun run = Objects.requireNonNull(this.model);
		List<RequestResult> ok = this.results.stream().filter((r) -> r.answer() != null).toList();
		text.append(String.format(Locale.ROOT, "model: %s, greedy, up to %d tokens per request%n", run.name(),
				this.options.maxTokens()));
		text.append(String.format(Locale.ROOT,
				"tokens equal to a one-process run: %d of %d (the decode worker checked each pull's KV CRC32C), %d failed%n",
				ok.size(), this.results.size(), failed().size()));
		text.append(String.format(Locale.ROOT,
				"time to first token, mean: %.1f ms = prefill call %.1f (prefill compute %.1f) + transfer %.1f"
						+ " + CRC check %.1f + first decode step %.1f%n",
				mean((a) -> modelOf(a).timeToFirstTokenMillis()), mean((a) -> a.timings().prefillCall()),
				mean((a) -> modelOf(a).prefillComputeMillis()), mean((a) -> a.timings().transfer()),
				mean((a) -> a.timings().verification()), mean((a) -> modelOf(a).firstDecodeStepMillis())));
		double oneProcess = ok.stream()
			.mapToDouble((r) -> run.reference(r.index()).timeToFirstTokenMillis())
			.average()
			.orElse(Double.NaN);
		text.append(String.format(Locale.ROOT,
				"one process, same prompts: time to first token %.1f ms (prefill %.1f + first decode step %.1f);"
						+ " disaggregated / one process: %s; transfer share of the time to first token: %.1f %%%n",
				oneProcess,
				ok.stream().mapToDouble((r) -> run.reference(r.index()).prefillMillis()).average().orElse(Double.NaN),
				ok.stream().mapToDouble((r) -> run.reference(r.index()).firstStepMillis()).average().orElse(Double.NaN),
				// one request at a time runs alone, as the one-process runs did; more
				// share
				// the processors
				(this.options.concurrency() == 1)
						? String.format(Locale.ROOT, "%.2fx",
								mean((a) -> modelOf(a).timeToFirstTokenMillis()) / oneProcess)
						: "not compared at concurrency " + this.options.concurrency()
								+ " (requests share the processors; --concurrency 1 compares)",
				100 * mean((a) -> a.timings().transfer()) / mean((a) -> modelOf(a).timeToFirstTokenMillis())));
		text.append(String.format(Locale.ROOT, "decode: %.1f tokens/s per request (mean); one process %.1f tokens/s%n",
				mean((a) -> modelOf(a).decodeTokensPerSecond()),
				run.oneProcess().stream().mapToDouble(OneProcessRun::tokensPerSecond).average().orElse(Double.NaN)));
		int shown = 0;
		for (int p = 0; p < run.oneProcess().size() && shown < 3; p++) {
			int prompt = p;
			RequestResult sample = ok.stream()
				.filter((r) -> Math.floorMod(r.index(), run.oneProcess().size()) == prompt)
				.findFirst()
				.orElse(null);
			if (sample == null) {
				continue;
			}
			GenerateResponse answer = Objects.requireNonNull(sample.answer());
			ModelAnswer generated = modelOf(answer);
			text.append(String.format(Locale.ROOT, "prompt: %s (%d tokens)%n  -> %s%n",
					quote(run.oneProcess().get(p).prompt()), answer.promptTokens(), quote(answer.text())));
			text.append(String.format(Locale.ROOT,
					"     time to first token %.1f ms = prefill compute %.1f + transfer %.1f + first decode step %.1f"
							+ " (+ calls and checks %.1f); %d tokens at %.1f tokens/s%n",
					generated.timeToFirstTokenMillis(), generated.prefillComputeMillis(), generated.transferMillis(),
					generated.firstDecodeStepMillis(),
					generated.timeToFirstTokenMillis() - generated.prefillComputeMillis() - generated.transferMillis()
							- generated.firstDecodeStepMillis(),
					generated.tokenIds().size(), generated.decodeTokensPerSecond()));
			shown++;
		}
	}

	private static ModelAnswer modelOf(GenerateResponse answer) {
		return Objects.requireNonNull(answer.model(), "an answer of the language model");
	}

	private static String quote(String text) {
		String flat = text.replace("\n", "\\n");
		return "\"" + ((flat.length() > 160) ? flat.substring(0, 160) + "..." : flat) + "\"";
	}

	/**
	 * Returns the report as one JSON document.
	 * @return the JSON
	 */
	public String toJson() {
		Map<String, Object> document = new LinkedHashMap<>();
		List<GenerateResponse> answers = answers();
		document.put("tool", "nixl4j-sample load");
		document.put("engine", answers.isEmpty() ? null : answers.getFirst().engine());
		document.put("layout", answers.isEmpty() ? null : answers.getFirst().layout().fingerprint());
		document.put("requests", this.results.size());
		document.put("concurrency", this.options.concurrency());
		document.put("promptTokens", this.options.promptTokens());
		document.put("warmup", this.options.warmup());
		document.put("verified", answers.size());
		document.put("failed", failed().size());
		document.put("bytes", bytes());
		document.put("wallSeconds", this.wallNanos / 1e9);
		document.put("requestsPerSecond", requestsPerSecond());
		document.put("throughputGBps", throughputGBps());
		document.put("transferGBps", transferGBps());
		document.put("transferP50Ms", percentile((a) -> a.timings().transfer(), 0.50));
		document.put("transferP99Ms", percentile((a) -> a.timings().transfer(), 0.99));
		document.put("transferShare", transferShare());
		document.put("requestP50Ms", clientPercentile(0.50));
		document.put("requestP99Ms", clientPercentile(0.99));
		document.put("decodeHealth", this.decodeHealth);
		document.put("prefillHealth", this.prefillHealth);
		document.put("bytesReadByDecode", this.bytesReadByDecode);
		if (this.model != null) {
			document.put("model", this.model.name());
			document.put("tokensEqualToOneProcess", answers.size());
			document.put("timeToFirstTokenMs", mean((a) -> modelOf(a).timeToFirstTokenMillis()));
			document.put("prefillComputeMs", mean((a) -> modelOf(a).prefillComputeMillis()));
			document.put("firstDecodeStepMs", mean((a) -> modelOf(a).firstDecodeStepMillis()));
			document.put("decodeTokensPerSecond", mean((a) -> modelOf(a).decodeTokensPerSecond()));
			ModelRun run = this.model;
			document.put("oneProcessTimeToFirstTokenMs",
					this.results.stream()
						.filter((r) -> r.answer() != null)
						.mapToDouble((r) -> run.reference(r.index()).timeToFirstTokenMillis())
						.average()
						.orElse(Double.NaN));
		}
		Path plot = this.options.plot();
		document.put("plot", (plot != null) ? plot.toString() : null);
		List<String> errors = new ArrayList<>();
		failed().forEach((f) -> errors.add(f.error()));
		document.put("errors", errors);
		document.put("ok", ok());
		return JsonMapper.builder().build().writeValueAsString(document);
	}

	/**
	 * The language model's runs in the load generator's own process.
	 *
	 * @param name the model
	 * @param oneProcess one run per distinct prompt, in prompt order: request {@code i}
	 * sent prompt {@code i % size}
	 */
	public record ModelRun(String name, List<OneProcessRun> oneProcess) {

		/**
		 * Keeps a copy of the runs.
		 * @param name the model
		 * @param oneProcess the runs
		 */
		public ModelRun {
			oneProcess = List.copyOf(oneProcess);
		}

		/**
		 * Returns the run of a request's prompt.
		 * @param index the request's index
		 * @return the run
		 */
		public OneProcessRun reference(int index) {
			return this.oneProcess.get(Math.floorMod(index, this.oneProcess.size()));
		}

	}

	/**
	 * One prompt run through the language model in one process: what the workers together
	 * must answer, and how long it took there.
	 *
	 * @param prompt the prompt as sent
	 * @param promptTokens its tokens
	 * @param ids the generated tokens
	 * @param text their text
	 * @param prefillMillis the prompt through the model and the first token
	 * @param firstStepMillis the first decode step
	 * @param tokensPerSecond the decode steps' speed
	 */
	public record OneProcessRun(String prompt, int promptTokens, List<Integer> ids, String text, double prefillMillis,
			double firstStepMillis, double tokensPerSecond) {

		/**
		 * Returns the time to the first decode step's token.
		 * @return the prefill and the first decode step, in milliseconds
		 */
		public double timeToFirstTokenMillis() {
			return this.prefillMillis + this.firstStepMillis;
		}

	}

}
