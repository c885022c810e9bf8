package dev.nixl4j.consumertests;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * nixl-core as a named module: an application whose {@code module-info} requires
 * {@code dev.nixl4j.core} runs on the module path (native NIXL from the native artifact,
 * added as an automatic module) and moves bytes; nixl-core's internal packages are closed
 * to it at compile time and at run time.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ModulePathAppIT {

	private static final Path PROJECTS = Path.of(System.getProperty("consumer.projects", "target/it"));

	private static final Path APP = PROJECTS.resolve("module-path-app/target");

	private static final Path INTRUDER = PROJECTS.resolve("module-path-internal-import");

	/** The module name of the native artifact (its Automatic-Module-Name). */
	private static final String NATIVE_MODULE = "dev.nixl4j.natives.linux.x86_64";

	@TempDir
	Path temp;

	@Test
	void moduleApplicationRunsOnNativeNixlFromTheModulePathAndReadsByteForByte() throws Exception {
		Path home = Files.createDirectories(this.temp.resolve("home"));
		String modulePath = APP.resolve("modular-consumer.jar") + File.pathSeparator + APP.resolve("lib");
		try (ConsumerProcess app = ConsumerProcess.startJava("module-path-app",
				List.of("--enable-native-access=dev.nixl4j.core", "--module-path", modulePath, "--add-modules",
						NATIVE_MODULE, "--module", "com.example.modular/com.example.modular.ModularConsumer"),
				home, this.temp.resolve("logs"))) {
			int status = app.awaitExit(Duration.ofSeconds(120));
			List<String> lines = app.logLines();
			assertThat(status).as("exit status\n%s", app.logTail()).isZero();
			assertThat(lines).as(app.logTail())
				.contains("application module: com.example.modular", "nixl4j module: dev.nixl4j.core", "engine: NATIVE",
						"VERIFIED " + (1 << 20) + " bytes", "INTERNAL NOT ACCESSIBLE: java.lang.IllegalAccessException",
						"JSON NOT EXPORTED TO THE APPLICATION",
						"EXPORTS API ONLY: dev.nixl4j.core [dev.nixl4j, dev.nixl4j.cuda, dev.nixl4j.lifecycle, dev.nixl4j.metadata, dev.nixl4j.readiness]",
						"EXPORTS API ONLY: dev.nixl4j.kv [dev.nixl4j.kv]",
						"EXPORTS API ONLY: dev.nixl4j.connect [dev.nixl4j.connect]",
						"EXPORTS API ONLY: dev.nixl4j.metadata.http [dev.nixl4j.metadata.http]");
			assertThat(lines).as("the library is the one extracted from the native artifact on the module path")
				.anyMatch((line) -> line.startsWith("library: ")
						&& line.contains(home.resolve(".cache/nixl4j/native").toString()));
			assertThat(lines).as("--enable-native-access=dev.nixl4j.core is all nixl-core needs\n%s", app.logTail())
				.noneMatch((line) -> line.contains("A restricted method"))
				.noneMatch((line) -> line.toLowerCase(Locale.ROOT).contains("enable-native-access"));
			System.out.println("consumer module-path-app: " + String.join(" | ", lines));
		}
	}

	@Test
	void moduleImportingAnInternalPackageDoesNotCompile() throws IOException {
		Path log = INTRUDER.resolve("build.log");
		assertThat(log).as("the build of %s (maven-invoker-plugin expects it to fail)", INTRUDER).isRegularFile();
		String build = Files.readString(log);
		assertThat(build).as(build)
			.contains("BUILD FAILURE")
			.contains("package dev.nixl4j.internal.engine is not visible")
			.contains("which does not export it");
	}

}
