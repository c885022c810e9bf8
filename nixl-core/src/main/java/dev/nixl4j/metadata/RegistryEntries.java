package dev.nixl4j.metadata;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataRegistryHandler.Response;
import org.jspecify.annotations.Nullable;

/**
 * The entries a {@link MetadataRegistryHandler} holds for its callers, in its backing
 * exchange: each entry created over HTTP has an owner (the digest of its secret), counts
 * against the registry's bounds and its client's quota, and expires when its owner does
 * not renew it within the TTL. Requests for an entry's metadata are answered here; its
 * documents ({@link RegistryDocuments}) share the lock, the entries and the byte count.
 */
final class RegistryEntries {

	/** The handler's logger: the name its users configure covers all of its parts. */
	private static final System.Logger logger = System.getLogger(MetadataRegistryHandler.class.getName());

	static final String OCTET_STREAM = "application/octet-stream";

	private static final int SECRET_BYTES = 32;

	final MetadataExchange store;

	private final int maxBytes;

	private final int maxEntries;

	final long maxTotalBytes;

	private final Duration entryTtl;

	private final long ttlNanos;

	private final long sweepIntervalNanos;

	private final SecureRandom random = new SecureRandom();

	final ReentrantLock lock = new ReentrantLock();

	/** Entries created over HTTP, by agent name; guarded by {@link #lock}. */
	final Map<String, Claim> claims = new HashMap<>();

	/**
	 * Bytes of the entries in {@link #claims}, documents included; guarded by
	 * {@link #lock}.
	 */
	long storedBytes;

	/** Bytes and entries held for bodies being read; guarded by {@link #lock}. */
	long reservedBytes;

	private int reservedEntries;

	private long lastSweep;

	RegistryEntries(MetadataExchange store, int maxBytes, int maxEntries, long maxTotalBytes, Duration entryTtl) {
		this.store = store;
		this.maxBytes = maxBytes;
		this.maxEntries = maxEntries;
		this.maxTotalBytes = maxTotalBytes;
		this.entryTtl = entryTtl;
		this.ttlNanos = entryTtl.toNanos();
		this.sweepIntervalNanos = Math.max(this.ttlNanos / 10, 1);
		this.lastSweep = System.nanoTime();
	}

	Response get(String agentName) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
		}
		finally {
			this.lock.unlock();
		}
		AgentMetadata metadata;
		try {
			metadata = this.store.fetch(agentName, Duration.ZERO);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT) {
				return Response.of(404, Map.of(), null);
			}
			throw ex;
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("Content-Type", OCTET_STREAM);
		headers.put("Cache-Control", "no-store");
		return Response.of(200, headers, metadata.toByteArray());
	}

	Response put(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long contentLength,
			InputStream in) throws IOException {
		if (contentLength > this.maxBytes) {
			return Response.of(413, Map.of(), null);
		}
		int room;
		int newEntries;
		this.lock.lock();
		try {
			Response refused = admit(agentName, caller, secretDigest, Math.max(contentLength, 0), System.nanoTime());
			if (refused != null) {
				return refused;
			}
			Claim claim = this.claims.get(agentName);
			long available = this.maxTotalBytes - this.storedBytes - this.reservedBytes
					+ ((claim != null) ? claim.bytes : 0);
			// a body of unknown length may take what is left of the budget, up to the cap
			room = (contentLength >= 0) ? (int) contentLength : (int) Math.min(this.maxBytes, available);
			newEntries = (claim != null) ? 0 : 1;
			this.reservedBytes += room;
			this.reservedEntries += newEntries;
		}
		finally {
			this.lock.unlock();
		}
		byte[] body;
		try {
			body = in.readNBytes(room + 1);
		}
		finally {
			this.lock.lock();
			try {
				this.reservedBytes -= room;
				this.reservedEntries -= newEntries;
			}
			finally {
				this.lock.unlock();
			}
		}
		if (body.length > room) {
			return (room < this.maxBytes && contentLength < 0)
					? RegistryAnswers
						.full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata")
					: Response.of(413, Map.of(), null);
		}
		AgentMetadata metadata;
		try {
			metadata = MetadataValues.check("send_local_md", agentName, body, this.maxBytes);
		}
		catch (NixlException ex) {
			return Response.of(400, Map.of(), null);
		}
		this.lock.lock();
		try {
			long now = System.nanoTime();
			// the decision is taken again: the entry may have changed hands or expired
			// during the read
			Response refused = admit(agentName, caller, secretDigest, body.length, now);
			if (refused != null) {
				return refused;
			}
			Claim claim = this.claims.get(agentName);
			this.store.publish(agentName, metadata);
			if (claim != null) {
				this.storedBytes += body.length - claim.bytes;
				claim.bytes = body.length;
				claim.valueDigest = BearerToken.sha256(body);
				claim.expiresAt = now + this.ttlNanos;
				return Response.of(204, ttlHeader(), null);
			}
			String secret = newSecret();
			byte[] newSecretDigest = BearerToken.sha256(secret.getBytes(StandardCharsets.UTF_8));
			this.claims.put(agentName,
					new Claim(caller, newSecretDigest, BearerToken.sha256(body), body.length, now + this.ttlNanos));
			this.storedBytes += body.length;
			Map<String, String> headers = ttlHeader();
			headers.put(MetadataRegistryHandler.OWNER_SECRET_HEADER, secret);
			headers.put("Cache-Control", "no-store");
			return Response.of(201, headers, null);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Decides whether a {@code PUT} of {@code size} bytes may go ahead: {@code null} when
	 * it may, the refusal otherwise. Called with the lock held.
	 */
	private @Nullable Response admit(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long size,
			long now) {
		sweep(now);
		expireIfDue(agentName, now);
		Claim claim = this.claims.get(agentName);
		if (claim != null) {
			if (!claim.ownedBy(secretDigest)) {
				return RegistryAnswers.notOwner(agentName);
			}
			if (stillHolds(agentName, claim)) {
				if (this.storedBytes - claim.bytes + this.reservedBytes + size > this.maxTotalBytes) {
					return RegistryAnswers.full("the registry holds its maximum of " + this.maxTotalBytes
							+ " bytes of metadata; the entry cannot grow");
				}
				return overClientBytes(claim.client, size - claim.bytes);
			}
		}
		if (isStored(agentName)) {
			return RegistryAnswers.notOwner(agentName);
		}
		if (this.claims.size() + this.reservedEntries >= this.maxEntries) {
			return RegistryAnswers.full("the registry holds its maximum of " + this.maxEntries + " entries");
		}
		if (this.storedBytes + this.reservedBytes + size > this.maxTotalBytes) {
			return RegistryAnswers
				.full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata");
		}
		if (caller != ClientGrant.SHARED && entriesOf(caller) >= caller.maxEntries) {
			return RegistryAnswers
				.overQuota("client '" + caller.id + "' holds its maximum of " + caller.maxEntries + " entries");
		}
		return overClientBytes(caller, size);
	}

	/**
	 * Refuses {@code growth} more bytes for a client past its quota; {@code null} when
	 * they fit. Called with the lock held.
	 */
	@Nullable Response overClientBytes(ClientGrant client, long growth) {
		if (client == ClientGrant.SHARED || growth <= 0 || bytesOf(client) + growth <= client.maxTotalBytes) {
			return null;
		}
		return RegistryAnswers
			.overQuota("client '" + client.id + "' holds its maximum of " + client.maxTotalBytes + " bytes");
	}

	private int entriesOf(ClientGrant client) {
		int entries = 0;
		for (Claim claim : this.claims.values()) {
			if (claim.client == client) {
				entries++;
			}
		}
		return entries;
	}

	private long bytesOf(ClientGrant client) {
		long bytes = 0;
		for (Claim claim : this.claims.values()) {
			if (claim.client == client) {
				bytes += claim.bytes + claim.documentBytes();
			}
		}
		return bytes;
	}

	Response renew(String agentName, byte @Nullable [] secretDigest) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
			Claim claim = this.claims.get(agentName);
			if (claim == null) {
				return isStored(agentName) ? RegistryAnswers.notOwner(agentName) : Response.of(404, Map.of(), null);
			}
			if (!claim.ownedBy(secretDigest)) {
				return RegistryAnswers.notOwner(agentName);
			}
			if (!isStored(agentName)) {
				// withdrawn from the backing exchange directly: the entry is gone, so is
				// its claim
				drop(agentName, claim);
				return Response.of(404, Map.of(), null);
			}
			claim.expiresAt = now + this.ttlNanos;
			return Response.of(204, ttlHeader(), null);
		}
		finally {
			this.lock.unlock();
		}
	}

	Response delete(String agentName, byte @Nullable [] secretDigest) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
			Claim claim = this.claims.get(agentName);
			if (claim == null) {
				return isStored(agentName) ? RegistryAnswers.notOwner(agentName) : Response.of(204, Map.of(), null);
			}
			if (!claim.ownedBy(secretDigest)) {
				return RegistryAnswers.notOwner(agentName);
			}
			if (!stillHolds(agentName, claim)) {
				return isStored(agentName) ? RegistryAnswers.notOwner(agentName) : Response.of(204, Map.of(), null);
			}
			// withdrawn first: when the store fails, the claim stays and its owner can
			// try again
			this.store.invalidate(agentName);
			drop(agentName, claim);
			return Response.of(204, Map.of(), null);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Withdraws every entry whose owner did not renew it in time, now. Requests do it as
	 * they arrive; a server also calls it every {@link #sweepInterval()}, so that an
	 * entry whose owner died expires (and watchers of the store learn it) within a tenth
	 * of its TTL after its deadline even when no request comes.
	 */
	void expireDue() {
		this.lock.lock();
		try {
			this.lastSweep = System.nanoTime() - this.sweepIntervalNanos;
			sweep(System.nanoTime());
		}
		catch (RuntimeException ex) {
			// the claim stays: the next call or request expires it
			logger.log(System.Logger.Level.WARNING, "Could not expire a registry entry now: {0}", ex.getMessage());
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns how often a server should call {@link #expireDue()}: a tenth of the entry
	 * TTL.
	 * @return the interval
	 */
	Duration sweepInterval() {
		return Duration.ofNanos(this.sweepIntervalNanos);
	}

	/**
	 * Withdraws every expired entry, at most ten times per TTL. Called with the lock
	 * held.
	 */
	void sweep(long now) {
		if (now - this.lastSweep < this.sweepIntervalNanos) {
			return;
		}
		this.lastSweep = now;
		List<String> expired = new ArrayList<>();
		this.claims.forEach((name, claim) -> {
			if (now - claim.expiresAt >= 0) {
				expired.add(name);
			}
		});
		expired.forEach(name -> expireIfDue(name, now));
	}

	/**
	 * Withdraws one entry if its owner did not renew it in time. Called with the lock
	 * held.
	 */
	void expireIfDue(String agentName, long now) {
		Claim claim = this.claims.get(agentName);
		if (claim != null && now - claim.expiresAt >= 0 && stillHolds(agentName, claim)) {
			// withdrawn first: when the store fails, the claim stays and a later request
			// expires it
			this.store.invalidate(agentName);
			drop(agentName, claim);
			logger.log(System.Logger.Level.INFO, () -> "The registry entry of agent '" + agentName
					+ "' expired: its owner did not renew it within " + this.entryTtl);
		}
	}

	/**
	 * Whether the backing exchange still holds the value the claim's owner stored. When
	 * it holds none, or another one published there by other means (the serving
	 * application's own agent of that name), the claim is dropped: the owner may no
	 * longer change or withdraw what is there. Called with the lock held.
	 */
	boolean stillHolds(String agentName, Claim claim) {
		byte @Nullable [] stored = storedValue(agentName);
		if (stored != null && MessageDigest.isEqual(claim.valueDigest, BearerToken.sha256(stored))) {
			return true;
		}
		drop(agentName, claim);
		return false;
	}

	private byte @Nullable [] storedValue(String agentName) {
		try {
			return this.store.fetch(agentName, Duration.ZERO).toByteArray();
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT) {
				return null;
			}
			throw ex;
		}
	}

	private void drop(String agentName, Claim claim) {
		this.claims.remove(agentName);
		this.storedBytes -= claim.bytes + claim.documentBytes();
	}

	boolean isStored(String agentName) {
		if (this.store instanceof InMemoryMetadataExchange memory) {
			return memory.isPublished(agentName);
		}
		try {
			this.store.fetch(agentName, Duration.ZERO);
			return true;
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT) {
				return false;
			}
			throw ex;
		}
	}

	private Map<String, String> ttlHeader() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(MetadataRegistryHandler.ENTRY_TTL_HEADER, Long.toString(Math.max(1, this.entryTtl.toMillis())));
		return headers;
	}

	private String newSecret() {
		byte[] bytes = new byte[SECRET_BYTES];
		this.random.nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	/** Checks a body cap: positive and below {@link Integer#MAX_VALUE}. */
	static int checkMaxBytes(int maxBytes) {
		if (maxBytes <= 0 || maxBytes == Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					"maxBytes must be positive and below Integer.MAX_VALUE, was " + maxBytes);
		}
		return maxBytes;
	}

	/** Checks a cap on entries: positive. */
	static int checkMaxEntries(int maxEntries) {
		if (maxEntries <= 0) {
			throw new IllegalArgumentException("maxEntries must be positive, was " + maxEntries);
		}
		return maxEntries;
	}

	/** Checks a cap on the bytes of all entries: positive. */
	static long checkMaxTotalBytes(long maxTotalBytes) {
		if (maxTotalBytes <= 0) {
			throw new IllegalArgumentException("maxTotalBytes must be positive, was " + maxTotalBytes);
		}
		return maxTotalBytes;
	}

	/** Checks an entry TTL: at least a millisecond. */
	static Duration checkEntryTtl(Duration entryTtl) {
		if (entryTtl.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException("entryTtl must be at least 1 ms, was " + entryTtl);
		}
		return entryTtl;
	}

	@Override
	public String toString() {
		return "RegistryEntries[store=" + this.store + "]";
	}

}
