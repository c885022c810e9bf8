package dev.nixl4j.metadata.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link MetadataHttpServer} under a connection flood: a client that holds more
 * connections than the server takes and reconnects at once whenever one is closed, seen
 * through real loopback sockets. Honest {@code GET}s, each on a fresh connection, must
 * still be answered; the figures are printed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetadataHttpServerFloodTest {

	private static final String TOKEN = "flood-" + UUID.randomUUID();

	/** The flood's connections: more than the server's default cap of 128. */
	private static final int FLOOD = 300;

	private static final int HONEST = 300;

	private static final Duration HONEST_DEADLINE = Duration.ofSeconds(2);

	/** The share of honest requests that must be answered. */
	private static final double REQUIRED = 0.95;

	@Test
	void honestGetsOnFreshConnectionsAreAnsweredWhileAFloodOfQuietConnectionsReconnectsAtOnce() throws Exception {
		measure("quiet", Flood.QUIET, InetAddress.getLoopbackAddress(), InetAddress.getLoopbackAddress(), REQUIRED);
	}

	@Test
	void honestGetsOnFreshConnectionsAreAnsweredWhileAFloodSendsOneByteASecond() throws Exception {
		measure("one byte a second", Flood.TRICKLE, InetAddress.getLoopbackAddress(), InetAddress.getLoopbackAddress(),
				REQUIRED);
	}

	@Test
	void aFloodFromOneAddressDisplacesOnlyItsOwnConnections() throws Exception {
		// the flood from 127.0.0.2, honest clients from 127.0.0.3: the flood's address
		// holds the most connections, so only its own are closed for newcomers
		measure("quiet, from another address", Flood.QUIET, InetAddress.getByName("127.0.0.2"),
				InetAddress.getByName("127.0.0.3"), 0.99);
	}

	private enum Flood {

		/** Connects and sends nothing. */
		QUIET,

		/** Connects and sends a request line one byte a second. */
		TRICKLE

	}

	private static void measure(String label, Flood flood, InetAddress floodFrom, InetAddress honestFrom,
			double required) throws Exception {
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong floodConnections = new AtomicLong();
		List<Thread> attackers = new ArrayList<>();
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(TOKEN).start()) {
			for (int i = 0; i < FLOOD; i++) {
				attackers.add(Thread.ofVirtual().start(() -> attack(server, flood, floodFrom, stop, floodConnections)));
			}
			// the flood holds every slot before the first honest request
			long full = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (server.openConnections() < MetadataHttpServer.DEFAULT_MAX_CONNECTIONS && System.nanoTime() < full) {
				Thread.sleep(10);
			}
			assertThat(server.openConnections()).as("the flood holds every slot")
				.isEqualTo(MetadataHttpServer.DEFAULT_MAX_CONNECTIONS);
			int answered = 0;
			long slowest = 0;
			long start = System.nanoTime();
			for (int i = 0; i < HONEST; i++) {
				long before = System.nanoTime();
				String answer = honestGet(server, honestFrom);
				long took = System.nanoTime() - before;
				if (answer != null && answer.startsWith("HTTP/1.1 404 ")) {
					answered++;
					slowest = Math.max(slowest, took);
				}
				Thread.sleep(10);
			}
			long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
			System.out.printf(
					"connection flood (%s, %d sockets from %s, reconnecting at once): %d of %d honest GETs on fresh "
							+ "connections from %s answered within %d ms (slowest %d ms) in %d s; the flood made %d "
							+ "connections, %d closed for newcomers, %d refused at accept%n",
					label, FLOOD, floodFrom.getHostAddress(), answered, HONEST, honestFrom.getHostAddress(),
					HONEST_DEADLINE.toMillis(), TimeUnit.NANOSECONDS.toMillis(slowest), seconds, floodConnections.get(),
					server.evictedConnections(), server.refusedConnections());
			assertThat(answered).as("honest GETs answered of " + HONEST)
				.isGreaterThanOrEqualTo((int) (HONEST * required));
			assertThat(server.evictedConnections()).as("connections closed for newcomers").isPositive();
		}
		finally {
			stop.set(true);
			for (Thread attacker : attackers) {
				attacker.join(Duration.ofSeconds(10));
			}
		}
	}

	/**
	 * One flood connection after another, until told to stop: each is opened at once
	 * after the server closed the one before.
	 */
	private static void attack(MetadataHttpServer server, Flood flood, InetAddress from, AtomicBoolean stop,
			AtomicLong connections) {
		while (!stop.get()) {
			try (Socket socket = new Socket()) {
				socket.bind(new InetSocketAddress(from, 0));
				socket.connect(server.address(), 5_000);
				connections.incrementAndGet();
				socket.setSoTimeout(1_000);
				InputStream in = socket.getInputStream();
				OutputStream out = socket.getOutputStream();
				byte[] line = "GET /nixl/agents/flood/metadata HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII);
				int sent = 0;
				while (!stop.get()) {
					if (flood == Flood.TRICKLE && sent < line.length) {
						out.write(line[sent++]);
						out.flush();
					}
					try {
						if (in.read() < 0) {
							break;
						}
					}
					catch (java.net.SocketTimeoutException ex) {
						// still open: hold it
					}
				}
			}
			catch (IOException ex) {
				// closed by the server, or refused: connect again at once
			}
		}
	}

	/**
	 * A {@code GET} of an absent agent on a fresh connection.
	 * @return the answer, or {@code null} when none came within the deadline
	 */
	private static @Nullable String honestGet(MetadataHttpServer server, InetAddress from) {
		long deadline = System.nanoTime() + HONEST_DEADLINE.toNanos();
		try (Socket socket = new Socket()) {
			socket.bind(new InetSocketAddress(from, 0));
			socket.connect(server.address(), (int) HONEST_DEADLINE.toMillis());
			OutputStream out = socket.getOutputStream();
			out.write(("GET /nixl/agents/absent/metadata HTTP/1.1\r\nHost: registry\r\nAuthorization: Bearer " + TOKEN
					+ "\r\nConnection: close\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			ByteArrayOutputStream answer = new ByteArrayOutputStream();
			InputStream in = socket.getInputStream();
			byte[] buffer = new byte[1024];
			while (true) {
				long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
				if (left <= 0) {
					return null;
				}
				socket.setSoTimeout((int) left);
				int n = in.read(buffer);
				if (n < 0) {
					break;
				}
				answer.write(buffer, 0, n);
			}
			return answer.toString(StandardCharsets.ISO_8859_1);
		}
		catch (IOException ex) {
			return null;
		}
	}

}
