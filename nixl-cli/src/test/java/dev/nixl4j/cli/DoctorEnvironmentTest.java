package dev.nixl4j.cli;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.nixl4j.internal.ffm.NativeLibrary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * {@code nixl4j doctor} in child JVMs whose environment is not ready: no library where
 * the locator looks, or a JVM that denies native access; and one that only warns about
 * native access, which the doctor does not count against readiness.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DoctorEnvironmentTest {

	private static final Path DEFAULT_PREFIX = Path.of("/opt/nvidia/nvda_nixl/lib");

	@Test
	void withoutTheLibraryAnywhereTheDoctorListsEveryPlaceSearchedAndFails(@TempDir Path work) throws Exception {
		assumeFalse(
				Files.exists(DEFAULT_PREFIX.resolve(NativeLibrary.LIBRARY_FILE))
						|| Files.exists(DEFAULT_PREFIX.resolve("x86_64-linux-gnu").resolve(NativeLibrary.LIBRARY_FILE)),
				"NIXL is installed under its default prefix here");
		Path empty = Files.createDirectory(work.resolve("empty"));
		Path home = Files.createDirectory(work.resolve("home"));
		Path cache = Files.createDirectory(work.resolve("cache"));

		ProcessRun run = ProcessRun.run(
				doctor(true, "-D" + NativeLibrary.DIR_PROPERTY + "=" + empty, "-Duser.home=" + home), work,
				environment -> {
					environment.remove("NIXL_LIB_DIR");
					environment.remove("NIXL_PREFIX");
					environment.remove("XDG_CACHE_HOME");
					environment.put("HOME", home.toString());
					environment.put("NIXL4J_CACHE", cache.toString());
				});

		assertThat(run.exitCode()).as(run.describe()).isEqualTo(Nixl4jCli.EXIT_ENVIRONMENT_NOT_READY);
		assertThat(run.out()).as(run.describe())
			.startsWith("NIXL readiness: ENVIRONMENT_NOT_READY")
			.contains("NIXL's native library could not be loaded")
			.contains("searched system property nixl.native.dir: " + empty.resolve("libnixl_capi.so") + " (absent)")
			.contains("searched system install (multiarch): "
					+ DEFAULT_PREFIX.resolve("x86_64-linux-gnu").resolve("libnixl_capi.so") + " (absent)")
			.contains("searched system install: " + DEFAULT_PREFIX.resolve("libnixl_capi.so") + " (absent)")
			.contains("searched nixl4j cache: " + cache.resolve("current/lib/libnixl_capi.so") + " (absent)")
			.contains("install: add the dependency dev.nixl4j:nixl-native-linux-x86_64")
			.contains("\nCUDA: ")
			.contains("\nUCX CUDA transports: not loadable (NIXL's native library is not loaded)");
	}

	@Test
	void whenTheJvmDeniesNativeAccessTheDoctorSaysSoAndFails(@TempDir Path work) throws Exception {
		ProcessRun run = ProcessRun.run(doctor(false, "--illegal-native-access=deny"), work, environment -> {
		});

		assertThat(run.exitCode()).as(run.describe()).isEqualTo(Nixl4jCli.EXIT_ENVIRONMENT_NOT_READY);
		assertThat(run.out()).as(run.describe())
			.startsWith("NIXL readiness: ENVIRONMENT_NOT_READY")
			.contains("the JVM denies native access to nixl4j")
			.contains("--enable-native-access=ALL-UNNAMED")
			.contains("native access: DENIED")
			.contains("\nCUDA: none: load_cudart failed with NATIVE_ACCESS_DENIED")
			.contains("\nUCX CUDA transports: not loadable (");
	}

	@Test
	void withoutTheFlagTheJvmStillAllowsNativeAccessAndTheDoctorSaysHowToSilenceItsWarning(@TempDir Path work)
			throws Exception {
		ProcessRun run = ProcessRun.run(doctor(false), work, environment -> {
		});

		assertThat(run.out()).as(run.describe())
			.contains("native access: NOT enabled, allowed with the JVM's warning (to enable it: ")
			.doesNotContain("denies native access");
	}

	/**
	 * This module's class path less the bundled NIXL, so that nothing the locator tries
	 * holds a library.
	 */
	private static String classPathWithoutTheNativeArtifact() {
		return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
			.filter((entry) -> !entry.contains("nixl-native-linux-x86_64"))
			.collect(Collectors.joining(File.pathSeparator));
	}

	private static List<String> doctor(boolean nativeAccess, String... properties) {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		if (nativeAccess) {
			command.add("--enable-native-access=ALL-UNNAMED");
		}
		command.addAll(List.of(properties));
		command.add("-cp");
		command.add(classPathWithoutTheNativeArtifact());
		command.add(Nixl4jCli.class.getName());
		command.add("doctor");
		return command;
	}

}
