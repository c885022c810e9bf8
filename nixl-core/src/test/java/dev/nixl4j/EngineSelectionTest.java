package dev.nixl4j;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.internal.ffm.NativeLibrary;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Engine selection when native NIXL cannot be found: {@link Engine#AUTO} falls back to
 * the embedded engine with one warning that says how to install NIXL, and
 * {@link Engine#NATIVE} fails; the same where the JVM denies native access. (With the
 * library present, AUTO picks native: {@code NativeAgentTest}.)
 */
class EngineSelectionTest {

	@Test
	void autoFallsBackToTheEmbeddedEngineWhenTheLookupFindsNothing(@TempDir Path empty) throws Exception {
		Assumptions.assumeFalse(Files.isDirectory(Path.of("/opt/nvidia/nvda_nixl/lib")),
				"NIXL is installed system-wide here, where the lookup always finds it");
		String output = run(List.of("--enable-native-access=ALL-UNNAMED", "-Dnixl.native.dir=" + empty),
				Map.of("NIXL4J_CACHE", empty.resolve("no-cache").toString()));
		assertThat(output).contains("AUTO EMBEDDED", "COPIED true", "NATIVE LIBRARY_UNAVAILABLE");
		assertThat(output).containsOnlyOnce("Native NIXL is not available");
		assertThat(output).contains("add the dependency dev.nixl4j:nixl-native-linux-x86_64")
			.contains(empty.toString());
	}

	@Test
	void autoFallsBackToTheEmbeddedEngineWhereTheJvmDeniesNativeAccess(@TempDir Path empty) throws Exception {
		Path fetched = NativeLibrary.cacheDirectory().resolve("current").resolve("lib");
		// Denial is decided before any place is looked at: the library being there does
		// not matter.
		String output = run(List.of("--illegal-native-access=deny"),
				Map.of("NIXL_LIB_DIR", fetched.toString(), "NIXL4J_CACHE", empty.resolve("no-cache").toString()));
		assertThat(output).as(output).contains("AUTO EMBEDDED", "COPIED true", "NATIVE NATIVE_ACCESS_DENIED");
		assertThat(output).containsOnlyOnce("Native NIXL is not available")
			.contains("the JVM denies native access to nixl4j")
			.contains("--enable-native-access=ALL-UNNAMED");
	}

	private static String run(List<String> jvmFlags, Map<String, String> environment) throws Exception {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmFlags);
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(EngineSelectionChild.class.getName());
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		// no other place may hold the library: only what the test names counts
		for (String variable : List.of("NIXL_LIB_DIR", "NIXL_PREFIX", "VIRTUAL_ENV", "CONDA_PREFIX")) {
			builder.environment().remove(variable);
		}
		builder.environment().putAll(environment);
		Process child = builder.start();
		assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
	}

}
