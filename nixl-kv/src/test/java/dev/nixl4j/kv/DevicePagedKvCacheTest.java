package dev.nixl4j.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.zip.CRC32C;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaException;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link PagedKvCache} in GPU memory, vLLM's layout: one device allocation per region,
 * registered as VRAM with the device ordinal. Without CUDA it gives one typed answer; the
 * tests that need a device skip, saying what the CUDA lookup found.
 */
class DevicePagedKvCacheTest {

	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(2)
		.blocks(8)
		.blockSize(16)
		.kvHeads(2)
		.headDim(64)
		.build();

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void withoutCudaTheCacheIsRefusedWithOneTypedAnswer() {
		CudaReport report = Cuda.report();
		Assumptions.assumeFalse(report.usable(), "this host has a CUDA device: " + report.summary());
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("kv-no-cuda").engine(Engine.EMBEDDED).build())) {
			CudaException refused = catchThrowableOfType(CudaException.class,
					() -> PagedKvCache.builder(agent, LAYOUT).modelFingerprint("").device(0).build());
			assertThat(refused.status()).isIn(NixlStatus.LIBRARY_UNAVAILABLE, NixlStatus.UNAVAILABLE);
			assertThat(agent.registrations()).isEmpty();
		}
	}

	@Test
	void theEmbeddedEngineRefusesADeviceCache() {
		requireDevice();
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("kv-embedded").engine(Engine.EMBEDDED).build())) {
			NixlException refused = catchThrowableOfType(NixlException.class,
					() -> PagedKvCache.builder(agent, LAYOUT).modelFingerprint("").device(0).build());
			assertThat(refused.status()).isEqualTo(NixlStatus.NOT_SUPPORTED);
			assertThat(agent.registrations()).isEmpty();
		}
	}

	@Test
	void aDeviceCacheIsVramWithItsDeviceIdAndMovesBlocksBetweenAgents() {
		requireDevice();
		NativeNixl.require();
		int last = Cuda.deviceCount() - 1;
		long pid = ProcessHandle.current().pid();
		try (Arena arena = Arena.ofConfined();
				NixlAgent producerAgent = nativeAgent("kv-producer-" + pid);
				NixlAgent consumerAgent = nativeAgent("kv-consumer-" + pid);
				PagedKvCache producer = PagedKvCache.builder(producerAgent, LAYOUT)
					.modelFingerprint("m")
					.device(0)
					.build();
				PagedKvCache consumer = PagedKvCache.builder(consumerAgent, LAYOUT)
					.modelFingerprint("m")
					.device(last)
					.build()) {
			assertThat(producer.memoryType()).isEqualTo(MemoryType.VRAM);
			assertThat(consumer.handle().memoryType()).isEqualTo(MemoryType.VRAM);
			assertThat(consumer.handle().deviceId()).isEqualTo(last);
			assertThat(consumer.descriptors(1, 2).descriptors()).extracting(MemoryDescriptor::deviceId)
				.containsOnly((long) last);
			assertThat(catchThrowableOfType(NixlException.class, () -> producer.region(0)).status())
				.isEqualTo(NixlStatus.NOT_SUPPORTED);
			MemorySegment pattern = Bytes.pattern(arena, LAYOUT.regionLength(), 5);
			for (int r = 0; r < LAYOUT.regionCount(); r++) {
				producer.deviceRegion(r).copyFrom(pattern, 0);
				consumer.deviceRegion(r).fill(0, LAYOUT.regionLength(), (byte) 0);
			}
			consumerAgent.loadRemoteMetadata(producerAgent.localMetadata());
			DescriptorList local = consumer.descriptors(3, 4);
			DescriptorList remote = producer.descriptors(3, 4);
			try (Transfer transfer = consumerAgent.transfer(XferOp.READ, local, remote, producerAgent.name(), null)) {
				transfer.await(WAIT);
				assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
			}
			assertThat(consumer.crc32c(3, 1, 0)).isEqualTo(producer.crc32c(3, 1, 0));
			assertThat(consumer.crc32c(4, 1, 0)).isEqualTo(producer.crc32c(4, 1, 0));
			assertThat(consumer.crc32c(5, 1, 0)).isNotEqualTo(producer.crc32c(5, 1, 0));
			CRC32C expected = new CRC32C();
			for (int r = 0; r < LAYOUT.regionCount(); r++) {
				expected.update(pattern.asSlice(3 * LAYOUT.blockLength(), LAYOUT.blockLength()).asByteBuffer());
			}
			assertThat(consumer.crc32c(3, 1, 0)).isEqualTo((int) expected.getValue());
		}
	}

	private static void requireDevice() {
		CudaReport report = Cuda.report();
		Assumptions.assumeTrue(report.usable(), () -> "no CUDA device: " + report.summary());
	}

	private static NixlAgent nativeAgent(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.NATIVE).build());
	}

}
