package dev.nixl4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ServiceLoader;

import org.jspecify.annotations.Nullable;

/**
 * Memory that the {@link Engine#EMBEDDED embedded engine} can lend to peers in other
 * processes on the same host without copying it through TCP.
 *
 * <p>
 * An embedded agent with {@link EmbeddedOptions#sameHost()} on (or whose {@code EMBEDDED}
 * backend was created with the parameter {@code same_host=true}) offers its same-host
 * peers (same boot id and pid namespace, with the option on too) a direct path to every
 * registration that lies inside memory allocated here: the peer presents the
 * registration's key over the agent's TCP connection for every transfer, as over TCP, and
 * once the key and the range are accepted it maps that registered region (whole pages
 * around it) of the file behind this memory and copies with {@link MemorySegment#copy}.
 * Registrations of other memory keep moving over TCP. Linux only (it uses
 * {@code memfd_create}).
 *
 * <p>
 * What a peer reaches: a peer that presented a registration's key keeps its mapping of
 * that region until it closes its agent or invalidates this agent's metadata; this agent
 * cannot revoke it, and deregistering does not unmap it. The descriptor of the memory can
 * also be opened through {@code /proc/<pid>/fd} by any process that the system lets
 * ptrace this one (same user, and Yama's {@code ptrace_scope} permitting): such a process
 * could read this process's memory anyway, with or without nixl4j.
 */
public final class ShareableMemory {

	private ShareableMemory() {
	}

	/**
	 * Allocates zeroed, page-aligned memory that same-host peers of an embedded agent can
	 * map once they present a key of a registration inside it.
	 * @param arena the arena whose closing unmaps the memory here and closes its file
	 * (peers' mappings stay until they unmap them)
	 * @param bytes the size, at least 1
	 * @return the memory, to register like any other
	 * @throws IllegalArgumentException when {@code bytes} is not positive
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED} where the system has no
	 * {@code memfd_create}, {@link NixlStatus#ERROR_BACKEND} when it refuses the memory
	 */
	public static MemorySegment allocate(Arena arena, long bytes) {
		if (bytes <= 0) {
			throw new IllegalArgumentException("shareable memory needs at least 1 byte, not " + bytes);
		}
		Allocator allocator = Holder.ALLOCATOR;
		if (allocator == null) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, "allocate_shareable", null, null,
					"no shareable memory allocator is on the class path (nixl-core provides one)");
		}
		return allocator.allocate(arena, bytes);
	}

	/**
	 * Service-provider interface of the allocator behind {@link #allocate}, found with
	 * {@link ServiceLoader}: how the public API reaches the embedded engine's
	 * implementation without depending on its package. nixl-core provides it;
	 * applications do not implement or call it.
	 */
	public interface Allocator {

		/**
		 * Allocates shareable memory.
		 * @param arena the arena whose closing unmaps it
		 * @param bytes the size, positive
		 * @return the memory
		 */
		MemorySegment allocate(Arena arena, long bytes);

	}

	private static final class Holder {

		static final @Nullable Allocator ALLOCATOR = ServiceLoader
			.load(Allocator.class, Allocator.class.getClassLoader())
			.findFirst()
			.orElse(null);

	}

}
