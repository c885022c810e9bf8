package dev.nixl4j.internal.ffm;

import java.lang.foreign.MemorySegment;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * How a call into NIXL's C API fails: a status other than success, a function the loaded
 * library does not export, or anything else a downcall throws, each becomes a
 * {@link NixlException} naming the operation, the agent and the peer.
 */
final class NativeCalls {

	/** {@code NIXL_CAPI_SUCCESS}. */
	static final int SUCCESS = 0;

	/** {@code NIXL_CAPI_ERROR_NOT_FOUND}. */
	static final int NOT_FOUND = -6;

	private NativeCalls() {
	}

	/**
	 * Throws unless {@code rc} is success.
	 * @param rc the status a function returned
	 * @param operation the operation, as {@link NixlException} names it
	 * @param agent the local agent
	 * @param remoteAgent the peer, if the call has one
	 * @param detail what went wrong, or empty
	 * @throws NixlException of the status
	 */
	static void check(int rc, String operation, String agent, @Nullable String remoteAgent, String detail) {
		if (rc != SUCCESS) {
			throw new NixlException(NixlStatus.ofCode(rc), operation, agent, remoteAgent,
					(detail.isEmpty() ? "" : detail + " ") + "(status " + rc + ")");
		}
	}

	/**
	 * Returns the exception to throw for what a downcall (or the code around it) threw: a
	 * {@link RuntimeException} as it is, a missing function as a new
	 * {@link NixlStatus#NOT_SUPPORTED} exception created here, in the caller's frame,
	 * anything else checked wrapped. An {@link Error} is thrown.
	 * @param ex what was thrown
	 * @param operation the operation
	 * @param agent the local agent, if there is one yet
	 * @param remoteAgent the peer, if the call has one
	 * @return the exception to throw
	 */
	static RuntimeException failure(Throwable ex, String operation, @Nullable String agent,
			@Nullable String remoteAgent) {
		if (ex instanceof RuntimeException runtime) {
			return runtime;
		}
		if (ex instanceof Error error) {
			throw error;
		}
		if (ex instanceof MissingSymbolException missing) {
			return new NixlException(NixlStatus.NOT_SUPPORTED, operation, agent, remoteAgent,
					"the loaded NIXL library (" + missing.library() + ") does not export " + missing.symbol());
		}
		return new NixlException(NixlStatus.UNKNOWN, operation, agent, remoteAgent, ex.toString(), ex);
	}

	/**
	 * Reads a C string.
	 * @param pointer the string, or {@code NULL}
	 * @return the string, empty for {@code NULL}
	 */
	static String cString(MemorySegment pointer) {
		if (pointer.equals(MemorySegment.NULL)) {
			return "";
		}
		return pointer.reinterpret(Integer.MAX_VALUE).getString(0);
	}

}
