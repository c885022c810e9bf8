package dev.nixl4j.internal.ffm;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The builds of NIXL's native libraries that nixl4j ships as artifacts, one per line of
 * {@code src/native/wheels}: each carries its files under
 * {@code META-INF/nixl4j/native/<name>/}.
 */
enum NativeVariant {

	/** {@code nixl-native-linux-x86_64}: the {@code nixl-cu12} wheel for x86-64. */
	LINUX_X86_64("linux-x86_64", "nixl-native-linux-x86_64", "x86_64", 12),

	/** {@code nixl-native-linux-x86_64-cu13}: the {@code nixl-cu13} wheel for x86-64. */
	LINUX_X86_64_CU13("linux-x86_64-cu13", "nixl-native-linux-x86_64-cu13", "x86_64", 13),

	/**
	 * {@code nixl-native-linux-aarch64}: the {@code nixl-cu12} wheel for aarch64 (PyPI
	 * has no {@code nixl-cu13} for aarch64).
	 */
	LINUX_AARCH64("linux-aarch64", "nixl-native-linux-aarch64", "aarch64", 12);

	/** Where every variant keeps its resources, each in a directory of its name. */
	static final String ROOT = "META-INF/nixl4j/native/";

	private final String variantName;

	private final String artifact;

	private final String arch;

	private final int cudaMajor;

	NativeVariant(String variantName, String artifact, String arch, int cudaMajor) {
		this.variantName = variantName;
		this.artifact = artifact;
		this.arch = arch;
		this.cudaMajor = cudaMajor;
	}

	/**
	 * Returns the variant's name, as {@code nixl4j.native.variant} takes it and as its
	 * resource directory is named, for example {@code linux-x86_64-cu13}.
	 * @return the name
	 */
	String variantName() {
		return this.variantName;
	}

	/**
	 * Returns the artifact that carries the variant, as users add it to their build.
	 * @return the artifact id
	 */
	String artifact() {
		return this.artifact;
	}

	/**
	 * Returns the architecture the libraries are built for: {@code x86_64} or
	 * {@code aarch64}.
	 * @return the architecture
	 */
	String arch() {
		return this.arch;
	}

	/**
	 * Returns the CUDA major version the wheel's UCX CUDA transports were built against.
	 * @return 12 or 13
	 */
	int cudaMajor() {
		return this.cudaMajor;
	}

	/**
	 * Returns where the variant's resources are.
	 * @return {@code META-INF/nixl4j/native/<name>/}
	 */
	String prefix() {
		return ROOT + this.variantName + "/";
	}

	/**
	 * Returns the variant of a name.
	 * @param name a variant's name, in any case
	 * @return the variant, or {@code null} when there is none of that name
	 */
	static @Nullable NativeVariant named(String name) {
		String wanted = name.strip().toLowerCase(Locale.ROOT);
		for (NativeVariant variant : values()) {
			if (variant.variantName.equals(wanted)) {
				return variant;
			}
		}
		return null;
	}

	/**
	 * Returns the architecture of the variants a JVM can load, from its {@code os.arch}.
	 * @param osArch the JVM's {@code os.arch}
	 * @return {@code x86_64}, {@code aarch64}, or {@code null} when nixl4j ships no
	 * libraries for it
	 */
	static @Nullable String hostArch(String osArch) {
		return switch (osArch.strip().toLowerCase(Locale.ROOT)) {
			case "amd64", "x86_64", "x86-64" -> "x86_64";
			case "aarch64", "arm64" -> "aarch64";
			default -> null;
		};
	}

}
