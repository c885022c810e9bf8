package dev.nixl4j.internal.embedded;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.Connection;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;

/**
 * The peers whose metadata an embedded agent loaded, by name: where each listens, the
 * memory it registered, and this agent's connection to it.
 */
final class LoadedPeers {

	private final String agent;

	private final Map<String, RemotePeer> peers = new ConcurrentHashMap<>();

	LoadedPeers(String agent) {
		this.agent = agent;
	}

	/**
	 * Loads a peer's metadata: full metadata adds the peer or replaces the memory of one
	 * with the same connection; partial metadata adds memory to a loaded peer.
	 * @param metadata the metadata
	 * @param sameHost whether this agent offers and uses the same-host path
	 * @param hostIdentity this host, as same-host peers name it
	 * @return the peer's name
	 */
	String load(byte[] metadata, boolean sameHost, String hostIdentity) {
		EmbeddedMetadata.Parsed parsed = EmbeddedMetadata.read(metadata);
		String peer = parsed.agent();
		synchronized (this.peers) {
			RemotePeer known = this.peers.get(peer);
			Connection connection = parsed.connection();
			if (connection == null) {
				if (known == null) {
					throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "load_remote_md", this.agent, peer,
							"partial metadata of an agent whose full metadata was never loaded");
				}
				known.regions.addAll(parsed.regions());
			}
			else if (known == null) {
				SameHostPath path = new SameHostPath(connection.sameHost(),
						SameHostPath.check(sameHost, connection.sameHost(), hostIdentity));
				this.peers.put(peer, new RemotePeer(peer, connection, parsed.regions(), path));
			}
			else if (known.connection.sameAs(connection)) {
				known.regions.clear();
				known.regions.addAll(parsed.regions());
			}
			else {
				throw new NixlException(NixlStatus.ERROR_BACKEND, "load_remote_md", this.agent, peer,
						"metadata of an agent "
								+ "of this name is already loaded with other connection information (a restarted peer?); "
								+ "invalidate it first");
			}
		}
		return peer;
	}

	boolean contains(String remoteAgent) {
		return this.peers.containsKey(remoteAgent);
	}

	/**
	 * Returns a loaded peer.
	 * @param operation the operation that needs it
	 * @param remoteAgent the peer's name
	 * @return the peer
	 * @throws NixlException {@link NixlStatus#ERROR_NOT_FOUND} when its metadata is not
	 * loaded
	 */
	RemotePeer get(String operation, String remoteAgent) {
		RemotePeer peer = this.peers.get(remoteAgent);
		if (peer == null) {
			throw new NixlException(NixlStatus.ERROR_NOT_FOUND, operation, this.agent, remoteAgent,
					"no metadata of agent '" + remoteAgent + "' is loaded");
		}
		return peer;
	}

	/** Whether the peer is still the one loaded under its name. */
	boolean isLoaded(RemotePeer peer) {
		return this.peers.get(peer.name) == peer;
	}

	void invalidate(String remoteAgent) {
		RemotePeer peer;
		synchronized (this.peers) {
			peer = this.peers.remove(remoteAgent);
		}
		if (peer == null) {
			throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "invalidate_remote_md", this.agent, remoteAgent,
					"no metadata of this agent is loaded");
		}
		peer.close("the metadata of '" + remoteAgent + "' was invalidated");
	}

	/**
	 * Resolves descriptors to the memory a peer registered.
	 * @param operation the operation that needs them
	 * @param peer the peer
	 * @param descriptors the descriptors
	 * @return the regions with the registration ids and keys to present
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for a descriptor
	 * outside the peer's registered memory
	 */
	List<RemoteRegion> regions(String operation, RemotePeer peer, List<MemoryDescriptor> descriptors) {
		List<RemoteRegion> regions = new ArrayList<>(descriptors.size());
		for (int i = 0; i < descriptors.size(); i++) {
			RemoteRegion region = peer.find(descriptors.get(i));
			if (region == null) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, this.agent, peer.name,
						"remote descriptor " + i + " is not inside memory that '" + peer.name + "' registered");
			}
			regions.add(region);
		}
		return regions;
	}

	/** Fails this agent's connections to peers that stayed silent past the limit. */
	void checkDeadlines(long now, Duration limit) {
		for (RemotePeer peer : this.peers.values()) {
			PeerConnection link = peer.current();
			if (link != null) {
				link.check(now, limit);
			}
		}
	}

	/** Closes the connection to every peer and forgets them: the agent closes. */
	void close(String why) {
		for (RemotePeer peer : this.peers.values()) {
			peer.close(why);
		}
		this.peers.clear();
	}

}
