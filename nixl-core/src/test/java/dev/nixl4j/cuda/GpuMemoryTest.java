package dev.nixl4j.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIndexOutOfBoundsException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Device memory on a real GPU: allocation, copies both ways checked byte for byte, fill,
 * and device-to-device copies. Skips, saying what the CUDA lookup found, where there is
 * no device (CI included: CI has no GPU).
 */
class GpuMemoryTest {

	private static final int BYTES = 1 << 20;

	@BeforeEach
	void requireDevice() {
		CudaReport report = Cuda.report();
		Assumptions.assumeTrue(report.usable(), () -> "no CUDA device: " + report.summary());
	}

	@Test
	void hostToDeviceToHostRoundTripKeepsEveryByte() {
		try (Arena arena = Arena.ofConfined(); GpuMemory memory = Cuda.allocate(0, BYTES)) {
			MemorySegment source = pattern(arena, BYTES, 7);
			MemorySegment back = arena.allocate(BYTES);
			memory.copyFrom(source, 0);
			memory.copyTo(0, back);
			assertThat(back.mismatch(source)).isEqualTo(-1);
		}
	}

	@Test
	void fillSetsEveryByteOfThePart() {
		try (Arena arena = Arena.ofConfined(); GpuMemory memory = Cuda.allocate(0, BYTES)) {
			memory.fill(0, BYTES, (byte) 0);
			memory.fill(4096, 8192, (byte) 0xA5);
			MemorySegment back = arena.allocate(BYTES);
			memory.copyTo(0, back);
			for (int i = 0; i < BYTES; i++) {
				byte expected = (i >= 4096 && i < 4096 + 8192) ? (byte) 0xA5 : 0;
				assertThat(back.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(expected);
			}
		}
	}

	@Test
	void deviceToDeviceCopyKeepsEveryByte() {
		int last = Cuda.deviceCount() - 1;
		try (Arena arena = Arena.ofConfined();
				GpuMemory from = Cuda.allocate(0, BYTES);
				GpuMemory to = Cuda.allocate(last, BYTES)) {
			MemorySegment source = pattern(arena, BYTES, 11);
			from.copyFrom(source, 0);
			to.copyFrom(from, 0, 0, BYTES);
			MemorySegment back = arena.allocate(BYTES);
			to.copyTo(0, back);
			assertThat(back.mismatch(source)).isEqualTo(-1);
		}
	}

	@Test
	void descriptorsAreVramWithTheDeviceOrdinal() {
		int last = Cuda.deviceCount() - 1;
		try (GpuMemory memory = Cuda.allocate(last, BYTES)) {
			assertThat(memory.descriptors().memoryType()).isEqualTo(MemoryType.VRAM);
			assertThat(memory.descriptor().deviceId()).isEqualTo(last);
			assertThat(memory.descriptor().address()).isEqualTo(memory.address()).isNotZero();
			assertThat(memory.descriptor(4096, 4096).address()).isEqualTo(memory.address() + 4096);
		}
	}

	@Test
	void misuseIsRefusedCleanly() {
		GpuMemory memory = Cuda.allocate(0, 4096);
		assertThatIndexOutOfBoundsException().isThrownBy(() -> memory.fill(4000, 200, (byte) 1));
		assertThatIllegalArgumentException().isThrownBy(() -> memory.copyFrom(MemorySegment.ofArray(new byte[16]), 0));
		memory.close();
		memory.close();
		try (Arena arena = Arena.ofConfined()) {
			NixlException closed = catchThrowableOfType(NixlException.class,
					() -> memory.copyTo(0, arena.allocate(16)));
			assertThat(closed.status()).isEqualTo(NixlStatus.CLOSED);
		}
	}

	@Test
	void anOrdinalBeyondTheDevicesIsAnInvalidParameter() {
		CudaException failure = catchThrowableOfType(CudaException.class,
				() -> Cuda.allocate(Cuda.deviceCount(), 4096));
		assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(failure.cudaError()).isEqualTo(101);
	}

	private static MemorySegment pattern(Arena arena, int bytes, int seed) {
		MemorySegment segment = arena.allocate(bytes);
		for (int i = 0; i < bytes; i++) {
			segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * seed + (i >>> 8)));
		}
		return segment;
	}

}
