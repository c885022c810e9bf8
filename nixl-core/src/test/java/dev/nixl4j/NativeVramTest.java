package dev.nixl4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.cuda.GpuMemory;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * GPU memory through the native engine: VRAM registered with its device ids, moved
 * between two agents over UCX (VRAM to VRAM, and host memory to and from VRAM), every
 * byte checked by copying back to the host. Skips, saying what the CUDA lookup found,
 * where there is no device (CI included: CI has no GPU).
 */
class NativeVramTest {

	private static final int BYTES = 1 << 20;

	private static final Duration WAIT = Duration.ofSeconds(30);

	@BeforeEach
	void requireDeviceAndNixl() {
		CudaReport report = Cuda.report();
		Assumptions.assumeTrue(report.usable(), () -> "no CUDA device: " + report.summary());
		NativeNixl.require();
	}

	@ParameterizedTest
	@EnumSource(XferOp.class)
	void vramToVramKeepsEveryByteAndTheDeviceIds(XferOp op) {
		int last = Cuda.deviceCount() - 1;
		try (Arena arena = Arena.ofConfined();
				NixlAgent initiator = agent("vram-initiator-" + op);
				NixlAgent target = agent("vram-target-" + op);
				GpuMemory local = Cuda.allocate(0, BYTES);
				GpuMemory remote = Cuda.allocate(last, BYTES)) {
			local.copyFrom(Bytes.pattern(arena, BYTES, 1), 0);
			remote.copyFrom(Bytes.pattern(arena, BYTES, 2), 0);
			try (Registration localRegistration = initiator.register(local.descriptors());
					Registration remoteRegistration = target.register(remote.descriptors())) {
				assertThat(localRegistration.memoryType()).isEqualTo(MemoryType.VRAM);
				assertThat(remoteRegistration.regions().descriptors()).extracting(MemoryDescriptor::deviceId)
					.containsExactly((long) last);
				initiator.loadRemoteMetadata(target.localMetadata());
				try (Transfer transfer = initiator.transfer(op, local.descriptors(), remote.descriptors(),
						target.name(), null)) {
					transfer.await(WAIT);
					assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
				}
			}
			long expected = (op == XferOp.WRITE) ? 1 : 2;
			assertThat(Bytes.hasPattern(back(arena, local), expected)).as("initiator's VRAM").isTrue();
			assertThat(Bytes.hasPattern(back(arena, remote), expected)).as("target's VRAM").isTrue();
		}
	}

	@ParameterizedTest
	@EnumSource(XferOp.class)
	void hostMemoryToAndFromVramKeepsEveryByte(XferOp op) {
		try (Arena arena = Arena.ofConfined();
				NixlAgent initiator = agent("dram-initiator-" + op);
				NixlAgent target = agent("dram-target-" + op);
				GpuMemory remote = Cuda.allocate(0, BYTES)) {
			MemorySegment local = Bytes.pattern(arena, BYTES, 3);
			remote.copyFrom(Bytes.pattern(arena, BYTES, 4), 0);
			try (Registration localRegistration = initiator.register(local);
					Registration remoteRegistration = target.register(remote.descriptors())) {
				initiator.loadRemoteMetadata(target.localMetadata());
				try (Transfer transfer = initiator.transfer(op, DescriptorList.of(local), remote.descriptors(),
						target.name(), null)) {
					transfer.await(WAIT);
					assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
				}
			}
			long expected = (op == XferOp.WRITE) ? 3 : 4;
			assertThat(Bytes.hasPattern(local, expected)).as("host memory").isTrue();
			assertThat(Bytes.hasPattern(back(arena, remote), expected)).as("VRAM").isTrue();
		}
	}

	private static NixlAgent agent(String name) {
		return NixlAgent
			.create(AgentConfig.builder(name + "-" + ProcessHandle.current().pid()).engine(Engine.NATIVE).build());
	}

	private static MemorySegment back(Arena arena, GpuMemory memory) {
		MemorySegment host = arena.allocate(memory.byteSize());
		memory.copyTo(0, host);
		return host;
	}

}
