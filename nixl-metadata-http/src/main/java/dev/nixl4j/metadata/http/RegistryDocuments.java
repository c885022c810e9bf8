package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.http.MetadataRegistryHandler.Response;
import org.jspecify.annotations.Nullable;

/**
 * The documents of a {@link MetadataRegistryHandler}'s entries
 * ({@link MetadataExchange#publishDocument}): each belongs to its agent's entry, needs
 * that entry's owner secret to change, counts against the registry's bytes and the quota
 * of the entry's grant (a body being read from its admission on), and goes away with the
 * entry. Runs under the lock of the {@link RegistryEntries} it is given.
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

	/**
	 * Admits a {@code PUT} of a document before its body is read, reserving its room
	 * against the registry's bounds and the quota of the entry's grant.
	 * @return the refusal, or the admitted upload holding its reservation
	 */
	Object beginPut(String agentName, String kind, byte @Nullable [] secretDigest, long contentLength) {
		int cap = MetadataExchange.MAX_DOCUMENT_BYTES;
		if (contentLength > cap) {
			return documentTooLarge(kind);
		}
		this.entries.lock.lock();
		try {
			Object decision = admitDocument(agentName, kind, secretDigest, Math.max(contentLength, 0),
					System.nanoTime());
			if (decision instanceof Response refused) {
				return refused;
			}
			Claim claim = (Claim) decision;
			long replaced = claim.documentBytes(kind);
			int room = (contentLength >= 0) ? (int) contentLength
					: (int) Math.min(cap, this.entries.room(claim.client, replaced, replaced));
			return new DocumentUpload(agentName, kind, secretDigest, contentLength, room,
					this.entries.reserve(claim.client, room, 0));
		}
		finally {
			this.entries.lock.unlock();
		}
	}

	Response put(String agentName, String kind, byte @Nullable [] secretDigest, long contentLength, InputStream in)
			throws IOException {
		Object begun = beginPut(agentName, kind, secretDigest, contentLength);
		if (begun instanceof Response refused) {
			return refused;
		}
		RegistryUpload upload = (RegistryUpload) begun;
		try {
			return upload.complete(in.readNBytes(upload.limit + 1));
		}
		finally {
			upload.release();
		}
	}

	private final class DocumentUpload extends RegistryUpload {

		private final String agentName;

		private final String kind;

		private final byte @Nullable [] secretDigest;

		private final long contentLength;

		private final RegistryEntries.Reservation reservation;

		DocumentUpload(String agentName, String kind, byte @Nullable [] secretDigest, long contentLength, int room,
				RegistryEntries.Reservation reservation) {
			super(room);
			this.agentName = agentName;
			this.kind = kind;
			this.secretDigest = secretDigest;
			this.contentLength = contentLength;
			this.reservation = reservation;
		}

		@Override
		void release() {
			RegistryDocuments.this.entries.release(this.reservation);
		}

		@Override
		Response complete(byte[] body) {
			release();
			RegistryEntries entries = RegistryDocuments.this.entries;
			if (body.length > this.limit) {
				if (this.contentLength >= 0 || this.limit >= MetadataExchange.MAX_DOCUMENT_BYTES) {
					return documentTooLarge(this.kind);
				}
				entries.lock.lock();
				try {
					Claim claim = entries.claims.get(this.agentName);
					if (claim != null) {
						Response refused = entries.fits(claim.client, body.length, claim.documentBytes(this.kind),
								claim.documentBytes(this.kind), false, false);
						if (refused != null) {
							return refused;
						}
					}
				}
				finally {
					entries.lock.unlock();
				}
				return RegistryAnswers
					.full("the registry holds its maximum of " + entries.maxTotalBytes + " bytes of metadata");
			}
			entries.lock.lock();
			try {
				// the decision is taken again: the entry may have changed hands or
				// expired
				// during the read
				Object decision = admitDocument(this.agentName, this.kind, this.secretDigest, body.length,
						System.nanoTime());
				if (decision instanceof Response refused) {
					return refused;
				}
				Claim claim = (Claim) decision;
				entries.store.publishDocument(this.agentName, this.kind, body);
				Integer previous = claim.documents.put(this.kind, body.length);
				entries.storedBytes += body.length - ((previous != null) ? previous : 0);
				return Response.of((previous != null) ? 204 : 201, Map.of(), null);
			}
			finally {
				entries.lock.unlock();
			}
		}

	}

	/**
	 * Decides whether a {@code PUT} of a document of {@code size} bytes may go ahead: the
	 * agent's claim when it may, the refusal otherwise. Called with the lock held.
	 */
	private Object admitDocument(String agentName, String kind, byte @Nullable [] secretDigest, long size, long now) {
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
		long replaced = claim.documentBytes(kind);
		Response refused = this.entries.fits(claim.client, size, replaced, replaced, false, false);
		return (refused != null) ? refused : claim;
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
