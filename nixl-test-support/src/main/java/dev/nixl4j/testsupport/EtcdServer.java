package dev.nixl4j.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.nixl4j.json.JsonException;
import dev.nixl4j.json.JsonReader;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * A real etcd server for tests: Debian's {@code etcd-server} ({@code /usr/bin/etcd}, or
 * {@code $ETCD_BINARY}) on free loopback ports with a temporary data directory. It can be
 * stopped and started again on the same ports and data, and is killed on
 * {@link #close()}.
 */
public final class EtcdServer implements AutoCloseable {

	private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

	private final Path binary;

	private final Path dataDirectory;

	private final int clientPort;

	private final int peerPort;

	private final Deque<String> log = new ArrayDeque<>();

	private @Nullable Process process;

	private final @Nullable TestEtcdTls tls;

	private final List<String> alsoOn;

	private EtcdServer(Path binary, Path dataDirectory, int clientPort, int peerPort, @Nullable TestEtcdTls tls,
			List<String> alsoOn) {
		this.binary = binary;
		this.dataDirectory = dataDirectory;
		this.clientPort = clientPort;
		this.peerPort = peerPort;
		this.tls = tls;
		this.alsoOn = alsoOn;
	}

	/**
	 * Skips the calling test when etcd is not installed, or fails it in CI
	 * ({@code CI=true}).
	 * @return the etcd binary
	 */
	public static Path require() {
		Path binary = binary();
		if (!Files.isExecutable(binary)) {
			String message = "etcd is not installed (no " + binary + "); install it with: apt-get install etcd-server "
					+ "(or point ETCD_BINARY at an etcd binary)";
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError("etcd is required in CI: " + message);
			}
			Assumptions.abort(message + ", skipping");
		}
		return binary;
	}

	private static Path binary() {
		String configured = System.getenv("ETCD_BINARY");
		return Path.of((configured != null && !configured.isBlank()) ? configured : "/usr/bin/etcd");
	}

	/**
	 * Prepares a server on free ports without starting it.
	 * @return the server, stopped
	 */
	public static EtcdServer prepare() {
		return prepare(false);
	}

	private static EtcdServer prepare(boolean tls) {
		return prepare(tls, List.of());
	}

	private static EtcdServer prepare(boolean tls, List<String> alsoOn) {
		Path binary = require();
		try {
			Path data = Files.createTempDirectory("nixl4j-etcd-");
			int[] ports = freePorts(2);
			return new EtcdServer(binary, data, ports[0], ports[1], tls ? TestEtcdTls.create(data) : null, alsoOn);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Starts a server on free ports and waits until it is healthy.
	 * @return the running server
	 */
	public static EtcdServer start() {
		return start(prepare(false));
	}

	/**
	 * Starts a server that serves plain http clients on loopback and on more local
	 * addresses (for clients in other network namespaces), on the same port.
	 * @param addresses the IPv4 addresses to listen on besides 127.0.0.1
	 * @return the running server
	 */
	public static EtcdServer startAlsoListeningOn(String... addresses) {
		return start(prepare(false, List.of(addresses)));
	}

	/**
	 * Starts a server that serves clients over TLS only and requires a client certificate
	 * signed by its test CA ({@code --client-cert-auth}); {@link #tls()} has the client's
	 * material.
	 * @return the running server
	 */
	public static EtcdServer startWithClientCertificates() {
		return start(prepare(true));
	}

	/**
	 * Returns the TLS material of a server started with
	 * {@link #startWithClientCertificates()}.
	 * @return the material
	 */
	public TestEtcdTls tls() {
		if (this.tls == null) {
			throw new IllegalStateException("this etcd serves plain http");
		}
		return this.tls;
	}

	private static EtcdServer start(EtcdServer server) {
		try {
			server.startAgain();
			return server;
		}
		catch (RuntimeException ex) {
			server.close();
			throw ex;
		}
	}

	private static int[] freePorts(int count) throws IOException {
		ServerSocket[] sockets = new ServerSocket[count];
		try {
			int[] ports = new int[count];
			for (int i = 0; i < count; i++) {
				sockets[i] = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
				ports[i] = sockets[i].getLocalPort();
			}
			return ports;
		}
		finally {
			for (ServerSocket socket : sockets) {
				if (socket != null) {
					socket.close();
				}
			}
		}
	}

	/**
	 * Returns the client URL.
	 * @return {@code http://127.0.0.1:<port>}
	 */
	public String endpoint() {
		return ((this.tls != null) ? "https" : "http") + "://127.0.0.1:" + this.clientPort;
	}

	/**
	 * Starts the server (again) on its ports and data directory, and waits until it
	 * serves clients.
	 */
	public synchronized void startAgain() {
		if (this.process != null && this.process.isAlive()) {
			throw new IllegalStateException("etcd is already running");
		}
		String peer = "http://127.0.0.1:" + this.peerPort;
		List<String> command = new java.util.ArrayList<>(List.of(this.binary.toString(), "--name", "nixl4j-test",
				"--data-dir", this.dataDirectory.resolve("data").toString(), "--listen-client-urls", listenClientUrls(),
				"--advertise-client-urls", endpoint(), "--listen-peer-urls", peer, "--initial-advertise-peer-urls",
				peer, "--initial-cluster", "nixl4j-test=" + peer));
		if (this.tls != null) {
			command.addAll(List.of("--cert-file", this.tls.serverCertificate().toString(), "--key-file",
					this.tls.serverKey().toString(), "--trusted-ca-file", this.tls.caCertificate().toString(),
					"--client-cert-auth"));
		}
		CompletableFuture<Void> ready = new CompletableFuture<>();
		Process started;
		try {
			started = new ProcessBuilder(command).redirectErrorStream(true).start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start " + this.binary, ex);
		}
		this.process = started;
		Thread reader = new Thread(() -> readLog(started, ready), "etcd-log-" + this.clientPort);
		reader.setDaemon(true);
		reader.start();
		try {
			ready.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			if (this.tls == null) {
				// over TLS the health endpoint wants a client certificate too; the log
				// line suffices
				awaitHealthy();
			}
		}
		catch (Exception ex) {
			started.destroyForcibly();
			throw new IllegalStateException(
					"etcd did not become ready within " + START_TIMEOUT + "; its log:\n" + String.join("\n", logTail()),
					ex);
		}
	}

	private String listenClientUrls() {
		StringBuilder urls = new StringBuilder(endpoint());
		for (String address : this.alsoOn) {
			urls.append(",http://").append(address).append(':').append(this.clientPort);
		}
		return urls.toString();
	}

	/**
	 * Returns the client port, the same on every address the server listens on.
	 * @return the port
	 */
	public int clientPort() {
		return this.clientPort;
	}

	private void readLog(Process started, CompletableFuture<Void> ready) {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				synchronized (this.log) {
					this.log.addLast(line);
					if (this.log.size() > 200) {
						this.log.removeFirst();
					}
				}
				if (line.contains("ready to serve client requests")) {
					ready.complete(null);
				}
			}
		}
		catch (IOException ex) {
			// the process is gone
		}
		ready.completeExceptionally(new IllegalStateException("etcd's output ended before it was ready"));
	}

	private List<String> logTail() {
		synchronized (this.log) {
			return List.copyOf(this.log);
		}
	}

	private void awaitHealthy() throws Exception {
		try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
			HttpResponse<String> response = http.send(
					HttpRequest.newBuilder(URI.create(endpoint() + "/health")).timeout(Duration.ofSeconds(10)).build(),
					HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200 || !healthy(response.body())) {
				throw new IllegalStateException(
						"etcd is not healthy: " + response.statusCode() + " " + response.body());
			}
		}
	}

	/** Whether etcd's {@code /health} answer is {@code {"health":"true", ...}}. */
	private static boolean healthy(String body) {
		try {
			return JsonReader.strict().read(body) instanceof Map<?, ?> health && "true".equals(health.get("health"));
		}
		catch (JsonException ex) {
			return false;
		}
	}

	/**
	 * Turns on etcd's authentication: a {@code root} user (etcd needs one) and a user
	 * whose role may read and write every key under a prefix.
	 * @param user the user to add
	 * @param password the password of both users
	 * @param prefix the keys the user's role may read and write
	 */
	public void enableAuthentication(String user, String password, String prefix) {
		try (io.etcd.jetcd.Client client = io.etcd.jetcd.Client.builder().endpoints(endpoint()).build()) {
			io.etcd.jetcd.Auth auth = client.getAuthClient();
			io.etcd.jetcd.ByteSequence root = bytes("root");
			auth.userAdd(root, bytes(password)).get(10, TimeUnit.SECONDS);
			auth.roleAdd(root).get(10, TimeUnit.SECONDS);
			auth.userGrantRole(root, root).get(10, TimeUnit.SECONDS);
			addUser(auth, user, password, user + "-role", prefix, io.etcd.jetcd.auth.Permission.Type.READWRITE);
			auth.authEnable().get(10, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("could not enable etcd's authentication", ex);
		}
	}

	/**
	 * Adds a user with a role of its own on the keys under a prefix (before
	 * authentication is on).
	 * @param auth the auth client
	 * @param user the user
	 * @param password its password
	 * @param role the role to create
	 * @param prefix the keys
	 * @param type what the role may do with them
	 * @throws Exception when etcd refuses
	 */
	public static void addUser(io.etcd.jetcd.Auth auth, String user, String password, String role, String prefix,
			io.etcd.jetcd.auth.Permission.Type type) throws Exception {
		byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
		end[end.length - 1]++;
		auth.userAdd(bytes(user), bytes(password)).get(10, TimeUnit.SECONDS);
		auth.roleAdd(bytes(role)).get(10, TimeUnit.SECONDS);
		auth.roleGrantPermission(bytes(role), bytes(prefix), io.etcd.jetcd.ByteSequence.from(end), type)
			.get(10, TimeUnit.SECONDS);
		auth.userGrantRole(bytes(user), bytes(role)).get(10, TimeUnit.SECONDS);
	}

	private static io.etcd.jetcd.ByteSequence bytes(String text) {
		return io.etcd.jetcd.ByteSequence.from(text, StandardCharsets.UTF_8);
	}

	/**
	 * Stops the server (SIGTERM) and waits until it exited; the data directory stays.
	 */
	public synchronized void stop() {
		Process running = this.process;
		if (running == null || !running.isAlive()) {
			return;
		}
		running.destroy();
		try {
			if (!running.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
				running.destroyForcibly().waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			running.destroyForcibly();
		}
	}

	/**
	 * Deletes the data directory of a stopped server: started again, it has lost every
	 * key and lease.
	 */
	public synchronized void wipe() {
		if (this.process != null && this.process.isAlive()) {
			throw new IllegalStateException("stop etcd before wiping its data");
		}
		delete(this.dataDirectory.resolve("data"));
	}

	@Override
	public synchronized void close() {
		if (this.process != null) {
			this.process.destroyForcibly();
			try {
				this.process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		delete(this.dataDirectory);
	}

	private static void delete(Path directory) {
		if (!Files.exists(directory)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(directory)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(path);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Override
	public String toString() {
		return "etcd at " + endpoint();
	}

}
