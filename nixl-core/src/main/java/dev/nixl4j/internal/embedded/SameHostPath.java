package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.SameHost;
import org.jspecify.annotations.Nullable;

/**
 * The initiator's side of the same-host path to one peer: the regions of the peer's
 * shareable memory it mapped (each once, after the peer accepted a key for it), and why
 * the path is off when it is.
 *
 * <p>
 * For every READ or WRITE the initiator still sends the descriptors with their
 * registrations and keys over the TCP connection, as a {@link Wire#LOCAL} request; the
 * peer checks them exactly as for a TCP transfer and answers, per descriptor, where its
 * registered region lies: the memfd's number and inode in its process, the region's
 * offset in that file, and the region's address and length. The initiator opens
 * {@code /proc/<pid>/fd/<n>}, checks the inode, maps the region (whole pages) and copies.
 */
final class SameHostPath {

	/**
	 * A system property that replaces this process's host identity: a seam for tests of
	 * agents that must look as if they ran on different hosts.
	 */
	static final String IDENTITY_PROPERTY = "nixl4j.embedded.host-identity";

	/** Bytes of one descriptor's answer to a {@link Wire#LOCAL} request. */
	static final int LOCATION_BYTES = 4 + 8 + 8 + 8 + 8;

	private static final long PAGE = 4096;

	/** Why a transfer to a peer does not take the same-host path. */
	enum Fallback {

		/** This agent's EMBEDDED backend was not created with {@code same_host=true}. */
		NOT_REQUESTED,

		/** The peer does not offer the path (its backend lacks the parameter). */
		NOT_OFFERED,

		/** The peer runs on another host or in another pid namespace. */
		OTHER_HOST,

		/**
		 * The system refused to open the peer's memory: no ptrace permission (another
		 * user, or Yama's ptrace_scope), or the peer's process is gone.
		 */
		NO_ACCESS,

	}

	private final @Nullable SameHost peer;

	private @Nullable Arena arena;

	private final Map<Key, MemorySegment> mapped = new ConcurrentHashMap<>();

	private volatile @Nullable Fallback off;

	/** Transfers that took the path. */
	private final java.util.concurrent.atomic.AtomicLong transfers = new java.util.concurrent.atomic.AtomicLong();

	private volatile @Nullable String offReason;

	/** Registrations the peer answered are not in shareable memory: they go over TCP. */
	private final java.util.Set<Long> tcpOnly = ConcurrentHashMap.newKeySet();

	SameHostPath(@Nullable SameHost peer, @Nullable Fallback off) {
		this.peer = peer;
		this.off = off;
		this.offReason = (off != null) ? off.name() : null;
	}

	/** Whether a request to these registrations takes the same-host path. */
	boolean takes(java.util.List<EmbeddedMetadata.RemoteRegion> remote) {
		if (this.off != null) {
			return false;
		}
		for (EmbeddedMetadata.RemoteRegion region : remote) {
			if (this.tcpOnly.contains(region.registration())) {
				return false;
			}
		}
		return true;
	}

	/** Sends later requests for these registrations over TCP. */
	void notShareable(java.util.List<EmbeddedMetadata.RemoteRegion> remote) {
		for (EmbeddedMetadata.RemoteRegion region : remote) {
			this.tcpOnly.add(region.registration());
		}
	}

	/**
	 * This process's identity, compared with a peer's to tell whether both share a host.
	 */
	static String localIdentity() {
		String override = System.getProperty(IDENTITY_PROPERTY);
		if (override != null && !override.isEmpty()) {
			return override;
		}
		try {
			String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII)
				.strip();
			String namespace = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
			return boot + "/" + namespace;
		}
		catch (IOException | UnsupportedOperationException ex) {
			// not Linux, or /proc hidden: no identity, so no peer matches it
			return "unknown-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
		}
	}

	/**
	 * Why a peer cannot be reached over the same-host path, or {@code null} when it can.
	 */
	static @Nullable Fallback check(boolean requested, @Nullable SameHost peer, String localIdentity) {
		if (!requested) {
			return Fallback.NOT_REQUESTED;
		}
		if (peer == null) {
			return Fallback.NOT_OFFERED;
		}
		return peer.identity().equals(localIdentity) ? null : Fallback.OTHER_HOST;
	}

	long transfers() {
		return this.transfers.get();
	}

	void transferred() {
		this.transfers.incrementAndGet();
	}

	@Nullable Fallback off() {
		return this.off;
	}

	@Nullable String offReason() {
		return this.offReason;
	}

	void turnOff(Fallback why, String reason) {
		this.offReason = reason;
		this.off = why;
	}

	/**
	 * Resolves a peer's answer to a LOCAL request into the memory of each descriptor.
	 * @param answer the peer's locations, one per descriptor
	 * @param ranges the descriptors, in the peer's address space
	 * @return the peer's memory of each descriptor, mapped here
	 * @throws IOException when the answer is malformed (a protocol error)
	 * @throws NoAccess when the system refuses to open the peer's memory
	 */
	MemorySegment[] resolve(ByteBuffer answer, java.util.List<MemoryDescriptor> ranges) throws IOException, NoAccess {
		MemorySegment[] segments = new MemorySegment[ranges.size()];
		for (int i = 0; i < segments.length; i++) {
			int fd = answer.getInt();
			long inode = answer.getLong();
			long fileOffset = answer.getLong();
			long regionAddress = answer.getLong();
			long regionLength = answer.getLong();
			MemoryDescriptor range = ranges.get(i);
			if (fd < 0 || fileOffset < 0 || regionLength <= 0 || range.address() < regionAddress
					|| range.address() - regionAddress > regionLength - range.length()) {
				throw new IOException(
						"protocol error: the same-host location of descriptor " + i + " does not hold the descriptor");
			}
			Key key = new Key(fd, inode, fileOffset, regionLength);
			MemorySegment region = this.mapped.get(key);
			if (region == null) {
				region = map(key);
			}
			segments[i] = region.asSlice(range.address() - regionAddress, range.length());
		}
		return segments;
	}

	private synchronized MemorySegment map(Key key) throws IOException, NoAccess {
		MemorySegment known = this.mapped.get(key);
		if (known != null) {
			return known;
		}
		SameHost target = this.peer;
		if (target == null) {
			throw new NoAccess("the peer does not offer the same-host path");
		}
		Arena mappings = this.arena;
		if (mappings == null) {
			mappings = Arena.ofShared();
			this.arena = mappings;
		}
		Path path = Path.of("/proc/" + target.pid() + "/fd/" + key.fd());
		try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
			if (SharedMemory.inode(path) != key.inode()) {
				throw new NoAccess("descriptor " + key.fd() + " of process " + target.pid()
						+ " is no longer the peer's shareable memory");
			}
			long start = key.fileOffset() / PAGE * PAGE;
			long end = key.fileOffset() + key.length();
			long size = channel.size();
			if (end > size || end < key.fileOffset()) {
				throw new IOException("protocol error: the same-host region ends at " + end
						+ ", beyond the peer's shareable memory of " + size + " bytes");
			}
			long mappedEnd = Math.min(size, (end + PAGE - 1) / PAGE * PAGE);
			MemorySegment region = channel.map(MapMode.READ_WRITE, start, mappedEnd - start, mappings)
				.asSlice(key.fileOffset() - start, key.length());
			this.mapped.put(key, region);
			return region;
		}
		catch (java.nio.file.AccessDeniedException | java.nio.file.NoSuchFileException ex) {
			throw new NoAccess("the system refused to open " + path + " (" + ex.getClass().getSimpleName()
					+ "): the same-host path needs permission to ptrace the peer (same user, Yama ptrace_scope)");
		}
	}

	/**
	 * Unmaps the peer's memory; called once no thread copies any more. A later transfer
	 * maps it again.
	 */
	synchronized void close() {
		this.mapped.clear();
		Arena mappings = this.arena;
		this.arena = null;
		if (mappings != null) {
			mappings.close();
		}
	}

	private record Key(int fd, long inode, long fileOffset, long length) {
	}

	/** The system refused to open the peer's memory. */
	static final class NoAccess extends Exception {

		private static final long serialVersionUID = 1L;

		NoAccess(String message) {
			super(message, null, false, false);
		}

		/** Never null: the constructor requires the reason. */
		@Override
		public String getMessage() {
			return java.util.Objects.requireNonNull(super.getMessage());
		}

	}

}
