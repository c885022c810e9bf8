package dev.nixl4j.sample;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.PrefillRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the two workers accept from outside, with real worker processes on the embedded
 * engine: request bodies bounded before they are parsed, strict JSON types, the bearer
 * scheme in any case, and a deadline on request headers that closes slow connections
 * while other clients are served. Both workers run with small limits: bodies of 64 KiB
 * read within 3 s, headers within 3 s, and each read within 2 s.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SampleInputLimitsIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private static final int MAX_BODY = 64 * 1024;

	private static final Duration HEADER_DEADLINE = Duration.ofSeconds(3);

	private static final String[] LIMITS = { "--nixl.agent.engine=embedded", "--sample.max-request-bytes=64KB",
			"--sample.request-body-timeout=3s", "--sample.server.request-header-timeout=3s",
			"--server.tomcat.connection-timeout=2s" };

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() {
		this.prefill = SampleWorker.start("prefill-limits", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				LIMITS);
		List<String> args = new ArrayList<>(List.of(LIMITS));
		args.add("--sample.decode.prefill-url=" + this.prefill.uri());
		this.decode = SampleWorker.start("decode-limits", "decode", SampleWorker.freePort(), SampleWorker.TOKEN,
				args.toArray(String[]::new));
	}

	@AfterAll
	void stopWorkers() {
		if (this.decode != null) {
			this.decode.close();
		}
		if (this.prefill != null) {
			this.prefill.close();
		}
	}

	@Test
	void oversizeBodiesAreRefusedWith413BeforeTheyAreRead() throws Exception {
		byte[] huge = prompt(64 << 20);
		// Four bodies of 64 MiB at once, with a Content-Length and chunked: the
		// reproduction of the
		// OutOfMemoryError, against a heap of 256 MiB.
		try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
			List<Future<RawResponse>> answers = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				boolean chunked = (i % 2) == 1;
				answers.add(clients.submit(() -> RawResponse.post(this.decode.port(), "/generate", huge, chunked)));
			}
			for (int i = 0; i < answers.size(); i++) {
				RawResponse answer = answers.get(i).get();
				assertThat(answer.status()).as(answer.body()).isEqualTo(413);
				JsonNode problem = SampleWorker.JSON.readTree(answer.body());
				assertThat(problem.path("title").asString()).isEqualTo("Request body too large");
				assertThat(problem.path("detail").asString()).contains("at most 65536 (sample.max-request-bytes)")
					.contains(((i % 2) == 1) ? "more than 65536 bytes" : "has " + huge.length + " bytes");
			}
		}
		byte[] few = prompt(4 << 20);
		for (boolean chunked : new boolean[] { false, true }) {
			RawResponse answer = RawResponse.post(this.prefill.port(), "/prefill", few, chunked,
					"Authorization: Bearer " + SampleWorker.TOKEN);
			assertThat(answer.status()).as(answer.body()).isEqualTo(413);
			assertThat(SampleWorker.JSON.readTree(answer.body()).path("detail").asString())
				.contains("at most 65536 (sample.max-request-bytes)");
		}
		// A body under the limit with a prompt over the token limit: the prompt's own
		// 400.
		HttpResponse<String> tooLong = this.decode.post("/generate",
				new GenerateRequest(null, "x".repeat(9000), null, null, null), REQUEST_TIMEOUT);
		assertThat(tooLong.statusCode()).as(tooLong.body()).isEqualTo(400);
		assertThat(SampleWorker.JSON.readTree(tooLong.body()).path("detail").asString())
			.contains("the prompt has 9000 tokens", "takes at most 8192");

		HttpResponse<String> fine = this.decode.post("/generate",
				new GenerateRequest(null, "after the big ones", null, 8, null), REQUEST_TIMEOUT);
		assertThat(fine.statusCode()).as(fine.body()).isEqualTo(200);
		assertThat(this.decode.isAlive()).isTrue();
		assertThat(this.decode.log() + this.prefill.log()).doesNotContain("OutOfMemoryError");
	}

	@Test
	void aBodyThatTricklesInIsRefusedWith408AtItsDeadline() throws Exception {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.decode.port())) {
			socket.setSoTimeout(20_000);
			OutputStream out = socket.getOutputStream();
			out.write(("POST /generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					+ "Content-Length: 64\r\n\r\n{")
				.getBytes(StandardCharsets.US_ASCII));
			long start = System.nanoTime();
			// One byte a second: each read is within the 2 s timeout, the whole body is
			// not.
			Thread writer = Thread.ofVirtual().start(() -> {
				try {
					for (int i = 0; i < 20; i++) {
						SampleWorker.pause(Duration.ofSeconds(1));
						out.write(' ');
					}
				}
				catch (IOException | IllegalStateException ex) {
					// The worker answered and closed the connection.
				}
			});
			try {
				RawResponse answer = RawResponse.read(new BufferedInputStream(socket.getInputStream()));
				double seconds = (System.nanoTime() - start) / 1e9;
				assertThat(answer.status()).as(answer.body()).isEqualTo(408);
				JsonNode problem = SampleWorker.JSON.readTree(answer.body());
				assertThat(problem.path("title").asString()).isEqualTo("Request body too slow");
				assertThat(problem.path("detail").asString()).contains("after 3000 ms (sample.request-body-timeout)");
				assertThat(seconds).isBetween(3.0, 3.0 + 5);
			}
			finally {
				socket.close();
				writer.interrupt();
				writer.join(Duration.ofSeconds(10));
			}
		}
	}

	@Test
	void valuesOfAnotherTypeAreRefusedNamingTheField() {
		Map<Map<String, Object>, String> cases = Map.of(Map.of("prompt", 5), "field 'prompt' must be text, not 5",
				Map.of("tokens", List.of(1.5)), "field 'tokens[0]' must be an integer, not 1.5",
				Map.of("tokens", List.of("7")), "field 'tokens[0]' must be an integer",
				Map.of("prompt", "hi", "maxTokens", 2.5), "field 'maxTokens' must be an integer",
				Map.of("prompts", "hi"), "field 'prompts' is not part of this request");
		cases.forEach((body, reason) -> {
			HttpResponse<String> response = this.decode.post("/generate", body, REQUEST_TIMEOUT);
			assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
			JsonNode problem = SampleWorker.JSON.readTree(response.body());
			assertThat(problem.path("title").asString()).isEqualTo("Bad request body");
			assertThat(problem.path("detail").asString()).contains(reason);
		});
		HttpResponse<String> response = this.prefill.post("/prefill", Map.of("requestId", "typed", "prompt", 5),
				REQUEST_TIMEOUT, "Authorization", "Bearer " + SampleWorker.TOKEN);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		assertThat(SampleWorker.JSON.readTree(response.body()).path("detail").asString())
			.contains("field 'prompt' must be text, not 5");
	}

	@Test
	void theBearerSchemeIsMatchedInAnyCase() {
		for (String scheme : List.of("bearer", "BEARER", "Bearer", "bEaReR")) {
			String authorization = scheme + " " + SampleWorker.TOKEN;
			HttpResponse<String> prefilled = this.prefill.post("/prefill",
					new PrefillRequest("scheme-" + scheme, "a prompt", null), REQUEST_TIMEOUT, "Authorization",
					authorization);
			assertThat(prefilled.statusCode()).as(prefilled.body()).isEqualTo(200);
			// The registry on the same port answers 404 for an agent it does not know,
			// not 401.
			assertThat(this.prefill.get("/nixl/agents/nobody/metadata", "Authorization", authorization).statusCode())
				.as(scheme)
				.isEqualTo(404);
		}
		for (String wrong : List.of("bearer not-" + SampleWorker.TOKEN, "Basic " + SampleWorker.TOKEN,
				"Bearer" + SampleWorker.TOKEN, SampleWorker.TOKEN)) {
			assertThat(this.prefill.get("/nixl/agents/nobody/metadata", "Authorization", wrong).statusCode()).as(wrong)
				.isEqualTo(401);
		}
	}

	@Test
	void slowHeadersAreCutAtTheDeadlineWhileOtherClientsAreServed() throws Exception {
		int slow = 300;
		double timeoutsBefore = this.prefill.meter("sample.server.request-header-timeouts");
		List<Future<Double>> closes = new ArrayList<>();
		int served = 0;
		try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
			for (int i = 0; i < slow; i++) {
				int id = i;
				closes.add(clients.submit(() -> trickleHeaders(this.prefill.port(), id)));
			}
			// Meanwhile, ordinary requests to the registry's port and through the decode
			// worker.
			long end = System.nanoTime() + HEADER_DEADLINE.multipliedBy(2).toNanos();
			while (System.nanoTime() - end < 0) {
				assertThat(this.prefill
					.get("/nixl/agents/nobody/metadata", "Authorization", "Bearer " + SampleWorker.TOKEN)
					.statusCode()).isEqualTo(404);
				HttpResponse<String> generated = this.decode.post("/generate",
						new GenerateRequest(null, "served during slow clients", null, 4, null), REQUEST_TIMEOUT);
				assertThat(generated.statusCode()).as(generated.body()).isEqualTo(200);
				served++;
				SampleWorker.pause(Duration.ofMillis(200));
			}
		}
		double[] seconds = new double[slow];
		for (int i = 0; i < slow; i++) {
			seconds[i] = closes.get(i).get();
		}
		Arrays.sort(seconds);
		System.out.printf(Locale.ROOT, "%d slow-header connections closed after %.2f s (first) to %.2f s (last); "
				+ "%d ordinary requests served meanwhile%n", slow, seconds[0], seconds[slow - 1], served);
		// Each trickles a header line every second, so the per-read timeout (2 s) never
		// ends one;
		// the deadline (3 s from the first byte) does, within a sweep (at most 1 s) and
		// the
		// scheduling of a loaded machine.
		assertThat(seconds[0]).isGreaterThanOrEqualTo(HEADER_DEADLINE.toMillis() / 1000.0 - 0.1);
		assertThat(seconds[slow - 1]).isLessThan(HEADER_DEADLINE.toMillis() / 1000.0 + 5);
		assertThat(served).isPositive();
		this.prefill.awaitMeter("sample.server.request-header-timeouts", timeoutsBefore + slow);
	}

	@Test
	void aKeepAliveConnectionIsCutOnlyWhenTheHeadersOfOneRequestAreLate() throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.prefill.port())) {
			socket.setSoTimeout(10_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = new BufferedInputStream(socket.getInputStream());
			// Complete requests on one connection for twice the deadline: each is on
			// time.
			long start = System.nanoTime();
			int requests = 0;
			while (System.nanoTime() - start < HEADER_DEADLINE.multipliedBy(2).toNanos()) {
				out.write("GET /actuator/health/liveness HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
					.getBytes(StandardCharsets.US_ASCII));
				RawResponse answer = RawResponse.read(in);
				assertThat(answer.status()).as(answer.body()).isEqualTo(200);
				requests++;
				SampleWorker.pause(Duration.ofMillis(750));
			}
			assertThat(requests).isGreaterThan(1);
			// Then a request whose header lines trickle in: the same connection is
			// closed.
			long late = System.nanoTime();
			out.write("GET /actuator/health HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
			socket.setSoTimeout(1000);
			double closedAfter = -1;
			for (int line = 0; closedAfter < 0 && System.nanoTime() - late < Duration.ofSeconds(20).toNanos(); line++) {
				try {
					assertThat(in.read()).as("the late request got an answer").isEqualTo(-1);
					closedAfter = (System.nanoTime() - late) / 1e9;
				}
				catch (SocketTimeoutException ex) {
					out.write(("X-Late-" + line + ": 1\r\n").getBytes(StandardCharsets.US_ASCII));
				}
			}
			assertThat(closedAfter).isBetween(HEADER_DEADLINE.toMillis() / 1000.0 - 0.1,
					HEADER_DEADLINE.toMillis() / 1000.0 + 5);
		}
	}

	/**
	 * Opens a connection, starts a request and sends one more header line every second,
	 * for at most 20 s.
	 * @return the seconds from the first byte until the server closed the connection
	 */
	private static double trickleHeaders(int port, int id) throws IOException {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
			socket.setSoTimeout(1000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			long start = System.nanoTime();
			out.write("GET /actuator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
			for (int line = 0; System.nanoTime() - start < Duration.ofSeconds(20).toNanos(); line++) {
				try {
					int read = in.read();
					if (read < 0) {
						return (System.nanoTime() - start) / 1e9;
					}
					throw new AssertionError("slow connection " + id + " got an answer, starting with byte " + read);
				}
				catch (SocketTimeoutException ex) {
					try {
						out.write(("X-Slow-" + line + ": " + id + "\r\n").getBytes(StandardCharsets.US_ASCII));
					}
					catch (IOException closed) {
						return (System.nanoTime() - start) / 1e9;
					}
				}
				catch (IOException reset) {
					return (System.nanoTime() - start) / 1e9;
				}
			}
			throw new AssertionError("slow connection " + id + " was still open after 20 s");
		}
	}

	/** A JSON body {@code {"prompt": "aaa…"}} of about {@code bytes} bytes. */
	private static byte[] prompt(int bytes) {
		byte[] body = new byte[bytes];
		Arrays.fill(body, (byte) 'a');
		byte[] head = "{\"prompt\":\"".getBytes(StandardCharsets.US_ASCII);
		System.arraycopy(head, 0, body, 0, head.length);
		body[bytes - 2] = '"';
		body[bytes - 1] = '}';
		return body;
	}

	/** An answer read from a raw socket. */
	record RawResponse(int status, String body) {

		/**
		 * Posts a body with a Content-Length or chunked, on a raw socket: the body is
		 * written by its own thread, since the worker answers, and closes, before it has
		 * read all of it.
		 */
		static RawResponse post(int port, String path, byte[] body, boolean chunked, String... headers)
				throws IOException, InterruptedException {
			try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
				socket.setSoTimeout(30_000);
				StringBuilder head = new StringBuilder(
						"POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "Content-Type: application/json\r\n");
				head.append(chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: " + body.length + "\r\n");
				for (String header : headers) {
					head.append(header).append("\r\n");
				}
				head.append("\r\n");
				OutputStream out = socket.getOutputStream();
				Thread writer = Thread.ofVirtual().start(() -> {
					try {
						out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
						int chunk = 64 * 1024;
						for (int offset = 0; offset < body.length; offset += chunk) {
							int length = Math.min(chunk, body.length - offset);
							if (chunked) {
								out.write((Integer.toHexString(length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
							}
							out.write(body, offset, length);
							if (chunked) {
								out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
							}
						}
						if (chunked) {
							out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
						}
						out.flush();
					}
					catch (IOException ex) {
						// The worker answered and closed the connection before the end of
						// the body.
					}
				});
				try {
					return read(new BufferedInputStream(socket.getInputStream()));
				}
				finally {
					socket.close();
					writer.join(Duration.ofSeconds(30));
				}
			}
		}

		/** Reads one answer, its body given by Content-Length or chunked. */
		static RawResponse read(InputStream in) throws IOException {
			String[] lines = readHead(in).split("\r\n");
			int status = Integer.parseInt(lines[0].split(" ")[1]);
			int length = 0;
			boolean chunked = false;
			for (String line : lines) {
				if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
					length = Integer.parseInt(line.substring(15).trim());
				}
				else if (line.regionMatches(true, 0, "Transfer-Encoding:", 0, 18)) {
					chunked = line.toLowerCase(Locale.ROOT).contains("chunked");
				}
			}
			if (!chunked) {
				return new RawResponse(status, new String(in.readNBytes(length), StandardCharsets.UTF_8));
			}
			ByteArrayOutputStream body = new ByteArrayOutputStream();
			for (int size = chunkSize(in); size > 0; size = chunkSize(in)) {
				body.write(in.readNBytes(size));
				in.readNBytes(2);
			}
			in.readNBytes(2);
			return new RawResponse(status, body.toString(StandardCharsets.UTF_8));
		}

		private static int chunkSize(InputStream in) throws IOException {
			StringBuilder line = new StringBuilder();
			for (int b = in.read(); b != '\n'; b = in.read()) {
				if (b < 0) {
					throw new IOException("the connection closed inside a chunked answer");
				}
				if (b != '\r') {
					line.append((char) b);
				}
			}
			return Integer.parseInt(line.toString().trim(), 16);
		}

		private static String readHead(InputStream in) throws IOException {
			ByteArrayOutputStream head = new ByteArrayOutputStream();
			while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
				int b = in.read();
				if (b < 0) {
					throw new IOException("the connection closed before the answer's headers: " + head);
				}
				head.write(b);
			}
			return head.toString(StandardCharsets.US_ASCII);
		}

	}

}
