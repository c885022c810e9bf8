package dev.nixl4j.sample;

import java.util.Objects;

import dev.nixl4j.kv.KvTransferParams;
import org.jspecify.annotations.Nullable;

/**
 * Request ids follow the KV helpers' rule ({@link KvTransferParams#requireRequestId}); a
 * request that breaks it is answered 400.
 */
public final class RequestIds {

	private RequestIds() {
	}

	/**
	 * Checks a request id.
	 * @param requestId the id
	 * @return the id
	 * @throws SampleException (400) naming what is wrong
	 */
	public static String require(@Nullable String requestId) {
		try {
			return KvTransferParams.requireRequestId(requestId);
		}
		catch (IllegalArgumentException ex) {
			throw SampleException.badRequest(Objects.requireNonNullElse(ex.getMessage(), ex.toString()));
		}
	}

}
