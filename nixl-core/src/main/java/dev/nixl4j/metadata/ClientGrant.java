package dev.nixl4j.metadata;

import java.util.List;

/**
 * What a token may do at a {@link MetadataRegistryHandler}: the shared token any name
 * without a quota of its own, a client's token the names that start with its prefixes,
 * within its quota.
 */
final class ClientGrant {

	static final ClientGrant SHARED = new ClientGrant("shared", BearerToken.of("shared"), List.of(""),
			Integer.MAX_VALUE, Long.MAX_VALUE);

	final String id;

	final BearerToken token;

	final List<String> agentNamePrefixes;

	final int maxEntries;

	final long maxTotalBytes;

	ClientGrant(String id, BearerToken token, List<String> agentNamePrefixes, int maxEntries, long maxTotalBytes) {
		this.id = id;
		this.token = token;
		this.agentNamePrefixes = agentNamePrefixes;
		this.maxEntries = maxEntries;
		this.maxTotalBytes = maxTotalBytes;
	}

	boolean permits(String agentName) {
		for (String prefix : this.agentNamePrefixes) {
			if (agentName.startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

	@Override
	public String toString() {
		return "ClientGrant[" + this.id + ", prefixes=" + this.agentNamePrefixes + "]";
	}

}
