package dev.nixl4j.sample;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.ModelAnswer;
import dev.nixl4j.sample.api.Sampling;
import dev.nixl4j.sample.llm.Generation;
import dev.nixl4j.sample.llm.LanguageModel;
import dev.nixl4j.sample.llm.SmolLm2;
import dev.nixl4j.sample.load.LoadGenerator;
import dev.nixl4j.sample.load.LoadOptions;
import dev.nixl4j.sample.load.LoadReport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on SmolLM2-135M-Instruct, as {@code bin/sample} runs it: a prefill worker
 * and a decode worker, each a JVM started from the packaged jar with the {@code smollm2}
 * profile, on native NIXL. The prefill worker computes each prompt's KV cache into leased
 * blocks; the decode worker pulls them and generates over them. Every answer's tokens
 * must equal the same model run in this one process (greedy), token for token.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SmolLm2PrefillDecodeIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(120);

	private Path modelFile;

	private LanguageModel model;

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() throws Exception {
		this.modelFile = SmolLm2.path();
		this.model = LanguageModel.load(this.modelFile, 0);
		String[] args = { "--nixl.agent.engine=native", "--sample.model.path=" + this.modelFile };
		this.prefill = SampleWorker.start("prefill-smollm2", "prefill,smollm2", SampleWorker.freePort(),
				SampleWorker.TOKEN, args);
		this.decode = SampleWorker.start("decode-smollm2", "decode,smollm2", SampleWorker.freePort(),
				SampleWorker.TOKEN, concat(args, "--sample.decode.prefill-url=" + this.prefill.uri()));
	}

	private static String[] concat(String[] args, String more) {
		String[] all = java.util.Arrays.copyOf(args, args.length + 1);
		all[args.length] = more;
		return all;
	}

	@AfterAll
	void stopWorkers() {
		List<String> problems = SampleWorker.stopAll(this.decode, this.prefill);
		if (this.model != null) {
			this.model.close();
		}
		assertThat(problems).isEmpty();
	}

	@Test
	void everyAnswerOfALoadEqualsAOneProcessRunTokenForToken() throws InterruptedException {
		LoadOptions options = LoadOptions
			.parse(new String[] { "--url", this.decode.uri().toString(), "--prefill", this.prefill.uri().toString(),
					"--requests", "8", "--concurrency", "2", "--max-tokens", "16", "--warmup", "1", "--wait", "60",
					"--timeout", "120", "--no-plot", "--model", this.modelFile.toString() });

		LoadReport report = new LoadGenerator(options, SampleWorker.TOKEN).run();

		assertThat(report.failed()).as("requests that failed or whose tokens differ").isEmpty();
		assertThat(report.answers()).hasSize(8).allSatisfy((answer) -> {
			assertThat(answer.engine()).startsWith("native:");
			assertThat(answer.verified()).isTrue();
			assertThat(answer.model()).isNotNull();
			assertThat(answer.text()).isNotBlank();
		});
		assertThat(report.toText()).contains("tokens equal to a one-process run: 8 of 8",
				"OK: every request checked out");
	}

	@Test
	void aPromptOfTokenIdsAcrossSeveralBlocksIsGeneratedAsInOneProcess() {
		int[] text = this.model.tokenizer()
			.encode("The sample moves a real model's KV cache: " + "keys and values of every layer. ".repeat(12));
		List<Integer> prompt = java.util.Arrays.stream(text).boxed().toList();
		assertThat(prompt.size()).as("a prompt over several 16-token blocks").isGreaterThan(48);

		HttpResponse<String> response = this.decode.post("/generate",
				new GenerateRequest("smollm2-ids", null, prompt, 20, null), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);

		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
		ModelAnswer generated = answer.model();
		assertThat(generated).isNotNull();
		assertThat(answer.blocks()).isEqualTo(Math.ceilDiv(prompt.size(), 16));
		assertThat(answer.bytes()).isEqualTo(answer.blocks() * 30L * 2 * 16 * 3 * 64 * 4);
		assertThat(generated.tokenIds()).isEqualTo(
				Generation.oneProcess(this.model.model(), text, 20, Sampling.GREEDY, this.model.eos(), 16).ids());
		assertThat(generated.prefillComputeMillis()).isPositive();
		assertThat(generated.transferMillis()).isPositive();
		assertThat(generated.timeToFirstTokenMillis()).isGreaterThan(generated.prefillComputeMillis());
	}

	@Test
	void seededSamplingGivesTheSameTokensInTwoProcessesAsInOne() {
		GenerateRequest request = new GenerateRequest(null, "Tell me a short story about a robot.", null, 16, null,
				0.8f, 0.9f, 42L);

		HttpResponse<String> response = this.decode.post("/generate", request, REQUEST_TIMEOUT);

		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
		int[] prompt = this.model.promptTokens(request.prompt(), null, 8192);
		assertThat(answer.model().tokenIds()).isEqualTo(
				Generation.oneProcess(this.model.model(), prompt, 16, request.sampling(), this.model.eos(), 16).ids());
	}

	@Test
	void aPromptLongerThanTheCacheLeasesToOneRequestIsRefusedWithWhatToDo() {
		// 64 blocks of 16 tokens: one request may lease a quarter of them, 256 tokens
		HttpResponse<String> response = this.decode.post("/generate",
				new GenerateRequest(null, null, Collections.nCopies(300, 42), 4, null), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);

		assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
		assertThat(response.body()).contains("needs 19 KV blocks", "shorten the prompt");
	}

	@Test
	void promptsBeyondTheContextAndTokensBeyondTheBoundAreRefusedWithWhatWasWrong() {
		Map<GenerateRequest, String> cases = Map.of(
				new GenerateRequest(null, null, Collections.nCopies(8192, 42), 4, null),
				"one less than the model's context of 8192",
				new GenerateRequest(null, null, List.of(1, 49_152), 4, null), "token 1 is 49152",
				new GenerateRequest(null, "hello", null, 5000, null), "maxTokens must lie in [0, 4096]",
				new GenerateRequest(null, "hello", null, 4, null, -1f, null, null), "temperature must lie in",
				new GenerateRequest(null, "hello", null, 4, null, 0.5f, 0f, null), "topP must lie in (0, 1]");
		cases.forEach((request, reason) -> {
			HttpResponse<String> response = this.decode.post("/generate", request, REQUEST_TIMEOUT,
					SampleWorker.WORKER_AUTHORIZATION);
			assertThat(response.statusCode()).as(reason + ": " + response.body()).isEqualTo(400);
			assertThat(response.body()).contains(reason);
		});
	}

}
