package dev.nixl4j.internal.embedded;

import java.io.Closeable;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import org.jspecify.annotations.Nullable;

/**
 * The memory an embedded agent registered, by registration id, and the one check every
 * peer's request passes before memory is touched ({@link #access}): the registration id
 * and key the peer presents must name a registration that holds the descriptor.
 */
final class LocalRegistrations {

	private final Map<Long, RegisteredMemory> registrations = new ConcurrentHashMap<>();

	/** Registers memory under an id the agent gave out. */
	void add(RegisteredMemory memory) {
		this.registrations.put(memory.id(), memory);
	}

	void remove(long registration) {
		RegisteredMemory memory = this.registrations.remove(registration);
		if (memory != null) {
			memory.close();
		}
	}

	/**
	 * Describes every registered region, with the id and key a peer presents for it.
	 * @return the regions
	 */
	List<RemoteRegion> regions() {
		List<RemoteRegion> regions = new ArrayList<>();
		for (RegisteredMemory memory : this.registrations.values()) {
			for (MemoryDescriptor region : memory.regions()) {
				regions.add(new RemoteRegion(region, memory.id(), memory.key()));
			}
		}
		return regions;
	}

	/**
	 * Describes the wanted regions that were registered as they are, with the id and key
	 * a peer presents for each.
	 * @param wanted the regions
	 * @return those registered
	 */
	List<RemoteRegion> regions(List<MemoryDescriptor> wanted) {
		List<RemoteRegion> described = new ArrayList<>();
		for (MemoryDescriptor region : wanted) {
			for (RegisteredMemory memory : this.registrations.values()) {
				if (memory.regions().contains(region)) {
					described.add(new RemoteRegion(region, memory.id(), memory.key()));
					break;
				}
			}
		}
		return described;
	}

	/**
	 * Returns the registered memory of a descriptor of this agent.
	 * @param descriptor the descriptor
	 * @return a segment over it, or {@code null} when it is not inside registered memory
	 */
	@Nullable MemorySegment slice(MemoryDescriptor descriptor) {
		for (RegisteredMemory memory : this.registrations.values()) {
			MemorySegment segment = memory.slice(descriptor);
			if (segment != null) {
				return segment;
			}
		}
		return null;
	}

	/**
	 * Says where the memory of a same-host peer's request lies, for the peer to map it;
	 * called once {@link #access} accepted the request's keys and ranges.
	 * @param regions the request's descriptors
	 * @return one location per descriptor (see {@link Wire}), or {@code null} when some
	 * of the memory is not shareable
	 */
	byte @Nullable [] sameHostLocations(List<RemoteRegion> regions) {
		ByteBuffer locations = ByteBuffer.allocate(regions.size() * SameHostPath.LOCATION_BYTES);
		for (RemoteRegion region : regions) {
			RegisteredMemory memory = this.registrations.get(region.registration());
			MemoryDescriptor registered = (memory != null) ? memory.regionOf(region.descriptor()) : null;
			if (registered == null) {
				return null;
			}
			SharedMemory.Allocation shared = SharedMemory.find(registered.address(), registered.length());
			if (shared == null) {
				return null;
			}
			locations.putInt(shared.fd())
				.putLong(shared.inode())
				.putLong(registered.address() - shared.address())
				.putLong(registered.address())
				.putLong(registered.length());
		}
		return locations.array();
	}

	/**
	 * Resolves a peer's descriptors to this agent's memory and marks the registrations in
	 * use.
	 * @param regions the descriptors with the registration ids and keys the peer
	 * presented
	 * @param connection the peer's connection, cut if it is stuck when the memory is
	 * deregistered
	 * @return the access, to close once the data moved
	 * @throws AccessDenied when a descriptor is outside the registration it names, or the
	 * key is wrong
	 */
	Access access(List<RemoteRegion> regions, @Nullable Closeable connection) throws AccessDenied {
		List<MemorySegment> segments = new ArrayList<>(regions.size());
		List<RegisteredMemory> entered = new ArrayList<>(2);
		Access access = new Access(segments, entered, connection);
		try {
			for (int i = 0; i < regions.size(); i++) {
				RemoteRegion region = regions.get(i);
				RegisteredMemory memory = this.registrations.get(region.registration());
				if (memory == null || !memory.keyMatches(region.key())) {
					throw new AccessDenied(NixlStatus.ERROR_INVALID_PARAM, "descriptor " + i + " names no registration "
							+ "with that key (deregistered memory, or stale or forged metadata)");
				}
				MemorySegment segment = memory.slice(region.descriptor());
				if (segment == null) {
					throw new AccessDenied(NixlStatus.ERROR_INVALID_PARAM,
							"descriptor " + i + " lies outside the memory of the registration it names");
				}
				if (!entered.contains(memory)) {
					if (!memory.enter(connection)) {
						throw new AccessDenied(NixlStatus.ERROR_INVALID_PARAM,
								"descriptor " + i + " names memory that is being deregistered");
					}
					entered.add(memory);
				}
				segments.add(segment);
			}
			return access;
		}
		catch (AccessDenied denied) {
			access.close();
			throw denied;
		}
	}

	/** Closes every registration: the agent closes. */
	void close() {
		for (RegisteredMemory memory : this.registrations.values()) {
			memory.close();
		}
		this.registrations.clear();
	}

	/**
	 * Memory of this agent that a peer's request may touch until the access is closed.
	 */
	record Access(List<MemorySegment> segments, List<RegisteredMemory> entered, @Nullable Closeable connection) {

		void close() {
			for (RegisteredMemory memory : this.entered) {
				memory.exit(this.connection);
			}
		}

	}

	/** A peer's request refused before any memory was touched. */
	static final class AccessDenied extends Exception {

		private static final long serialVersionUID = 1L;

		private final transient NixlStatus status;

		AccessDenied(NixlStatus status, String message) {
			super(message, null, false, false);
			this.status = status;
		}

		/** Never null: the constructor requires the refusal's wording. */
		@Override
		public String getMessage() {
			return Objects.requireNonNull(super.getMessage());
		}

		int status() {
			return this.status.code();
		}

	}

}
