package dev.nixl4j.etcd.launcher;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
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
import java.util.ArrayList;
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

/**
 * A one-member etcd cluster run as a child process on free loopback ports, with a
 * directory of its own that {@link #close()} deletes. It can be stopped and started again
 * on the same ports and data. The binary is usually {@link #binary()}: Debian's
 * {@code etcd-server}, which {@code src/etcd/install-etcd.sh} installs.
 */
public final class EtcdLauncher implements AutoCloseable {

	private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

	private static final int LOG_LINES = 200;

	private final Path binary;

	private final String name;

	private final Path directory;

	private final int clientPort;

	private final int peerPort;

	private final @Nullable ClientTls tls;

	private final List<String> alsoListenOn;

	private final Deque<String> log = new ArrayDeque<>();

	private @Nullable Process process;

	private EtcdLauncher(Builder builder, Path directory, int clientPort, int peerPort) {
		this.binary = builder.binary;
		this.name = builder.name;
		this.directory = directory;
		this.clientPort = clientPort;
		this.peerPort = peerPort;
		this.tls = builder.tls;
		this.alsoListenOn = List.copyOf(builder.alsoListenOn);
	}

	/**
	 * Returns where etcd is looked for: {@code $ETCD_BINARY} when set, else {@code etcd}
	 * on the {@code PATH}, else {@code /usr/bin/etcd}. The file may not exist.
	 * @return the path of the etcd binary to use
	 */
	public static Path binary() {
		String configured = System.getenv("ETCD_BINARY");
		if (configured != null && !configured.isBlank()) {
			return Path.of(configured);
		}
		String searchPath = System.getenv("PATH");
		if (searchPath != null) {
			for (String directory : searchPath.split(":")) {
				if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, "etcd"))) {
					return Path.of(directory, "etcd");
				}
			}
		}
		return Path.of("/usr/bin/etcd");
	}

	/**
	 * Starts a builder.
	 * @param binary the etcd binary, usually {@link #binary()}
	 * @return a builder of a plain {@code http} server named {@code nixl4j-etcd} in a new
	 * temporary directory
	 */
	public static Builder builder(Path binary) {
		return new Builder(binary);
	}

	/**
	 * Returns the client URL on loopback.
	 * @return {@code http://127.0.0.1:<port>}, or {@code https://...} with TLS
	 */
	public String endpoint() {
		return ((this.tls != null) ? "https" : "http") + "://127.0.0.1:" + this.clientPort;
	}

	/**
	 * Returns the client port, the same on every address the server listens on.
	 * @return the port
	 */
	public int clientPort() {
		return this.clientPort;
	}

	/**
	 * Returns the server's directory: its data lives in {@code data} below it.
	 * @return the directory, deleted by {@link #close()}
	 */
	public Path directory() {
		return this.directory;
	}

	/**
	 * Starts the server (again) on its ports and data, and waits until it serves clients:
	 * its log says so and, over {@code http}, its {@code /health} answers healthy.
	 * @throws IllegalStateException when it is running already, or is not ready within 30
	 * s (with the tail of its log)
	 * @throws UncheckedIOException when the binary cannot be started
	 */
	public synchronized void start() {
		if (this.process != null && this.process.isAlive()) {
			throw new IllegalStateException("etcd is already running");
		}
		String peer = "http://127.0.0.1:" + this.peerPort;
		List<String> command = new ArrayList<>(List.of(this.binary.toString(), "--name", this.name, "--data-dir",
				this.directory.resolve("data").toString(), "--listen-client-urls", listenClientUrls(),
				"--advertise-client-urls", endpoint(), "--listen-peer-urls", peer, "--initial-advertise-peer-urls",
				peer, "--initial-cluster", this.name + "=" + peer));
		if (this.tls != null) {
			command.addAll(
					List.of("--cert-file", this.tls.certificate().toString(), "--key-file", this.tls.key().toString(),
							"--trusted-ca-file", this.tls.trustedCa().toString(), "--client-cert-auth"));
		}
		Process started;
		try {
			started = new ProcessBuilder(command).redirectErrorStream(true).start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start " + this.binary, ex);
		}
		this.process = started;
		CompletableFuture<Void> ready = new CompletableFuture<>();
		Thread reader = new Thread(() -> readLog(started, ready), "etcd-log-" + this.clientPort);
		reader.setDaemon(true);
		reader.start();
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		try {
			ready.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			if (this.tls == null) {
				// over TLS the health endpoint wants a client certificate too; the log
				// line suffices
				awaitHealthy(deadline);
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
		for (String address : this.alsoListenOn) {
			urls.append(",http://").append(address).append(':').append(this.clientPort);
		}
		return urls.toString();
	}

	private void readLog(Process started, CompletableFuture<Void> ready) {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				synchronized (this.log) {
					this.log.addLast(line);
					if (this.log.size() > LOG_LINES) {
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

	/** Polls etcd's {@code /health} until it answers 200 with {@code "health":"true"}. */
	private void awaitHealthy(long deadline) throws Exception {
		try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
			HttpRequest request = HttpRequest.newBuilder(URI.create(endpoint() + "/health"))
				.timeout(Duration.ofSeconds(5))
				.build();
			String last = "no answer";
			while (System.nanoTime() - deadline < 0) {
				try {
					HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
					if (response.statusCode() == 200 && healthy(response.body())) {
						return;
					}
					last = "HTTP " + response.statusCode() + " " + response.body();
				}
				catch (IOException ex) {
					last = ex.toString();
				}
				Thread.sleep(50);
			}
			throw new IllegalStateException("etcd is not healthy: " + last);
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
	 * Stops the server (SIGTERM, then SIGKILL after 15 s) and waits until it exited; its
	 * data stays.
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
	 * Deletes the data of a stopped server: started again, it has lost every key and
	 * lease.
	 * @throws IllegalStateException when it is running
	 */
	public synchronized void wipe() {
		if (this.process != null && this.process.isAlive()) {
			throw new IllegalStateException("stop etcd before wiping its data");
		}
		delete(this.directory.resolve("data"));
	}

	/**
	 * Kills the server (its data is thrown away, so it need not stop cleanly) and deletes
	 * its directory.
	 */
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
		delete(this.directory);
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

	/** The files of a server that serves clients over TLS only. */
	private record ClientTls(Path certificate, Path key, Path trustedCa) {
	}

	/**
	 * Builds an {@link EtcdLauncher}.
	 */
	public static final class Builder {

		private final Path binary;

		private String name = "nixl4j-etcd";

		private @Nullable Path directory;

		private @Nullable ClientTls tls;

		private final List<String> alsoListenOn = new ArrayList<>();

		private Builder(Path binary) {
			this.binary = binary;
		}

		/**
		 * Sets the member's name, also the start of its temporary directory's name.
		 * @param name the name (default {@code nixl4j-etcd})
		 * @return this builder
		 */
		public Builder name(String name) {
			if (name.isBlank()) {
				throw new IllegalArgumentException("the etcd member's name must not be blank");
			}
			this.name = name;
			return this;
		}

		/**
		 * Sets the server's directory instead of a new temporary one; it is the server's
		 * from now on, and {@link EtcdLauncher#close()} deletes it.
		 * @param directory an existing directory
		 * @return this builder
		 */
		public Builder directory(Path directory) {
			this.directory = directory;
			return this;
		}

		/**
		 * Serves clients over TLS only, and requires a client certificate signed by a
		 * trusted CA ({@code --client-cert-auth}).
		 * @param certificate the server's certificate (PEM)
		 * @param key its private key (PEM)
		 * @param trustedCa the CA that signs clients' certificates (PEM)
		 * @return this builder
		 */
		public Builder clientCertificates(Path certificate, Path key, Path trustedCa) {
			this.tls = new ClientTls(certificate, key, trustedCa);
			return this;
		}

		/**
		 * Serves plain {@code http} clients on more local addresses than loopback (for
		 * clients in other network namespaces), on the same port.
		 * @param addresses IPv4 addresses
		 * @return this builder
		 */
		public Builder alsoListenOn(List<String> addresses) {
			this.alsoListenOn.addAll(addresses);
			return this;
		}

		/**
		 * Picks free loopback ports and the directory; the server is not started yet.
		 * @return the server, stopped ({@link EtcdLauncher#start()} starts it)
		 * @throws UncheckedIOException when no directory or port can be had
		 */
		public EtcdLauncher build() {
			try {
				Path home = (this.directory != null) ? this.directory : Files.createTempDirectory(this.name + "-");
				try (ServerSocket client = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
						ServerSocket peer = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
					return new EtcdLauncher(this, home, client.getLocalPort(), peer.getLocalPort());
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/**
		 * Builds the server and starts it; one that does not start is closed.
		 * @return the running server
		 * @throws IllegalStateException when it is not ready within 30 s (with the tail
		 * of its log)
		 * @throws UncheckedIOException when it cannot be started
		 */
		public EtcdLauncher start() {
			EtcdLauncher launcher = build();
			try {
				launcher.start();
				return launcher;
			}
			catch (RuntimeException ex) {
				launcher.close();
				throw ex;
			}
		}

	}

}
