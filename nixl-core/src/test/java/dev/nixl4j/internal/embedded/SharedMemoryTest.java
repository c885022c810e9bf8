package dev.nixl4j.internal.embedded;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import dev.nixl4j.ShareableMemory;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link ShareableMemory}: a memfd mapped here, known to the engine while its arena is
 * open and gone (unmapped, its descriptor closed) once the arena closes.
 */
class SharedMemoryTest {

	@Test
	void memoryIsAMemfdKnownToTheEngineUntilItsArenaCloses() throws Exception {
		SharedMemory.Allocation allocation;
		try (Arena arena = Arena.ofShared()) {
			MemorySegment memory = ShareableMemory.allocate(arena, 10_000);
			assertThat(memory.byteSize()).isEqualTo(10_000);
			assertThat(memory.address() % 4096).as("page aligned").isZero();
			assertThat(memory.mismatch(arena.allocate(10_000))).as("zeroed").isEqualTo(-1);
			allocation = SharedMemory.find(memory.address() + 100, 1000);
			assertThat(allocation).isNotNull();
			assertThat(allocation.size()).as("whole pages").isEqualTo(12_288);
			assertThat(SharedMemory.find(memory.address(), 12_289)).as("a range past its end").isNull();
			Path file = Path.of("/proc/self/fd/" + allocation.fd());
			assertThat(Files.readSymbolicLink(file).toString()).startsWith("/memfd:");
			assertThat(SharedMemory.inode(file)).isEqualTo(allocation.inode());
			// what is written here is in the file a peer maps
			memory.set(ValueLayout.JAVA_LONG, 64, 0x1122334455667788L);
			try (var channel = java.nio.channels.FileChannel.open(file)) {
				java.nio.ByteBuffer read = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder());
				channel.read(read, 64);
				assertThat(read.getLong(0)).isEqualTo(0x1122334455667788L);
			}
		}
		assertThat(SharedMemory.find(allocation.address(), 1)).isNull();
		Path closed = Path.of("/proc/self/fd/" + allocation.fd());
		assertThat(!Files.exists(closed) || !Files.readSymbolicLink(closed).toString().startsWith("/memfd:nixl4j"))
			.as("its descriptor is closed")
			.isTrue();
	}

	@Test
	void aSizeBelowOneByteIsRefused() {
		try (Arena arena = Arena.ofConfined()) {
			assertThatIllegalArgumentException().isThrownBy(() -> ShareableMemory.allocate(arena, 0))
				.withMessageContaining("at least 1 byte");
		}
	}

}
