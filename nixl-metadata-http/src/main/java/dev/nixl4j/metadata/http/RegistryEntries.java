package dev.nixl4j.metadata.http;

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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataValues;
import dev.nixl4j.metadata.http.MetadataRegistryHandler.Response;
import org.jspecify.annotations.Nullable;

/**
 * The entries a {@link MetadataRegistryHandler} holds for its callers, in its backing
 * exchange: each entry created over HTTP has an owner (the digest of its secret), counts
 * against the registry's bounds and its grant's quota, and expires when its owner does
 * not renew it within the TTL. A body being read counts too: its room is reserved,
 * against the bounds and the quota, from the admission of its {@code PUT} until it is
 * stored or given up, so uploads in progress never hold more than their grant may.
 * Requests for an entry's metadata are answered here; its documents
 * ({@link RegistryDocuments}) share the lock, the entries and the byte count.
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

	/**
	 * The room reserved by each grant's uploads in progress; guarded by {@link #lock}.
	 */
	private final Map<ClientGrant, Held> reserved = new HashMap<>();

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

	/**
	 * Admits a {@code PUT} of an entry's metadata before its body is read: the caller
	 * must be the entry's owner (or {@linkplain ClientGrant#reclaims reclaim} it), and
	 * the body's room must fit the registry's bounds and the quota of the grant it counts
	 * against, counting what that grant's entries hold and what its uploads in progress
	 * reserved. A declared length is reserved whole; a body of unknown length may take
	 * what is left, up to the cap.
	 * @return the refusal, or the admitted upload holding its reservation
	 */
	Object beginPut(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long contentLength) {
		if (contentLength > this.maxBytes) {
			return RegistryAnswers.text(413, "the body of " + contentLength + " bytes is over the limit of "
					+ this.maxBytes + " bytes of one entry's metadata");
		}
		this.lock.lock();
		try {
			Object decision = admit(agentName, caller, secretDigest, Math.max(contentLength, 0), System.nanoTime());
			if (decision instanceof Response refused) {
				return refused;
			}
			Plan plan = (Plan) decision;
			int room = (contentLength >= 0) ? (int) contentLength
					: (int) Math.max(0, Math.min(this.maxBytes, plan.room));
			Reservation reservation = reserve(plan.quota, room, plan.newEntry ? 1 : 0);
			return new MetadataUpload(agentName, caller, secretDigest, contentLength, room, reservation);
		}
		finally {
			this.lock.unlock();
		}
	}

	Response put(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long contentLength,
			InputStream in) throws IOException {
		Object begun = beginPut(agentName, caller, secretDigest, contentLength);
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

	private final class MetadataUpload extends RegistryUpload {

		private final String agentName;

		private final ClientGrant caller;

		private final byte @Nullable [] secretDigest;

		private final long contentLength;

		private final Reservation reservation;

		MetadataUpload(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long contentLength,
				int room, Reservation reservation) {
			super(room);
			this.agentName = agentName;
			this.caller = caller;
			this.secretDigest = secretDigest;
			this.contentLength = contentLength;
			this.reservation = reservation;
		}

		@Override
		void release() {
			RegistryEntries.this.release(this.reservation);
		}

		@Override
		Response complete(byte[] body) {
			release();
			if (body.length > this.limit) {
				return tooLong(this.limit, this.contentLength, this.reservation.client);
			}
			AgentMetadata metadata;
			try {
				metadata = MetadataValues.check("send_local_md", this.agentName, body, RegistryEntries.this.maxBytes);
			}
			catch (NixlException ex) {
				return RegistryAnswers.text(400, "the body is not NIXL metadata of agent '" + this.agentName + "'");
			}
			return commit(this.agentName, this.caller, this.secretDigest, body, metadata);
		}

	}

	/**
	 * The answer to a body longer than the room it was given: over the cap, or over what
	 * was left of the registry's or the grant's room when its length was not declared.
	 */
	private Response tooLong(int room, long contentLength, ClientGrant quota) {
		if (contentLength >= 0 || room >= this.maxBytes) {
			return RegistryAnswers.text(413,
					"the body is longer than " + ((contentLength >= 0) ? "its declared " + contentLength + " bytes"
							: "the limit of " + this.maxBytes + " bytes of one entry's metadata"));
		}
		this.lock.lock();
		try {
			long clientRoom = quota.maxTotalBytes - bytesOf(quota) - reservedOf(quota).bytes;
			long registryRoom = this.maxTotalBytes - this.storedBytes - this.reservedBytes;
			if (clientRoom < registryRoom) {
				return RegistryAnswers.overQuota(quota.describe() + " holds its maximum of " + quota.maxTotalBytes
						+ " bytes, uploads in progress included; the body did not fit in the " + room
						+ " bytes left to it");
			}
		}
		finally {
			this.lock.unlock();
		}
		return RegistryAnswers.full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata");
	}

	private Response commit(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, byte[] body,
			AgentMetadata metadata) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			// the decision is taken again: the entry may have changed hands or expired
			// during the read
			Object decision = admit(agentName, caller, secretDigest, body.length, now);
			if (decision instanceof Response refused) {
				return refused;
			}
			Plan plan = (Plan) decision;
			Claim claim = plan.claim;
			if (claim != null && !plan.reclaim) {
				this.store.publish(agentName, metadata);
				this.storedBytes += body.length - claim.bytes;
				claim.bytes = body.length;
				claim.valueDigest = BearerToken.sha256(body);
				claim.expiresAt = now + this.ttlNanos;
				return Response.of(204, ttlHeader(), null);
			}
			if (claim != null) {
				// reclaimed: the earlier holder's value and documents go, and with them
				// its secret
				long renewedAgo = now - (claim.expiresAt - this.ttlNanos);
				this.store.invalidate(agentName);
				drop(agentName, claim);
				logger.log(System.Logger.Level.INFO,
						() -> "The registry entry of agent '" + agentName + "' was reclaimed by " + caller.describe()
								+ ", which owns the name, without its owner secret; its earlier holder ("
								+ claim.client.describe() + ") last published or renewed it "
								+ TimeUnit.NANOSECONDS.toMillis(renewedAgo) + " ms before");
			}
			this.store.publish(agentName, metadata);
			String secret = newSecret();
			byte[] newSecretDigest = BearerToken.sha256(secret.getBytes(StandardCharsets.UTF_8));
			this.claims.put(agentName,
					new Claim(plan.quota, newSecretDigest, BearerToken.sha256(body), body.length, now + this.ttlNanos));
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
	 * What an admitted {@code PUT} of metadata does: replace {@code claim} (its owner's),
	 * reclaim it (a new owner, the earlier holder's value and documents dropped), or
	 * create an entry ({@code claim} {@code null}); {@code quota} is the grant it counts
	 * against, {@code room} the most bytes its body may have.
	 */
	private record Plan(@Nullable Claim claim, boolean reclaim, ClientGrant quota, boolean newEntry, long room) {
	}

	/**
	 * Decides whether a {@code PUT} of {@code size} bytes may go ahead: a {@link Plan}
	 * when it may, the refusal otherwise. Called with the lock held.
	 */
	private Object admit(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long size, long now) {
		sweep(now);
		expireIfDue(agentName, now);
		Claim claim = this.claims.get(agentName);
		if (claim != null) {
			boolean owner = claim.ownedBy(secretDigest);
			if (!owner && !caller.reclaims(agentName, claim.client)) {
				return RegistryAnswers.notOwner(agentName);
			}
			if (stillHolds(agentName, claim)) {
				if (owner) {
					Response refused = fits(claim.client, size, claim.bytes, claim.bytes, false, false);
					return (refused != null) ? refused
							: new Plan(claim, false, claim.client, false, room(claim.client, claim.bytes, claim.bytes));
				}
				long held = claim.bytes + claim.documentBytes();
				boolean moves = claim.client != caller;
				Response refused = fits(caller, size, held, moves ? 0 : held, false, moves);
				return (refused != null) ? refused
						: new Plan(claim, true, caller, moves, room(caller, held, moves ? 0 : held));
			}
		}
		if (isStored(agentName)) {
			return RegistryAnswers.notOwner(agentName);
		}
		Response refused = fits(caller, size, 0, 0, true, true);
		return (refused != null) ? refused : new Plan(null, false, caller, true, room(caller, 0, 0));
	}

	/**
	 * Whether {@code size} more bytes (and maybe a new entry) fit the registry's bounds
	 * and the quota of {@code quota}, once {@code freed} bytes of the registry and
	 * {@code clientFreed} of the grant's are given back: {@code null} when they do, the
	 * refusal otherwise. Reserved room counts as held. Called with the lock held.
	 */
	@Nullable Response fits(ClientGrant quota, long size, long freed, long clientFreed, boolean newRegistryEntry,
			boolean newClientEntry) {
		if (newRegistryEntry && this.claims.size() + this.reservedEntries >= this.maxEntries) {
			return RegistryAnswers.full("the registry holds its maximum of " + this.maxEntries + " entries");
		}
		if (this.storedBytes - freed + this.reservedBytes + size > this.maxTotalBytes) {
			return RegistryAnswers.full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata"
					+ ((freed > 0) ? "; the entry cannot grow" : ""));
		}
		Held reserved = reservedOf(quota);
		if (newClientEntry && entriesOf(quota) + reserved.entries >= quota.maxEntries) {
			return RegistryAnswers.overQuota(quota.describe() + " holds its maximum of " + quota.maxEntries + " entries"
					+ ((reserved.entries > 0) ? ", " + reserved.entries + " of them uploads in progress" : ""));
		}
		if (size > quota.maxTotalBytes) {
			return RegistryAnswers.text(413, "the body of " + size + " bytes is over the quota of " + quota.describe()
					+ ", " + quota.maxTotalBytes + " bytes");
		}
		long held = bytesOf(quota) - clientFreed;
		if (size > 0 && held + reserved.bytes + size > quota.maxTotalBytes) {
			return RegistryAnswers.overQuota(
					quota.describe() + " holds its maximum of " + quota.maxTotalBytes + " bytes (" + held + " held, "
							+ reserved.bytes + " reserved by uploads in progress; " + size + " more do not fit)");
		}
		return null;
	}

	/**
	 * The most bytes a body of unknown length may take: what is left of the registry's
	 * bytes and of the grant's quota. Called with the lock held.
	 */
	long room(ClientGrant quota, long freed, long clientFreed) {
		long registry = this.maxTotalBytes - this.storedBytes + freed - this.reservedBytes;
		long client = quota.maxTotalBytes - bytesOf(quota) + clientFreed - reservedOf(quota).bytes;
		return Math.max(0, Math.min(registry, client));
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

	long bytesOf(ClientGrant client) {
		long bytes = 0;
		for (Claim claim : this.claims.values()) {
			if (claim.client == client) {
				bytes += claim.bytes + claim.documentBytes();
			}
		}
		return bytes;
	}

	/**
	 * Reserves room for a body about to be read, against the registry's bounds and the
	 * grant's quota. Called with the lock held.
	 */
	Reservation reserve(ClientGrant client, long bytes, int entries) {
		Reservation reservation = new Reservation(client, bytes, entries);
		this.reservedBytes += bytes;
		this.reservedEntries += entries;
		Held held = this.reserved.computeIfAbsent(client, grant -> new Held());
		held.bytes += bytes;
		held.entries += entries;
		return reservation;
	}

	/** Gives a reservation back; the second time does nothing. */
	void release(Reservation reservation) {
		this.lock.lock();
		try {
			if (reservation.released) {
				return;
			}
			reservation.released = true;
			this.reservedBytes -= reservation.bytes;
			this.reservedEntries -= reservation.entries;
			Held held = this.reserved.get(reservation.client);
			if (held != null) {
				held.bytes -= reservation.bytes;
				held.entries -= reservation.entries;
				if (held.bytes == 0 && held.entries == 0) {
					this.reserved.remove(reservation.client);
				}
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	Held reservedOf(ClientGrant client) {
		Held held = this.reserved.get(client);
		return (held != null) ? held : Held.NONE;
	}

	/**
	 * Room held for a body being read; guarded by {@link #lock}.
	 */
	static final class Reservation {

		final ClientGrant client;

		final long bytes;

		final int entries;

		boolean released;

		Reservation(ClientGrant client, long bytes, int entries) {
			this.client = client;
			this.bytes = bytes;
			this.entries = entries;
		}

	}

	/** The bytes and entries a grant's uploads in progress reserved. */
	static final class Held {

		static final Held NONE = new Held();

		long bytes;

		int entries;

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

	/** The number of entries created over HTTP, now. */
	int size() {
		this.lock.lock();
		try {
			return this.claims.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The bytes the entries created over HTTP hold, documents included, now. */
	long storedBytes() {
		this.lock.lock();
		try {
			return this.storedBytes;
		}
		finally {
			this.lock.unlock();
		}
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
