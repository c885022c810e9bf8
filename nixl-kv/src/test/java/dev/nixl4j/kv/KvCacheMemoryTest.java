package dev.nixl4j.kv;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The memory check of {@link PagedKvCache}: a cache that cannot fit in the memory the
 * process can have beside its heap is refused before anything is allocated or registered,
 * naming its size and the limit.
 */
class KvCacheMemoryTest {

	/** 64 layers x K, V x 131,072 blocks x 32 KiB: 512 GiB. */
	private static final KvCacheLayout HUGE = KvCacheLayout.builder()
		.layers(64)
		.blocks(131_072)
		.blockSize(16)
		.kvHeads(8)
		.headDim(128)
		.build();

	@Test
	void aCacheLargerThanTheMemoryIsRefusedBeforeAnythingIsAllocated() {
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("kv-memory").engine(Engine.EMBEDDED).build())) {
			KvCacheTooLargeException failure = catchThrowableOfType(KvCacheTooLargeException.class,
					() -> PagedKvCache.builder(agent, HUGE).modelFingerprint("m").build());

			assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
			assertThat(failure.cacheBytes()).isEqualTo(549_755_813_888L).isEqualTo(HUGE.totalBytes());
			assertThat(failure.availableBytes()).isLessThan(failure.cacheBytes());
			assertThat(failure.getMessage()).contains("'kv-memory'", "549755813888 bytes (524288 MiB",
					"64 layers x 2 regions x 131072 blocks x 32768 bytes", "this process can have",
					"blocks of this shape fit");
			// nothing was allocated: a cache that fits is allocated and registered after
			// it
			try (PagedKvCache cache = PagedKvCache.allocate(agent, HUGE.withNumBlocks(2))) {
				assertThat(cache.allocator().capacity()).isEqualTo(2);
			}
		}
	}

	@Test
	void theMessageNamesTheSizeTheLimitTheHeapAndHowManyBlocksFit() {
		KvCacheLayout layout = HUGE.withNumBlocks(1024);
		long perBlock = layout.totalBytes() / 1024;

		KvCacheTooLargeException failure = catchThrowableOfType(KvCacheTooLargeException.class, () -> KvCacheMemory
			.check("a", layout, 300 * perBlock + (1L << 30), 1L << 30, "the cgroup memory limit"));

		assertThat(failure.availableBytes()).isEqualTo(300 * perBlock);
		assertThat(failure.getMessage()).contains(layout.totalBytes() + " bytes", "the cgroup memory limit",
				(1L << 30) + " bytes (1024 MiB, -Xmx)", "at most 300 blocks of this shape fit");
		assertThatNoException()
			.isThrownBy(() -> KvCacheMemory.check("a", layout, layout.totalBytes() + (1L << 30), 1L << 30, "test"));
	}

	@Test
	void aCacheThatFitsIsAllocated() {
		KvCacheLayout small = HUGE.withNumBlocks(2);
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("kv-memory-ok").engine(Engine.EMBEDDED).build());
				PagedKvCache cache = PagedKvCache.builder(agent, small).modelFingerprint("model-a").build()) {
			assertThat(cache.handle().modelFingerprint()).isEqualTo("model-a");
			assertThat(cache.region(0).byteSize()).isEqualTo(small.regionLength());
		}
	}

}
