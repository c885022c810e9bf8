package dev.nixl4j.metadata.http;

import java.util.List;

/**
 * What a token may do at a {@link MetadataRegistryHandler}: the shared token any name, a
 * client's token the names that start with its prefixes; each within its quota of entries
 * and bytes, which counts what its entries hold and what its uploads in progress
 * reserved.
 */
final class ClientGrant {

	final String id;

	final BearerToken token;

	final List<String> agentNamePrefixes;

	final int maxEntries;

	final long maxTotalBytes;

	private final boolean shared;

	private ClientGrant(String id, BearerToken token, List<String> agentNamePrefixes, int maxEntries,
			long maxTotalBytes, boolean shared) {
		this.id = id;
		this.token = token;
		this.agentNamePrefixes = agentNamePrefixes;
		this.maxEntries = maxEntries;
		this.maxTotalBytes = maxTotalBytes;
		this.shared = shared;
	}

	ClientGrant(String id, BearerToken token, List<String> agentNamePrefixes, int maxEntries, long maxTotalBytes) {
		this(id, token, agentNamePrefixes, maxEntries, maxTotalBytes, false);
	}

	/**
	 * The grant of the shared token: every name, within its own quota.
	 */
	static ClientGrant shared(BearerToken token, int maxEntries, long maxTotalBytes) {
		return new ClientGrant("shared token", token, List.of(""), maxEntries, maxTotalBytes, true);
	}

	boolean isShared() {
		return this.shared;
	}

	boolean permits(String agentName) {
		for (String prefix : this.agentNamePrefixes) {
			if (agentName.startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether this grant may replace an entry without its owner secret: a client's token
	 * owns the names of its prefixes, so it takes back an entry it created (a process of
	 * the client that restarted under a fixed name has lost the secret) or one the shared
	 * token created under its prefixes. The shared token reclaims nothing.
	 * @param agentName the entry's name
	 * @param holder the grant the entry counts against now
	 */
	boolean reclaims(String agentName, ClientGrant holder) {
		return !this.shared && permits(agentName) && (holder == this || holder.shared);
	}

	/** How refusals name the grant. */
	String describe() {
		return this.shared ? "the shared token" : "client '" + this.id + "'";
	}

	@Override
	public String toString() {
		return "ClientGrant[" + this.id + ", prefixes=" + this.agentNamePrefixes + "]";
	}

}
