package dev.nixl4j.sample;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.imageio.ImageIO;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.load.LatencyPlot;
import dev.nixl4j.sample.load.LoadGenerator;
import dev.nixl4j.sample.load.LoadOptions;
import dev.nixl4j.sample.load.LoadReport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample as its users run it: a prefill worker and a decode worker, each a JVM
 * started from the packaged jar, requests through the decode worker with every KV byte
 * checked, and both workers' Actuator health and meters read over HTTP. One subclass per
 * engine.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class PrefillDecodeEndToEndTests {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private SampleWorker prefill;

	private SampleWorker decode;

	/** The value of {@code nixl.agent.engine} for both workers. */
	abstract String engine();

	@BeforeAll
	void startWorkers() {
		this.prefill = SampleWorker.start("prefill-" + engine(), "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				"--nixl.agent.engine=" + engine());
		this.decode = SampleWorker.start("decode-" + engine(), "decode", SampleWorker.freePort(), SampleWorker.TOKEN,
				"--nixl.agent.engine=" + engine(), "--sample.decode.prefill-url=" + this.prefill.uri());
	}

	@AfterAll
	void stopWorkers() {
		List<String> problems = SampleWorker.stopAll(this.decode, this.prefill);
		assertThat(problems).isEmpty();
	}

	@Test
	void concurrentRequestsAreVerifiedByteForByte() throws InterruptedException {
		LoadOptions options = LoadOptions.parse(new String[] { "--url", this.decode.uri().toString(), "--prefill",
				this.prefill.uri().toString(), "--requests", "12", "--concurrency", "3", "--prompt-tokens", "100",
				"--warmup", "1", "--wait", "30" });
		LoadReport report = new LoadGenerator(options, SampleWorker.TOKEN).run();

		assertThat(report.failed()).isEmpty();
		assertThat(report.answers()).hasSize(12).allSatisfy((answer) -> {
			assertThat(answer.verified()).isTrue();
			assertThat(answer.engine()).startsWith(engine() + ":");
			assertThat(answer.blocks()).isEqualTo(Math.ceilDiv(answer.promptTokens(), 16));
			assertThat(answer.bytes()).isEqualTo(answer.blocks() * 64L * 32 * 1024);
			assertThat(answer.timings().transfer()).isPositive();
		});
		// Prompts of 89 to 100 tokens: a full last block (96) and partial ones.
		assertThat(report.answers()).extracting(GenerateResponse::promptTokens).contains(89, 96, 100);
		// The warm-up request (number -1) has 100 - 15 = 85 tokens: 6 blocks.
		long warmupBytes = 6 * 64L * 32 * 1024;
		assertThat(report.bytesReadByDecode()).isEqualTo(report.bytes() + warmupBytes);
		assertThat(report.decodeHealth()).isEqualTo("UP");
		assertThat(report.prefillHealth()).isEqualTo("UP");
		double transfer = report.answers().stream().mapToDouble((a) -> a.timings().transfer()).sum();
		double total = report.answers().stream().mapToDouble((a) -> a.timings().total()).sum();
		assertThat(report.transferShare()).isEqualTo(transfer / total).isStrictlyBetween(0.0, 1.0);
		assertThat(report.toText()).contains("verified: 12 of 12", "OK: every request checked out",
				String.format(Locale.ROOT, "transfer share: %.1f %%", transfer / total * 100));
	}

	@Test
	void theLoadCommandWritesTheLatencyPlotThatItsReportNames(@TempDir Path folder) throws IOException {
		Path plot = folder.resolve("latency.png");
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();

		int exit = LoadGenerator.run(
				new String[] { "--url", this.decode.uri().toString(), "--requests", "8", "--concurrency", "2",
						"--prompt-tokens", "40", "--warmup", "0", "--wait", "30", "--plot", plot.toString() },
				new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

		assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
		assertThat(out.toString(StandardCharsets.UTF_8)).contains("verified: 8 of 8", "latency plot: " + plot);
		assertThat(plot).isRegularFile();
		BufferedImage image = ImageIO.read(plot.toFile());
		assertThat(image).isNotNull();
		assertThat(image.getWidth()).isEqualTo(LatencyPlot.WIDTH);
		assertThat(image.getHeight()).isEqualTo(LatencyPlot.HEIGHT);
	}

	@Test
	void generateAnswersWithTheBlocksOfItsPromptAndTimings() {
		List<Integer> tokens = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			tokens.add((i * 7919) % ToyModel.VOCABULARY);
		}
		tokens.set(39, ToyModel.VOCABULARY - 1);
		double leasesBefore = this.prefill.meter("sample.leases", "outcome:COMPLETED");
		double readBefore = this.decode.meter("nixl.transfer.bytes", "op:read", "outcome:completed");

		HttpResponse<String> response = this.decode.post("/generate",
				new GenerateRequest("e2e-tokens-" + engine(), null, tokens, 12, null), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);

		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
		KvCacheLayout layout = answer.layout().toLayout();
		assertThat(layout.fingerprint())
			.isEqualTo("kv-layout/1;layers=32;kv=split;block=16;heads=8;headDim=128;dtype=2;order=HND");
		int[] ids = tokens.stream().mapToInt(Integer::intValue).toArray();
		long crc = new ToyModel(layout).expectedCrc32c(ids);
		assertThat(answer.requestId()).isEqualTo("e2e-tokens-" + engine());
		assertThat(answer.promptTokens()).isEqualTo(40);
		assertThat(answer.blocks()).isEqualTo(3);
		assertThat(answer.bytes()).isEqualTo(3 * 2L * 1024 * 1024);
		assertThat(answer.kvCrc32c()).isEqualTo(crc);
		assertThat(answer.text()).hasSize(12).isEqualTo(ToyModel.generate(crc, 40, 12));
		assertThat(answer.timings().prefillCall()).isPositive();
		assertThat(answer.timings().prefillFill()).isPositive();
		assertThat(answer.timings().transfer()).isPositive();
		assertThat(answer.timings().verification()).isPositive();
		assertThat(answer.timings().total()).isGreaterThanOrEqualTo(answer.timings().transfer());

		assertThat(this.decode.meter("nixl.transfer.bytes", "op:read", "outcome:completed") - readBefore)
			.isEqualTo(answer.bytes());
		this.prefill.awaitMeter("sample.leases", leasesBefore + 1, "outcome:COMPLETED");
		assertThat(this.decode.meter("sample.generate", "status:200")).isPositive();
	}

	@Test
	void actuatorShowsBothWorkersHealthyAndNoSecrets() {
		for (SampleWorker worker : List.of(this.prefill, this.decode)) {
			// an anonymous caller gets the status only
			JsonNode anonymous = worker.getJson("/actuator/health");
			assertThat(anonymous.path("status").asString()).as(worker.toString()).isEqualTo("UP");
			assertThat(anonymous.path("components").isMissingNode()).as(anonymous.toString()).isTrue();
			// a holder of the decode worker's token the details
			JsonNode health = SampleWorker.JSON
				.readTree(worker.get("/actuator/health", SampleWorker.WORKER_AUTHORIZATION).body());
			assertThat(health.path("status").asString()).as(worker.toString()).isEqualTo("UP");
			JsonNode nixl = health.path("components").path("nixl");
			assertThat(nixl.path("status").asString()).isEqualTo("UP");
			assertThat(nixl.path("details").path("engine").asString()).isEqualToIgnoringCase(engine());
			JsonNode endpoint = worker.getJson("/actuator/nixl");
			// an anonymous caller learns no agent name to squat in the registry
			assertThat(endpoint.path("agent").asString()).as(endpoint.toString()).isEqualTo("(hidden)");
			// The KV cache of 64 blocks of 2 MiB (all layers, K and V) is registered.
			assertThat(endpoint.path("registrations").path("bytes").asLong()).as(endpoint.toString())
				.isEqualTo(64 * 2L * 1024 * 1024);
			String everything = worker.get("/actuator/health", SampleWorker.WORKER_AUTHORIZATION).body()
					+ worker.get("/actuator/nixl", SampleWorker.WORKER_AUTHORIZATION).body();
			assertThat(everything).doesNotContain(SampleWorker.TOKEN);
			assertThat(worker.log()).doesNotContain(SampleWorker.TOKEN);
		}
		// The prefill worker is the metadata registry; nothing is served without the
		// token.
		assertThat(this.prefill.get("/nixl/agents/x/metadata").statusCode()).isEqualTo(401);
	}

	@Test
	void badPromptsAreRefusedWithTheReason() {
		Map<GenerateRequest, String> cases = Map.of(new GenerateRequest(null, "", null, null, null),
				"the prompt is empty", new GenerateRequest(null, "both", List.of(1), null, null), "not both",
				new GenerateRequest(null, null, List.of(1, ToyModel.VOCABULARY), null, null), "token 1 is 1048576",
				new GenerateRequest("has:colon", "text", null, null, null), "must not contain ':'",
				new GenerateRequest(null, "x".repeat(8193), null, null, null), "takes at most 8192");
		double freeBefore = this.prefill.meter("sample.kv.blocks.free");
		cases.forEach((request, reason) -> {
			// with the token, as a chosen request id needs it
			HttpResponse<String> response = this.decode.post("/generate", request, REQUEST_TIMEOUT,
					SampleWorker.WORKER_AUTHORIZATION);
			assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
			assertThat(SampleWorker.JSON.readTree(response.body()).path("detail").asString()).contains(reason);
		});
		assertThat(this.prefill.meter("sample.kv.blocks.free")).isEqualTo(freeBefore);
	}

}
