package dev.nixl4j.internal.ffm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * NIXL from a jar laid out as the {@code nixl-native-linux-x86_64} artifact, built here
 * from the fetched NIXL, each load in child JVMs against a cache of the test's own:
 * extracted once, checked before every load, safe when two JVMs start at once, and
 * refused from places another user could write to.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class NativeArtifactExtractionTest {

	private static final String ENABLE = "--enable-native-access=ALL-UNNAMED";

	@TempDir
	static Path shared;

	private static Path jar;

	private static Map<String, String> index;

	private static String version;

	@TempDir
	Path dir;

	@BeforeAll
	static void buildArtifact() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		jar = shared.resolve("nixl-native-linux-x86_64-test.jar");
		index = NativeFixtures.writeArtifactJar(fetched, jar);
		version = Files.readString(fetched.resolve("lib").resolve("NIXL_VERSION")).strip();
	}

	@Test
	void twoJvmsStartingAtOnceBothLoadFromOneExtractionWithEveryFileIntact() throws Exception {
		Path cache = this.dir.resolve("cache");
		NativeFixtures.Child first = start(cache);
		NativeFixtures.Child second = start(cache);
		String firstOutput = first.await();
		String secondOutput = second.await();
		Path extracted = extracted(cache);
		for (String output : List.of(firstOutput, secondOutput)) {
			assertThat(output).as(output)
				.contains("LOADED " + extracted.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE))
				.contains("SOURCE class path (" + ClassPathBundle.ARTIFACT + " " + version + ")")
				.contains("VERSION " + version);
		}
		assertThat(count(firstOutput + secondOutput, "Extracted NIXL " + version + " from the class path"))
			.as(firstOutput + secondOutput)
			.isEqualTo(1);
		assertIntact(extracted);
		try (Stream<Path> entries = Files.list(cache.resolve("native"))) {
			assertThat(entries.map(path -> path.getFileName().toString()))
				.as("nothing but the extracted directory and its lock is left")
				.containsExactlyInAnyOrder(extracted.getFileName().toString(), "." + extracted.getFileName() + ".lock");
		}
	}

	@Test
	void anArtifactTheContextClassLoaderServesOnlyAsStreamsIsExtractedAndLoaded() throws Exception {
		Path cache = this.dir.resolve("cache");
		String output = NativeFixtures
			.start(this.dir, List.of(ENABLE), List.of(), Map.of("NIXL4J_CACHE", cache.toString()),
					ContextLoaderLoadChild.class, jar.toString())
			.await();
		assertThat(output).as(output)
			.contains("LOADED " + extracted(cache).resolve("lib").resolve(NativeLibrary.LIBRARY_FILE))
			.contains("SOURCE class path (" + ClassPathBundle.ARTIFACT + " " + version + ")");
		assertIntact(extracted(cache));
	}

	@Test
	void aCorruptedExtractedFileIsRefusedAndTheDirectoryExtractedAgain() throws Exception {
		Path cache = this.dir.resolve("cache");
		assertThat(start(cache).await()).contains("LOADED ");
		Path extracted = extracted(cache);
		Path library = extracted.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE);
		NativeFixtures.corrupt(library);
		assertThat(NativeFixtures.sha256(library)).isNotEqualTo(index.get("lib/" + NativeLibrary.LIBRARY_FILE));

		String output = start(cache).await();
		assertThat(output).as(output)
			.contains("Refusing the extracted NIXL libraries in " + extracted)
			.contains("lib/" + NativeLibrary.LIBRARY_FILE + " does not match its SHA-256 in files.sha256")
			.contains("Extracted NIXL " + version + " from the class path")
			.contains("LOADED " + library);
		assertIntact(extracted);
	}

	@Test
	void aCacheDirectoryThatCannotBeWrittenGivesAnErrorNamingIt() throws Exception {
		// Root may write to any directory whatever its mode, but nobody can create one
		// under a file.
		Path file = Files.writeString(this.dir.resolve("a-file"), "not a directory");
		Path cache = file.resolve("cache");
		String output = start(cache).await();
		assertThat(output).as(output)
			.startsWith("FAILED LIBRARY_UNAVAILABLE")
			.contains("class path (" + ClassPathBundle.ARTIFACT + " " + version + "): the cache directory "
					+ cache.resolve("native") + " cannot be created")
			.contains("NIXL4J_CACHE");
	}

	@Test
	void aReadOnlyCacheDirectoryServesAnEarlierExtractionAndOtherwiseGivesAnErrorNamingIt() throws Exception {
		Path cache = this.dir.resolve("cache");
		assertThat(start(cache).await()).contains("LOADED ");
		Path nativeDirectory = cache.resolve("native");
		Path extracted = extracted(cache);
		// Read-only even for root: the immutable attribute.
		immutable(nativeDirectory, true);
		immutable(extracted, true);
		try {
			String output = start(cache).await();
			assertThat(output).as(output)
				.contains("LOADED " + extracted.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE))
				.doesNotContain("Extracted NIXL");

			NativeFixtures.corrupt(extracted.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE));
			output = start(cache).await();
			assertThat(output).as(output)
				.startsWith("FAILED LIBRARY_UNAVAILABLE")
				.contains("the cache directory " + nativeDirectory + " is not writable, so the libraries cannot be "
						+ "extracted there (lib/" + NativeLibrary.LIBRARY_FILE + " does not match its SHA-256");
		}
		finally {
			immutable(extracted, false);
			immutable(nativeDirectory, false);
		}
	}

	@Test
	void aCacheDirectoryEveryUserCanWriteToIsRefused() throws Exception {
		Path cache = Files.createDirectories(this.dir.resolve("cache"));
		Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxrwx"));
		String output = start(cache).await();
		assertThat(output).as(output)
			.startsWith("FAILED LIBRARY_UNAVAILABLE")
			.contains("the cache directory " + cache + " is writable by every user and has no sticky bit (mode 777)");
		assertThat(cache.resolve("native").resolve(version + "-" + bundleIdPrefix())).doesNotExist();

		Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwx------"));
		Path extractedBefore = Files.createDirectories(cache.resolve("native"));
		Files.setPosixFilePermissions(extractedBefore, PosixFilePermissions.fromString("rwxrwxrwx"));
		output = start(cache).await();
		assertThat(output).as(output).contains("the cache directory " + extractedBefore + " is writable by every user");
	}

	@Test
	void aCacheDirectoryOwnedByAnotherUserIsRefused() throws Exception {
		if (((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) != 0) {
			// Only root can give a directory to another user.
			String message = "giving the cache directory to another user needs root";
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message);
			}
			Assumptions.abort(message);
		}
		Path cache = Files.createDirectories(this.dir.resolve("cache"));
		UserPrincipal nobody = cache.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
		Files.setOwner(cache, nobody);
		String output = start(cache).await();
		assertThat(output).as(output)
			.startsWith("FAILED LIBRARY_UNAVAILABLE")
			.contains("the cache directory " + cache + " is owned by another user");
	}

	private static void immutable(Path directory, boolean on) throws Exception {
		Process chattr = new ProcessBuilder("chattr", on ? "+i" : "-i", directory.toString()).redirectErrorStream(true)
			.start();
		assertThat(chattr.waitFor(30, TimeUnit.SECONDS)).isTrue();
		if (chattr.exitValue() != 0) {
			String message = "chattr cannot make " + directory + " read-only here: "
					+ new String(chattr.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
			if (!on || "true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message);
			}
			Assumptions.abort(message);
		}
	}

	private NativeFixtures.Child start(Path cache) throws Exception {
		return NativeFixtures.start(this.dir, List.of(ENABLE), List.of(jar), Map.of("NIXL4J_CACHE", cache.toString()));
	}

	private static String bundleIdPrefix() throws Exception {
		try (var zip = new java.util.zip.ZipFile(jar.toFile())) {
			java.util.Properties properties = new java.util.Properties();
			properties.load(zip.getInputStream(zip.getEntry(ClassPathBundle.PREFIX + "bundle.properties")));
			return properties.getProperty("bundle.id").substring(0, 16);
		}
	}

	private static Path extracted(Path cache) throws Exception {
		return cache.resolve("native").resolve(version + "-" + bundleIdPrefix());
	}

	private static void assertIntact(Path extracted) throws Exception {
		for (Map.Entry<String, String> entry : index.entrySet()) {
			assertThat(NativeFixtures.sha256(extracted.resolve(entry.getKey()))).as(entry.getKey())
				.isEqualTo(entry.getValue());
		}
		assertThat(extracted.resolve("licenses")).as("licenses are not extracted").doesNotExist();
		try (Stream<Path> files = Files.walk(extracted)) {
			assertThat(files.filter(Files::isRegularFile).count()).isEqualTo(index.size());
		}
	}

	private static int count(String text, String part) {
		int count = 0;
		for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
			count++;
		}
		return count;
	}

}
