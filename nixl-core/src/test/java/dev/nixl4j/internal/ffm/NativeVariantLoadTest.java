package dev.nixl4j.internal.ffm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Child JVMs with both x86-64 artifacts on the class path, built here from the fetched
 * {@code nixl-cu12} and {@code nixl-cu13} wheels: the loader picks one, loads the real
 * library, and its source says which and why.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class NativeVariantLoadTest {

	private static final String ENABLE = "--enable-native-access=ALL-UNNAMED";

	@TempDir
	static Path shared;

	private static Path cuda12;

	private static Path cuda13;

	private static String version;

	@TempDir
	Path dir;

	@BeforeAll
	static void buildArtifacts() throws Exception {
		Assumptions.assumeTrue("x86_64".equals(NativeVariant.hostArch(System.getProperty("os.arch", ""))),
				"the x86-64 artifacts load on x86-64 only");
		Path fetched = NativeFixtures.fetchedNixl();
		version = Files.readString(fetched.resolve("lib").resolve("NIXL_VERSION")).strip();
		// Beside <cache>/current -> nixl-cu12-<version>: fetch-nixl.sh linux-x86_64-cu13
		// (which the build of nixl-native-linux-x86_64-cu13 runs).
		Path fetched13 = NativeLibrary.cacheDirectory().resolve("nixl-cu13-" + version);
		if (!Files.isRegularFile(fetched13.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE))) {
			String message = "the nixl-cu13 wheel is not in " + fetched13
					+ " (install: src/native/fetch-nixl.sh linux-x86_64-cu13)";
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message);
			}
			Assumptions.abort(message);
		}
		cuda12 = shared.resolve("nixl-native-linux-x86_64-test.jar");
		cuda13 = shared.resolve("nixl-native-linux-x86_64-cu13-test.jar");
		NativeFixtures.writeArtifactJar(fetched, cuda12, NativeVariant.LINUX_X86_64);
		NativeFixtures.writeArtifactJar(fetched13, cuda13, NativeVariant.LINUX_X86_64_CU13);
	}

	@Test
	void theRequestedCuda13BuildIsLoadedAndTheSourceSaysWhy() throws Exception {
		String output = run(List.of(ENABLE, "-Dnixl4j.native.variant=cu13"), Map.of());
		assertThat(output).as(output)
			.contains("SOURCE class path (nixl-native-linux-x86_64-cu13 " + version
					+ "), chosen: system property nixl4j.native.variant asks for linux-x86_64-cu13")
			.contains("VERSION " + version);
	}

	@Test
	void theEnvironmentVariableChoosesWhenThePropertyIsUnset() throws Exception {
		String output = run(List.of(ENABLE), Map.of("NIXL4J_NATIVE_VARIANT", "linux-x86_64-cu13"));
		assertThat(output).as(output)
			.contains("SOURCE class path (nixl-native-linux-x86_64-cu13 " + version
					+ "), chosen: environment variable NIXL4J_NATIVE_VARIANT asks for linux-x86_64-cu13");
	}

	@Test
	void withoutARequestTheDriverDecides() throws Exception {
		String output = run(List.of(ENABLE), Map.of());
		VariantChoice.Driver driver = VariantChoice.Driver.detect();
		String artifact = (driver.cudaMajor() >= 13) ? "nixl-native-linux-x86_64-cu13" : "nixl-native-linux-x86_64";
		assertThat(output).as(output)
			.contains("SOURCE class path (" + artifact + " " + version + "), chosen: " + driver.evidence());
	}

	@Test
	void aRequestTheClassPathCannotMeetRefusesTheClassPath() throws Exception {
		String output = run(List.of(ENABLE, "-Dnixl4j.native.variant=linux-aarch64"), Map.of());
		assertThat(output).as(output)
			.startsWith("FAILED LIBRARY_UNAVAILABLE")
			.contains("class path: system property nixl4j.native.variant asks for linux-aarch64, built for aarch64, "
					+ "but this JVM runs on amd64");
	}

	private String run(List<String> flags, Map<String, String> environment) throws Exception {
		Map<String, String> env = new HashMap<>(environment);
		env.put("NIXL4J_CACHE", this.dir.resolve("cache").toString());
		return NativeFixtures.run(this.dir, flags, List.of(cuda12, cuda13), env);
	}

}
