package dev.nixl4j.metadata.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.metadata.InMemoryMetadataExchange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link MetadataHttpServer} under clients that connect and go quiet, trickle their
 * bytes, or open more connections than it takes, seen through real sockets.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetadataHttpServerDeadlineTest {

	private static final String TOKEN = "deadline-" + UUID.randomUUID();

	private static final Duration HONEST_DEADLINE = Duration.ofSeconds(2);

	private static int get(HttpClient http, MetadataHttpServer server, String agent) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create(server.baseUri() + "/agents/" + agent + "/metadata"))
			.header("Authorization", "Bearer " + TOKEN)
			.timeout(HONEST_DEADLINE)
			.build();
		return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private static Socket connect(MetadataHttpServer server) throws IOException {
		Socket socket = new Socket(server.address().getAddress(), server.port());
		// a bound on how long the test waits for the server to act
		socket.setSoTimeout(15_000);
		return socket;
	}

	private static void send(Socket socket, String text) throws IOException {
		OutputStream out = socket.getOutputStream();
		out.write(text.getBytes(StandardCharsets.ISO_8859_1));
		out.flush();
	}

	/**
	 * Reads until the server closes the connection.
	 * @return what the server sent
	 * @throws SocketTimeoutException when the server kept the connection open past the
	 * socket's timeout
	 */
	private static String readUntilClosed(Socket socket) throws IOException {
		ByteArrayOutputStream received = new ByteArrayOutputStream();
		InputStream in = socket.getInputStream();
		byte[] buffer = new byte[1024];
		try {
			int n;
			while ((n = in.read(buffer)) >= 0) {
				received.write(buffer, 0, n);
			}
		}
		catch (SocketException ex) {
			// a reset is a close too
		}
		return received.toString(StandardCharsets.ISO_8859_1);
	}

	/** Sends a byte every 100 ms until the connection breaks or the test ends. */
	private Thread trickle(Socket socket, AtomicBoolean stop) {
		return Thread.ofVirtual().start(() -> {
			try {
				OutputStream out = socket.getOutputStream();
				while (!stop.get()) {
					out.write('x');
					out.flush();
					Thread.sleep(100);
				}
			}
			catch (IOException | InterruptedException ex) {
				// the server closed the connection
			}
		});
	}

	@Test
	void quietAndTricklingClientsDoNotHoldBackHonestRequestsAndAreClosedAtTheirDeadline() throws Exception {
		AtomicBoolean stop = new AtomicBoolean();
		try (MetadataHttpServer server = MetadataHttpServer.builder()
			.token(TOKEN)
			.requestHeaderTimeout(Duration.ofSeconds(1))
			.requestBodyTimeout(Duration.ofSeconds(1))
			.start(); HttpClient http = HttpClient.newHttpClient()) {
			List<Socket> quiet = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				Socket socket = connect(server);
				quiet.add(socket);
				send(socket, "GET /nixl/agen");
			}
			List<Socket> trickling = new ArrayList<>();
			List<Thread> senders = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				Socket socket = connect(server);
				trickling.add(socket);
				send(socket, "PUT /nixl/agents/slow-" + i + "/metadata HTTP/1.1\r\nHost: x\r\n"
						+ "Content-Length: 100000\r\n\r\n");
				senders.add(trickle(socket, stop));
			}
			for (int i = 0; i < 5; i++) {
				assertThat(get(http, server, "absent")).as("an honest GET answered within " + HONEST_DEADLINE)
					.isEqualTo(404);
			}
			for (Socket socket : quiet) {
				try (socket) {
					assertThat(readUntilClosed(socket)).as("a half request line gets no answer").isEmpty();
				}
			}
			for (Socket socket : trickling) {
				try (socket) {
					assertThat(readUntilClosed(socket)).as("an unauthorized trickled body").startsWith("HTTP/1.1 401 ");
				}
			}
			for (Thread sender : senders) {
				sender.join(Duration.ofSeconds(15));
				assertThat(sender.isAlive()).as("the trickling sender saw its connection closed").isFalse();
			}
			assertThat(get(http, server, "absent")).isEqualTo(404);
		}
		finally {
			stop.set(true);
		}
	}

	@Test
	void anAuthorizedBodyStillArrivingAtItsDeadlineIsCutAndNothingIsStored() throws Exception {
		AtomicBoolean stop = new AtomicBoolean();
		try (InMemoryMetadataExchange store = new InMemoryMetadataExchange();
				MetadataHttpServer server = MetadataHttpServer.builder()
					.token(TOKEN)
					.store(store)
					.requestBodyTimeout(Duration.ofSeconds(1))
					.start();
				Socket socket = connect(server)) {
			send(socket, "PUT /nixl/agents/slow/metadata HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
					+ "\r\nContent-Length: 100000\r\n\r\n");
			Thread sender = trickle(socket, stop);
			assertThat(readUntilClosed(socket)).as("a body cut at its deadline gets no answer").isEmpty();
			sender.join(Duration.ofSeconds(15));
			assertThat(sender.isAlive()).isFalse();
			assertThat(store.isPublished("slow")).isFalse();
		}
		finally {
			stop.set(true);
		}
	}

	@Test
	void anIdleConnectionIsClosedAfterTheIdleTimeout() throws Exception {
		try (MetadataHttpServer server = MetadataHttpServer.builder()
			.token(TOKEN)
			.idleTimeout(Duration.ofMillis(500))
			.start(); Socket socket = connect(server)) {
			send(socket, "GET /nixl/agents/absent/metadata HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
					+ "\r\n\r\n");
			String answer = readUntilClosed(socket);
			assertThat(answer).startsWith("HTTP/1.1 404 ").doesNotContain("Connection: close");
		}
	}

	@Test
	void atTheCapTheConnectionThatWaitedLongestIsClosedForANewcomer() throws Exception {
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(TOKEN).maxConnections(2).start();
				HttpClient http = HttpClient.newHttpClient()) {
			Socket first = connect(server);
			send(first, "GET /nixl/agen");
			Thread.sleep(50);
			Socket second = connect(server);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (server.openConnections() < 2 && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
			assertThat(get(http, server, "absent")).as("an honest GET on a new connection at the cap").isEqualTo(404);
			try (first) {
				assertThat(readUntilClosed(first)).as("the connection that waited longest, closed").isEmpty();
			}
			assertThat(server.evictedConnections()).isEqualTo(1);
			assertThat(server.refusedConnections()).isZero();
			try (second) {
				second.setSoTimeout(200);
				assertThatThrownBy(() -> second.getInputStream().read()).as("the younger one stays open")
					.isInstanceOf(SocketTimeoutException.class);
			}
		}
	}

	@Test
	void closeEndsEveryConnectionAndLeavesNoThreadBehind() throws Exception {
		Set<String> before = threadNames();
		List<Socket> quiet = new ArrayList<>();
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(TOKEN).start();
				HttpClient http = HttpClient.newHttpClient()) {
			for (int i = 0; i < 4; i++) {
				Socket socket = connect(server);
				quiet.add(socket);
				send(socket, "GET /nixl/agen");
			}
			assertThat(get(http, server, "absent")).isEqualTo(404);
		}
		for (Socket socket : quiet) {
			try (socket) {
				assertThat(readUntilClosed(socket)).isEmpty();
			}
		}
		Set<String> left = threadNames();
		left.removeAll(before);
		assertThat(left).noneMatch(name -> name.startsWith("nixl4j-metadata-http-"));
	}

	private static Set<String> threadNames() {
		Set<String> names = new TreeSet<>();
		Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).forEach(t -> names.add(t.getName()));
		return names;
	}

}
