package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.ShareableMemory;
import org.jspecify.annotations.Nullable;

/**
 * Memory that an embedded agent's same-host peers can map: each allocation is a
 * {@code memfd} (an anonymous file in memory) mapped into this process. While the
 * allocation lives, its file descriptor stays open, so a peer that was told its number
 * and inode (only after presenting the key of a registration inside it) can open it
 * through {@code /proc/<pid>/fd/<n>}, which Linux allows only to processes that may
 * ptrace this one. Closing the arena unmaps the memory here and closes the descriptor; a
 * peer's mapping keeps the pages until the peer unmaps them.
 */
public final class SharedMemory implements ShareableMemory.Allocator {

	private static final long PAGE = 4096;

	private static final int MFD_CLOEXEC = 1;

	/** Live allocations by start address. */
	private static final ConcurrentSkipListMap<Long, Allocation> allocations = new ConcurrentSkipListMap<>();

	/** Creates the allocator; {@link java.util.ServiceLoader} calls it. */
	public SharedMemory() {
	}

	@Override
	public MemorySegment allocate(Arena arena, long bytes) {
		return map(arena, bytes);
	}

	/**
	 * Allocates shareable memory, zeroed, page aligned.
	 * @param arena the arena whose closing unmaps it and closes its file
	 * @param bytes its size, at least 1
	 * @return the memory
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED} where memfd is not available
	 * (not Linux), {@link NixlStatus#ERROR_BACKEND} when the system refuses the memory
	 */
	static MemorySegment map(Arena arena, long bytes) {
		if (bytes <= 0) {
			throw new IllegalArgumentException("shareable memory needs at least 1 byte, not " + bytes);
		}
		long size = (bytes + PAGE - 1) / PAGE * PAGE;
		int fd = Native.memfdCreate();
		boolean done = false;
		try {
			Native.ftruncate(fd, size);
			MemorySegment mapped;
			try (FileChannel channel = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ,
					StandardOpenOption.WRITE)) {
				mapped = channel.map(MapMode.READ_WRITE, 0, size, arena);
			}
			long inode = inode(Path.of("/proc/self/fd/" + fd));
			Allocation allocation = new Allocation(fd, inode, mapped.address(), size);
			// the descriptor closes with the arena, after the memory is no longer
			// reachable here
			MemorySegment.NULL.reinterpret(arena, (ignored) -> {
				allocations.remove(allocation.address(), allocation);
				Native.close(fd);
			});
			allocations.put(allocation.address(), allocation);
			done = true;
			return mapped.asSlice(0, bytes);
		}
		catch (IOException ex) {
			throw new NixlException(NixlStatus.ERROR_BACKEND, "allocate_shareable", null, null,
					"shareable memory of " + bytes + " bytes cannot be mapped: " + ex.getMessage(), ex);
		}
		finally {
			if (!done) {
				Native.close(fd);
			}
		}
	}

	/**
	 * The shareable allocation that holds a range, or {@code null} if the range is not
	 * (wholly) inside one.
	 */
	static @Nullable Allocation find(long address, long length) {
		Map.Entry<Long, Allocation> entry = allocations.floorEntry(address);
		if (entry == null) {
			return null;
		}
		Allocation allocation = entry.getValue();
		return (address + length <= allocation.address() + allocation.size()) ? allocation : null;
	}

	static long inode(Path path) throws IOException {
		return ((Number) Files.getAttribute(path, "unix:ino")).longValue();
	}

	/**
	 * One shareable allocation.
	 *
	 * @param fd its memfd in this process
	 * @param inode the memfd's inode, so a peer can tell it opened this file and not a
	 * later one that reused the number
	 * @param address where it is mapped here
	 * @param size its size, whole pages
	 */
	record Allocation(int fd, long inode, long address, long size) {
	}

	/** The three libc functions it needs, with errno captured. */
	private static final class Native {

		private static final Linker linker = Linker.nativeLinker();

		private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");

		private static final VarHandle errno = Linker.Option.captureStateLayout()
			.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

		private static final @Nullable MethodHandle memfdCreate = find("memfd_create",
				FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));

		private static final @Nullable MethodHandle ftruncate = find("ftruncate",
				FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));

		private static final @Nullable MethodHandle close = find("close",
				FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

		private static @Nullable MethodHandle find(String name, FunctionDescriptor descriptor) {
			return linker.defaultLookup()
				.find(name)
				.map((symbol) -> linker.downcallHandle(symbol, descriptor, ERRNO))
				.orElse(null);
		}

		static int memfdCreate() {
			MethodHandle handle = require(memfdCreate, "memfd_create");
			try (Arena arena = Arena.ofConfined()) {
				MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
				int fd = (int) handle.invokeExact(state, arena.allocateFrom("nixl4j-embedded"), MFD_CLOEXEC);
				if (fd < 0) {
					throw failed("memfd_create", (int) errno.get(state, 0L));
				}
				return fd;
			}
			catch (NixlException ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		}

		static void ftruncate(int fd, long size) {
			MethodHandle handle = require(ftruncate, "ftruncate");
			try (Arena arena = Arena.ofConfined()) {
				MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
				int result = (int) handle.invokeExact(state, fd, size);
				if (result != 0) {
					throw failed("ftruncate", (int) errno.get(state, 0L));
				}
			}
			catch (NixlException ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		}

		static void close(int fd) {
			MethodHandle handle = close;
			if (handle == null) {
				return;
			}
			try (Arena arena = Arena.ofConfined()) {
				MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
				int ignored = (int) handle.invokeExact(state, fd);
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		}

		private static MethodHandle require(@Nullable MethodHandle handle, String name) {
			if (handle == null) {
				throw new NixlException(NixlStatus.NOT_SUPPORTED, "allocate_shareable", null, null,
						"shareable memory needs Linux's " + name + ", which this system's C library lacks");
			}
			return handle;
		}

		private static NixlException failed(String function, int code) {
			return new NixlException(NixlStatus.ERROR_BACKEND, "allocate_shareable", null, null,
					function + " failed with errno " + code + " (ENOMEM 12, EMFILE 24: out of memory or of file "
							+ "descriptors)");
		}

	}

}
