package dev.nixl4j.connect;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.engine.MetadataFraming;
import dev.nixl4j.engine.MetadataFraming.ParsedMetadata;
import org.jspecify.annotations.Nullable;

/**
 * The peers a connector's active operations use, reference counted. A peer's metadata is loaded
 * when an operation needs memory that the metadata loaded so far does not describe (the first
 * operation, or one whose peer registered memory since), not again for an identical blob; NIXL
 * replaces a known peer's metadata when the connection information is the same. When the last
 * operation using a peer ends, the peer is invalidated, unless it was loaded before the connector
 * first used it (then whoever loaded it owns it).
 *
 * <p>Loading, checking and posting happen under one lock, so another operation's load cannot
 * replace the peer's metadata between this operation's check and its transfer's creation.
 */
final class RemoteAgents {

	private final NixlAgent agent;

	private final Map<String, Peer> peers = new HashMap<>();

	private long loads;

	RemoteAgents(NixlAgent agent) {
		this.agent = agent;
	}

	/**
	 * Takes a reference to the peer of {@code remote}, loading its metadata if needed, and posts
	 * the transfer. On failure the reference is given back.
	 */
	Started begin(String operation, RdmaMetadata remote, XferOp op, DescriptorList local, byte[] notification) {
		byte[] bytes = remote.nixlMetadata().toByteArray();
		MetadataFraming.ParsedMetadata parsed;
		try {
			parsed = MetadataFraming.parse(bytes);
		}
		catch (NixlException ex) {
			throw new NixlException(ex.status(), operation, this.agent.name(), null,
					"the nixl_metadata of the RDMA metadata is not NIXL agent metadata: " + ex.getMessage(), ex);
		}
		String name = parsed.agentName();
		if (name.equals(this.agent.name())) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, this.agent.name(), name,
					"the RDMA metadata describes this connector's own agent; pair operations of two connectors");
		}
		DescriptorList remoteList = new DescriptorList(remote.memoryType(),
				remote.descriptors().stream().map(Descriptor::toMemoryDescriptor).toList());
		synchronized (this) {
			acquire(name, parsed, bytes, remoteList);
			try {
				Transfer transfer = this.agent.transfer(op, local, remoteList, name, notification);
				return new Started(name, transfer);
			}
			catch (RuntimeException ex) {
				try {
					release(name);
				}
				catch (RuntimeException inner) {
					ex.addSuppressed(inner);
				}
				throw ex;
			}
		}
	}

	/**
	 * Takes a reference to a peer, loading its metadata unless what is loaded describes the
	 * remote descriptors already.
	 */
	synchronized void acquire(String name, ParsedMetadata parsed, byte[] bytes, DescriptorList remote) {
		Peer peer = this.peers.get(name);
		boolean known = peer != null;
		if (peer == null) {
			peer = new Peer(!this.agent.hasRemoteMetadata(name));
		}
		if (peer.loaded == null || !covers(peer.loaded, remote)) {
			this.agent.loadRemoteMetadata(AgentMetadata.of(bytes));
			peer.loaded = parsed;
			this.loads++;
		}
		if (!known) {
			this.peers.put(name, peer);
		}
		peer.references++;
	}

	private static boolean covers(MetadataFraming.ParsedMetadata loaded, DescriptorList remote) {
		for (MemoryDescriptor descriptor : remote.descriptors()) {
			if (!loaded.covers(null, remote.memoryType().code(), descriptor.address(), descriptor.length(),
					descriptor.deviceId())) {
				return false;
			}
		}
		return true;
	}

	/** Gives a reference back; the last one invalidates the peer if this connector loaded it. */
	synchronized void release(String name) {
		Peer peer = this.peers.get(name);
		if (peer == null || --peer.references > 0) {
			return;
		}
		this.peers.remove(name);
		if (peer.owned && this.agent.isOpen()) {
			try {
				this.agent.invalidateRemoteMetadata(name);
			}
			catch (NixlException ex) {
				// gone already: the engine dropped it (a disconnect) or the agent closed meanwhile
				if (ex.status() != NixlStatus.ERROR_NOT_FOUND && ex.status() != NixlStatus.CLOSED) {
					throw ex;
				}
			}
		}
	}

	/** How many operations use a peer now. */
	synchronized int references(String name) {
		Peer peer = this.peers.get(name);
		return (peer != null) ? peer.references : 0;
	}

	/** How many times this connector loaded metadata of any peer. */
	synchronized long loads() {
		return this.loads;
	}

	/** The peers in use. */
	synchronized List<String> names() {
		return List.copyOf(this.peers.keySet());
	}

	/**
	 * A reference taken and a transfer posted.
	 * @param peer the peer's agent name
	 * @param transfer the posted transfer
	 */
	record Started(String peer, Transfer transfer) {
	}

	private static final class Peer {

		final boolean owned;

		int references;

		@Nullable ParsedMetadata loaded;

		Peer(boolean owned) {
			this.owned = owned;
		}

	}

}
