package dev.nixl4j.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.nixl4j.internal.ffm.NativeLibrary;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * {@code nixl4j doctor} in child JVMs whose environment is not ready: no library where
 * the locator looks, libraries only in a place another user can write to (listed as
 * refused, never loaded), or a JVM that denies native access; and one that only warns
 * about native access, which the doctor does not count against readiness.
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
	void librariesInAPlaceOthersCanWriteToAreListedAsRefusedAndNeverLoaded(@TempDir Path work) throws Exception {
		// A virtual environment writable by everyone (and, as root, owned by nobody)
		// holding stand-ins for NIXL and the CUDA runtime whose constructors write a
		// marker
		Path venv = work.resolve("venv");
		Path sitePackages = venv.resolve("lib/python3.12/site-packages");
		Path nixl = sitePackages.resolve(".nixl_cu12.mesonpy.libs").resolve(NativeLibrary.LIBRARY_FILE);
		Path cudart = sitePackages.resolve("nvidia/cuda_runtime/lib/libcudart.so.12");
		Path marker = work.resolve("marker");
		compileStandIn(nixl, marker, work);
		compileStandIn(cudart, marker, work);
		Files.createDirectories(sitePackages.resolve("nixl_cu12-1.5.1.dist-info"));
		boolean root = ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
		try (Stream<Path> entries = Files.walk(venv)) {
			for (Path entry : entries.toList()) {
				if (Files.isDirectory(entry)) {
					Files.setPosixFilePermissions(entry, PosixFilePermissions.fromString("rwxrwxrwx"));
				}
				if (root) {
					Files.setAttribute(entry, "unix:uid", 65534);
				}
			}
		}
		String reason = venv + (root ? " is owned by another user (uid 65534" : " is writable by every user");
		Path home = Files.createDirectory(work.resolve("home"));
		Path cache = Files.createDirectory(work.resolve("cache"));

		ProcessRun run = ProcessRun.run(doctor(true, "-Duser.home=" + home), work, environment -> {
			environment.remove("NIXL_LIB_DIR");
			environment.remove("NIXL_PREFIX");
			environment.remove("XDG_CACHE_HOME");
			environment.remove("CONDA_PREFIX");
			environment.remove("CUDA_HOME");
			environment.remove("CUDA_PATH");
			environment.put("HOME", home.toString());
			environment.put("NIXL4J_CACHE", cache.toString());
			environment.put("VIRTUAL_ENV", venv.toString());
		});

		assertThat(marker).as("a stand-in's constructor ran").doesNotExist();
		assertThat(run.exitCode()).as(run.describe()).isEqualTo(Nixl4jCli.EXIT_ENVIRONMENT_NOT_READY);
		assertThat(run.out()).as(run.describe())
			.contains("searched Python environment " + sitePackages + " (nixl-cu12 1.5.1): " + nixl
					+ " (present, refused: " + reason)
			.contains("load error: - Python environment " + sitePackages + " (nixl-cu12 1.5.1) " + nixl.getParent()
					+ ": refused: " + reason)
			.contains("  libcudart looked for in:")
			.contains("  - Python environment " + sitePackages + " (nvidia/cuda_runtime) " + cudart + ": refused: "
					+ reason);
	}

	/**
	 * Builds a stand-in library whose constructor appends to a marker file; without a C
	 * compiler the test is skipped (and fails in CI, where one is required).
	 */
	private static void compileStandIn(Path library, Path marker, Path work) throws Exception {
		Files.createDirectories(library.getParent());
		Path source = Files.createTempFile(work, "stand-in-", ".c");
		Files.writeString(source, """
				#include <stdio.h>
				__attribute__((constructor)) static void loaded(void) {
					FILE *marker = fopen("%s", "a");
					if (marker != NULL) {
						fputs("constructor ran\\n", marker);
						fclose(marker);
					}
				}
				int nixl_capi_create_configured_agent(const char *n, const void *c, void **a) { return -4; }
				int cudaGetDeviceCount(int *count) { *count = 0; return 100; }
				""".formatted(marker));
		Process cc;
		try {
			cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o", library.toString(), source.toString()).inheritIO()
				.start();
		}
		catch (IOException ex) {
			String message = "no C compiler (cc) to build the stand-in libraries: " + ex.getMessage();
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message + "; it is required in CI", ex);
			}
			Assumptions.abort(message);
			return;
		}
		assertThat(cc.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(cc.exitValue()).isZero();
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
