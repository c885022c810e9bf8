package dev.nixl4j.metadata;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataRegistryHandler.Response;
import org.jspecify.annotations.Nullable;

/**
 * The documents of a {@link MetadataRegistryHandler}'s entries
 * ({@link MetadataExchange#publishDocument}): each belongs to its agent's entry, needs
 * that entry's owner secret to change, counts against the registry's bytes and the
 * entry's client's quota, and goes away with the entry. Runs under the lock of the
 * {@link RegistryEntries} it is given.
 */
final class RegistryDocuments {

	private final RegistryEntries entries;

	RegistryDocuments(RegistryEntries entries) {
		this.entries = entries;
	}

	Response get(String agentName, String kind) {
		this.entries.lock.lock();
		try {
			long now = System.nanoTime();
			this.entries.sweep(now);
			this.entries.expireIfDue(agentName, now);
		}
		finally {
			this.entries.lock.unlock();
		}
		byte[] document;
		try {
			document = this.entries.store.fetchDocument(agentName, kind, Duration.ZERO);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT || ex.status() == NixlStatus.NOT_SUPPORTED) {
				return Response.of(404, Map.of(), null);
			}
			throw ex;
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("Content-Type", RegistryEntries.OCTET_STREAM);
		headers.put("Cache-Control", "no-store");
		return Response.of(200, headers, document);
	}

	Response put(String agentName, String kind, byte @Nullable [] secretDigest, long contentLength, InputStream in)
			throws IOException {
		int cap = MetadataExchange.MAX_DOCUMENT_BYTES;
		if (contentLength > cap) {
			return documentTooLarge(kind);
		}
		int room;
		this.entries.lock.lock();
		try {
			Response refused = admitDocument(agentName, kind, secretDigest, Math.max(contentLength, 0),
					System.nanoTime());
			if (refused != null) {
				return refused;
			}
			Claim claim = this.entries.claims.get(agentName);
			long available = this.entries.maxTotalBytes - this.entries.storedBytes - this.entries.reservedBytes
					+ ((claim != null) ? claim.documentBytes(kind) : 0);
			room = (contentLength >= 0) ? (int) contentLength : (int) Math.max(0, Math.min(cap, available));
			this.entries.reservedBytes += room;
		}
		finally {
			this.entries.lock.unlock();
		}
		byte[] body;
		try {
			body = in.readNBytes(room + 1);
		}
		finally {
			this.entries.lock.lock();
			try {
				this.entries.reservedBytes -= room;
			}
			finally {
				this.entries.lock.unlock();
			}
		}
		if (body.length > room) {
			return (room < cap && contentLength < 0)
					? RegistryAnswers
						.full("the registry holds its maximum of " + this.entries.maxTotalBytes + " bytes of metadata")
					: documentTooLarge(kind);
		}
		this.entries.lock.lock();
		try {
			// the decision is taken again: the entry may have changed hands or expired
			// during the read
			Response refused = admitDocument(agentName, kind, secretDigest, body.length, System.nanoTime());
			if (refused != null) {
				return refused;
			}
			Claim claim = Objects.requireNonNull(this.entries.claims.get(agentName));
			this.entries.store.publishDocument(agentName, kind, body);
			Integer previous = claim.documents.put(kind, body.length);
			this.entries.storedBytes += body.length - ((previous != null) ? previous : 0);
			return Response.of((previous != null) ? 204 : 201, Map.of(), null);
		}
		finally {
			this.entries.lock.unlock();
		}
	}

	/**
	 * Decides whether a {@code PUT} of a document of {@code size} bytes may go ahead:
	 * {@code null} when it may (then the agent's claim exists), the refusal otherwise.
	 * Called with the lock held.
	 */
	private @Nullable Response admitDocument(String agentName, String kind, byte @Nullable [] secretDigest, long size,
			long now) {
		this.entries.sweep(now);
		this.entries.expireIfDue(agentName, now);
		Claim claim = this.entries.claims.get(agentName);
		if (claim != null && !claim.ownedBy(secretDigest)) {
			return RegistryAnswers.notOwner(agentName);
		}
		if (claim == null || !this.entries.stillHolds(agentName, claim)) {
			return this.entries.isStored(agentName) ? RegistryAnswers.notOwner(agentName)
					: RegistryAnswers.text(409, "the registry holds no metadata entry of agent '" + agentName
							+ "'; publish its metadata before its documents");
		}
		if (!claim.documents.containsKey(kind)
				&& claim.documents.size() >= MetadataRegistryHandler.MAX_DOCUMENTS_PER_ENTRY) {
			return RegistryAnswers.full("the entry of agent '" + agentName + "' holds its maximum of "
					+ MetadataRegistryHandler.MAX_DOCUMENTS_PER_ENTRY + " documents");
		}
		if (this.entries.storedBytes - claim.documentBytes(kind) + this.entries.reservedBytes
				+ size > this.entries.maxTotalBytes) {
			return RegistryAnswers
				.full("the registry holds its maximum of " + this.entries.maxTotalBytes + " bytes of metadata");
		}
		return this.entries.overClientBytes(claim.client, size - claim.documentBytes(kind));
	}

	Response delete(String agentName, String kind, byte @Nullable [] secretDigest) {
		this.entries.lock.lock();
		try {
			long now = System.nanoTime();
			this.entries.sweep(now);
			this.entries.expireIfDue(agentName, now);
			Claim claim = this.entries.claims.get(agentName);
			if (claim == null) {
				return this.entries.isStored(agentName) ? RegistryAnswers.notOwner(agentName)
						: Response.of(204, Map.of(), null);
			}
			if (!claim.ownedBy(secretDigest)) {
				return RegistryAnswers.notOwner(agentName);
			}
			if (!this.entries.stillHolds(agentName, claim)) {
				return this.entries.isStored(agentName) ? RegistryAnswers.notOwner(agentName)
						: Response.of(204, Map.of(), null);
			}
			Integer size = claim.documents.get(kind);
			if (size == null) {
				return Response.of(204, Map.of(), null);
			}
			InMemoryMetadataExchange memory = inMemoryStore();
			if (memory == null) {
				return RegistryAnswers.text(501,
						"the registry's store cannot remove one document; delete the entry instead");
			}
			memory.removeDocument(agentName, kind);
			claim.documents.remove(kind);
			this.entries.storedBytes -= size;
			return Response.of(204, Map.of(), null);
		}
		finally {
			this.entries.lock.unlock();
		}
	}

	/** The in-memory exchange behind the store, through forwarding wrappers. */
	private @Nullable InMemoryMetadataExchange inMemoryStore() {
		MetadataExchange current = this.entries.store;
		while (current instanceof ForwardingMetadataExchange forwarding) {
			current = forwarding.getDelegate();
		}
		return (current instanceof InMemoryMetadataExchange memory) ? memory : null;
	}

	private static Response documentTooLarge(String kind) {
		return RegistryAnswers.text(413,
				"the document '" + kind + "' is over the limit of " + MetadataExchange.MAX_DOCUMENT_BYTES + " bytes");
	}

	static @Nullable String kindProblem(String kind) {
		try {
			MetadataExchange.requireDocumentKind(kind);
			return null;
		}
		catch (NixlException ex) {
			return "the document kind in the path is refused: it must be 1 to 64 characters of a-z, 0-9, '.' "
					+ "and '-', starting with a letter or digit";
		}
	}

	@Override
	public String toString() {
		return "RegistryDocuments[store=" + this.entries.store + "]";
	}

}
