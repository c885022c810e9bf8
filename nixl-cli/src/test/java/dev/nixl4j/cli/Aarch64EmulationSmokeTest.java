package dev.nixl4j.cli;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The aarch64 artifact under emulation: {@code src/native/aarch64-smoke.sh} runs
 * {@code nixl4j selftest} (two agents, UCX, DRAM) in an aarch64 Java 25 under
 * {@code qemu-aarch64-static}, with this module's class path and the
 * {@code nixl-native-linux-aarch64} artifact only. Where the emulation cannot be
 * installed (no root, no apt-get) the test skips saying why; with {@code CI=true} it
 * fails instead ({@code bin/run-tests} installs it).
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class Aarch64EmulationSmokeTest {

	@TempDir
	Path work;

	@Test
	void selftestPassesOnTheAarch64BundleUnderQemu() throws Exception {
		Path root = Path.of(System.getProperty("user.dir")).resolve("..").toAbsolutePath().normalize();
		Path script = root.resolve("src/native/aarch64-smoke.sh");
		String aarch64 = null;
		List<String> classPath = new ArrayList<>();
		for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
			if (entry.contains("nixl-native-linux-aarch64")) {
				aarch64 = entry;
			}
			else if (!entry.contains("nixl-native-linux-")) {
				classPath.add(entry);
			}
		}
		assertThat(aarch64).as("nixl-native-linux-aarch64 on the test class path").isNotNull();
		Path output = this.work.resolve("smoke.out");
		Process process = new ProcessBuilder("bash", script.toString(), String.join(File.pathSeparator, classPath),
				aarch64)
			.redirectErrorStream(true)
			.redirectOutput(output.toFile())
			.start();
		assertThat(process.waitFor(7, TimeUnit.MINUTES)).as("the smoke script ended").isTrue();
		String out = Files.readString(output, StandardCharsets.UTF_8);
		if (process.exitValue() == 3) {
			String message = "the aarch64 emulation cannot be had here: " + out.strip();
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message);
			}
			Assumptions.abort(message);
		}
		assertThat(process.exitValue()).as(out).isZero();
		assertThat(out).as(out)
			.contains("from the class path (nixl-native-linux-aarch64)")
			.contains("selftest: all 9 checks passed")
			.contains("aarch64-smoke: selftest under qemu-aarch64-static exited with 0");
	}

}
