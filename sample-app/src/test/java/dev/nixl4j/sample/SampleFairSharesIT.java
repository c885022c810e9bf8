package dev.nixl4j.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Callers of the decode worker's public {@code POST /generate} share its KV blocks and
 * its request slots fairly, with real worker processes on the embedded engine: an abusive
 * caller running many loops of the longest prompts, or a flood of short ones, gets its
 * own share and is refused beyond it (429, or 503 when the callers without a token
 * together hold theirs, both with {@code Retry-After}), while an honest caller at another
 * address, and a caller with the workers' token, keep being served and verified, during
 * the abuse and after it.
 *
 * <p>
 * Callers are told apart by their address ({@code docs/operations.md}, "Callers of the
 * sample"): the abusive caller sends from 127.0.0.1, the honest one from 127.0.0.2 (on
 * Linux all of 127/8 is the loopback). Both workers have the sample's shares of a cache
 * of 512 blocks of 16 tokens (2 layers, 128 KiB per block): 128 blocks per request and
 * 384 per consumer on the prefill worker, and on the decode worker the defaults of
 * {@code sample.generate.*}: 64 requests at once, 8 and 128 blocks per caller without a
 * token, 48 requests and 256 blocks for all of them together. Each abusive loop sends its
 * next request 10 ms after each answer, whatever it was.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SampleFairSharesIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private static final Duration ABUSE = Duration.ofSeconds(10);

	private static final int BLOCKS = 512;

	private static final String[] SHAPE = { "--nixl.agent.engine=embedded", "--nixl.kv.layers=2",
			"--nixl.kv.blocks=" + BLOCKS };

	/** The longest prompt one request may have: 128 blocks, the share of one request. */
	private static final String LONGEST = "L".repeat(128 * 16);

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() {
		this.prefill = SampleWorker.start("prefill-fair", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				SHAPE);
		List<String> decodeArgs = new ArrayList<>(List.of(SHAPE));
		decodeArgs.add("--sample.decode.prefill-url=" + this.prefill.uri());
		this.decode = SampleWorker.start("decode-fair", "decode", SampleWorker.freePort(), SampleWorker.TOKEN,
				decodeArgs.toArray(String[]::new));
	}

	/** Every test starts with the whole cache free: no lease of another test is left. */
	@BeforeEach
	void everyBlockIsFree() {
		this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS);
	}

	@AfterAll
	void stopWorkers() {
		assertThat(SampleWorker.stopAll(this.decode, this.prefill)).isEmpty();
	}

	@Test
	void anAbusiveCallerWithTheLongestPromptsLeavesOthersTheirShare() throws Exception {
		Outcome outcome = abuse("8 loops of 2,048-token prompts from one address",
				List.of(new Abuser("127.0.0.1", 8, LONGEST)));
		outcome.assertFair(true);
		// one caller, so at most its own share: one longest request at a time
		assertThat(outcome.abusive).containsKey(429);
	}

	@Test
	void aFloodOfShortRequestsLeavesOthersTheirSlots() throws Exception {
		Outcome outcome = abuse("80 loops of 16-token prompts from one address",
				List.of(new Abuser("127.0.0.1", 80, "s".repeat(16))));
		outcome.assertFair(true);
		assertThat(outcome.abusive).containsKey(429);
	}

	@Test
	void abusiveCallersAtManyAddressesLeaveTheTokenHoldersShare() throws Exception {
		List<Abuser> abusers = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			abusers.add(new Abuser("127.0.1." + (i + 1), 4, LONGEST));
		}
		Outcome outcome = abuse("4 addresses with 4 loops of 2,048-token prompts each", abusers);
		// the honest caller without a token is not promised its share here: the callers
		// without a token together hold theirs (printed only)
		outcome.assertFair(false);
	}

	/**
	 * Runs the abusers for {@link #ABUSE} while an honest caller without a token (from
	 * 127.0.0.2) and one with the workers' token (from 127.0.0.3) each send one request
	 * after another, then both send five more; prints what each got.
	 */
	private Outcome abuse(String what, List<Abuser> abusers) throws Exception {
		Outcome outcome = new Outcome(what);
		AtomicBoolean stop = new AtomicBoolean();
		try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
			List<Future<?>> running = new ArrayList<>();
			for (Abuser abuser : abusers) {
				Client client = new Client(abuser.address(), null);
				for (int i = 0; i < abuser.loops(); i++) {
					running.add(threads.submit(() -> {
						while (!stop.get()) {
							outcome.abusive(client.generate(abuser.prompt()));
							SampleWorker.pause(Duration.ofMillis(10));
						}
					}));
				}
			}
			Client honest = new Client("127.0.0.2", null);
			Client withToken = new Client("127.0.0.3", SampleWorker.TOKEN);
			// let the abuse take hold first
			SampleWorker.pause(Duration.ofSeconds(1));
			Future<?> tokenHolder = threads.submit(() -> {
				for (int n = 0; !stop.get(); n++) {
					outcome.tokenDuring.add(verified(withToken, "token holder during " + n));
				}
			});
			long end = System.nanoTime() + ABUSE.toNanos();
			for (int n = 0; System.nanoTime() - end < 0; n++) {
				outcome.honestDuring.add(verified(honest, "honest caller during " + n));
			}
			stop.set(true);
			tokenHolder.get(REQUEST_TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
			for (Future<?> loop : running) {
				loop.get(REQUEST_TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
			}
			for (int n = 0; n < 5; n++) {
				outcome.honestAfter.add(verified(honest, "honest caller after " + n));
				outcome.tokenAfter.add(verified(withToken, "token holder after " + n));
			}
		}
		outcome.print();
		return outcome;
	}

	/**
	 * Sends a prompt of 256 tokens (16 blocks) and checks its answer; returns
	 * {@code null} when it was a 200 whose KV bytes are the prompt's, else what it was.
	 */
	private @Nullable String verified(Client client, String label) {
		String prompt = (label + " " + "h".repeat(256)).substring(0, 256);
		HttpResponse<String> response = client.generate(prompt);
		if (response.statusCode() != 200) {
			return response.statusCode() + " " + abbreviate(response.body());
		}
		GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
		int[] tokens = ToyModel.tokens(prompt, null, Integer.MAX_VALUE);
		long expected = new ToyModel(answer.layout().toLayout()).expectedCrc32c(tokens);
		return (answer.verified() && answer.kvCrc32c() == expected) ? null : "200 with other KV bytes";
	}

	private static String abbreviate(String body) {
		String flat = body.replaceAll("\\s+", " ");
		return (flat.length() > 160) ? flat.substring(0, 160) + "..." : flat;
	}

	/** Abusive loops from one address. */
	private record Abuser(String address, int loops, String prompt) {
	}

	/**
	 * A caller of {@code POST /generate} from one local address, with or without a token.
	 */
	private final class Client {

		private final HttpClient http;

		private final @Nullable String token;

		Client(String address, @Nullable String token) {
			try {
				this.http = HttpClient.newBuilder()
					.localAddress(InetAddress.getByName(address))
					.connectTimeout(Duration.ofSeconds(5))
					.build();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			this.token = token;
		}

		HttpResponse<String> generate(String prompt) {
			HttpRequest.Builder request = HttpRequest
				.newBuilder(SampleFairSharesIT.this.decode.uri().resolve("/generate"))
				.timeout(REQUEST_TIMEOUT)
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers
					.ofString(SampleWorker.JSON.writeValueAsString(new GenerateRequest(null, prompt, null, 8, null))));
			if (this.token != null) {
				request.header("Authorization", "Bearer " + this.token);
			}
			try {
				return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

	}

	/** What each caller got. */
	private static final class Outcome {

		final String what;

		/** Abusive answers by status. */
		final Map<Integer, Integer> abusive = new TreeMap<>();

		/** Refusals (429, 503) without a {@code Retry-After}, by status. */
		final Map<Integer, Integer> withoutRetryAfter = new TreeMap<>();

		/** What each honest request got: {@code null} when verified. */
		final List<@Nullable String> honestDuring = new ArrayList<>();

		final List<@Nullable String> honestAfter = new ArrayList<>();

		final List<@Nullable String> tokenDuring = java.util.Collections.synchronizedList(new ArrayList<>());

		final List<@Nullable String> tokenAfter = new ArrayList<>();

		Outcome(String what) {
			this.what = what;
		}

		synchronized void abusive(HttpResponse<String> answer) {
			int status = answer.statusCode();
			this.abusive.merge(status, 1, Integer::sum);
			if ((status == 429 || status == 503) && answer.headers().firstValue("Retry-After").isEmpty()) {
				this.withoutRetryAfter.merge(status, 1, Integer::sum);
			}
		}

		synchronized void print() {
			System.out.printf(Locale.ROOT,
					"%s for %d s: abusive answers %s (refusals without Retry-After: %s); honest caller without a"
							+ " token verified %s during and %s after; token holder verified %s during and %s after%n",
					this.what, ABUSE.toSeconds(), this.abusive, this.withoutRetryAfter, count(this.honestDuring),
					count(this.honestAfter), count(this.tokenDuring), count(this.tokenAfter));
		}

		/**
		 * Asserts that the token holder, and when {@code honestToo} the honest caller
		 * without a token, had every request verified, during the abuse and after, and
		 * that every refusal said when to retry.
		 */
		synchronized void assertFair(boolean honestToo) {
			assertThat(this.withoutRetryAfter).as("refusals without Retry-After").isEmpty();
			if (honestToo) {
				assertThat(this.honestDuring).as("honest requests during: " + this.what)
					.isNotEmpty()
					.containsOnlyNulls();
			}
			assertThat(this.honestAfter).as("honest requests after: " + this.what).containsOnlyNulls();
			assertThat(this.tokenDuring).as("token holder's requests during: " + this.what)
				.isNotEmpty()
				.containsOnlyNulls();
			assertThat(this.tokenAfter).as("token holder's requests after: " + this.what).containsOnlyNulls();
		}

		private static String count(List<@Nullable String> results) {
			List<String> failures = results.stream().filter(java.util.Objects::nonNull).distinct().limit(2).toList();
			long verified = results.stream().filter(java.util.Objects::isNull).count();
			return verified + " of " + results.size() + (failures.isEmpty() ? "" : " " + failures);
		}

	}

}
