package dev.nixl4j;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.nixl4j.MetadataMutator.Mutant;
import dev.nixl4j.MetadataMutator.Source;
import dev.nixl4j.metadata.MetadataFraming;
import dev.nixl4j.testsupport.NativeNixl;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes metadata loading: seeded mutations of real metadata, made at test time by native
 * agents, go through {@link MetadataFraming}; those it accepts are loaded into native
 * NIXL in a child JVM ({@link MetadataLoadChild}), where a crash of NIXL or UCX is
 * recorded as a finding instead of killing the test run.
 *
 * <p>
 * The real metadata comes from native agents in another child JVM
 * ({@link MetadataSourceChild}), which stays up while the mutants are loaded: their
 * connection info must lead somewhere.
 *
 * <p>
 * The mutations include the connection info: UCX reads it as a packed worker address
 * without knowing its length, and a forged one aborted native agents inside UCX. Such
 * mutants count apart ({@code connection-info-*} in the report).
 *
 * <p>
 * Network safety: loading metadata makes UCX create endpoints from the connection info
 * inside it, and a mutated connection info could point UCX at any address. So:
 * <ul>
 * <li>where {@code unshare --net} is permitted, the source child runs in a fresh network
 * namespace with nothing but loopback, and the loaders join that namespace
 * ({@code nsenter}), so that they can reach the source agents and nothing else; mutants
 * with changed connection info are loaded there too;</li>
 * <li>elsewhere all children run in the host's network, and no blob whose connection info
 * differs, byte for byte, from one the source agents wrote goes to a loader (such mutants
 * are only parse-checked);</li>
 * <li>all children run with {@code UCX_NET_DEVICES=lo}, so the connection info names
 * loopback only.</li>
 * </ul>
 *
 * <p>
 * Findings (the blob, its prelude, the reason and the child's output) go to
 * {@code target/fuzz-findings/}; the batch, the per-record results and the children's
 * logs to {@code target/fuzz-work/}. System properties: {@code nixl4j.fuzz.seed} and
 * {@code nixl4j.fuzz.mutations} change the seed and the number of mutations,
 * {@code nixl4j.fuzz.netns=false} skips the network namespace.
 */
class MetadataFuzzTest {

	private static final long SEED = Long.getLong("nixl4j.fuzz.seed", 0x6e69786c_66757a7aL);

	private static final int MIN_MUTATIONS = 10_000;

	private static final int MUTATIONS = Math.max(MIN_MUTATIONS, Integer.getInteger("nixl4j.fuzz.mutations", 12_000));

	private static final Duration CHILD_START = Duration.ofSeconds(30);

	/**
	 * A load takes milliseconds; ten seconds without a result line means the child hangs.
	 */
	private static final Duration PER_RECORD = Duration.ofSeconds(10);

	/** The native phase must end within this, crashes and restarts included. */
	private static final Duration NATIVE_PHASE = Duration.ofSeconds(110);

	/** After this many crashes the rest is not worth the time: the test fails anyway. */
	private static final int MAX_CRASHES = 20;

	private static final Path FINDINGS = Path.of("target", "fuzz-findings");

	/**
	 * The batch file and the children's logs (NIXL and UCX write there), kept for a look
	 * after a run.
	 */
	private static final Path WORK = Path.of("target", "fuzz-work");

	private static boolean isolatedNetwork;

	@BeforeAll
	static void requireNativeAndIsolation() {
		NativeNixl.require();
		String why = Boolean.parseBoolean(System.getProperty("nixl4j.fuzz.netns", "true")) ? probeNetworkNamespace()
				: "turned off by nixl4j.fuzz.netns=false";
		isolatedNetwork = why == null;
		System.out.println("MetadataFuzzTest network mode: "
				+ (isolatedNetwork ? "netns (children in a fresh network namespace with loopback only)"
						: "host (no network namespace: " + why + "; only genuine connection info is loaded)"));
	}

	@Test
	@Timeout(value = 170, unit = TimeUnit.SECONDS)
	void mutatedMetadataIsRefusedInJavaOrLoadsWithoutCrashingNixl() throws Exception {
		long started = System.nanoTime();
		Path work = emptyDirectory(WORK);
		emptyDirectory(FINDINGS);
		List<String> sourcePrefix = isolatedNetwork
				? List.of("unshare", "--net", "sh", "-c", "ip link set lo up && exec \"$@\"", "fuzz-source")
				: List.of();
		// The source agents stay up until the native phase ends: their connection info
		// must stay live.
		try (ChildJvm source = new ChildJvm(sourcePrefix, MetadataSourceChild.class, List.of(),
				work.resolve("source.log"))) {
			List<Source> sources = sources(source);
			Set<ByteBuffer> genuineInfos = new HashSet<>();
			for (Source each : sources) {
				for (byte[] info : MetadataMutator.connectionInfos(each.blob())) {
					genuineInfos.add(ByteBuffer.wrap(info));
				}
			}
			Campaign campaign = new Campaign(sources, genuineInfos);
			campaign.mutate();
			// Loaders join the source's namespace, so that its agents are all they can
			// reach.
			List<String> loaderPrefix = isolatedNetwork ? List.of("nsenter", "--net=/proc/" + source.pid() + "/ns/net")
					: List.of();
			NativeLoader loader = new NativeLoader(work, campaign, loaderPrefix, source);
			loader.run(System.nanoTime() + NATIVE_PHASE.toNanos());
			campaign.writeResults(work.resolve("results.txt"), loader);
			campaign.report(loader, Duration.ofNanos(System.nanoTime() - started));
			campaign.verify(loader);
		}
	}

	/** Reads the real metadata that {@link MetadataSourceChild} made. */
	private static List<Source> sources(ChildJvm source) throws InterruptedException {
		List<Source> sources = new ArrayList<>();
		Base64.Decoder base64 = Base64.getDecoder();
		String line;
		while ((line = source.next(CHILD_START)) != null && !line.equals("ready")) {
			String[] words = line.split(" ");
			assertThat(words).as(line).hasSize(4).startsWith("source");
			sources.add(new Source(words[1], base64.decode(words[2]), base64.decode(words[3])));
		}
		if (!"ready".equals(line)) {
			throw new IllegalStateException(
					"the metadata source did not start (" + source.exit() + "):\n" + source.logTail());
		}
		assertThat(sources).hasSizeGreaterThanOrEqualTo(6);
		return sources;
	}

	/** The mutations, what the Java check said of them, and the records for the child. */
	private static final class Campaign {

		private final List<Source> sources;

		private final Set<ByteBuffer> genuineInfos;

		/**
		 * Per record: the prelude and the blob; the genuine sources come first, as
		 * controls.
		 */
		final List<byte[][]> records = new ArrayList<>();

		/** Per record: where it came from and how it was made. */
		final List<String> origins = new ArrayList<>();

		int mutations;

		int malformed;

		int wellFormed;

		int connectionInfoChanged;

		int duplicates;

		/**
		 * Mutants whose connection info differs from every genuine one: made, refused by
		 * the Java check.
		 */
		int connectionInfoMutants;

		int connectionInfoRefused;

		/** Per record: whether its connection info differs from every genuine one. */
		final List<Boolean> changedConnectionInfo = new ArrayList<>();

		final List<String> unexpected = new ArrayList<>();

		final Map<String, int[]> byOperation = new TreeMap<>();

		Campaign(List<Source> sources, Set<ByteBuffer> genuineInfos) {
			this.sources = sources;
			this.genuineInfos = genuineInfos;
		}

		void mutate() throws IOException {
			Set<ByteBuffer> seen = new HashSet<>();
			for (int i = 0; i < this.sources.size(); i++) {
				// Each record loads under an agent name of its own (see
				// MetadataMutator.next).
				Source source = this.sources.get(i);
				String name = source.name() + "#genuine-" + i;
				byte[] blob = MetadataMutator.renamed(source.blob(), name);
				byte[] prelude = source.partial() ? MetadataMutator.renamed(source.full(), name) : new byte[0];
				add(prelude, blob, "genuine " + source.name() + (source.partial() ? " (partial)" : ""));
			}
			MetadataMutator mutator = new MetadataMutator(SEED, this.sources);
			Random preludes = new Random(~SEED);
			for (int i = 0; i < MUTATIONS; i++) {
				Mutant mutant = mutator.next("fuzz#" + i);
				this.mutations++;
				boolean connectionInfo = mutant.operations().contains("connection-info");
				if (connectionInfo) {
					this.connectionInfoMutants++;
				}
				try {
					MetadataFraming.parse(mutant.blob());
				}
				catch (NixlException ex) {
					if (ex.status() != NixlStatus.INVALID_METADATA) {
						unexpected(i, mutant, ex);
					}
					else {
						this.malformed++;
						if (connectionInfo) {
							this.connectionInfoRefused++;
						}
						tally(mutant, 0);
					}
					continue;
				}
				catch (RuntimeException | Error ex) {
					unexpected(i, mutant, ex);
					continue;
				}
				this.wellFormed++;
				tally(mutant, 1);
				boolean changed = !genuineConnectionInfo(mutant.blob());
				if (changed) {
					this.connectionInfoChanged++;
					if (!isolatedNetwork) {
						continue;
					}
				}
				// Partial metadata meets an agent known from its full metadata; a third
				// of the
				// full mutants do too, which takes NIXL through its update path.
				boolean partial = mutant.source().partial();
				byte[] prelude = partial || preludes.nextInt(3) == 0 ? mutant.full() : new byte[0];
				if (!seen.add(key(prelude, mutant.blob()))) {
					this.duplicates++;
					continue;
				}
				add(prelude, mutant.blob(), "mutation " + i + " of " + mutant.source().name()
						+ (partial ? " (partial)" : "") + ": " + mutant.operations(), changed);
			}
		}

		private void add(byte[] prelude, byte[] blob, String origin) {
			add(prelude, blob, origin, false);
		}

		private void add(byte[] prelude, byte[] blob, String origin, boolean changed) {
			this.records.add(new byte[][] { prelude, blob });
			this.origins.add(origin);
			this.changedConnectionInfo.add(changed);
		}

		/** Counts the records with changed connection info by what NIXL did with them. */
		String connectionInfoOutcomes(NativeLoader loader) {
			int loaded = 0;
			int refused = 0;
			int crashed = 0;
			int loadedRecords = 0;
			for (int i = 0; i < this.records.size(); i++) {
				if (!this.changedConnectionInfo.get(i)) {
					continue;
				}
				loadedRecords++;
				String result = loader.results[i];
				if (result == null) {
					crashed += loader.crashed.contains(i) ? 1 : 0;
				}
				else if (result.startsWith("LOADED")) {
					loaded++;
				}
				else {
					refused++;
				}
			}
			return "connection-info-mutants=" + this.connectionInfoMutants + " connection-info-refused-in-java="
					+ this.connectionInfoRefused + " connection-info-changed-records=" + loadedRecords
					+ " connection-info-loaded=" + loaded + " connection-info-refused-by-nixl=" + refused
					+ " connection-info-crashes=" + crashed;
		}

		private void tally(Mutant mutant, int wellFormed) {
			for (String operation : mutant.operations()) {
				int[] counts = this.byOperation.computeIfAbsent(operation, k -> new int[2]);
				counts[wellFormed]++;
			}
		}

		/**
		 * Whether every connection info in the blob is, byte for byte, one a source agent
		 * wrote.
		 */
		private boolean genuineConnectionInfo(byte[] blob) {
			for (byte[] info : MetadataMutator.connectionInfos(blob)) {
				if (!this.genuineInfos.contains(ByteBuffer.wrap(info))) {
					return false;
				}
			}
			return true;
		}

		private void unexpected(int index, Mutant mutant, Throwable ex) throws IOException {
			if (this.unexpected.size() < 10) {
				Path file = FINDINGS.resolve("java-" + index + ".bin");
				Files.createDirectories(FINDINGS);
				Files.write(file, mutant.blob());
				this.unexpected
					.add("mutation " + index + " " + mutant.operations() + " threw " + ex + " (" + file + ")");
			}
			else {
				this.unexpected.add("mutation " + index + " threw " + ex.getClass().getName());
			}
		}

		private static ByteBuffer key(byte[] prelude, byte[] blob) {
			return ByteBuffer.wrap(MetadataMutator
				.concat(MetadataMutator.concat(ByteBuffer.allocate(4).putInt(prelude.length).array(), prelude), blob));
		}

		/**
		 * One line per record: index, result, origin; for a look at what NIXL did with
		 * each.
		 */
		void writeResults(Path file, NativeLoader loader) throws IOException {
			List<String> lines = new ArrayList<>();
			for (int i = 0; i < this.records.size(); i++) {
				lines.add(i + "\t" + loader.results[i] + "\t" + this.origins.get(i));
			}
			Files.write(file, lines);
		}

		void report(NativeLoader loader, Duration elapsed) {
			StringBuilder operations = new StringBuilder();
			this.byOperation.forEach((name, counts) -> operations.append(' ')
				.append(name)
				.append('=')
				.append(counts[1])
				.append('/')
				.append(counts[0] + counts[1]));
			System.out.println("MetadataFuzzTest well-formed/made by operation:" + operations);
			System.out.println("MetadataFuzzTest NIXL refusals by status: " + loader.refusedByStatus
					+ "; peers NIXL holds under a name nixl4j cannot address (ALIAS), peers a failed update made NIXL"
					+ " drop (DROPPED), agent replacements (RESET): " + loader.observations);
			for (String line : loader.notes) {
				System.out.println("MetadataFuzzTest " + line);
			}
			System.out.println("MetadataFuzzTest " + connectionInfoOutcomes(loader));
			System.out.printf(
					"MetadataFuzzTest seed=%#x mutations=%d malformed=%d well-formed=%d (connection-info-changed=%d, "
							+ "duplicates=%d) records=%d (controls=%d) loaded=%d refused-by-NIXL=%d crashes=%d "
							+ "children=%d network=%s time=%.1fs%n",
					SEED, this.mutations, this.malformed, this.wellFormed, this.connectionInfoChanged, this.duplicates,
					this.records.size(), this.sources.size(), loader.loaded, loader.refused, loader.crashes.size(),
					loader.children, isolatedNetwork ? "netns" : "host", elapsed.toMillis() / 1000.0);
		}

		void verify(NativeLoader loader) {
			assertThat(this.unexpected).as("mutations that escaped the Java check as another exception").isEmpty();
			assertThat(this.mutations).isGreaterThanOrEqualTo(MIN_MUTATIONS);
			assertThat(this.malformed + this.wellFormed).isEqualTo(this.mutations);
			assertThat(loader.crashes).as("native crashes (blobs under %s)", FINDINGS.toAbsolutePath()).isEmpty();
			assertThat(loader.errors).as("loads that failed with something other than a NixlException").isEmpty();
			assertThat(loader.unfinished).as("records the native phase did not reach before its deadline").isZero();
			for (int i = 0; i < this.sources.size(); i++) {
				assertThat(loader.results[i]).as("genuine %s", this.origins.get(i)).startsWith("LOADED");
			}
			assertThat(loader.loaded - this.sources.size()).as("mutants NIXL loaded").isPositive();
			assertThat(this.connectionInfoMutants).as("mutants of the connection info").isPositive();
			assertThat(this.connectionInfoRefused).as("connection info mutants refused in Java").isPositive();
		}

	}

	/**
	 * Runs {@link MetadataLoadChild} over the records, restarting it after the record it
	 * died on, which becomes a crash finding.
	 */
	private static final class NativeLoader {

		private final Path work;

		private final List<byte[][]> records;

		private final List<String> origins;

		private final List<String> prefix;

		private final ChildJvm source;

		private final Path batch;

		final String[] results;

		final List<String> crashes = new ArrayList<>();

		final List<String> errors = new ArrayList<>();

		final List<String> notes = new ArrayList<>();

		final Map<String, Integer> refusedByStatus = new TreeMap<>();

		int loaded;

		int refused;

		int children;

		int unfinished;

		/** The notes of the child's result lines (ALIAS, DROPPED, RESET), counted. */
		final Map<String, Integer> observations = new TreeMap<>();

		final List<Integer> crashed = new ArrayList<>();

		NativeLoader(Path work, Campaign campaign, List<String> prefix, ChildJvm source) throws IOException {
			this.work = work;
			this.records = campaign.records;
			this.origins = campaign.origins;
			this.prefix = prefix;
			this.source = source;
			this.batch = work.resolve("batch.bin");
			this.results = new String[this.records.size()];
			MetadataLoadChild.write(this.batch, this.records);
		}

		void run(long deadline) throws IOException, InterruptedException {
			int next = 0;
			while (next < this.records.size() && this.crashes.size() < MAX_CRASHES && System.nanoTime() < deadline) {
				next = runChild(next, this.records.size(), deadline);
			}
			this.unfinished = this.records.size() - next;
			// A crash can be the late effect of an earlier record; load each crashing
			// record alone to tell.
			for (int i = 0; i < Math.min(this.crashed.size(), 5) && System.nanoTime() < deadline; i++) {
				int index = this.crashed.get(i);
				try (ChildJvm child = loader(index, index + 1)) {
					boolean ready = "ready".equals(child.next(CHILD_START));
					String line = ready ? child.next(PER_RECORD) : null;
					this.notes.add("crash at record " + index
							+ (!ready ? ": the rerun did not start" : line != null && line.startsWith(index + " ")
									? " did not recur when loaded alone (" + line + ")" : " recurs when loaded alone"));
				}
			}
		}

		private ChildJvm loader(int from, int to) throws IOException, InterruptedException {
			if (!this.source.isAlive()) {
				throw new IllegalStateException(
						"the metadata source died (" + this.source.exit() + "):\n" + this.source.logTail());
			}
			this.children++;
			return new ChildJvm(this.prefix, MetadataLoadChild.class,
					List.of(this.batch.toString(), Integer.toString(from), Integer.toString(to)),
					this.work.resolve("loader-" + from + ".log"));
		}

		/** Runs one child from {@code from}; returns the record to continue with. */
		private int runChild(int from, int to, long deadline) throws IOException, InterruptedException {
			try (ChildJvm child = loader(from, to)) {
				String ready = child.next(CHILD_START);
				if (!"ready".equals(ready)) {
					throw new IllegalStateException(
							"the loader child did not start (" + ready + "): " + child.exit() + "\n" + child.logTail());
				}
				int next = from;
				while (next < to) {
					String line = child.next(PER_RECORD);
					if (line == null) {
						crash(next, child);
						return next + 1;
					}
					if (!line.startsWith(next + " ")) {
						throw new IllegalStateException("the loader child answered '" + line + "' for record " + next);
					}
					result(next, line.substring(line.indexOf(' ') + 1));
					next++;
					if (System.nanoTime() > deadline) {
						return next;
					}
				}
				String done = child.next(PER_RECORD);
				if (!"done".equals(done)) {
					// It died after the last record's line: while destroying its agent.
					this.crashes
						.add("loader child failed after record " + (next - 1) + ", closing its agent: " + child.exit());
				}
				return next;
			}
		}

		private void result(int index, String result) {
			this.results[index] = result;
			String[] words = result.split(" ", -1);
			switch (words[0]) {
				case "LOADED" -> this.loaded++;
				case "REFUSED", "PRELUDE-REFUSED" -> {
					this.refused++;
					this.refusedByStatus.merge(words[0].equals("REFUSED") ? words[1] : "prelude " + words[1], 1,
							Integer::sum);
				}
				default -> {
					this.errors.add("record " + index + " (" + this.origins.get(index) + "): " + result);
					return;
				}
			}
			for (int i = 2; i < words.length; i++) {
				this.observations.merge(words[i], 1, Integer::sum);
			}
		}

		private void crash(int index, ChildJvm child) throws IOException, InterruptedException {
			String exit = child.exit();
			String log = child.logTail();
			Files.createDirectories(FINDINGS);
			byte[][] record = this.records.get(index);
			Files.write(FINDINGS.resolve("crash-" + index + ".bin"), record[1]);
			if (record[0].length > 0) {
				Files.write(FINDINGS.resolve("crash-" + index + ".prelude.bin"), record[0]);
			}
			String description = "record " + index + " (" + this.origins.get(index) + "): " + exit + nativeCrash(log);
			Files.writeString(FINDINGS.resolve("crash-" + index + ".txt"), description + "\n" + log);
			this.crashes.add(description + " -> " + FINDINGS.resolve("crash-" + index + ".bin"));
			this.crashed.add(index);
		}

	}

	/**
	 * The signal and the frame of a native crash that the JVM reported in a log, if it
	 * did.
	 */
	private static String nativeCrash(String log) {
		StringBuilder crash = new StringBuilder();
		String[] lines = log.split("\n");
		for (int i = 0; i < lines.length; i++) {
			String line = lines[i].replaceFirst("^stdout: ", "");
			if (line.matches("#\\s+SIG[A-Z]+ .*")) {
				crash.append(", ").append(line.substring(1).trim());
			}
			if (line.startsWith("# Problematic frame:") && i + 1 < lines.length) {
				crash.append(", in ").append(lines[i + 1].replaceFirst("^stdout: ", "").substring(1).trim());
			}
		}
		return crash.toString();
	}

	/**
	 * A child JVM running one of the test's main classes. Protocol lines on its stdout
	 * start with {@code '@'}; everything else it prints (UCX logs on stdout, NIXL logs
	 * and JVM crash reports on stderr) goes to its log file.
	 */
	private static final class ChildJvm implements AutoCloseable {

		private static final String EOF = "\0EOF";

		private final Process process;

		private final Path log;

		private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

		private final Thread pump;

		ChildJvm(List<String> prefix, Class<?> main, List<String> args, Path log) throws IOException {
			this.log = log;
			List<String> command = new ArrayList<>(prefix);
			command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
			command.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-XX:+UseSerialGC",
					"-XX:TieredStopAtLevel=1", "-XX:+DisplayVMOutputToStderr", "-XX:-CreateCoredumpOnCrash",
					"-XX:ErrorFile=" + FINDINGS.toAbsolutePath().resolve("hs_err_pid%p.log")));
			String nativeDir = System.getProperty("nixl.native.dir");
			if (nativeDir != null) {
				command.add("-Dnixl.native.dir=" + nativeDir);
			}
			command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
			command.addAll(args);
			ProcessBuilder builder = new ProcessBuilder(command)
				.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
			// Loopback only, in the isolated namespace and outside it: UCX then publishes
			// and
			// connects to 127.0.0.1 and nothing else.
			builder.environment().put("UCX_NET_DEVICES", "lo");
			this.process = builder.start();
			this.pump = Thread.ofPlatform().daemon().name("fuzz-" + main.getSimpleName()).start(this::pump);
		}

		private void pump() {
			try (BufferedReader out = new BufferedReader(
					new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
				String line;
				while ((line = out.readLine()) != null) {
					if (line.startsWith("@")) {
						this.lines.add(line.substring(1));
					}
					else {
						Files.writeString(this.log, "stdout: " + line + "\n", StandardOpenOption.CREATE,
								StandardOpenOption.APPEND);
					}
				}
			}
			catch (IOException ex) {
				// The child is gone; EOF below says so.
			}
			this.lines.add(EOF);
		}

		/**
		 * The next protocol line, or {@code null} at the end of the output or after the
		 * timeout.
		 */
		String next(Duration timeout) throws InterruptedException {
			String line = this.lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
			if (line == null) {
				return null;
			}
			if (line == EOF) {
				this.lines.add(EOF);
				return null;
			}
			return line;
		}

		long pid() {
			return this.process.pid();
		}

		boolean isAlive() {
			return this.process.isAlive();
		}

		/** How the child ended; kills it if it still runs (a hang). */
		String exit() throws InterruptedException {
			if (!this.process.waitFor(2, TimeUnit.SECONDS)) {
				this.process.destroyForcibly();
				this.process.waitFor(10, TimeUnit.SECONDS);
				return "no answer within " + PER_RECORD.toSeconds() + " s, killed";
			}
			// What the child printed last (a crash report) is in the log once the pump is
			// through.
			this.pump.join(5000);
			int code = this.process.exitValue();
			return code > 128 ? "killed by signal " + (code - 128) + " (exit " + code + ")" : "exit " + code;
		}

		String logTail() {
			try {
				if (!Files.exists(this.log)) {
					return "";
				}
				List<String> all = Files.readAllLines(this.log, StandardCharsets.ISO_8859_1);
				return String.join("\n", all.subList(Math.max(0, all.size() - 80), all.size()));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/**
		 * Closes stdin, which ends a source child, and makes sure the process is gone.
		 */
		@Override
		public void close() throws InterruptedException {
			try {
				this.process.getOutputStream().close();
			}
			catch (IOException ex) {
				// Already gone.
			}
			if (!this.process.waitFor(5, TimeUnit.SECONDS)) {
				this.process.destroyForcibly();
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
		}

	}

	/**
	 * Empties a directory of an earlier run, so that what is there belongs to this one,
	 * or makes it (crashing JVMs write their error reports to the findings directory).
	 */
	private static Path emptyDirectory(Path directory) throws IOException {
		if (Files.isDirectory(directory)) {
			try (Stream<Path> files = Files.list(directory)) {
				for (Path file : files.toList()) {
					Files.delete(file);
				}
			}
		}
		return Files.createDirectories(directory);
	}

	/**
	 * Returns {@code null} if a loopback-only network namespace can be made and joined,
	 * else why not.
	 */
	private static String probeNetworkNamespace() {
		try {
			Process probe = new ProcessBuilder("unshare", "--net", "sh", "-c",
					"ip link set lo up && nsenter --net=/proc/$$/ns/net true")
				.redirectErrorStream(true)
				.start();
			if (!probe.waitFor(10, TimeUnit.SECONDS)) {
				probe.destroyForcibly();
				return "unshare did not finish";
			}
			String output = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			return probe.exitValue() == 0 ? null : "exit " + probe.exitValue() + ": " + output;
		}
		catch (IOException ex) {
			return ex.getMessage();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "interrupted";
		}
	}

}
