package dev.nixl4j.metadata.http;

import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * An entry of a {@link MetadataRegistryHandler} created over HTTP: its owner secret's
 * digest, the digest of the value its owner stored, its size, its documents' sizes and
 * when it expires; guarded by the lock of the {@link RegistryEntries} that hold it.
 */
final class Claim {

	/** Whose quota the entry counts against. */
	final ClientGrant client;

	private final byte[] secretDigest;

	byte[] valueDigest;

	long bytes;

	long expiresAt;

	/** The sizes of the entry's documents, by kind. */
	final Map<String, Integer> documents = new HashMap<>();

	Claim(ClientGrant client, byte[] secretDigest, byte[] valueDigest, long bytes, long expiresAt) {
		this.client = client;
		this.secretDigest = secretDigest;
		this.valueDigest = valueDigest;
		this.bytes = bytes;
		this.expiresAt = expiresAt;
	}

	long documentBytes() {
		long total = 0;
		for (int size : this.documents.values()) {
			total += size;
		}
		return total;
	}

	long documentBytes(String kind) {
		Integer size = this.documents.get(kind);
		return (size != null) ? size : 0;
	}

	boolean ownedBy(byte @Nullable [] presented) {
		return presented != null && MessageDigest.isEqual(this.secretDigest, presented);
	}

}
