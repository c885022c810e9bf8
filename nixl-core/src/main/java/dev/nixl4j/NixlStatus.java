package dev.nixl4j;

/**
 * Outcome codes of NIXL operations: the status codes of NIXL's C API, plus the conditions
 * that nixl4j itself detects before or around a native call.
 *
 * <p>
 * NIXL's C API folds many distinct C++ errors (not posted, mismatch, not allowed, remote
 * disconnect, canceled) into {@link #ERROR_BACKEND}; the message of the
 * {@link NixlException} carries what is known beyond the code.
 */
public enum NixlStatus {

	/** The operation completed. */
	SUCCESS(0),
	/** The operation is still in progress (not an error). */
	IN_PROGRESS(1),
	/** A parameter was rejected. */
	ERROR_INVALID_PARAM(-1),
	/** The backend (for example UCX) reported a failure. */
	ERROR_BACKEND(-2),
	/** A native object was used in a state that does not allow the call. */
	ERROR_INVALID_STATE(-3),
	/**
	 * NIXL caught an unexpected C++ exception, or polling a transfer threw unexpectedly.
	 */
	ERROR_EXCEPTION(-4),
	/** Telemetry was requested but not captured. */
	ERROR_NO_TELEMETRY(-5),
	/** Agent metadata not loaded, or no backend serves the request. */
	ERROR_NOT_FOUND(-6),

	/** The object was already closed. */
	CLOSED(Integer.MIN_VALUE),
	/**
	 * The agent failed: one of its internal threads (for example the progress loop) could
	 * not go on, so it can no longer move data. See {@link NixlAgent#failure()}.
	 */
	FAILED(Integer.MIN_VALUE),
	/** A deadline passed before the operation finished. */
	TIMEOUT(Integer.MIN_VALUE),
	/** A transfer stayed in progress beyond the agent's stall limit and was cancelled. */
	STALLED(Integer.MIN_VALUE),
	/** A transfer was cancelled by its owner. */
	CANCELLED(Integer.MIN_VALUE),
	/**
	 * A resource is still in use (for example a registration under an in-flight
	 * transfer).
	 */
	BUSY(Integer.MIN_VALUE),
	/** Metadata bytes failed nixl4j's structural check of NIXL's serialization. */
	INVALID_METADATA(Integer.MIN_VALUE),
	/** The native NIXL library could not be found, loaded or used. */
	LIBRARY_UNAVAILABLE(Integer.MIN_VALUE),
	/**
	 * The JVM denies nixl4j native access, so it cannot call NIXL: the JVM runs with
	 * {@code --illegal-native-access=deny}, or nixl4j is a named module that was not
	 * granted access. Enabling it ({@code --enable-native-access=ALL-UNNAMED} on the
	 * class path, {@code =dev.nixl4j.core} on the module path, or
	 * {@code Enable-Native-Access: ALL-UNNAMED} in an executable jar's manifest) lifts
	 * it. {@link Engine#AUTO} then uses the embedded engine.
	 */
	NATIVE_ACCESS_DENIED(Integer.MIN_VALUE),
	/**
	 * A service the operation depends on (a metadata exchange, a peer's listener) could
	 * not be reached.
	 */
	UNAVAILABLE(Integer.MIN_VALUE),
	/**
	 * Admission control refused a transfer before the engine saw it: a limit on the
	 * transfers in flight was reached, or transfers to the peer are suspended after
	 * repeated failures. Nothing moved; the same transfer may be posted again later. See
	 * {@link TransferRefusedException}.
	 */
	REFUSED(Integer.MIN_VALUE),
	/** The loaded library or engine does not offer the requested feature. */
	NOT_SUPPORTED(Integer.MIN_VALUE),
	/** A native status code this version of nixl4j does not know. */
	UNKNOWN(Integer.MIN_VALUE);

	private final int code;

	NixlStatus(int code) {
		this.code = code;
	}

	/**
	 * Returns the C API status code, or {@link Integer#MIN_VALUE} for statuses that
	 * nixl4j detects itself.
	 * @return the native code
	 */
	public int code() {
		return this.code;
	}

	/**
	 * Maps a status code returned by {@code libnixl_capi} to its constant.
	 * @param code the native code
	 * @return the matching status, {@link #UNKNOWN} when the code is not known
	 */
	public static NixlStatus ofCode(int code) {
		return switch (code) {
			case 0 -> SUCCESS;
			case 1 -> IN_PROGRESS;
			case -1 -> ERROR_INVALID_PARAM;
			case -2 -> ERROR_BACKEND;
			case -3 -> ERROR_INVALID_STATE;
			case -4 -> ERROR_EXCEPTION;
			case -5 -> ERROR_NO_TELEMETRY;
			case -6 -> ERROR_NOT_FOUND;
			default -> UNKNOWN;
		};
	}

}
