package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The locator's search and refusals, and what native access it needs, each in a child
 * JVM: against a real shared library built for the test, or the real NIXL that
 * {@code src/native/fetch-nixl.sh} fetched.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NativeLibraryTest {

	private static final String ENABLE = "--enable-native-access=ALL-UNNAMED";

	private static final String ADVICE = "Native access is not enabled for nixl4j";

	@TempDir
	Path dir;

	@Test
	void aStubLibraryIsRefused() throws Exception {
		compile("""
				#include <stdbool.h>
				bool nixl_capi_is_stub(void) { return true; }
				int nixl_capi_create_configured_agent(const char *n, const void *c, void **a) { return -4; }
				""");
		String output = load(List.of(ENABLE), Map.of(), this.dir.toString());
		assertThat(output).startsWith("FAILED LIBRARY_UNAVAILABLE").contains("stub").contains(ClassPathBundle.ARTIFACT);
	}

	@Test
	void aLibraryWithoutNixlsCApiIsRefusedAndEveryPlaceTriedIsListed() throws Exception {
		compile("int something_else(void) { return 0; }\n");
		String output = load(List.of(ENABLE), Map.of(), this.dir.toString());
		assertThat(output).startsWith("FAILED LIBRARY_UNAVAILABLE")
			.contains("configured directory " + this.dir)
			.contains("not a compatible NIXL C API")
			.contains("system install /opt/nvidia/nvda_nixl/lib")
			.contains("Python environments: no nixl-cu12 or nixl-cu13 wheel installed in")
			.contains("class path: no " + ClassPathBundle.ARTIFACT + " artifact")
			.contains("nixl4j cache " + this.dir.resolve("no-cache"))
			.contains("To install it: add the dependency dev.nixl4j:" + ClassPathBundle.ARTIFACT)
			.contains("NIXL_LIB_DIR");
		assertThat(output.indexOf("configured directory")).isLessThan(output.indexOf("system install"));
		assertThat(output.indexOf("system install")).isLessThan(output.indexOf("Python environments"));
		assertThat(output.indexOf("Python environments")).isLessThan(output.indexOf("class path"));
		assertThat(output.indexOf("class path")).isLessThan(output.indexOf("nixl4j cache"));
	}

	@Test
	void nixlInstalledInTheActiveVirtualEnvironmentWinsOverTheCacheAndIsReported() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		// A virtual environment as pip leaves it after 'pip install nixl-cu12', its files
		// linked to the fetched ones.
		Path venv = this.dir.resolve("venv");
		Path sitePackages = Files.createDirectories(venv.resolve("lib/python3.12/site-packages"));
		Files.createSymbolicLink(sitePackages.resolve(".nixl_cu12.mesonpy.libs"), fetched.resolve("lib"));
		Files.createSymbolicLink(sitePackages.resolve("nixl_cu12.libs"), fetched.resolve("nixl_cu12.libs"));
		Files.createDirectories(sitePackages.resolve("nixl_cu12-1.5.1.dist-info"));
		String output = load(List.of(ENABLE),
				Map.of("VIRTUAL_ENV", venv.toString(), "NIXL4J_CACHE", fetched.getParent().toString()));
		assertThat(output).as(output)
			.contains("LOADED " + sitePackages.resolve(".nixl_cu12.mesonpy.libs").resolve(NativeLibrary.LIBRARY_FILE))
			.contains("SOURCE Python environment " + sitePackages + " (nixl-cu12 1.5.1)")
			.contains("VERSION 1.5.1");
	}

	@Test
	void whereTheJvmDeniesNativeAccessTheLoadFailsWithATypedReasonSayingHowToEnableIt() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		String output = load(List.of("--illegal-native-access=deny"),
				Map.of("NIXL_LIB_DIR", fetched.resolve("lib").toString()));
		assertThat(output).as(output)
			.startsWith("FAILED NATIVE_ACCESS_DENIED")
			.contains("the JVM denies native access to nixl4j")
			.contains(ENABLE)
			.contains("Enable-Native-Access: ALL-UNNAMED")
			.doesNotContain("LOADED");
	}

	@Test
	void withoutTheFlagNixlLoadsAndTheAdviceIsLoggedOnce() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		String output = load(List.of(), Map.of("NIXL_LIB_DIR", fetched.resolve("lib").toString()));
		assertThat(output).as(output)
			.contains("LOADED " + fetched.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE))
			.contains("SOURCE NIXL_LIB_DIR")
			.contains("SAME true")
			.containsOnlyOnce(ADVICE)
			.contains(ENABLE + ", or, for an executable jar (a Spring Boot jar too), add the line "
					+ "'Enable-Native-Access: ALL-UNNAMED' to its manifest");
	}

	@Test
	void withTheFlagNixlLoadsWithoutAdvice() throws Exception {
		Path fetched = NativeFixtures.fetchedNixl();
		String output = load(List.of(ENABLE), Map.of("NIXL_LIB_DIR", fetched.resolve("lib").toString()));
		assertThat(output).as(output).contains("SOURCE NIXL_LIB_DIR").doesNotContain(ADVICE).doesNotContain("WARNING");
	}

	private void compile(String source) throws Exception {
		Path c = this.dir.resolve("stub.c");
		Files.writeString(c, source);
		Process cc;
		try {
			cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o",
					this.dir.resolve(NativeLibrary.LIBRARY_FILE).toString(), c.toString())
				.inheritIO()
				.start();
		}
		catch (IOException ex) {
			Assumptions.abort("no C compiler (cc) to build the test library: " + ex.getMessage());
			return;
		}
		assertThat(cc.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(cc.exitValue()).isZero();
	}

	private String load(List<String> jvmFlags, Map<String, String> environment, String... args) throws Exception {
		Map<String, String> env = new java.util.HashMap<>(environment);
		// no other place may hold a real library: only what the test names counts
		env.putIfAbsent("NIXL4J_CACHE", this.dir.resolve("no-cache").toString());
		return NativeFixtures.run(this.dir, jvmFlags, List.of(), env, args);
	}

}
