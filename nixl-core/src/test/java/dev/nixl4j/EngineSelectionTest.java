package dev.nixl4j;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Engine selection when native NIXL cannot be found: {@link Engine#AUTO} falls back to the
 * embedded engine with one warning that says how to install NIXL, and {@link Engine#NATIVE}
 * fails. (With the library present, AUTO picks native: {@code NativeAgentTest}.)
 */
class EngineSelectionTest {

	@Test
	void autoFallsBackToTheEmbeddedEngineWhenTheLookupFindsNothing(@TempDir Path empty) throws Exception {
		Assumptions.assumeFalse(Files.isDirectory(Path.of("/opt/nvidia/nvda_nixl/lib")),
				"NIXL is installed system-wide here, where the lookup always finds it");
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("--enable-native-access=ALL-UNNAMED");
		command.add("-Dnixl.native.dir=" + empty);
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(EngineSelectionChild.class.getName());
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		// no other place may hold the library: the lookup is pointed at an empty directory only
		builder.environment().put("NIXL4J_CACHE", empty.resolve("no-cache").toString());
		builder.environment().remove("NIXL_LIB_DIR");
		builder.environment().remove("NIXL_PREFIX");
		Process child = builder.start();
		assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
		String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(output).contains("AUTO EMBEDDED", "COPIED true", "NATIVE LIBRARY_UNAVAILABLE");
		assertThat(output).containsOnlyOnce("Native NIXL is not available");
		assertThat(output).contains("src/native/fetch-nixl.sh").contains(empty.toString());
	}

}
