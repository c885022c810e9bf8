package dev.nixl4j.natives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Checks the bundle the build wrote into the module's output (what the jar carries)
 * against the layout nixl-core's loader relies on: the manifest and its digests, safe
 * relative paths, the libraries NIXL needs for its UCX and POSIX plugins, a dynamic-link
 * closure that stays inside the bundle except for libraries every host has, and a license
 * for every bundled library.
 *
 * <p>
 * Every native module runs this test (the others take it as their test sources): the
 * module's directory name picks its line of {@code src/native/wheels}, which names the
 * variant, the wheel, its platform and the CUDA major version, and with them the resource
 * directory, the ELF machine and the host libraries allowed.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NativeBundleTest {

	private static final String NATIVE = "META-INF/nixl4j/native/";

	/** This module's line of {@code src/native/wheels}. */
	private static final Variant VARIANT = Variant.ofThisModule();

	private static final String PREFIX = NATIVE + VARIANT.name() + "/";

	private static final String LIBS = VARIANT.wheel().replace('-', '_') + ".libs/";

	private static final String UCX_MODULES = LIBS + "ucx/";

	/** Libraries of the host: glibc, the C++ runtime, zlib and OpenSSL 3. */
	private static final Set<String> SYSTEM = Set.of("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0",
			"librt.so.1", VARIANT.aarch64() ? "ld-linux-aarch64.so.1" : "ld-linux-x86-64.so.2", "libstdc++.so.6",
			"libgcc_s.so.1", "libz.so.1", "libssl.so.3", "libcrypto.so.3");

	/**
	 * Hardware libraries of UCX transport modules, which libucs skips where they are
	 * missing.
	 */
	private static final Set<String> HOST_OPTIONAL_FOR_UCX_MODULES = Set.of("libcuda.so.1",
			"libcudart.so." + VARIANT.cudaMajor(), "libnvidia-ml.so.1", "libefa.so.1");

	/** ELF {@code e_machine}: EM_X86_64 or EM_AARCH64. */
	private static final short MACHINE = (short) (VARIANT.aarch64() ? 183 : 62);

	private static final Pattern LINE = Pattern.compile("([0-9a-f]{64})  (\\S.*)");

	private static final int PT_LOAD = 1;

	private static final int PT_DYNAMIC = 2;

	private static final long DT_NEEDED = 1;

	private static final long DT_STRTAB = 5;

	private static final long DT_RPATH = 15;

	private static final long DT_RUNPATH = 29;

	private static Path bundle;

	private static byte[] manifestBytes;

	private static Map<String, String> manifest;

	@BeforeAll
	static void readManifest() throws Exception {
		URL url = NativeBundleTest.class.getClassLoader().getResource(PREFIX + "files.sha256");
		assertThat(url).as("%sfiles.sha256 in the build output (written by src/native/bundle-nixl.py)", PREFIX)
			.isNotNull();
		assertThat(url.getProtocol()).as("the bundle is read from the build output directory").isEqualTo("file");
		bundle = Path.of(url.toURI()).getParent();
		manifestBytes = Files.readAllBytes(bundle.resolve("files.sha256"));
		manifest = new LinkedHashMap<>();
		for (String line : new String(manifestBytes, StandardCharsets.UTF_8).split("\n", -1)) {
			if (line.isEmpty()) {
				continue;
			}
			Matcher matcher = LINE.matcher(line);
			assertThat(matcher.matches()).as("files.sha256 line '%s' is '<64 hex>  <path>'", line).isTrue();
			assertThat(manifest.put(matcher.group(2), matcher.group(1))).as("%s listed once", matcher.group(2))
				.isNull();
		}
	}

	@Test
	void manifestListsExactlyTheBundledFilesSortedWithTheirDigests() throws IOException {
		List<String> paths = new ArrayList<>(manifest.keySet());
		assertThat(paths).isSortedAccordingTo(String::compareTo).isNotEmpty();
		Set<String> present = new TreeSet<>();
		try (Stream<Path> files = Files.walk(bundle)) {
			files.filter(Files::isRegularFile)
				.map((file) -> bundle.relativize(file).toString().replace('\\', '/'))
				.filter((rel) -> !rel.equals("files.sha256") && !rel.equals("bundle.properties"))
				.forEach(present::add);
		}
		assertThat(present).containsExactlyElementsOf(new TreeSet<>(manifest.keySet()));
		for (Map.Entry<String, String> entry : manifest.entrySet()) {
			assertThat(sha256(Files.readAllBytes(bundle.resolve(entry.getKey())))).as("digest of %s", entry.getKey())
				.isEqualTo(entry.getValue());
		}
	}

	@Test
	void pathsAreRelativeAndStayInsideTheBundle() {
		for (String rel : manifest.keySet()) {
			assertThat(rel).as("path %s", rel).doesNotStartWith("/").doesNotContain("\\").doesNotContain("//");
			assertThat(List.of(rel.split("/"))).as("segments of %s", rel).doesNotContain("..", ".", "");
			assertThat(bundle.resolve(rel).normalize().startsWith(bundle)).as("%s inside the bundle", rel).isTrue();
		}
	}

	@Test
	void propertiesNameThePinnedVersionTheWheelAndTheManifest() throws IOException {
		Properties properties = new Properties();
		try (InputStream in = Files.newInputStream(bundle.resolve("bundle.properties"))) {
			properties.load(in);
		}
		String version = pinnedVersion();
		assertThat(properties.getProperty("nixl.version")).isEqualTo(version);
		assertThat(properties.getProperty("wheel"))
			.matches(Pattern.quote(VARIANT.wheel().replace('-', '_') + "-" + version + "-") + "[^/]+-"
					+ Pattern.quote(VARIANT.platform()) + "\\.whl");
		assertThat(properties.getProperty("wheel.sha256")).isEqualTo(VARIANT.sha256());
		assertThat(properties.getProperty("variant")).isEqualTo(VARIANT.name());
		assertThat(properties.getProperty("cuda.major")).isEqualTo(Integer.toString(VARIANT.cudaMajor()));
		assertThat(properties.getProperty("bundle.id")).isEqualTo(sha256(manifestBytes));
		assertThat(Files.readString(bundle.resolve("lib/NIXL_VERSION")).strip()).isEqualTo(version);
	}

	@Test
	void carriesTheCApiAndOnlyTheSupportedPlugins() throws IOException {
		assertThat(manifest).containsKeys("lib/libnixl_capi.so", "lib/libnixl.so", "lib/plugins/libplugin_UCX.so",
				"lib/plugins/libplugin_POSIX.so");
		assertThat(manifest.keySet()).anyMatch((rel) -> rel.matches(Pattern.quote(LIBS) + "libucp-[^/]+\\.so[.0-9]*"))
			.anyMatch((rel) -> rel.matches(Pattern.quote(UCX_MODULES) + "libuct_cma\\.so[.0-9]*"));
		assertThat(manifest.keySet().stream().filter((rel) -> rel.startsWith("lib/plugins/")))
			.as("plugins NIXL would discover in lib/plugins/")
			.containsExactlyInAnyOrder("lib/plugins/libplugin_POSIX.so", "lib/plugins/libplugin_UCX.so");
		assertThat(manifest.keySet()).as("the Python module's copy of the plugins is not bundled")
			.noneMatch((rel) -> rel.startsWith(LIBS + "nixl/"));
	}

	@Test
	void everyDependencyResolvesInsideTheBundleOrToTheHostAndEveryLibraryIsNeeded() throws IOException {
		Map<String, Elf> elves = new LinkedHashMap<>();
		for (String rel : manifest.keySet()) {
			Elf elf = Elf.read(bundle.resolve(rel));
			if (elf != null) {
				elves.put(rel, elf);
			}
		}
		assertThat(elves).containsKey("lib/libnixl_capi.so");
		Map<String, List<String>> edges = new LinkedHashMap<>();
		List<String> problems = new ArrayList<>();
		for (Map.Entry<String, Elf> entry : elves.entrySet()) {
			String rel = entry.getKey();
			Path origin = bundle.resolve(rel).getParent();
			List<String> resolved = new ArrayList<>();
			for (String needed : entry.getValue().needed()) {
				String found = null;
				for (String dir : entry.getValue().searchPath()) {
					Path candidate = Path
						.of(dir.replace("${ORIGIN}", origin.toString()).replace("$ORIGIN", origin.toString()))
						.normalize()
						.resolve(needed);
					if (candidate.startsWith(bundle) && Files.isRegularFile(candidate)) {
						found = bundle.relativize(candidate).toString().replace('\\', '/');
						break;
					}
				}
				if (found != null) {
					resolved.add(found);
				}
				else if (!SYSTEM.contains(needed)
						&& !(rel.startsWith(UCX_MODULES) && HOST_OPTIONAL_FOR_UCX_MODULES.contains(needed))) {
					problems.add(rel + " needs " + needed + " (search path " + entry.getValue().searchPath() + ")");
				}
			}
			edges.put(rel, resolved);
		}
		assertThat(problems).as("dependencies neither in the bundle nor on every host").isEmpty();

		Deque<String> pending = new ArrayDeque<>(
				List.of("lib/libnixl_capi.so", "lib/plugins/libplugin_UCX.so", "lib/plugins/libplugin_POSIX.so"));
		elves.keySet().stream().filter((rel) -> rel.startsWith(UCX_MODULES)).forEach(pending::add);
		Set<String> reachable = new TreeSet<>();
		while (!pending.isEmpty()) {
			String rel = pending.pop();
			if (reachable.add(rel)) {
				pending.addAll(edges.getOrDefault(rel, List.of()));
			}
		}
		assertThat(reachable).as("libraries loaded from the C API, the plugins and UCX's modules")
			.containsExactlyElementsOf(new TreeSet<>(elves.keySet()));
	}

	@Test
	void everyBundledLibraryHasALicenseListedInTheReadme() throws IOException, URISyntaxException {
		URL url = NativeBundleTest.class.getClassLoader().getResource(NATIVE + "licenses/README.md");
		assertThat(url).as("%slicenses/README.md", NATIVE).isNotNull();
		Path licenses = Path.of(url.toURI()).getParent();
		List<PathMatcher> rows = new ArrayList<>();
		// Rows of the README's table: | `glob`, `glob` | ... | [file](file), [file](file)
		// |
		for (String line : Files.readAllLines(licenses.resolve("README.md"))) {
			String[] cells = line.split("\\|", -1);
			if (!line.startsWith("|") || cells.length < 3 || !cells[1].contains("`")) {
				continue;
			}
			Matcher link = Pattern.compile("\\]\\(([^)]+)\\)").matcher(cells[cells.length - 2]);
			int files = 0;
			while (link.find()) {
				Path license = licenses.resolve(link.group(1)).normalize();
				assertThat(license.startsWith(licenses) && Files.isRegularFile(license) && Files.size(license) > 200)
					.as("license file %s of row '%s'", link.group(1), line)
					.isTrue();
				files++;
			}
			assertThat(files).as("license files of row '%s'", line).isPositive();
			Matcher glob = Pattern.compile("`([^`]+)`").matcher(cells[1]);
			while (glob.find()) {
				rows.add(FileSystems.getDefault().getPathMatcher("glob:" + glob.group(1)));
			}
		}
		assertThat(rows).isNotEmpty();
		for (String rel : manifest.keySet()) {
			Path name = Path.of(rel).getFileName();
			if (rows.stream().noneMatch((glob) -> glob.matches(name))) {
				fail("no row of licenses/README.md covers " + rel);
			}
		}
	}

	/**
	 * A line of {@code src/native/wheels}.
	 *
	 * @param name the variant: the resource directory under
	 * {@code META-INF/nixl4j/native/}
	 * @param module the module that carries it
	 * @param wheel the PyPI wheel's name
	 * @param platform the wheel's platform tag
	 * @param cudaMajor the CUDA major version the wheel was built for
	 * @param sha256 the wheel's pinned SHA-256
	 */
	private record Variant(String name, String module, String wheel, String platform, int cudaMajor, String sha256) {

		boolean aarch64() {
			return this.platform.endsWith("_aarch64");
		}

		static Variant ofThisModule() {
			Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath().normalize();
			Path file = dir.resolve("../src/native/wheels").normalize();
			try {
				for (String line : Files.readAllLines(file)) {
					String[] fields = line.strip().split("\\s+");
					if (!line.startsWith("#") && fields.length == 6 && fields[1].equals(dir.getFileName().toString())) {
						return new Variant(fields[0], fields[1], fields[2], fields[3], Integer.parseInt(fields[4]),
								fields[5]);
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			throw new IllegalStateException(file + " has no line for the module " + dir.getFileName());
		}

	}

	private static String pinnedVersion() throws IOException {
		Path file = Path.of(System.getProperty("user.dir")).resolve("../src/native/nixl.version").normalize();
		return Files.readAllLines(file)
			.stream()
			.filter((line) -> !line.startsWith("#"))
			.map(String::strip)
			.filter((line) -> !line.isEmpty())
			.findFirst()
			.orElseThrow(() -> new IllegalStateException(file + " names no version"));
	}

	private static String sha256(byte[] bytes) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * DT_NEEDED entries and RPATH/RUNPATH directories of a 64-bit little-endian ELF file.
	 */
	private record Elf(List<String> needed, List<String> searchPath) {

		static Elf read(Path file) {
			byte[] bytes;
			try {
				bytes = Files.readAllBytes(file);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			if (bytes.length < 64 || bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F') {
				return null;
			}
			assertThat(bytes[4]).as("%s is 64-bit", file).isEqualTo((byte) 2);
			assertThat(bytes[5]).as("%s is little-endian", file).isEqualTo((byte) 1);
			ByteBuffer elf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
			assertThat(elf.getShort(0x12)).as("%s is built for %s", file, VARIANT.platform()).isEqualTo(MACHINE);
			long phoff = elf.getLong(0x20);
			int phentsize = Short.toUnsignedInt(elf.getShort(0x36));
			int phnum = Short.toUnsignedInt(elf.getShort(0x38));
			List<long[]> loads = new ArrayList<>();
			long dynamicOffset = -1;
			long dynamicSize = 0;
			for (int i = 0; i < phnum; i++) {
				int header = Math.toIntExact(phoff + (long) i * phentsize);
				int type = elf.getInt(header);
				if (type == PT_LOAD) {
					loads.add(
							new long[] { elf.getLong(header + 16), elf.getLong(header + 8), elf.getLong(header + 32) });
				}
				else if (type == PT_DYNAMIC) {
					dynamicOffset = elf.getLong(header + 8);
					dynamicSize = elf.getLong(header + 32);
				}
			}
			if (dynamicOffset < 0) {
				return new Elf(List.of(), List.of());
			}
			List<long[]> entries = new ArrayList<>();
			long strtab = -1;
			for (long at = dynamicOffset; at + 16 <= dynamicOffset + dynamicSize; at += 16) {
				long tag = elf.getLong(Math.toIntExact(at));
				long value = elf.getLong(Math.toIntExact(at + 8));
				if (tag == 0) {
					break;
				}
				if (tag == DT_STRTAB) {
					strtab = value;
				}
				entries.add(new long[] { tag, value });
			}
			assertThat(strtab).as("%s has DT_STRTAB", file).isNotNegative();
			long strtabOffset = -1;
			for (long[] load : loads) {
				if (load[0] <= strtab && strtab < load[0] + load[2]) {
					strtabOffset = strtab - load[0] + load[1];
				}
			}
			assertThat(strtabOffset).as("%s: DT_STRTAB inside a loaded segment", file).isNotNegative();
			List<String> needed = new ArrayList<>();
			List<String> searchPath = new ArrayList<>();
			for (long[] entry : entries) {
				if (entry[0] == DT_NEEDED) {
					needed.add(string(bytes, strtabOffset + entry[1]));
				}
				else if (entry[0] == DT_RPATH || entry[0] == DT_RUNPATH) {
					for (String dir : string(bytes, strtabOffset + entry[1]).split(":")) {
						if (!dir.isEmpty()) {
							searchPath.add(dir);
						}
					}
				}
			}
			return new Elf(List.copyOf(needed), List.copyOf(searchPath));
		}

		private static String string(byte[] bytes, long offset) {
			int start = Math.toIntExact(offset);
			int end = start;
			while (bytes[end] != 0) {
				end++;
			}
			return new String(bytes, start, end - start, StandardCharsets.UTF_8);
		}

	}

}
