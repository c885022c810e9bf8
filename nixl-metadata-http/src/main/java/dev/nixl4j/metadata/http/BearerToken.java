package dev.nixl4j.metadata.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import org.jspecify.annotations.Nullable;

/**
 * A shared bearer token that the {@code Authorization} header of a request must carry, as
 * the metadata registry and the endpoints beside it require: {@code Bearer <token>}, the
 * scheme in any case (RFC 7235), the token compared in constant time through its SHA-256
 * digest, so neither its bytes nor its length show in the time a check takes. Only the
 * digest is kept; instances never print the token.
 */
public final class BearerToken {

	private static final String SCHEME = "Bearer ";

	private final byte[] digest;

	private BearerToken(String token) {
		this.digest = sha256(token.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Creates the check of a token.
	 * @param token the token; surrounding white space is ignored
	 * @return the check
	 * @throws IllegalArgumentException when the token is blank
	 */
	public static BearerToken of(String token) {
		if (token.isBlank()) {
			throw new IllegalArgumentException("a bearer token must not be blank");
		}
		return new BearerToken(token.trim());
	}

	/**
	 * Whether an {@code Authorization} header carries this token.
	 * @param authorization the header's value, or {@code null} when the request had none
	 * @return {@code true} for {@code Bearer <token>} with this token
	 */
	public boolean matches(@Nullable String authorization) {
		byte @Nullable [] presented = presented(authorization);
		return presented != null && matchesDigest(presented);
	}

	/**
	 * Returns the digest of the token an {@code Authorization} header carries, to check
	 * it against several tokens ({@link #matchesDigest}) with one digest.
	 * @param authorization the header's value, or {@code null} when the request had none
	 * @return the digest, or {@code null} when the header is not {@code Bearer <token>}
	 */
	static byte @Nullable [] presented(@Nullable String authorization) {
		if (authorization == null || !authorization.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
			return null;
		}
		return sha256(authorization.substring(SCHEME.length()).trim().getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Whether a digest made by {@link #presented} is this token's, compared in constant
	 * time.
	 * @param presented the digest
	 * @return {@code true} when it is
	 */
	boolean matchesDigest(byte[] presented) {
		return MessageDigest.isEqual(this.digest, presented);
	}

	static byte[] sha256(byte[] bytes) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(bytes);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	@Override
	public String toString() {
		return "BearerToken[hidden]";
	}

}
