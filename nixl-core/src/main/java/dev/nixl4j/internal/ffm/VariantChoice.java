package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Chooses which of the native artifacts on the class path the loader extracts, and says
 * why.
 *
 * <p>
 * Precedence:
 * <ol>
 * <li>an explicit request: system property {@value #PROPERTY}, else the environment
 * variable {@value #ENV}, naming a variant ({@code linux-x86_64},
 * {@code linux-x86_64-cu13}, {@code linux-aarch64}) or a CUDA major version
 * ({@code cu12}, {@code cu13}) for the host's architecture. A request the class path
 * cannot meet refuses the class path rather than fall back;
 * <li>the architecture: only the variants built for the JVM's {@code os.arch} count;
 * <li>when several remain, the CUDA major version the NVIDIA driver supports, read from
 * {@value #DRIVER_VERSION_FILE} (driver 580 or later runs CUDA 13, 525 or later CUDA 12):
 * the newest build it runs;
 * <li>without a driver: the CUDA 12 build, which every driver since 525 runs and which
 * loads without a GPU like any other.
 * </ol>
 */
final class VariantChoice {

	/** System property naming the variant to load. */
	static final String PROPERTY = "nixl4j.native.variant";

	/** Environment variable naming the variant to load, when the property is not set. */
	static final String ENV = "NIXL4J_NATIVE_VARIANT";

	/** Where the NVIDIA kernel module reports its version. */
	static final String DRIVER_VERSION_FILE = "/proc/driver/nvidia/version";

	private static final Pattern DRIVER_VERSION = Pattern
		.compile("(?<![0-9.])([0-9]{3,4})\\.[0-9]{1,3}(?:\\.[0-9]{1,3})?(?![0-9.])");

	private static final Pattern CUDA_REQUEST = Pattern.compile("cu(?:da)?-?([0-9]{2})");

	private VariantChoice() {
	}

	/**
	 * What was chosen, and why.
	 *
	 * @param variant the variant to extract, or {@code null} when none fits
	 * @param reason why it was chosen, or why none fits
	 */
	record Choice(@Nullable NativeVariant variant, String reason) {
	}

	/**
	 * An explicit request.
	 *
	 * @param value what was asked for
	 * @param origin where: the system property or the environment variable
	 */
	record Request(String value, String origin) {

		/**
		 * Reads {@value VariantChoice#PROPERTY}, then {@value VariantChoice#ENV}.
		 * @return the request, or {@code null} when neither is set
		 */
		static @Nullable Request fromSystem() {
			String property = System.getProperty(PROPERTY);
			if (property != null && !property.isBlank()) {
				return new Request(property.strip(), "system property " + PROPERTY);
			}
			String env = System.getenv(ENV);
			if (env != null && !env.isBlank()) {
				return new Request(env.strip(), "environment variable " + ENV);
			}
			return null;
		}

	}

	/**
	 * The host's NVIDIA driver, as far as it can be told.
	 *
	 * @param cudaMajor the newest CUDA major version the driver runs, or 0 when unknown
	 * @param evidence what it was told from, for the reason
	 */
	record Driver(int cudaMajor, String evidence) {

		/**
		 * Reads the driver's version from {@value VariantChoice#DRIVER_VERSION_FILE}.
		 * @return the driver
		 */
		static Driver detect() {
			return read(Path.of(DRIVER_VERSION_FILE));
		}

		/**
		 * Reads the driver's version from a file laid out as
		 * {@value VariantChoice#DRIVER_VERSION_FILE}
		 * ({@code NVRM version: NVIDIA UNIX x86_64 Kernel
		 * Module  580.65.06  ...}).
		 * @param file the file
		 * @return the driver; unknown when the file is missing or unreadable
		 */
		static Driver read(Path file) {
			String text;
			try (InputStream in = Files.newInputStream(file)) {
				text = new String(in.readNBytes(4096), StandardCharsets.UTF_8);
			}
			catch (NoSuchFileException ex) {
				return new Driver(0, "no NVIDIA driver (" + file + " is absent)");
			}
			catch (IOException | SecurityException ex) {
				return new Driver(0, "the NVIDIA driver's version cannot be read (" + file + ": " + ex + ")");
			}
			for (String line : text.split("\n")) {
				if (line.startsWith("NVRM version")) {
					Matcher matcher = DRIVER_VERSION.matcher(line);
					if (matcher.find()) {
						int major = Integer.parseInt(matcher.group(1));
						return new Driver(cudaMajorOfDriver(major),
								"NVIDIA driver " + matcher.group() + " (" + file + ")");
					}
				}
			}
			return new Driver(0, "the NVIDIA driver's version is not in " + file);
		}

	}

	/**
	 * Returns the newest CUDA major version a driver runs (NVIDIA's minimum driver
	 * versions: 580 for CUDA 13, 525 for CUDA 12, 450 for CUDA 11).
	 * @param driverMajor the driver's major version, for example 580
	 * @return the CUDA major version
	 */
	static int cudaMajorOfDriver(int driverMajor) {
		if (driverMajor >= 580) {
			return 13;
		}
		if (driverMajor >= 525) {
			return 12;
		}
		return (driverMajor >= 450) ? 11 : 10;
	}

	/**
	 * Chooses among the variants on the class path.
	 * @param present the variants whose artifacts are on the class path
	 * @param osArch the JVM's {@code os.arch}
	 * @param request an explicit request, or {@code null}
	 * @param driver the host's NVIDIA driver
	 * @return the choice
	 */
	static Choice choose(Set<NativeVariant> present, String osArch, @Nullable Request request, Driver driver) {
		String arch = NativeVariant.hostArch(osArch);
		if (request != null) {
			return chooseRequested(present, osArch, arch, request);
		}
		if (arch == null) {
			return new Choice(null,
					"nixl4j ships NIXL's native libraries for x86_64 and aarch64 only; this JVM runs on " + osArch);
		}
		List<NativeVariant> matching = new ArrayList<>();
		for (NativeVariant variant : NativeVariant.values()) {
			if (variant.arch().equals(arch) && present.contains(variant)) {
				matching.add(variant);
			}
		}
		matching.sort(Comparator.comparingInt(NativeVariant::cudaMajor));
		if (matching.isEmpty()) {
			NativeVariant wanted = arch.equals("aarch64") ? NativeVariant.LINUX_AARCH64 : NativeVariant.LINUX_X86_64;
			StringBuilder reason = new StringBuilder(
					"no " + wanted.artifact() + " artifact (resources " + wanted.prefix() + ")");
			if (arch.equals("x86_64")) {
				reason.append(" nor ").append(NativeVariant.LINUX_X86_64_CU13.artifact());
			}
			List<String> others = present.stream()
				.sorted()
				.map((variant) -> variant.artifact() + " (built for " + variant.arch() + ")")
				.toList();
			if (!others.isEmpty()) {
				reason.append("; this JVM runs on ")
					.append(arch)
					.append(" but the class path has only ")
					.append(String.join(", ", others));
			}
			return new Choice(null, reason.toString());
		}
		if (matching.size() == 1) {
			return new Choice(matching.get(0), "the only artifact for " + arch + " on the class path");
		}
		NativeVariant lowest = matching.get(0);
		if (driver.cudaMajor() == 0) {
			return new Choice(lowest, driver.evidence() + ": the CUDA " + lowest.cudaMajor()
					+ " build, which every driver since 525 runs (-D" + PROPERTY + " chooses another)");
		}
		NativeVariant best = null;
		for (NativeVariant variant : matching) {
			if (variant.cudaMajor() <= driver.cudaMajor()) {
				best = variant;
			}
		}
		if (best == null) {
			return new Choice(lowest, driver.evidence() + " runs CUDA " + driver.cudaMajor()
					+ " at most, older than every artifact's; the CUDA " + lowest.cudaMajor() + " build");
		}
		return new Choice(best, driver.evidence() + " runs CUDA " + driver.cudaMajor() + ": the CUDA "
				+ best.cudaMajor() + " build of the " + matching.size() + " for " + arch + " on the class path");
	}

	private static Choice chooseRequested(Set<NativeVariant> present, String osArch, @Nullable String arch,
			Request request) {
		NativeVariant variant = NativeVariant.named(request.value());
		Matcher cuda = CUDA_REQUEST.matcher(request.value().toLowerCase(Locale.ROOT));
		if (variant == null && cuda.matches() && arch != null) {
			int major = Integer.parseInt(cuda.group(1));
			for (NativeVariant candidate : NativeVariant.values()) {
				if (candidate.arch().equals(arch) && candidate.cudaMajor() == major) {
					variant = candidate;
				}
			}
			if (variant == null) {
				return new Choice(null,
						request.origin() + " asks for CUDA " + major + ", but nixl4j has no such build for " + arch);
			}
		}
		if (variant == null) {
			List<String> names = new ArrayList<>();
			for (NativeVariant known : NativeVariant.values()) {
				names.add(known.variantName());
			}
			return new Choice(null, request.origin() + " is '" + request.value() + "', which names no variant (one of "
					+ String.join(", ", names) + ", or cu12/cu13 for this JVM's architecture)");
		}
		if (!variant.arch().equals(arch)) {
			return new Choice(null, request.origin() + " asks for " + variant.variantName() + ", built for "
					+ variant.arch() + ", but this JVM runs on " + osArch);
		}
		if (!present.contains(variant)) {
			return new Choice(null, request.origin() + " asks for " + variant.variantName() + ", but no "
					+ variant.artifact() + " artifact is on the class path (resources " + variant.prefix() + ")");
		}
		return new Choice(variant, request.origin() + " asks for " + variant.variantName());
	}

}
