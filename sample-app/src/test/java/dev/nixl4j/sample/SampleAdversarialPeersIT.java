package dev.nixl4j.sample;

import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a connected peer that turns hostile cannot do to the sample's workers, with real
 * worker processes on the embedded engine: a holder of the registry token loads the
 * prefill worker's metadata and floods it with notifications nobody waits for, while the
 * decode worker's lease confirmations must keep flowing; and a decode worker that dies
 * with a lease outstanding gets its blocks back on the prefill worker once its registry
 * entry expires, not at the lease's time to live.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SampleAdversarialPeersIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private static final int BLOCKS = 128;

	private static final Duration ENTRY_TTL = Duration.ofSeconds(3);

	private static final String[] SHAPE = { "--nixl.agent.engine=embedded", "--nixl.kv.layers=2",
			"--nixl.kv.blocks=" + BLOCKS };

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() {
		List<String> prefillArgs = new ArrayList<>(List.of(SHAPE));
		prefillArgs.add("--nixl.kv.lease-ttl=120s");
		prefillArgs.add("--nixl.metadata.http.registry.entry-ttl=" + ENTRY_TTL.toMillis() + "ms");
		this.prefill = SampleWorker.start("prefill-adversarial", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				prefillArgs.toArray(String[]::new));
		this.decode = startDecode("decode-adversarial");
	}

	private SampleWorker startDecode(String name) {
		List<String> decodeArgs = new ArrayList<>(List.of(SHAPE));
		decodeArgs.add("--sample.decode.prefill-url=" + this.prefill.uri());
		return SampleWorker.start(name, "decode", SampleWorker.freePort(), SampleWorker.TOKEN,
				decodeArgs.toArray(String[]::new));
	}

	@AfterAll
	void stopWorkers() {
		assertThat(SampleWorker.stopAll(this.decode, this.prefill)).isEmpty();
	}

	@Test
	void aJunkNotificationFloodFromATokenHolderDoesNotStopLeaseConfirmations() throws Exception {
		generate("before the flood");
		String prefillAgent = this.prefill.agentName();
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong sent = new AtomicLong();
		int honest = 0;
		try (NixlAgent attacker = NixlAgent
			.create(AgentConfig.builder("attacker-" + ProcessHandle.current().pid()).engine(Engine.EMBEDDED).build());
				HttpMetadataExchange registry = HttpMetadataExchange.builder(URI.create(this.prefill.uri() + "/nixl"))
					.token(SampleWorker.TOKEN)
					.build();
				ExecutorService flood = Executors.newSingleThreadExecutor()) {
			registry.load(attacker, prefillAgent, Duration.ofSeconds(10));
			byte[] junk = "junk-nobody-waits-for".getBytes(StandardCharsets.UTF_8);
			Future<?> flooding = flood.submit(() -> {
				// bounded: at most 200,000 messages, and it stops with the test's loop
				while (!stop.get() && sent.get() < 200_000) {
					attacker.sendNotification(prefillAgent, junk);
					sent.incrementAndGet();
				}
			});
			try {
				long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
				while (System.nanoTime() - end < 0) {
					generate("honest during the flood " + honest);
					honest++;
				}
			}
			finally {
				stop.set(true);
			}
			flooding.get(30, TimeUnit.SECONDS);
		}
		for (int i = 0; i < 5; i++) {
			generate("honest after the flood " + i);
		}
		double dropped = this.prefill.meter("nixl.notifications.dropped");
		System.out.printf("junk flood: %d notifications sent for 10 s, %.0f dropped by the prefill worker; %d honest"
				+ " requests verified meanwhile%n", sent.get(), dropped, honest);
		assertThat(sent.get()).as("the flood passed the mailbox's bounds").isGreaterThan(5_000);
		assertThat(dropped).isPositive();
		assertThat(honest).as("honest requests verified during the flood").isPositive();
		assertThat(this.prefill.getJson("/actuator/health").path("status").asString()).isEqualTo("UP");
	}

	@Test
	void aDecodeWorkerKilledWithALeaseOutstandingGetsItsBlocksBackAtItsEntrysExpiry() {
		SampleWorker doomed = startDecode("decode-doomed");
		try {
			generate(doomed, "warm up the doomed worker's session");
			this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS);
			// a request that holds its lease for a minute before it pulls
			Thread.ofVirtual()
				.start(() -> doomed.post("/generate", new GenerateRequest(null, "held", null, 4, 60_000L),
						REQUEST_TIMEOUT, SampleWorker.WORKER_AUTHORIZATION));
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (this.prefill.meter("sample.kv.blocks.free") == BLOCKS && System.nanoTime() - deadline < 0) {
				SampleWorker.pause(Duration.ofMillis(50));
			}
			assertThat(this.prefill.meter("sample.kv.blocks.free")).as("a lease is outstanding").isLessThan(BLOCKS);
			long killed = System.nanoTime();
			doomed.kill();

			this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS);
			Duration back = Duration.ofNanos(System.nanoTime() - killed);
			System.out.printf(
					"blocks of a SIGKILLed decode worker back after %d ms (entry TTL %d ms, lease TTL 120 s)%n",
					back.toMillis(), ENTRY_TTL.toMillis());
			assertThat(back).as("well before the lease's 120 s").isLessThan(Duration.ofSeconds(60));
		}
		finally {
			SampleWorker.stopAll(doomed);
		}
		generate("the surviving decode worker still works");
	}

	private GenerateResponse generate(String prompt) {
		return generate(this.decode, prompt);
	}

	private static GenerateResponse generate(SampleWorker decode, String prompt) {
		HttpResponse<String> response = decode.post("/generate", new GenerateRequest(null, prompt, null, 8, null),
				REQUEST_TIMEOUT);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
		int[] tokens = ToyModel.tokens(prompt, null, Integer.MAX_VALUE);
		assertThat(answer.kvCrc32c()).isEqualTo(new ToyModel(answer.layout().toLayout()).expectedCrc32c(tokens));
		return answer;
	}

}
