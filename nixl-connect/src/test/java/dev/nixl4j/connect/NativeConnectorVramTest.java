package dev.nixl4j.connect;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryType;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.cuda.GpuMemory;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connect layer with {@code cuda:N} descriptors on the native engine: the readable
 * side publishes VRAM with its device, the reader reads it into its own GPU memory, every
 * byte checked by copying back to the host. Skips, saying what the CUDA lookup found,
 * where there is no device (CI included: CI has no GPU).
 */
class NativeConnectorVramTest {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final int BYTES = 1 << 20;

	@BeforeEach
	void requireDeviceAndNixl() {
		CudaReport report = Cuda.report();
		Assumptions.assumeTrue(report.usable(), () -> "no CUDA device: " + report.summary());
		NativeNixl.require();
	}

	@Test
	void aReadableInVramIsReadIntoVramByteForByte() {
		int last = Cuda.deviceCount() - 1;
		long pid = ProcessHandle.current().pid();
		try (Arena arena = Arena.ofConfined();
				Connector a = Connector.builder(config("connect-vram-a-" + pid))
					.peerLinger(Duration.ofMillis(100))
					.build();
				Connector b = Connector.builder(config("connect-vram-b-" + pid))
					.peerLinger(Duration.ofMillis(100))
					.build();
				GpuMemory source = Cuda.allocate(0, BYTES);
				GpuMemory target = Cuda.allocate(last, BYTES)) {
			source.copyFrom(Bytes.pattern(arena, BYTES, 1), 0);
			target.fill(0, BYTES, (byte) 0);
			ReadableOperation readable = a
				.createReadable(Descriptor.of(source.address(), BYTES, Device.cuda(source.device())));
			RdmaMetadata published = RdmaMetadata.fromJson(readable.metadata().toJson());
			assertThat(published.memoryType()).isEqualTo(MemoryType.VRAM);
			assertThat(published.descriptors()).extracting(Descriptor::device).containsExactly(Device.cuda(0));
			ReadOperation read = b.beginRead(published,
					Descriptor.of(target.address(), BYTES, Device.cuda(target.device())));
			read.await(WAIT);
			readable.await(WAIT);
			assertThat(read.status()).isEqualTo(OperationStatus.COMPLETE);
			MemorySegment back = arena.allocate(BYTES);
			target.copyTo(0, back);
			assertThat(Bytes.hasPattern(back, 1)).isTrue();
		}
	}

	private static AgentConfig config(String name) {
		return AgentConfig.builder(name).engine(Engine.NATIVE).build();
	}

}
