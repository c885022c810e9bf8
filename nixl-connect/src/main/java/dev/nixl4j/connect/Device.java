package dev.nixl4j.connect;

import java.util.Objects;

import dev.nixl4j.MemoryType;

/**
 * Where memory lives: the host, or a CUDA device with its id. Host memory is NIXL's
 * {@link MemoryType#DRAM}, CUDA memory is {@link MemoryType#VRAM} with the device id as
 * NIXL's device id. On the wire (Dynamo's {@code device} field) a device is {@code "cpu"}
 * or {@code "cuda:<id>"}.
 *
 * @param kind host or CUDA
 * @param id the CUDA device id; 0 for the host
 */
public record Device(Kind kind, int id) {

	/** The host (CPU memory). */
	public static final Device HOST = new Device(Kind.HOST, 0);

	/**
	 * Validates the device.
	 * @param kind host or CUDA
	 * @param id the device id
	 */
	public Device {
		Objects.requireNonNull(kind, "kind");
		if (id < 0) {
			throw new IllegalArgumentException("device id must not be negative, was " + id);
		}
		if (kind == Kind.HOST && id != 0) {
			throw new IllegalArgumentException("the host device has id 0, was " + id);
		}
	}

	/**
	 * Returns a CUDA device.
	 * @param id the CUDA device id
	 * @return the device
	 */
	public static Device cuda(int id) {
		return new Device(Kind.CUDA, id);
	}

	/**
	 * Returns the NIXL memory type of memory on this device.
	 * @return {@link MemoryType#DRAM} for the host, {@link MemoryType#VRAM} for CUDA
	 */
	public MemoryType memoryType() {
		return (this.kind == Kind.HOST) ? MemoryType.DRAM : MemoryType.VRAM;
	}

	/**
	 * Returns the name on the wire.
	 * @return {@code "cpu"} or {@code "cuda:<id>"}
	 */
	public String wireName() {
		return (this.kind == Kind.HOST) ? "cpu" : "cuda:" + this.id;
	}

	/**
	 * Parses a name from the wire.
	 * @param name {@code "cpu"} or {@code "cuda:<id>"}
	 * @return the device
	 * @throws IllegalArgumentException when the name is neither
	 */
	public static Device ofWireName(String name) {
		if (name.equals("cpu")) {
			return HOST;
		}
		if (name.startsWith("cuda:") && name.length() > 5 && name.length() <= 15) {
			String digits = name.substring(5);
			if (digits.chars().allMatch(c -> c >= '0' && c <= '9')
					&& (digits.length() == 1 || digits.charAt(0) != '0')) {
				long id = Long.parseLong(digits);
				if (id <= Integer.MAX_VALUE) {
					return cuda((int) id);
				}
			}
		}
		throw new IllegalArgumentException("device must be \"cpu\" or \"cuda:<id>\", was \"" + name + "\"");
	}

	@Override
	public String toString() {
		return wireName();
	}

	/** Kinds of device. */
	public enum Kind {

		/** Host memory. */
		HOST,
		/** Memory of a CUDA device. */
		CUDA

	}

}
