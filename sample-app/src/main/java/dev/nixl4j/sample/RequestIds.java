package dev.nixl4j.sample;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;

import dev.nixl4j.kv.KvTransferParams;
import org.jspecify.annotations.Nullable;

/**
 * Request ids follow the KV helpers' rule ({@link KvTransferParams#requireRequestId}); a
 * request that breaks it is answered 400. Ids the decode worker makes are random, so that
 * nobody can take the id of a request that is still to come.
 */
public final class RequestIds {

	private static final String GENERATED_PREFIX = "gen-";

	private static final int GENERATED_BYTES = 16;

	private static final SecureRandom random = new SecureRandom();

	private RequestIds() {
	}

	/**
	 * Makes a request id that cannot be predicted: {@code gen-} and 128 random bits from
	 * a {@link SecureRandom}, as 32 hexadecimal digits.
	 * @return the id
	 */
	public static String generate() {
		byte[] bytes = new byte[GENERATED_BYTES];
		random.nextBytes(bytes);
		return GENERATED_PREFIX + HexFormat.of().formatHex(bytes);
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
