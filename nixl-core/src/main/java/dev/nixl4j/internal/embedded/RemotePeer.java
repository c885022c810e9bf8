package dev.nixl4j.internal.embedded;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.Connection;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import org.jspecify.annotations.Nullable;

/**
 * A peer whose metadata an embedded agent loaded: where it listens, what it registered,
 * and the TCP connection to it once one was needed.
 */
final class RemotePeer {

	final String name;

	final Connection connection;

	/** The peer's instance id, looked up on every in-process post. */
	final String instanceId;

	final List<RemoteRegion> regions = new CopyOnWriteArrayList<>();

	private volatile @Nullable PeerConnection link;

	/** The same-host path to the peer, or why it is off. */
	final SameHostPath sameHost;

	RemotePeer(String name, Connection connection, List<RemoteRegion> regions, SameHostPath sameHost) {
		this.name = name;
		this.connection = connection;
		this.sameHost = sameHost;
		this.instanceId = connection.instanceId();
		this.regions.addAll(regions);
	}

	/** The region holding a range, with the range in place of the region's bounds. */
	@Nullable RemoteRegion find(MemoryDescriptor range) {
		for (RemoteRegion region : this.regions) {
			if (range.isInside(region.descriptor())) {
				return new RemoteRegion(range, region.registration(), region.key());
			}
		}
		return null;
	}

	/**
	 * Returns the open connection to the peer, opening a new one if there is none or it
	 * failed.
	 */
	synchronized PeerConnection link(EmbeddedDriver owner) {
		if (this.link == null || this.link.isDead()) {
			this.link = new PeerConnection(owner, this);
		}
		return this.link;
	}

	/**
	 * The connection to the peer, if one was opened; read without the lock by the
	 * watchdog.
	 */
	@Nullable PeerConnection current() {
		return this.link;
	}

	synchronized void close(String why) {
		if (this.link != null) {
			this.link.close(why);
			this.link = null;
		}
		// no thread of the connection copies any more: unmap the peer's memory
		this.sameHost.close();
	}

}
