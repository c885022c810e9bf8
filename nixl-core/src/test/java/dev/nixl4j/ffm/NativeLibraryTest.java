package dev.nixl4j.ffm;

import java.io.IOException;
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
 * The locator's refusals, each in a child JVM against a real shared library built for the test.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NativeLibraryTest {

	@TempDir
	Path dir;

	@Test
	void aStubLibraryIsRefused() throws Exception {
		compile("""
				#include <stdbool.h>
				bool nixl_capi_is_stub(void) { return true; }
				int nixl_capi_create_configured_agent(const char *n, const void *c, void **a) { return -4; }
				""");
		String output = load(true);
		assertThat(output).startsWith("FAILED LIBRARY_UNAVAILABLE").contains("stub").contains("fetch-nixl.sh");
	}

	@Test
	void aLibraryWithoutNixlsCApiIsRefusedAndEveryPlaceTriedIsListed() throws Exception {
		compile("int something_else(void) { return 0; }\n");
		String output = load(true);
		assertThat(output).startsWith("FAILED LIBRARY_UNAVAILABLE")
			.contains("configured directory " + this.dir)
			.contains("not a compatible NIXL C API")
			.contains("/opt/nvidia/nvda_nixl/lib")
			.contains("nixl4j cache")
			.contains("To install it: run src/native/fetch-nixl.sh");
	}

	@Test
	void withoutNativeAccessTheErrorSaysHowToEnableIt() throws Exception {
		String output = load(false);
		assertThat(output).startsWith("FAILED LIBRARY_UNAVAILABLE").contains("--enable-native-access=ALL-UNNAMED");
	}

	private void compile(String source) throws Exception {
		Path c = this.dir.resolve("stub.c");
		Files.writeString(c, source);
		Process cc;
		try {
			cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o", this.dir.resolve(NativeLibrary.LIBRARY_FILE).toString(),
					c.toString()).inheritIO().start();
		}
		catch (IOException ex) {
			Assumptions.abort("no C compiler (cc) to build the test library: " + ex.getMessage());
			return;
		}
		assertThat(cc.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(cc.exitValue()).isZero();
	}

	private String load(boolean nativeAccess) throws Exception {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		if (nativeAccess) {
			command.add("--enable-native-access=ALL-UNNAMED");
		}
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(LibraryLoadChild.class.getName());
		command.add(this.dir.toString());
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		// no other place may hold a real library: only the configured directory counts here
		builder.environment().put("NIXL4J_CACHE", this.dir.resolve("no-cache").toString());
		builder.environment().remove("NIXL_LIB_DIR");
		builder.environment().remove("NIXL_PREFIX");
		Process child = builder.start();
		assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
	}

}
