package dev.nixl4j.autoconfigure.diagnostics;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaException;
import dev.nixl4j.cuda.CudaReport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Real application starts that fail, and the report Spring Boot prints for them. Native
 * library failures run in a child JVM: the library lookup is per JVM and remembers a
 * failure.
 */
@ExtendWith(OutputCaptureExtension.class)
class NixlFailureAnalyzerTests {

	@Test
	void aMissingNativeLibraryIsExplainedWithHowToInstallIt(@TempDir Path empty) throws Exception {
		Assumptions.assumeFalse(Files.isDirectory(Path.of("/opt/nvidia/nvda_nixl/lib")),
				"NIXL is installed system-wide here, where the lookup always finds it");
		String output = startInChildJvm(List.of("--enable-native-access=ALL-UNNAMED"),
				Map.of("NIXL4J_CACHE", empty.resolve("no-cache").toString()), "--nixl.agent.engine=native",
				"--nixl.native.library-directory=" + empty);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("NIXL's native library (libnixl_capi.so) is not available")
			.contains(empty.toString())
			.contains("dev.nixl4j:nixl-native-linux-x86_64")
			.contains("nixl.native.library-directory")
			.contains("NIXL_LIB_DIR")
			.contains("nixl.agent.engine=embedded")
			.doesNotContain("STARTED");
	}

	@Test
	void deniedNativeAccessIsExplainedWithTheJvmFlag() throws Exception {
		String output = startInChildJvm(List.of("--illegal-native-access=deny"), Map.of(),
				"--nixl.agent.engine=native");
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("the JVM denies nixl4j native access")
			.contains("--enable-native-access=ALL-UNNAMED")
			.contains("Enable-Native-Access: ALL-UNNAMED")
			.contains("nixl.agent.engine=embedded")
			.doesNotContain("STARTED");
	}

	@Test
	void aKvCacheOnACudaDeviceWithoutCudaIsExplainedAsCudaNotNixl(CapturedOutput output) {
		CudaReport cuda = Cuda.report();
		Assumptions.assumeFalse(cuda.usable(), () -> "this host has a CUDA device: " + cuda.summary());
		Throwable failure = catchThrowable(() -> StartupApplication.start(StartupApplication.class,
				"--nixl.agent.engine=embedded", "--nixl.kv.layers=2", "--nixl.kv.blocks=8", "--nixl.kv.device=cuda:0"));
		assertThat(failure).hasRootCauseInstanceOf(CudaException.class);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("GPU memory was asked for, but")
			.contains("nixl.kv.device=cpu")
			.doesNotContain("libnixl_capi.so) is not available");
	}

	@Test
	void anUnknownBackendPluginFailsNamingItsProperty(CapturedOutput output) {
		Throwable failure = catchThrowable(() -> StartupApplication.start(StartupApplication.class,
				"--nixl.agent.engine=embedded", "--nixl.agent.backends[0].plugin=NO_SUCH_PLUGIN"));
		assertThat(failure).hasRootCauseInstanceOf(InvalidConfigurationPropertyValueException.class);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("nixl.agent.backends[0].plugin")
			.contains("NO_SUCH_PLUGIN");
	}

	@Test
	void aBackendThatCannotBeCreatedOutsideThePropertiesIsExplained(CapturedOutput output) {
		Throwable failure = catchThrowable(() -> StartupApplication.start(OwnAgentApplication.class));
		assertThat(failure).hasRootCauseInstanceOf(NixlException.class);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("A NIXL backend is not available")
			.contains("'NO_SUCH_PLUGIN'")
			.contains("nixl.agent.backends[n].plugin")
			.contains("NIXL_PLUGIN_DIR");
	}

	private static String startInChildJvm(List<String> jvmFlags, Map<String, String> environment, String... args)
			throws Exception {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmFlags);
		command.add("-Xmx256m");
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(StartupApplication.class.getName());
		command.addAll(List.of(args));
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		builder.environment().remove("NIXL_LIB_DIR");
		builder.environment().remove("NIXL_PREFIX");
		builder.environment().remove("VIRTUAL_ENV");
		builder.environment().remove("CONDA_PREFIX");
		builder.environment().putAll(environment);
		Process child = builder.start();
		CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
			try {
				return new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			}
			catch (java.io.IOException ex) {
				throw new java.io.UncheckedIOException(ex);
			}
		});
		try {
			assertThat(child.waitFor(120, TimeUnit.SECONDS)).as("the child JVM ended").isTrue();
			assertThat(child.exitValue()).as("exit status").isEqualTo(1);
			return output.get(10, TimeUnit.SECONDS);
		}
		finally {
			child.destroyForcibly();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@Import(StartupApplication.class)
	static class OwnAgentApplication {

		@Bean(destroyMethod = "close")
		NixlAgent nixlAgent() {
			return NixlAgent.create(AgentConfig.builder("own")
				.engine(Engine.EMBEDDED)
				.backends(new BackendConfig("NO_SUCH_PLUGIN", Map.of()))
				.build());
		}

	}

}
