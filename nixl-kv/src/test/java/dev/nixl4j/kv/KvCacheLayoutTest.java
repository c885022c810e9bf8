package dev.nixl4j.kv;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Layout arithmetic, fingerprints and the shapes a layout refuses.
 */
class KvCacheLayoutTest {

	/** A Llama-3-8B-like shape: 32 layers, 8 KV heads of 128, fp16, 16-token blocks. */
	private static final KvCacheLayout LLAMA = KvCacheLayout.builder()
		.layers(32)
		.blocks(128)
		.blockSize(16)
		.kvHeads(8)
		.headDim(128)
		.dtypeSize(2)
		.build();

	@Test
	void sizesOfARealisticShape() {
		assertThat(LLAMA.partLength()).isEqualTo(32 * 1024);
		assertThat(LLAMA.blockLength()).isEqualTo(32 * 1024);
		assertThat(LLAMA.regionCount()).isEqualTo(64);
		assertThat(LLAMA.descriptorCount()).isEqualTo(8192);
		assertThat(LLAMA.regionLength()).isEqualTo(4L << 20);
		assertThat(LLAMA.totalBytes()).isEqualTo(256L << 20);
	}

	@Test
	void aJointLayoutHasOneRegionPerLayerWithKThenVInEachBlock() {
		KvCacheLayout joint = new KvCacheLayout(32, false, 128, 16, 8, 128, 2, KvBlockOrder.NHD);

		assertThat(joint.regionCount()).isEqualTo(32);
		assertThat(joint.blockLength()).isEqualTo(2 * joint.partLength());
		assertThat(joint.totalBytes()).isEqualTo(LLAMA.totalBytes());
		assertThat(joint.regionIndex(5, KvPart.KV)).isEqualTo(5);
		assertThatThrownBy(() -> joint.regionIndex(5, KvPart.K)).hasMessageContaining("joint KV regions");
	}

	@Test
	void regionsAndDescriptorIndicesFollowVllm() {
		assertThat(LLAMA.regionIndex(0, KvPart.K)).isZero();
		assertThat(LLAMA.regionIndex(0, KvPart.V)).isOne();
		assertThat(LLAMA.regionIndex(31, KvPart.V)).isEqualTo(63);
		assertThat(LLAMA.descriptorIndex(3, 17)).isEqualTo(3 * 128 + 17);
		assertThatThrownBy(() -> LLAMA.regionIndex(0, KvPart.KV)).hasMessageContaining("separate K and V");
		assertThatThrownBy(() -> LLAMA.descriptorIndex(64, 0)).isInstanceOf(IndexOutOfBoundsException.class);
		assertThatThrownBy(() -> LLAMA.descriptorIndex(0, 128)).isInstanceOf(IndexOutOfBoundsException.class);
	}

	@Test
	void elementOffsetsOfBothOrders() {
		KvCacheLayout nhd = new KvCacheLayout(1, true, 1, 16, 8, 128, 2, KvBlockOrder.NHD);

		// HND: [head][token][dim]; NHD: [token][head][dim]
		assertThat(LLAMA.elementOffset(3, 2, 5)).isEqualTo(((2L * 16 + 3) * 128 + 5) * 2);
		assertThat(nhd.elementOffset(3, 2, 5)).isEqualTo(((3L * 8 + 2) * 128 + 5) * 2);
	}

	@Test
	void theFingerprintNamesTheShapeButNotThePoolSize() {
		assertThat(LLAMA.fingerprint())
			.isEqualTo("kv-layout/1;layers=32;kv=split;block=16;heads=8;headDim=128;dtype=2;order=HND");
		assertThat(LLAMA.withNumBlocks(4000).fingerprint()).isEqualTo(LLAMA.fingerprint());
		assertThat(new KvCacheLayout(32, true, 128, 16, 8, 128, 1, KvBlockOrder.HND).fingerprint())
			.isNotEqualTo(LLAMA.fingerprint());
		assertThat(new KvCacheLayout(32, true, 128, 16, 8, 128, 2, KvBlockOrder.NHD).fingerprint())
			.isNotEqualTo(LLAMA.fingerprint());
		assertThat(new KvCacheLayout(32, false, 128, 16, 8, 128, 2, KvBlockOrder.HND).fingerprint())
			.isNotEqualTo(LLAMA.fingerprint());
	}

	@Test
	void aHeadSliceKeepsEverythingButTheHeads() {
		KvCacheLayout slice = LLAMA.headSlice(4);

		assertThat(slice.numKvHeads()).isEqualTo(2);
		assertThat(slice.blockLength()).isEqualTo(LLAMA.blockLength() / 4);
		assertThat(LLAMA.headSlice(1)).isSameAs(LLAMA);
		assertThatThrownBy(() -> LLAMA.headSlice(3)).hasMessageContaining("8 KV heads cannot be split evenly over 3");
		assertThatThrownBy(() -> LLAMA.headSlice(0)).hasMessageContaining("ranks must be positive");
		assertThatThrownBy(() -> new KvCacheLayout(32, true, 128, 16, 8, 128, 2, KvBlockOrder.NHD).headSlice(2))
			.hasMessageContaining("NHD")
			.hasMessageContaining("use HND");
		assertThatThrownBy(() -> new KvCacheLayout(32, false, 128, 16, 8, 128, 2, KvBlockOrder.HND).headSlice(2))
			.hasMessageContaining("joint KV block");
	}

	@Test
	void impossibleShapesAreRefusedNamingTheValue() {
		assertThatThrownBy(() -> new KvCacheLayout(0, true, 128, 16, 8, 128, 2, KvBlockOrder.HND))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessage("numLayers must be positive, was 0");
		assertThatThrownBy(() -> new KvCacheLayout(32, true, -1, 16, 8, 128, 2, KvBlockOrder.HND))
			.hasMessage("numBlocks must be positive, was -1");
		assertThatThrownBy(() -> new KvCacheLayout(32, true, 128, 16, 0, 128, 2, KvBlockOrder.HND))
			.hasMessage("numKvHeads must be positive, was 0");
		assertThatThrownBy(() -> new KvCacheLayout(32, true, 128, 16, 8, 128, 3, KvBlockOrder.HND))
			.hasMessage("dtypeSize must be 1, 2, 4 or 8 bytes, was 3");
		assertThatThrownBy(
				() -> new KvCacheLayout(KvCacheLayout.MAX_LAYERS + 1, true, 1, 16, 8, 128, 2, KvBlockOrder.HND))
			.hasMessage("numLayers must be at most 1024, was 1025");
		assertThatThrownBy(
				() -> new KvCacheLayout(32, true, 128, 16, 8, KvCacheLayout.MAX_HEAD_DIM + 1, 2, KvBlockOrder.HND))
			.hasMessageContaining("headDim must be at most");
		assertThatThrownBy(
				() -> new KvCacheLayout(1024, true, KvCacheLayout.MAX_BLOCKS, 16, 8, 128, 2, KvBlockOrder.HND))
			.hasMessageContaining("descriptors (regions x blocks), more than " + KvCacheLayout.MAX_DESCRIPTORS);
		assertThatThrownBy(() -> new KvCacheLayout(1, true, KvCacheLayout.MAX_BLOCKS, KvCacheLayout.MAX_BLOCK_SIZE,
				KvCacheLayout.MAX_KV_HEADS, KvCacheLayout.MAX_HEAD_DIM, 8, KvBlockOrder.HND))
			.hasMessageContaining("overflow a long");
		assertThatThrownBy(() -> KvCacheLayout.builder().layers(2).blocks(4).blockSize(16).kvHeads(2).build())
			.hasMessage("headDim must be positive, was 0");
	}

}
