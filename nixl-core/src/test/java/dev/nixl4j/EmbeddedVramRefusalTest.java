package dev.nixl4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The embedded engine moves host memory only: GPU memory is refused with one typed
 * answer, before anything is registered, and the agent goes on moving host memory.
 */
class EmbeddedVramRefusalTest {

	@Test
	void registeringVramIsNotSupportedAndTheAgentStaysUsable() {
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("vram-refused").engine(Engine.EMBEDDED).build());
				Arena arena = Arena.ofConfined()) {
			DescriptorList vram = DescriptorList.of(MemoryType.VRAM,
					new MemoryDescriptor(0x7f00_0000_0000L, 1 << 20, 1));
			NixlException refused = catchThrowableOfType(NixlException.class, () -> agent.register(vram));
			assertThat(refused.status()).isEqualTo(NixlStatus.NOT_SUPPORTED);
			assertThat(refused.operation()).isEqualTo("register_mem");
			assertThat(refused.getMessage()).contains("DRAM only, not VRAM").contains("VRAM needs native NIXL");
			assertThat(agent.registrations()).isEmpty();
			MemorySegment host = arena.allocate(4096);
			try (Registration registration = agent.register(host)) {
				assertThat(registration.memoryType()).isEqualTo(MemoryType.DRAM);
			}
		}
	}

	@Test
	void theEmbeddedBackendSaysItServesDramOnly() {
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("vram-backend").engine(Engine.EMBEDDED).build())) {
			assertThat(agent.backends())
				.allSatisfy((backend) -> assertThat(backend.memoryTypes()).containsExactly(MemoryType.DRAM));
		}
	}

}
