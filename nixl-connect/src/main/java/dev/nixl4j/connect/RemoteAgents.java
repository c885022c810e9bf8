package dev.nixl4j.connect;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.MetadataFraming;
import dev.nixl4j.metadata.MetadataFraming.ParsedMetadata;
import org.jspecify.annotations.Nullable;

/**
 * The peers a connector's active operations use, reference counted. A peer's metadata is
 * loaded when an operation needs memory that the metadata loaded so far does not describe
 * (the first operation, or one whose peer registered memory since), not again for an
 * identical blob; NIXL replaces a known peer's metadata when the connection information
 * is the same. When the last operation using a peer ends, the peer is invalidated after a
 * linger, unless it was loaded before the connector first used it (then whoever loaded it
 * owns it). The linger lets the notification of the last transfer leave: NIXL hands it to
 * the transport when the transfer completes, and invalidating the peer at once closes the
 * connection it may still be queued on. An operation that starts during the linger takes
 * the peer back without loading it again.
 *
 * <p>
 * Loading, checking and posting happen under one lock, so another operation's load cannot
 * replace the peer's metadata between this operation's check and its transfer's creation.
 */
final class RemoteAgents {

	private static final Logger logger = System.getLogger(RemoteAgents.class.getName());

	private final NixlAgent agent;

	private final Duration linger;

	private final Map<String, Peer> peers = new HashMap<>();

	private long loads;

	RemoteAgents(NixlAgent agent, Duration linger) {
		this.agent = agent;
		this.linger = linger;
	}

	/**
	 * Takes a reference to the peer of {@code remote}, loading its metadata if needed,
	 * and posts the transfer. On failure the reference is given back.
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
	 * Takes a reference to a peer, loading its metadata unless what is loaded describes
	 * the remote descriptors already.
	 */
	synchronized void acquire(String name, ParsedMetadata parsed, byte[] bytes, DescriptorList remote) {
		Peer peer = this.peers.get(name);
		boolean known = peer != null;
		if (peer == null) {
			peer = new Peer(!this.agent.hasRemoteMetadata(name));
		}
		else if (peer.references == 0 && !this.agent.hasRemoteMetadata(name)) {
			peer.loaded = null; // lingering, and dropped meanwhile (a disconnect, or its
								// owner)
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

	/**
	 * Forgets a peer whose transfer failed in the backend (its connection dropped): its
	 * metadata is invalidated now, so that the next operation with it loads the metadata
	 * its RDMA metadata carries again and NIXL connects anew, instead of every later
	 * operation failing on the broken connection.
	 */
	synchronized void disconnected(String name) {
		Peer peer = this.peers.get(name);
		if (peer == null) {
			return;
		}
		peer.loaded = null;
		if (this.agent.isOpen() && this.agent.hasRemoteMetadata(name)) {
			logger.log(Level.INFO, "A transfer of agent ''{0}'' with ''{1}'' failed in the backend: its metadata is"
					+ " loaded again for the next operation", this.agent.name(), name);
			invalidate(name);
		}
	}

	/**
	 * Gives a reference back; after the last one, a peer this connector loaded is
	 * invalidated once the linger passed without a new reference.
	 */
	synchronized void release(String name) {
		Peer peer = this.peers.get(name);
		if (peer == null || peer.references == 0 || --peer.references > 0) {
			return;
		}
		if (!peer.owned || this.linger.isZero()) {
			this.peers.remove(name);
			if (peer.owned) {
				invalidate(name);
			}
			return;
		}
		long idle = ++peer.idleSpells;
		CompletableFuture.delayedExecutor(this.linger.toNanos(), TimeUnit.NANOSECONDS)
			.execute(() -> lingered(name, peer, idle));
	}

	private synchronized void lingered(String name, Peer peer, long idle) {
		if (this.peers.get(name) != peer || peer.references > 0 || peer.idleSpells != idle) {
			return; // taken back, or ended by close
		}
		this.peers.remove(name);
		try {
			invalidate(name);
		}
		catch (RuntimeException ex) {
			logger.log(Level.WARNING,
					"could not invalidate peer ''{0}'' of agent ''{1}'' after its last operation: {2}", name,
					this.agent.name(), ex.getMessage());
		}
	}

	/**
	 * Invalidates at once the peers whose linger has not passed yet; the connector is
	 * closing.
	 */
	synchronized void invalidateIdle() {
		for (Map.Entry<String, Peer> entry : List.copyOf(this.peers.entrySet())) {
			if (entry.getValue().references == 0) {
				this.peers.remove(entry.getKey());
				invalidate(entry.getKey());
			}
		}
	}

	private void invalidate(String name) {
		if (!this.agent.isOpen()) {
			return;
		}
		try {
			this.agent.invalidateRemoteMetadata(name);
		}
		catch (NixlException ex) {
			// gone already: the engine dropped it (a disconnect) or the agent closed
			// meanwhile
			if (ex.status() != NixlStatus.ERROR_NOT_FOUND && ex.status() != NixlStatus.CLOSED) {
				throw ex;
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

	/** The peers in use by at least one operation. */
	synchronized List<String> names() {
		return this.peers.entrySet()
			.stream()
			.filter(entry -> entry.getValue().references > 0)
			.map(Map.Entry::getKey)
			.toList();
	}

	/**
	 * A reference taken and a transfer posted.
	 *
	 * @param peer the peer's agent name
	 * @param transfer the posted transfer
	 */
	record Started(String peer, Transfer transfer) {
	}

	private static final class Peer {

		final boolean owned;

		int references;

		/**
		 * Counts the times the references fell to zero, so a linger that was interrupted
		 * does nothing.
		 */
		long idleSpells;

		@Nullable ParsedMetadata loaded;

		Peer(boolean owned) {
			this.owned = owned;
		}

	}

}
