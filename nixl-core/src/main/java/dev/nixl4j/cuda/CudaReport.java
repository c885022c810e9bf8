package dev.nixl4j.cuda;

import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * What nixl4j found of CUDA on this host: the runtime library and where it came from, the
 * driver's and the runtime's versions and the devices, or why there is none. Made by
 * {@link Cuda#report()}, for {@code nixl4j doctor}, {@code nixl4j info} and health.
 *
 * @param library the {@code libcudart} file loaded, or {@code null} when none loaded
 * @param source where it was found (for example
 * {@code Python environment /venv/lib/python3.12/site-packages (nvidia/cu13)}), or
 * {@code null}
 * @param attempts the places tried before it (all places when none loaded), each with why
 * it was refused
 * @param driverVersion the driver's CUDA version as CUDA encodes it (13000 for 13.0), 0
 * when unknown or no driver
 * @param runtimeVersion the runtime's CUDA version, 0 when unknown
 * @param devices the devices, empty when there is none
 * @param problem why CUDA cannot be used, in one line, or {@code null} when it can
 */
public record CudaReport(@Nullable String library, @Nullable String source, List<String> attempts, int driverVersion,
		int runtimeVersion, List<CudaDevice> devices, @Nullable String problem) {

	/**
	 * Creates a report.
	 * @param library the library file or {@code null}
	 * @param source where it was found or {@code null}
	 * @param attempts the places tried
	 * @param driverVersion the driver's version
	 * @param runtimeVersion the runtime's version
	 * @param devices the devices
	 * @param problem why CUDA cannot be used, or {@code null}
	 */
	public CudaReport {
		attempts = List.copyOf(attempts);
		devices = List.copyOf(devices);
	}

	/**
	 * Says whether device memory can be allocated: the runtime loaded and sees at least
	 * one device.
	 * @return whether CUDA is usable
	 */
	public boolean usable() {
		return this.problem == null && !this.devices.isEmpty();
	}

	/**
	 * Formats a CUDA version as {@code major.minor}.
	 * @param version the version as CUDA encodes it ({@code 1000 * major + 10 * minor})
	 * @return for example {@code 13.0}, or {@code none} for 0
	 */
	public static String formatVersion(int version) {
		return (version <= 0) ? "none" : (version / 1000) + "." + ((version % 1000) / 10);
	}

	/**
	 * Says in one line what was found: the devices, the versions and where the runtime
	 * came from, or why CUDA cannot be used.
	 * @return the line
	 */
	public String summary() {
		if (this.library == null) {
			return "none: " + this.problem;
		}
		String versions = "driver " + formatVersion(this.driverVersion) + ", runtime "
				+ formatVersion(this.runtimeVersion) + ", libcudart " + this.library + " (" + this.source + ")";
		if (!usable()) {
			return "not usable: " + this.problem + "; " + versions;
		}
		return this.devices.size() + " device(s) ["
				+ this.devices.stream().map(CudaDevice::toString).collect(Collectors.joining(", ")) + "], " + versions;
	}

}
