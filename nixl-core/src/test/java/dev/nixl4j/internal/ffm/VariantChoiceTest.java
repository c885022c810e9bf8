package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The choice among the native artifacts: architecture, the NVIDIA driver's CUDA version,
 * an explicit request, and what is refused, with the artifacts as real resources on a
 * class path (directories laid out as the artifacts' jars) and driver version files as
 * the kernel module writes them.
 */
class VariantChoiceTest {

	private static final VariantChoice.Driver NO_DRIVER = new VariantChoice.Driver(0,
			"no NVIDIA driver (/proc/driver/nvidia/version is absent)");

	@TempDir
	Path dir;

	@Test
	void theDriverVersionFileGivesTheNewestCudaItRuns() throws IOException {
		assertThat(driver("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:45 UTC 2025\n"
				+ "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"))
			.isEqualTo(new VariantChoice.Driver(13, "NVIDIA driver 580.65.06 (" + this.dir.resolve("version") + ")"));
		assertThat(driver("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.133.20  Release Build\n")
			.cudaMajor()).isEqualTo(12);
		assertThat(driver("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 2024\n").cudaMajor())
			.isEqualTo(12);
		assertThat(driver("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May 2 2024\n").cudaMajor())
			.isEqualTo(11);
		VariantChoice.Driver garbled = driver("something else\n");
		assertThat(garbled.cudaMajor()).isZero();
		assertThat(garbled.evidence()).contains("is not in");
		VariantChoice.Driver absent = VariantChoice.Driver.read(this.dir.resolve("absent"));
		assertThat(absent.cudaMajor()).isZero();
		assertThat(absent.evidence()).startsWith("no NVIDIA driver");
	}

	@Test
	void theOnlyArtifactForTheArchitectureIsChosenWhateverTheDriver() throws Exception {
		ClassLoader loader = classPath(NativeVariant.LINUX_X86_64, NativeVariant.LINUX_AARCH64);
		Set<NativeVariant> present = ClassPathBundle.present(List.of(loader)).keySet();
		assertThat(present).containsExactly(NativeVariant.LINUX_X86_64, NativeVariant.LINUX_AARCH64);

		VariantChoice.Choice x86 = VariantChoice.choose(present, "amd64", null, driverOf(580));
		assertThat(x86.variant()).isEqualTo(NativeVariant.LINUX_X86_64);
		assertThat(x86.reason()).isEqualTo("the only artifact for x86_64 on the class path");
		assertThat(VariantChoice.choose(present, "aarch64", null, NO_DRIVER).variant())
			.isEqualTo(NativeVariant.LINUX_AARCH64);
		assertThat(VariantChoice.choose(present, "arm64", null, NO_DRIVER).variant())
			.isEqualTo(NativeVariant.LINUX_AARCH64);
		assertExtracts(loader, x86, "linux-x86_64");
		assertExtracts(loader, VariantChoice.choose(present, "aarch64", null, NO_DRIVER), "linux-aarch64");
	}

	@Test
	void withBothX86BuildsTheDriverDecidesAndWithoutOneCuda12IsChosen() throws Exception {
		ClassLoader loader = classPath(NativeVariant.LINUX_X86_64_CU13, NativeVariant.LINUX_X86_64);
		Set<NativeVariant> present = ClassPathBundle.present(List.of(loader)).keySet();

		VariantChoice.Choice cuda13 = VariantChoice.choose(present, "amd64", null,
				driver("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 2025\n"));
		assertThat(cuda13.variant()).isEqualTo(NativeVariant.LINUX_X86_64_CU13);
		assertThat(cuda13.reason()).startsWith("NVIDIA driver 580.95.05 (")
			.endsWith(") runs CUDA 13: the CUDA 13 build of the 2 for x86_64 on the class path");
		assertExtracts(loader, cuda13, "linux-x86_64-cu13");

		VariantChoice.Choice cuda12 = VariantChoice.choose(present, "x86_64", null, driverOf(550));
		assertThat(cuda12.variant()).isEqualTo(NativeVariant.LINUX_X86_64);
		assertThat(cuda12.reason()).contains("runs CUDA 12: the CUDA 12 build");

		VariantChoice.Choice none = VariantChoice.choose(present, "amd64", null,
				VariantChoice.Driver.read(this.dir.resolve("no-such-file")));
		assertThat(none.variant()).isEqualTo(NativeVariant.LINUX_X86_64);
		assertThat(none.reason()).startsWith("no NVIDIA driver (")
			.contains("the CUDA 12 build, which every driver since 525 runs (-Dnixl4j.native.variant chooses another)");
		assertExtracts(loader, none, "linux-x86_64");

		VariantChoice.Choice old = VariantChoice.choose(present, "amd64", null, driverOf(470));
		assertThat(old.variant()).isEqualTo(NativeVariant.LINUX_X86_64);
		assertThat(old.reason()).contains("runs CUDA 11 at most, older than every artifact's");
	}

	@Test
	void anExplicitRequestWinsOverTheDriverAndIsRefusedWhenTheClassPathCannotMeetIt() throws Exception {
		ClassLoader loader = classPath(NativeVariant.LINUX_X86_64, NativeVariant.LINUX_X86_64_CU13);
		Set<NativeVariant> present = ClassPathBundle.present(List.of(loader)).keySet();
		VariantChoice.Request cu12 = new VariantChoice.Request("cu12", "system property nixl4j.native.variant");

		VariantChoice.Choice byCuda = VariantChoice.choose(present, "amd64", cu12, driverOf(580));
		assertThat(byCuda.variant()).isEqualTo(NativeVariant.LINUX_X86_64);
		assertThat(byCuda.reason()).isEqualTo("system property nixl4j.native.variant asks for linux-x86_64");
		VariantChoice.Choice byName = VariantChoice.choose(present, "amd64",
				new VariantChoice.Request("Linux-X86_64-CU13", "environment variable NIXL4J_NATIVE_VARIANT"),
				NO_DRIVER);
		assertThat(byName.variant()).isEqualTo(NativeVariant.LINUX_X86_64_CU13);
		assertExtracts(loader, byName, "linux-x86_64-cu13");

		assertThat(VariantChoice.choose(present, "amd64", request("linux-aarch64"), NO_DRIVER))
			.isEqualTo(new VariantChoice.Choice(null, "system property nixl4j.native.variant asks for linux-aarch64, "
					+ "built for aarch64, but this JVM runs on amd64"));
		assertThat(VariantChoice.choose(present, "aarch64", request("cu13"), NO_DRIVER).reason()).isEqualTo(
				"system property nixl4j.native.variant asks for CUDA 13, but nixl4j has no such build for aarch64");
		assertThat(VariantChoice.choose(present, "amd64", request("rocm"), NO_DRIVER).reason())
			.startsWith("system property nixl4j.native.variant is 'rocm', which names no variant (one of linux-x86_64, "
					+ "linux-x86_64-cu13, linux-aarch64");
		Set<NativeVariant> onlyCuda12 = ClassPathBundle.present(List.of(classPath(NativeVariant.LINUX_X86_64)))
			.keySet();
		assertThat(VariantChoice.choose(onlyCuda12, "amd64", request("cu13"), driverOf(580)))
			.isEqualTo(new VariantChoice.Choice(null,
					"system property nixl4j.native.variant asks for "
							+ "linux-x86_64-cu13, but no nixl-native-linux-x86_64-cu13 artifact is on the class path "
							+ "(resources META-INF/nixl4j/native/linux-x86_64-cu13/)"));
	}

	@Test
	void anotherArchitecturesArtifactAloneIsRefusedNamingTheOneToAdd() throws Exception {
		Set<NativeVariant> present = ClassPathBundle.present(List.of(classPath(NativeVariant.LINUX_AARCH64))).keySet();
		VariantChoice.Choice x86 = VariantChoice.choose(present, "amd64", null, NO_DRIVER);
		assertThat(x86.variant()).isNull();
		assertThat(x86.reason()).isEqualTo("no nixl-native-linux-x86_64 artifact (resources "
				+ "META-INF/nixl4j/native/linux-x86_64/) nor nixl-native-linux-x86_64-cu13; this JVM runs on x86_64 but "
				+ "the class path has only nixl-native-linux-aarch64 (built for aarch64)");
		assertThat(VariantChoice.choose(Set.of(), "aarch64", null, NO_DRIVER).reason())
			.isEqualTo("no nixl-native-linux-aarch64 artifact (resources META-INF/nixl4j/native/linux-aarch64/)");
		assertThat(VariantChoice.choose(EnumSet.allOf(NativeVariant.class), "ppc64le", null, NO_DRIVER))
			.isEqualTo(new VariantChoice.Choice(null,
					"nixl4j ships NIXL's native libraries for x86_64 and aarch64 only; this JVM runs on ppc64le"));
	}

	@Test
	void aBundleWhosePropertiesNameAnotherVariantIsRefused() throws Exception {
		Path root = this.dir.resolve("mislabelled");
		writeVariant(root, NativeVariant.LINUX_X86_64_CU13, "linux-x86_64");
		try (URLClassLoader loader = new URLClassLoader(new URL[] { root.toUri().toURL() }, null)) {
			assertThat(ClassPathBundle.present(List.of(loader))).containsOnlyKeys(NativeVariant.LINUX_X86_64_CU13);
			org.assertj.core.api.Assertions.assertThatExceptionOfType(ClassPathBundle.BundleException.class)
				.isThrownBy(() -> ClassPathBundle.open(NativeVariant.LINUX_X86_64_CU13, loader, this.dir))
				.withMessage("its bundle.properties under META-INF/nixl4j/native/linux-x86_64-cu13/ names the variant "
						+ "'linux-x86_64'");
		}
	}

	private VariantChoice.Driver driver(String text) throws IOException {
		Path file = this.dir.resolve("version");
		Files.writeString(file, text);
		return VariantChoice.Driver.read(file);
	}

	private VariantChoice.Driver driverOf(int major) throws IOException {
		return driver("NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + major + ".10.01  Release Build\n");
	}

	private static VariantChoice.Request request(String value) {
		return new VariantChoice.Request(value, "system property nixl4j.native.variant");
	}

	/**
	 * Extracts the chosen variant from the class path into a fresh cache and checks that
	 * the library extracted is that variant's.
	 */
	private void assertExtracts(ClassLoader loader, VariantChoice.Choice choice, String expected) throws Exception {
		NativeVariant variant = choice.variant();
		assertThat(variant).isNotNull();
		Map<NativeVariant, ClassLoader> present = ClassPathBundle.present(List.of(loader));
		Path cache = Files.createTempDirectory(this.dir, "cache-");
		ClassPathBundle bundle = ClassPathBundle.open(variant, present.get(variant), cache);
		assertThat(bundle.variant()).isEqualTo(variant);
		Path extracted = bundle.prepare();
		assertThat(Files.readString(extracted.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE)))
			.isEqualTo("libnixl_capi.so of " + expected + "\n");
	}

	private ClassLoader classPath(NativeVariant... variants) throws Exception {
		Path root = Files.createTempDirectory(this.dir, "classes-");
		for (NativeVariant variant : variants) {
			writeVariant(root, variant, variant.variantName());
		}
		// No parent: only these resources are seen, not the test class path's.
		return new URLClassLoader(new URL[] { root.toUri().toURL() }, null);
	}

	/**
	 * Writes a variant's resources as its artifact carries them, with a stand-in library.
	 */
	private static void writeVariant(Path root, NativeVariant variant, String declared) throws Exception {
		Path base = root.resolve(variant.prefix());
		byte[] library = ("libnixl_capi.so of " + variant.variantName() + "\n").getBytes(StandardCharsets.UTF_8);
		Files.createDirectories(base.resolve("lib"));
		Files.write(base.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE), library);
		byte[] index = (sha256(library) + "  lib/" + NativeLibrary.LIBRARY_FILE + "\n")
			.getBytes(StandardCharsets.UTF_8);
		Files.write(base.resolve("files.sha256"), index);
		Files.writeString(base.resolve("bundle.properties"), "nixl.version=1.5.1\nvariant=" + declared + "\narch="
				+ variant.arch() + "\ncuda.major=" + variant.cudaMajor() + "\nbundle.id=" + sha256(index) + "\n");
	}

	private static String sha256(byte[] bytes) throws Exception {
		return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
	}

}
