package dev.nixl4j.consumertests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Starts what the consumer projects (src/it, built by maven-invoker-plugin from the
 * installed artifacts) packaged, exactly as their users start it: {@code java -jar}, no
 * JVM flags, no NIXL variables, and a fresh {@code HOME} (so a fresh
 * {@code XDG_CACHE_HOME}) per process, so nothing was extracted or fetched beforehand.
 *
 * <p>
 * The Spring Boot application and the plain Java application must run on native NIXL,
 * loaded from the native artifact on their class path (extracted under their own fresh
 * cache), and move data between two processes byte for byte. The Spring Boot application
 * built without the native artifact runs on the embedded engine and warns once, saying
 * how to get native NIXL. Nothing here skips: on a machine where native NIXL cannot run,
 * the native tests fail.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ConsumerApplicationsIT {

	private static final Path PROJECTS = Path.of(System.getProperty("consumer.projects", "target/it"));

	private static final Path SPRING_APP = PROJECTS.resolve("spring-boot-app/target/consumer-app.jar");

	private static final Path SPRING_APP_WITHOUT_NATIVE = PROJECTS
		.resolve("spring-boot-app-without-native/target/consumer-app-without-native.jar");

	private static final Path PLAIN_APP = PROJECTS.resolve("plain-java-app/target/plain-consumer.jar");

	private static final Duration START_DEADLINE = Duration.ofSeconds(120);

	/**
	 * The artifact a user adds to get NIXL's native libraries; the fallback warning must
	 * name it.
	 */
	private static final String NATIVE_ARTIFACT = "nixl-native-linux-x86_64";

	/** A line Spring Boot's console format writes at WARN level. */
	private static final Pattern WARN_RECORD = Pattern.compile("^\\S+\\s+WARN\\s");

	/**
	 * The first line of any record of Spring Boot's console format (it starts with a
	 * timestamp).
	 */
	private static final Pattern RECORD_START = Pattern.compile("^\\d{4}-\\d{2}-\\d{2}T");

	@TempDir
	Path temp;

	@Test
	void springBootAppRunsOnNativeNixlFromItsClassPathAndReadsAnotherProcessByteForByte() throws Exception {
		String token = token();
		Path homeServer = home("server");
		Path homeClient = home("client");
		int serverPort = ConsumerProcess.freePort();
		try (ConsumerProcess server = ConsumerProcess.start("spring-server", SPRING_APP, homeServer, logs(),
				"--server.port=" + serverPort, "--nixl.metadata.http.token=" + token)) {
			ConsumerProcess.Healthy serverUp = server.awaitHealthUp(serverPort, START_DEADLINE);
			assertNativeFromClassPath(server, serverUp, homeServer);
			System.out.println("consumer spring-boot-app, nixl health: " + serverUp.nixl());
			assertNoNativeAccessWarning(server);

			int clientPort = ConsumerProcess.freePort();
			String[] clientArguments = { "--server.port=" + clientPort, "--nixl.metadata.http.token=" + token,
					"--nixl.metadata.http.endpoint=http://127.0.0.1:" + serverPort + "/nixl" };
			Duration cold;
			String coldStarted;
			try (ConsumerProcess client = ConsumerProcess.start("spring-client", SPRING_APP, homeClient, logs(),
					clientArguments)) {
				ConsumerProcess.Healthy clientUp = client.awaitHealthUp(clientPort, START_DEADLINE);
				cold = clientUp.sinceStart();
				coldStarted = started(client.logLines());
				assertNativeFromClassPath(client, clientUp, homeClient);
				assertNoNativeAccessWarning(client);
				assertReadsByteForByte("NATIVE", server, serverPort, client, clientPort);
			}
			Map<Path, FileTime> extracted = files(extractionRoot(homeClient));
			Duration warm;
			String warmStarted;
			try (ConsumerProcess client = ConsumerProcess.start("spring-client-warm", SPRING_APP, homeClient, logs(),
					clientArguments)) {
				ConsumerProcess.Healthy clientUp = client.awaitHealthUp(clientPort, START_DEADLINE);
				warm = clientUp.sinceStart();
				warmStarted = started(client.logLines());
				assertNativeFromClassPath(client, clientUp, homeClient);
				assertReadsByteForByte("NATIVE", server, serverPort, client, clientPort);
			}
			assertThat(files(extractionRoot(homeClient)))
				.as("the second start uses the libraries the first one extracted, as they were")
				.isEqualTo(extracted);
			System.out.printf(Locale.ROOT,
					"consumer spring-boot-app: java -jar to /actuator/health UP on NATIVE: cold cache %.1f s "
							+ "(first start, fresh HOME; registry process: %.1f s), warm cache %.1f s (second start, same HOME)%n",
					seconds(cold), seconds(serverUp.sinceStart()), seconds(warm));
			System.out.println(
					"consumer spring-boot-app: Spring Boot's own count: cold " + coldStarted + ", warm " + warmStarted);
		}
	}

	@Test
	void plainJavaAppRunsOnNativeNixlFromItsClassPathAndReadsAnotherProcessByteForByte() throws Exception {
		Path homeServer = home("plain-server");
		Path homeReader = home("plain-reader");
		Duration cold = readBetweenPlainProcesses("cold", homeServer, homeReader);
		Duration warm = readBetweenPlainProcesses("warm", homeServer, homeReader);
		System.out.printf(Locale.ROOT,
				"consumer plain-java-app: java -jar, READ of 1 MiB from another process, "
						+ "checked, exit: cold cache %.1f s (fresh HOME), warm cache %.1f s (same HOME)%n",
				seconds(cold), seconds(warm));
	}

	/**
	 * Runs a serving and a reading plain process; answers the reader's time from start to
	 * exit.
	 */
	private Duration readBetweenPlainProcesses(String round, Path homeServer, Path homeReader) throws Exception {
		Path exchange = Files.createDirectory(this.temp.resolve("exchange-" + round));
		try (ConsumerProcess server = ConsumerProcess.start("plain-server-" + round, PLAIN_APP, homeServer, logs(),
				"serve", exchange.toString());
				ConsumerProcess reader = ConsumerProcess.start("plain-reader-" + round, PLAIN_APP, homeReader, logs(),
						"read", exchange.toString())) {
			int readerStatus = reader.awaitExit(Duration.ofSeconds(120));
			Duration readerTime = reader.elapsed();
			int serverStatus = server.awaitExit(Duration.ofSeconds(60));
			assertThat(readerStatus).as("exit status of the reader\n%s", reader.logTail()).isZero();
			assertThat(serverStatus).as("exit status of the server\n%s", server.logTail()).isZero();
			assertThat(reader.logLines()).as(reader.logTail())
				.contains("VERIFIED " + (1 << 20) + " bytes from "
						+ valueOf(server.logLines(), "serving " + (1 << 20) + " bytes as "));
			for (ConsumerProcess process : List.of(server, reader)) {
				Path home = (process == server) ? homeServer : homeReader;
				assertThat(valueOf(process.logLines(), "engine: "))
					.as("engine that %s printed\n%s", process, process.logTail())
					.isEqualTo("NATIVE");
				assertThat(valueOf(process.logLines(), "library: "))
					.as("library that %s printed: the one extracted from the class path into its fresh cache", process)
					.contains(extractionRoot(home).toString())
					.contains("class path");
				assertNoNativeAccessWarning(process);
			}
			System.out
				.println("consumer plain-java-app, " + round + " reader: " + String.join(" | ", reader.logLines()));
			return readerTime;
		}
	}

	@Test
	void springBootAppWithoutTheNativeArtifactRunsOnTheEmbeddedEngineAndWarnsOnce() throws Exception {
		String token = token();
		int serverPort = ConsumerProcess.freePort();
		int clientPort = ConsumerProcess.freePort();
		List<ConsumerProcess> processes = new ArrayList<>();
		try (ConsumerProcess server = ConsumerProcess.start("spring-without-native-server", SPRING_APP_WITHOUT_NATIVE,
				home("embedded-server"), logs(), "--server.port=" + serverPort,
				"--nixl.metadata.http.token=" + token)) {
			processes.add(server);
			assertEmbedded(server, server.awaitHealthUp(serverPort, START_DEADLINE));
			try (ConsumerProcess client = ConsumerProcess.start("spring-without-native-client",
					SPRING_APP_WITHOUT_NATIVE, home("embedded-client"), logs(), "--server.port=" + clientPort,
					"--nixl.metadata.http.token=" + token,
					"--nixl.metadata.http.endpoint=http://127.0.0.1:" + serverPort + "/nixl")) {
				processes.add(client);
				assertEmbedded(client, client.awaitHealthUp(clientPort, START_DEADLINE));
				assertReadsByteForByte("EMBEDDED", server, serverPort, client, clientPort);
			}
		}
		for (ConsumerProcess process : processes) {
			List<String> lines = process.logLines();
			List<String> warnings = nativeWarnings(lines);
			assertThat(warnings)
				.as("warnings about native NIXL in the log of %s:\n%s", process, String.join("\n", lines))
				.hasSize(1);
			assertThat(warnings.getFirst()).as("the warning says how to get native NIXL")
				.contains(NATIVE_ARTIFACT)
				.containsIgnoringCase("embedded");
		}
		System.out.println("consumer spring-boot-app without " + NATIVE_ARTIFACT + ", its one warning:\n"
				+ nativeWarnings(processes.getFirst().logLines()).getFirst());
	}

	private static void assertEmbedded(ConsumerProcess process, ConsumerProcess.Healthy up) {
		assertThat(up.nixl().path("engine").asString())
			.as("engine in /actuator/health: %s\n%s", up.nixl(), process.logTail())
			.isEqualTo("EMBEDDED");
	}

	/**
	 * Asserts that the agent runs on native NIXL loaded from what the process extracted
	 * from its class path: the only NIXL under its fresh cache directory is what it
	 * extracted there.
	 */
	private static void assertNativeFromClassPath(ConsumerProcess process, ConsumerProcess.Healthy up, Path home) {
		JsonNode nixl = up.nixl();
		assertThat(nixl.isMissingNode()).as("nixl health details in %s\n%s", up.health(), process.logTail()).isFalse();
		assertThat(nixl.path("engine").asString()).as("engine in /actuator/health: %s\n%s", nixl, process.logTail())
			.isEqualTo("NATIVE");
		assertThat(nixl.toString())
			.as("the library, in /actuator/health, is the one extracted from the class path "
					+ "into this process's fresh cache %s", extractionRoot(home))
			.contains(extractionRoot(home).toString());
		assertThat(nixl.path("library").path("source").asString()).as("library source in /actuator/health: %s", nixl)
			.startsWith("class path");
		assertThat(Files.isDirectory(extractionRoot(home))).as("%s was extracted", extractionRoot(home)).isTrue();
	}

	/**
	 * Makes the client READ the server's shared buffer through the engine and checks
	 * every byte.
	 */
	private static void assertReadsByteForByte(String engine, ConsumerProcess server, int serverPort,
			ConsumerProcess client, int clientPort) throws Exception {
		JsonNode buffer = server.getJson(serverPort, "/buffer");
		assertThat(buffer.path("engine").asString()).as("engine of the server's agent").isEqualTo(engine);
		long length = buffer.path("length").asLong();
		byte[] read = client.postForBytes(clientPort, "/read?agent=" + buffer.path("agent").asString() + "&address="
				+ buffer.path("address").asLong() + "&length=" + length);
		assertThat(read.length).as("bytes read").isEqualTo(length);
		for (int i = 0; i < read.length; i++) {
			if (read[i] != patternByte(i)) {
				fail("byte %d read from %s is %d, the server wrote %d\n%s", i, buffer.path("agent").asString(), read[i],
						patternByte(i), client.logTail());
			}
		}
	}

	/**
	 * Asserts that neither the JDK (a restricted method called without native access) nor
	 * nixl4j (its advice on enabling native access) warns: the manifest's
	 * Enable-Native-Access line is all a jar needs.
	 */
	private static void assertNoNativeAccessWarning(ConsumerProcess process) {
		List<String> lines = process.logLines();
		assertThat(lines).as("the manifest's Enable-Native-Access line enables native access\n%s", process.logTail())
			.noneMatch((line) -> line.contains("A restricted method"));
		assertThat(warnings(lines)).as("warnings about native access in the log of a jar whose manifest enables it")
			.noneMatch((warning) -> warning.toLowerCase(Locale.ROOT).contains("native access"));
	}

	/**
	 * Log records at WARN level (in Spring Boot's console format) that speak of native
	 * NIXL.
	 */
	private static List<String> nativeWarnings(List<String> lines) {
		return warnings(lines).stream()
			.filter((warning) -> warning.toLowerCase(Locale.ROOT).contains("native"))
			.toList();
	}

	/**
	 * Log records at WARN level: a WARN line of Spring Boot's console format and its
	 * continuation lines.
	 */
	private static List<String> warnings(List<String> lines) {
		List<String> warnings = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			if (!WARN_RECORD.matcher(lines.get(i)).find()) {
				continue;
			}
			StringBuilder record = new StringBuilder(lines.get(i));
			for (int j = i + 1; j < lines.size() && !RECORD_START.matcher(lines.get(j)).find(); j++) {
				record.append('\n').append(lines.get(j));
			}
			warnings.add(record.toString());
		}
		return warnings;
	}

	/** The shared libraries under a directory, with their times of last modification. */
	private static Map<Path, FileTime> files(Path directory) throws IOException {
		Map<Path, FileTime> files = new TreeMap<>();
		try (Stream<Path> walk = Files.walk(directory)) {
			for (Path file : walk
				.filter((path) -> Files.isRegularFile(path) && path.getFileName().toString().contains(".so"))
				.toList()) {
				files.put(directory.relativize(file), Files.getLastModifiedTime(file));
			}
		}
		return files;
	}

	/**
	 * Where a process with this home extracts the native artifact (NATIVE-LAYOUT: cache
	 * root/native).
	 */
	private static Path extractionRoot(Path home) {
		return home.resolve(".cache").resolve("nixl4j").resolve("native");
	}

	/** The byte the consumer applications write at an offset of their shared buffer. */
	private static byte patternByte(long offset) {
		return (byte) ((offset * 31 + (offset >>> 11)) ^ 0x5A);
	}

	/** Spring Boot's "Started ... in N seconds (process running for M)", from "in" on. */
	private static String started(List<String> lines) {
		String started = "Started ConsumerApplication ";
		return lines.stream()
			.filter((line) -> line.contains(started + "in "))
			.map((line) -> line.substring(line.indexOf(started) + started.length()))
			.findFirst()
			.orElse("(no Started line)");
	}

	private static String valueOf(List<String> lines, String prefix) {
		return lines.stream()
			.filter((line) -> line.startsWith(prefix))
			.map((line) -> line.substring(prefix.length()))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no line '" + prefix + "...' in\n" + String.join("\n", lines)));
	}

	private Path home(String name) throws Exception {
		return Files.createDirectory(this.temp.resolve("home-" + name));
	}

	private Path logs() {
		return this.temp.resolve("logs");
	}

	private static String token() {
		byte[] bytes = new byte[24];
		new SecureRandom().nextBytes(bytes);
		return HexFormat.of().formatHex(bytes);
	}

	private static double seconds(Duration duration) {
		return duration.toNanos() / 1e9;
	}

}
