package dev.nixl4j.internal.ffm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Libraries in places another user can write to never load, in child JVMs: stand-ins
 * built for the test whose constructors write a marker file sit in a virtual environment,
 * on {@code LD_LIBRARY_PATH} or in configured directories that are writable by everyone
 * (and, as root, owned by {@code nobody}), where they used to run in the worker. The
 * marker must stay unwritten, the refusal must name the place and why, and the search
 * must go on to the next place: the real NIXL from the cache, a CUDA runtime in a
 * directory only its owner can write to.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class UntrustedLibraryTest {

	private static final String ENABLE = "--enable-native-access=ALL-UNNAMED";

	@TempDir
	Path dir;

	private Path markers;

	@BeforeEach
	void markers() throws Exception {
		this.markers = Files.createDirectories(this.dir.resolve("markers"));
	}

	@Test
	void nixlInAVirtualEnvironmentOthersCanWriteToNeverRunsAndTheCachedNixlLoads() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		Path venv = this.dir.resolve("venv");
		Path sitePackages = venv.resolve("lib/python3.12/site-packages");
		Path libraries = sitePackages.resolve(".nixl_cu12.mesonpy.libs");
		Path marker = this.markers.resolve("venv-nixl");
		StandIns.compile(libraries.resolve(NativeLibrary.LIBRARY_FILE), marker);
		Files.createDirectories(sitePackages.resolve("nixl_cu12-1.5.1.dist-info"));
		StandIns.giveAway(venv);
		String refusal = ": refused: " + venv + " " + StandIns.givenAwayReason();

		String output = load(Map.of("VIRTUAL_ENV", venv.toString(), "NIXL4J_CACHE", fetched.getParent().toString()));
		assertThat(marker).as("the stand-in's constructor ran").doesNotExist();
		assertThat(output).as(output)
			.contains("LOADED " + fetched.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE))
			.contains("SOURCE nixl4j cache")
			.contains("Not loading NIXL from " + libraries + " (Python environment " + sitePackages + " (nixl-cu12 "
					+ "1.5.1)): refused: " + venv + " " + StandIns.givenAwayReason())
			.contains("trying the next place");

		output = load(Map.of("VIRTUAL_ENV", venv.toString()));
		assertThat(marker).as("the stand-in's constructor ran").doesNotExist();
		assertThat(output).as(output)
			.contains("FAILED LIBRARY_UNAVAILABLE")
			.contains("Python environment " + sitePackages + " (nixl-cu12 1.5.1) " + libraries + refusal)
			.contains("another user could change what would load from there")
			.contains("nixl4j cache " + this.dir.resolve("no-cache"));
	}

	@Test
	void aCudaRuntimeInThatVirtualEnvironmentNeverRunsWhenTheHealthReportLooksForCuda() throws Exception {
		Path venv = this.dir.resolve("venv");
		Path sitePackages = venv.resolve("lib/python3.12/site-packages");
		Path untrusted = sitePackages.resolve("nvidia/cuda_runtime/lib/libcudart.so.12");
		Path untrustedMarker = this.markers.resolve("venv-cudart");
		StandIns.compile(untrusted, untrustedMarker);
		StandIns.giveAway(venv);
		Path toolkit = this.dir.resolve("cuda");
		Path trusted = toolkit.resolve("lib64/libcudart.so.12");
		Path trustedMarker = this.markers.resolve("toolkit-cudart");
		StandIns.compile(trusted, trustedMarker);

		String output = NativeFixtures
			.start(this.dir, List.of(ENABLE), List.of(),
					Map.of("VIRTUAL_ENV", venv.toString(), "CUDA_HOME", toolkit.toString()), CudaSearchChild.class,
					"report")
			.await();
		assertThat(untrustedMarker).as("the stand-in in the virtual environment ran").doesNotExist();
		assertThat(trustedMarker).as("the runtime in the toolkit was loaded").exists();
		assertThat(output).as(output)
			.contains("LIBRARY " + trusted)
			.contains("SOURCE CUDA_HOME")
			.contains("ATTEMPT Python environment " + sitePackages + " (nvidia/cuda_runtime) " + untrusted
					+ ": refused: " + venv + " " + StandIns.givenAwayReason())
			.contains("Not loading the CUDA runtime " + untrusted);
	}

	@Test
	void onTheLoadersPathADirectoryOthersCanWriteToIsSkippedAndTheNextOneLoads() throws Exception {
		Path untrustedDirectory = this.dir.resolve("shared-lib");
		Path untrusted = untrustedDirectory.resolve("libcudart.so.12");
		Path untrustedMarker = this.markers.resolve("shared-cudart");
		StandIns.compile(untrusted, untrustedMarker);
		StandIns.giveAway(untrustedDirectory);
		Path trustedDirectory = this.dir.resolve("own-lib");
		Path trusted = trustedDirectory.resolve("libcudart.so.12");
		Path trustedMarker = this.markers.resolve("own-cudart");
		StandIns.compile(trusted, trustedMarker);

		String output = NativeFixtures
			.start(this.dir, List.of(ENABLE), List.of(),
					Map.of("LD_LIBRARY_PATH", untrustedDirectory + ":" + trustedDirectory), CudaSearchChild.class,
					"loader", "libcudart.so.12")
			.await();
		assertThat(untrustedMarker).as("the stand-in others can write ran").doesNotExist();
		assertThat(trustedMarker).as("the library in the private directory was loaded").exists();
		assertThat(output).as(output)
			.contains("LIBRARY " + trusted)
			.contains("SOURCE dynamic loader (LD_LIBRARY_PATH)")
			.contains("ATTEMPT dynamic loader libcudart.so.12 (LD_LIBRARY_PATH) " + untrusted + ": refused: "
					+ untrustedDirectory + " " + StandIns.givenAwayReason())
			.contains("a place named by LD_LIBRARY_PATH is checked like any other");
	}

	@Test
	void explicitlyConfiguredPlacesAreCheckedTooAndTheErrorSaysHowToFixThem() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		Path configured = this.dir.resolve("configured");
		Path nixlMarker = this.markers.resolve("configured-nixl");
		Path cudaMarker = this.markers.resolve("configured-cudart");
		StandIns.compile(configured.resolve(NativeLibrary.LIBRARY_FILE), nixlMarker);
		StandIns.compile(configured.resolve("libcudart.so.12"), cudaMarker);
		StandIns.giveAway(configured);

		String output = load(
				Map.of("NIXL_LIB_DIR", configured.toString(), "NIXL4J_CACHE", fetched.getParent().toString()));
		assertThat(nixlMarker).as("the stand-in NIXL_LIB_DIR names ran").doesNotExist();
		assertThat(output).as(output)
			.contains("SOURCE nixl4j cache")
			.contains("Not loading NIXL from " + configured + " (NIXL_LIB_DIR): refused: " + configured + " "
					+ StandIns.givenAwayReason())
			.contains("a place named by NIXL_LIB_DIR is checked like any other: make it owned by root or this user "
					+ "and not writable by others (chown, chmod go-w), or point NIXL_LIB_DIR elsewhere");

		Path cudart = configured.resolve("libcudart.so.12");
		output = NativeFixtures
			.start(this.dir, List.of(ENABLE, "-Dnixl.cuda.library=" + cudart), List.of(), Map.of(),
					CudaSearchChild.class, "report")
			.await();
		assertThat(cudaMarker).as("the stand-in -Dnixl.cuda.library names ran").doesNotExist();
		assertThat(output).as(output)
			.contains("ATTEMPT system property nixl.cuda.library " + cudart + ": refused: " + configured + " "
					+ StandIns.givenAwayReason())
			.contains("a place named by -Dnixl.cuda.library is checked like any other");
	}

	@Test
	void aPluginDirectoryOthersCanWriteToKeepsNixlFromLoadingAnywhere() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		Path plugins = this.dir.resolve("plugins");
		Path marker = this.markers.resolve("plugin");
		StandIns.compile(plugins.resolve("libplugin_UCX.so"), marker);
		StandIns.giveAway(plugins);

		String output = load(
				Map.of("NIXL_PLUGIN_DIR", plugins.toString(), "NIXL4J_CACHE", fetched.getParent().toString()));
		assertThat(marker).doesNotExist();
		assertThat(output).as(output)
			.contains("FAILED LIBRARY_UNAVAILABLE")
			.contains("nixl4j cache " + fetched.resolve("lib") + ": refused: " + plugins + " "
					+ StandIns.givenAwayReason())
			.contains("a place named by NIXL_PLUGIN_DIR is checked like any other")
			.contains("(NIXL_PLUGIN_DIR is " + plugins + ")");
	}

	@Test
	void aLibraryInADirectoryOnlyItsOwnerCanWriteToStillLoads() throws Exception {
		Path own = this.dir.resolve("own");
		Path marker = this.markers.resolve("own-nixl");
		StandIns.compile(own.resolve(NativeLibrary.LIBRARY_FILE), marker);

		String output = load(Map.of("NIXL_LIB_DIR", own.toString()));
		assertThat(marker).as("the stand-in was loaded: its constructor ran").exists();
		assertThat(output).as(output)
			.contains("LOADED " + own.resolve(NativeLibrary.LIBRARY_FILE))
			.contains("SOURCE NIXL_LIB_DIR")
			.doesNotContain("refused");
	}

	private String load(Map<String, String> environment) throws Exception {
		Map<String, String> env = new java.util.HashMap<>(environment);
		env.putIfAbsent("NIXL4J_CACHE", this.dir.resolve("no-cache").toString());
		return NativeFixtures.run(this.dir, List.of(ENABLE), List.of(), env);
	}

}
