package dev.nixl4j.internal.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The binding end to end on a host without a GPU: a stand-in {@code libcudart} built from
 * {@code fake-cudart.c} (host memory for device memory) is loaded through
 * {@code -Dnixl.cuda.library} in a fresh JVM, so that every downcall's signature, the
 * error mapping (a failed synchronize included) and a missing function are exercised for
 * real.
 */
class FakeRuntimeTest {

	@TempDir
	Path dir;

	@Test
	void withoutADeviceTheRuntimeAnswersUnavailableWithCudasOwnWords() throws Exception {
		Path library = compile("libcudart.so.12");
		String output = run(library, 0);
		assertThat(output).as(output)
			.contains("REPORT not usable: cudaGetDeviceCount failed with UNAVAILABLE: CUDA error 100 cudaErrorNoDevice "
					+ "(no CUDA-capable device is detected); driver 13.0, runtime 12.8, libcudart " + library
					+ " (system property nixl.cuda.library)")
			.contains("COUNT FAILED UNAVAILABLE 100 ")
			.contains("SYNCHRONIZE 0 FAILED UNAVAILABLE 100 ")
			.contains("ALLOCATE FAILED UNAVAILABLE");
	}

	@Test
	void withADeviceMemoryIsAllocatedFilledAndCopiedBothWays() throws Exception {
		Path library = compile("libcudart.so.13");
		String output = run(library, 1);
		assertThat(output).as(output)
			.contains("REPORT 1 device(s) [cuda:0 Fake GPU (80.0 GiB, compute capability 9.0)], driver 13.0, "
					+ "runtime 12.8, libcudart " + library)
			.contains("COUNT 1")
			.contains("ROUND TRIP true true")
			.contains("DESCRIPTOR VRAM 0")
			.contains("SYNCHRONIZE 0 done")
			.contains("SYNCHRONIZE 1 FAILED ERROR_INVALID_PARAM 101 cudaSetDevice")
			.contains("ORDINAL FAILED ERROR_INVALID_PARAM 101");
	}

	@Test
	void synchronizeWaitsOnTheDeviceItNamesAndReportsItsFailure() throws Exception {
		Path library = compile("libcudart.so.13");
		String output = run(library, 2, Map.of("FAKE_CUDA_SYNC_FAILS_ON", "1"));
		assertThat(output).as(output)
			.contains("SYNCHRONIZE 0 done")
			.contains("SYNCHRONIZE 1 FAILED ERROR_BACKEND 700 cudaDeviceSynchronize failed with ERROR_BACKEND: "
					+ "CUDA error 700 cudaErrorIllegalAddress (an illegal memory access was encountered)")
			.contains("SYNCHRONIZE 7 FAILED ERROR_INVALID_PARAM 101 ");
	}

	@Test
	void aFunctionTheRuntimeLacksBreaksOnlyItsOwnCalls() throws Exception {
		Path library = compile("libcudart.so.12", "-DNO_MALLOC");
		String output = run(library, 1);
		assertThat(output).as(output)
			.contains("REPORT 1 device(s)")
			.contains("ALLOCATE FAILED NOT_SUPPORTED cudaMalloc failed with NOT_SUPPORTED: " + library
					+ " does not export cudaMalloc");
	}

	private Path compile(String name, String... flags) throws Exception {
		Path source = this.dir.resolve("fake-cudart.c");
		try (InputStream in = FakeRuntimeTest.class.getResourceAsStream("fake-cudart.c")) {
			assertThat(in).as("fake-cudart.c on the test class path").isNotNull();
			Files.write(source, in.readAllBytes());
		}
		Path library = this.dir.resolve(name);
		List<String> command = new ArrayList<>(List.of("cc", "-shared", "-fPIC", "-o", library.toString()));
		command.addAll(List.of(flags));
		command.add(source.toString());
		Process cc;
		try {
			cc = new ProcessBuilder(command).inheritIO().start();
		}
		catch (IOException ex) {
			// as NativeLibraryTest does for its stub library
			Assumptions.abort("no C compiler (cc) to build the stand-in runtime: " + ex.getMessage());
			return library;
		}
		assertThat(cc.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(cc.exitValue()).isZero();
		return library;
	}

	private String run(Path library, int devices) throws Exception {
		return run(library, devices, Map.of());
	}

	private String run(Path library, int devices, Map<String, String> environment) throws Exception {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(List.of("-Xmx64m", "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED",
				"-Dnixl.cuda.library=" + library, "-cp", System.getProperty("java.class.path"),
				FakeRuntimeChild.class.getName()));
		Path output = this.dir.resolve("child-" + devices + ".out");
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
		builder.environment().put("FAKE_CUDA_DEVICES", Integer.toString(devices));
		builder.environment().putAll(environment);
		Process child = builder.start();
		assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("the child finished").isTrue();
		String text = Files.readString(output, StandardCharsets.UTF_8);
		assertThat(child.exitValue()).as(text).isZero();
		return text;
	}

}
