package dev.nixl4j.cli;

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
 * An etcd server that {@code registry-bench} starts as its child on free loopback ports,
 * with a temporary data directory that it deletes when closed. The binary is
 * {@code $ETCD_BINARY}, else {@code etcd} on the {@code PATH}, else {@code /usr/bin/etcd}
 * (where {@code src/etcd/install-etcd.sh} puts Debian's etcd-server).
 */
final class RegistryBenchEtcd implements AutoCloseable {

	private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

	private static final int LOG_LINES = 50;

	private final Process process;

	private final Path dataDirectory;

	private final String endpoint;

	private final Deque<String> log = new ArrayDeque<>();

	private RegistryBenchEtcd(Path binary) throws IOException {
		this.dataDirectory = Files.createTempDirectory("nixl4j-registry-bench-etcd-");
		int[] ports = freePorts();
		this.endpoint = "http://127.0.0.1:" + ports[0];
		String peer = "http://127.0.0.1:" + ports[1];
		List<String> command = List.of(binary.toString(), "--name", "nixl4j-registry-bench", "--data-dir",
				this.dataDirectory.resolve("data").toString(), "--listen-client-urls", this.endpoint,
				"--advertise-client-urls", this.endpoint, "--listen-peer-urls", peer, "--initial-advertise-peer-urls",
				peer, "--initial-cluster", "nixl4j-registry-bench=" + peer);
		try {
			this.process = new ProcessBuilder(command).redirectErrorStream(true).start();
		}
		catch (IOException ex) {
			delete(this.dataDirectory);
			throw ex;
		}
	}

	/**
	 * Finds the etcd binary.
	 * @return the binary, or {@code null} when there is none
	 */
	static @Nullable Path binary() {
		String configured = System.getenv("ETCD_BINARY");
		if (configured != null && !configured.isBlank()) {
			Path path = Path.of(configured);
			return Files.isExecutable(path) ? path : null;
		}
		String searchPath = System.getenv("PATH");
		if (searchPath != null) {
			for (String directory : searchPath.split(":")) {
				if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, "etcd"))) {
					return Path.of(directory, "etcd");
				}
			}
		}
		Path installed = Path.of("/usr/bin/etcd");
		return Files.isExecutable(installed) ? installed : null;
	}

	/**
	 * Starts etcd and waits until it serves clients.
	 * @param binary the etcd binary
	 * @return the running server
	 * @throws IOException when it cannot start
	 * @throws IllegalStateException when it is not ready within 30 s (with its log)
	 */
	static RegistryBenchEtcd start(Path binary) throws IOException {
		RegistryBenchEtcd etcd = new RegistryBenchEtcd(binary);
		try {
			etcd.awaitReady();
			return etcd;
		}
		catch (RuntimeException ex) {
			etcd.close();
			throw ex;
		}
	}

	private void awaitReady() {
		CompletableFuture<Void> ready = new CompletableFuture<>();
		Thread reader = new Thread(() -> readLog(ready), "registry-bench-etcd-log");
		reader.setDaemon(true);
		reader.start();
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		try {
			ready.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			awaitHealthy(deadline);
		}
		catch (Exception ex) {
			String tail;
			synchronized (this.log) {
				tail = String.join("\n", this.log);
			}
			throw new IllegalStateException("etcd did not become ready within " + START_TIMEOUT + "; its log:\n" + tail,
					ex);
		}
	}

	/** Polls etcd's {@code /health} until it answers 200 with {@code "health":"true"}. */
	private void awaitHealthy(long deadline) throws Exception {
		try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
			HttpRequest request = HttpRequest.newBuilder(URI.create(this.endpoint + "/health"))
				.timeout(Duration.ofSeconds(5))
				.build();
			String last = "no answer";
			while (System.nanoTime() - deadline < 0) {
				try {
					HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
					if (response.statusCode() == 200 && healthy(response.body())) {
						return;
					}
					last = "HTTP " + response.statusCode();
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

	private void readLog(CompletableFuture<Void> ready) {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
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

	/**
	 * Returns the client URL.
	 * @return {@code http://127.0.0.1:<port>}
	 */
	String endpoint() {
		return this.endpoint;
	}

	private static int[] freePorts() throws IOException {
		try (ServerSocket client = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
				ServerSocket peer = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return new int[] { client.getLocalPort(), peer.getLocalPort() };
		}
	}

	/**
	 * Stops etcd and deletes its data.
	 */
	@Override
	public void close() {
		this.process.destroy();
		try {
			if (!this.process.waitFor(15, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor(15, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.process.destroyForcibly();
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
		return "etcd at " + this.endpoint;
	}

}
