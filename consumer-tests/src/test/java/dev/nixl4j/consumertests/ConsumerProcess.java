package dev.nixl4j.consumertests;

import java.io.IOException;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * A packaged consumer application started as a user starts it: {@code java -jar} from
 * this JDK, no JVM flags (or, on the module path, only those it needs), and an
 * environment without NIXL's variables or JVM options, whose {@code HOME} and
 * {@code XDG_CACHE_HOME} point into a directory of the test. Its stdout and stderr go to
 * one log file. {@link #close()} stops it (SIGTERM, then SIGKILL), each with a deadline.
 */
final class ConsumerProcess implements AutoCloseable {

	/**
	 * Variables a user's shell may carry that would change where NIXL is found or how
	 * Java starts.
	 */
	private static final List<String> CLEARED_VARIABLES = List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS",
			"_JAVA_OPTIONS", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME");

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private static final ObjectMapper JSON = new ObjectMapper();

	/**
	 * Processes still running; killed if this JVM exits before the tests stopped them.
	 */
	private static final Set<ProcessHandle> RUNNING = ConcurrentHashMap.newKeySet();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(ProcessHandle::destroyForcibly)));
	}

	private final String description;

	private final Process process;

	private final Path log;

	private final long startNanos;

	private ConsumerProcess(String description, Process process, Path log, long startNanos) {
		this.description = description;
		this.process = process;
		this.log = log;
		this.startNanos = startNanos;
	}

	/**
	 * Starts {@code java -jar jar arguments}.
	 * @param description what it is, for messages and the log's name
	 * @param jar the jar
	 * @param home the process's home; its cache directory is {@code home/.cache}
	 * @param logs where the log goes
	 * @param arguments the application's arguments
	 * @return the running process
	 * @throws IOException when it cannot start
	 */
	static ConsumerProcess start(String description, Path jar, Path home, Path logs, String... arguments)
			throws IOException {
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException(jar + " does not exist: the consumer project was not packaged "
					+ "(maven-invoker-plugin runs them in this module's integration-test phase)");
		}
		List<String> javaArguments = new ArrayList<>();
		javaArguments.add("-jar");
		javaArguments.add(jar.toString());
		javaArguments.addAll(List.of(arguments));
		return startJava(description, javaArguments, home, logs);
	}

	/**
	 * Starts {@code java javaArguments}, for an application that is not started with
	 * {@code -jar} (one on the module path).
	 * @param description what it is, for messages and the log's name
	 * @param javaArguments the arguments of the {@code java} launcher
	 * @param home the process's home; its cache directory is {@code home/.cache}
	 * @param logs where the log goes
	 * @return the running process
	 * @throws IOException when it cannot start
	 */
	static ConsumerProcess startJava(String description, List<String> javaArguments, Path home, Path logs)
			throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(javaArguments);
		ProcessBuilder builder = new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true);
		Files.createDirectories(logs);
		Path log = logs.resolve(description + ".log");
		builder.redirectOutput(log.toFile());
		Map<String, String> environment = builder.environment();
		environment.keySet().removeIf((name) -> name.startsWith("NIXL") || CLEARED_VARIABLES.contains(name));
		environment.put("HOME", home.toString());
		environment.put("XDG_CACHE_HOME", home.resolve(".cache").toString());
		long start = System.nanoTime();
		Process process = builder.start();
		RUNNING.add(process.toHandle());
		return new ConsumerProcess(description, process, log, start);
	}

	/**
	 * A loopback port free now.
	 * @return the port
	 */
	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Polls {@code /actuator/health} until it answers {@code UP}.
	 * @param port the application's port
	 * @param deadline how long to wait from now
	 * @return the health document and the time from the process's start to that answer
	 * @throws AssertionError when the process ended or the deadline passed, with the last
	 * answer and the end of the log
	 */
	Healthy awaitHealthUp(int port, Duration deadline) throws InterruptedException {
		URI uri = URI.create("http://127.0.0.1:" + port + "/actuator/health");
		long end = System.nanoTime() + deadline.toNanos();
		String last = "no answer";
		while (System.nanoTime() - end < 0) {
			if (!this.process.isAlive()) {
				throw new AssertionError(this.description + " exited with " + this.process.exitValue()
						+ " before its health was UP\n" + logTail());
			}
			try {
				HttpResponse<String> response = HTTP.send(
						HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
						HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
				long elapsed = System.nanoTime() - this.startNanos;
				last = response.statusCode() + " " + response.body();
				if (response.statusCode() == 200) {
					JsonNode health = JSON.readTree(response.body());
					if ("UP".equals(health.path("status").asString())) {
						return new Healthy(health, Duration.ofNanos(elapsed));
					}
				}
			}
			catch (IOException ex) {
				last = ex.toString();
			}
			Thread.sleep(50);
		}
		throw new AssertionError(
				this.description + " was not UP within " + deadline + "; last answer: " + last + "\n" + logTail());
	}

	/**
	 * Waits for the process to exit.
	 * @param deadline how long to wait
	 * @return its exit status
	 * @throws AssertionError when it did not exit in time (it is killed)
	 */
	int awaitExit(Duration deadline) throws InterruptedException {
		if (!this.process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
			close();
			throw new AssertionError(this.description + " did not exit within " + deadline + "\n" + logTail());
		}
		RUNNING.remove(this.process.toHandle());
		return this.process.exitValue();
	}

	/**
	 * The time from the start to now.
	 * @return the time since start
	 */
	Duration elapsed() {
		return Duration.ofNanos(System.nanoTime() - this.startNanos);
	}

	/**
	 * The process's output so far.
	 * @return its lines
	 */
	List<String> logLines() {
		try {
			return Files.readAllLines(this.log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The last lines of the output, for failure messages.
	 * @return a block of text naming the log
	 */
	String logTail() {
		List<String> lines = logLines();
		return "--- last lines of " + this.log + " ---\n"
				+ String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
	}

	/**
	 * GETs a JSON document from the application.
	 * @param port its port
	 * @param path the path
	 * @return the document
	 */
	JsonNode getJson(int port, String path) throws IOException, InterruptedException {
		HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.GET()
			.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
		if (response.statusCode() != 200) {
			throw new AssertionError("GET " + path + " of " + this.description + " answered " + response.statusCode()
					+ " " + response.body() + "\n" + logTail());
		}
		return JSON.readTree(response.body());
	}

	/**
	 * POSTs to the application and returns the bytes of its answer.
	 * @param port its port
	 * @param pathAndQuery the path with its query
	 * @return the answer's body
	 */
	byte[] postForBytes(int port, String pathAndQuery) throws IOException, InterruptedException {
		HttpResponse<byte[]> response = HTTP
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
				.timeout(Duration.ofSeconds(60))
				.POST(HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.ofByteArray());
		if (response.statusCode() != 200) {
			throw new AssertionError(
					"POST " + pathAndQuery + " of " + this.description + " answered " + response.statusCode() + " "
							+ new String(response.body(), StandardCharsets.UTF_8) + "\n" + logTail());
		}
		return response.body();
	}

	/**
	 * Kills the process with SIGKILL, as a crash would, and waits for it to be gone.
	 * @param deadline how long to wait for it to exit
	 * @throws AssertionError when it is still alive after the deadline
	 */
	void kill(Duration deadline) throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
			throw new AssertionError(this.description + " still runs " + deadline + " after SIGKILL");
		}
		RUNNING.remove(this.process.toHandle());
	}

	@Override
	public String toString() {
		return this.description;
	}

	/**
	 * Stops the process: SIGTERM, and SIGKILL when it has not exited 20 seconds later.
	 */
	@Override
	public void close() {
		if (this.process.isAlive()) {
			this.process.destroy();
			try {
				if (!this.process.waitFor(20, TimeUnit.SECONDS)) {
					this.process.destroyForcibly();
					this.process.waitFor(10, TimeUnit.SECONDS);
				}
			}
			catch (InterruptedException ex) {
				this.process.destroyForcibly();
				Thread.currentThread().interrupt();
			}
		}
		if (!this.process.isAlive()) {
			RUNNING.remove(this.process.toHandle());
		}
	}

	/**
	 * An answer of {@code UP}.
	 *
	 * @param health the health document
	 * @param sinceStart the time from the process's start to the answer
	 */
	record Healthy(JsonNode health, Duration sinceStart) {

		/**
		 * The details of the {@code nixl} health contributor.
		 * @return its details; missing when the contributor is absent
		 */
		JsonNode nixl() {
			return this.health.path("components").path("nixl").path("details");
		}

	}

}
