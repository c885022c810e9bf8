package dev.nixl4j.sample;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;

import dev.nixl4j.kv.KvBlockOrder;
import dev.nixl4j.kv.KvCacheLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The values both workers compute: every byte of a block, padding included, is checked,
 * and a change of any one byte is found and located.
 */
class ToyModelTests {

	static List<KvCacheLayout> layouts() {
		KvCacheLayout.Builder base = KvCacheLayout.builder()
			.layers(2)
			.blocks(4)
			.blockSize(4)
			.kvHeads(2)
			.headDim(6)
			.dtypeSize(2);
		return List.of(base.build(), base.splitKv(false).build(), base.splitKv(true).order(KvBlockOrder.NHD).build());
	}

	@ParameterizedTest
	@MethodSource("layouts")
	void everyByteOfABlockIsChecked(KvCacheLayout layout) {
		ToyModel model = new ToyModel(layout);
		int[] tokens = { 5, 9, 1_000_000, 0, 7, 7 }; // 6 tokens: block 1 is half padding
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment block = arena.allocate(layout.blockLength());
			for (int region = 0; region < layout.regionCount(); region++) {
				for (int b = 0; b < 2; b++) {
					model.fill(block, region, tokens, b);
					assertThat(model.check(block, region, tokens, b)).isNull();
					for (long i = 0; i < block.byteSize(); i++) {
						byte original = block.get(ValueLayout.JAVA_BYTE, i);
						block.set(ValueLayout.JAVA_BYTE, i, (byte) (original ^ 0x10));
						assertThat(model.check(block, region, tokens, b))
							.as("byte %d of region %d block %d", i, region, b)
							.isNotNull()
							.contains("region " + region, "block " + b + " of the request");
						block.set(ValueLayout.JAVA_BYTE, i, original);
					}
				}
			}
		}
	}

	@Test
	void valuesDependOnTokenPositionAndRegion() {
		KvCacheLayout layout = layouts().getFirst();
		ToyModel model = new ToyModel(layout);
		long crc = model.expectedCrc32c(new int[] { 1, 2, 3 });
		assertThat(model.expectedCrc32c(new int[] { 1, 2, 3 })).isEqualTo(crc);
		assertThat(model.expectedCrc32c(new int[] { 1, 2, 4 })).isNotEqualTo(crc);
		assertThat(model.expectedCrc32c(new int[] { 2, 1, 3 })).isNotEqualTo(crc);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment block = arena.allocate(layout.blockLength());
			model.fill(block, 0, new int[] { 1, 2, 3 }, 0);
			assertThat(model.check(block, 1, new int[] { 1, 2, 3 }, 0)).isNotNull();
		}
		assertThat(ToyModel.generate(crc, 3, 20)).hasSize(20)
			.isEqualTo(ToyModel.generate(crc, 3, 20))
			.isNotEqualTo(ToyModel.generate(crc + 1, 3, 20));
	}

	@Test
	void promptsAreTokenizedAndChecked() {
		assertThat(ToyModel.tokens("aé", null, 10)).containsExactly('a', 0xc3, 0xa9);
		assertThat(ToyModel.tokens(null, List.of(0, ToyModel.VOCABULARY - 1), 10)).containsExactly(0,
				ToyModel.VOCABULARY - 1);
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> ToyModel.tokens(null, null, 10))
			.withMessageContaining("not neither");
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> ToyModel.tokens("x", List.of(1), 10))
			.withMessageContaining("not both");
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> ToyModel.tokens("", null, 10))
			.withMessage("the prompt is empty");
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> ToyModel.tokens("x".repeat(11), null, 10))
			.withMessageContaining("11 tokens", "at most 10");
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> ToyModel.tokens(null, List.of(1, -1), 10))
			.withMessageContaining("token 1 is -1");
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> RequestIds.require("a:b"))
			.withMessageContaining("':'");
	}

	@Test
	void aPromptTooLongIsRefusedBeforeItsIdsAreAllocated() {
		// 2^31 - 1 ids in a list that holds one: an int[] of that length cannot be
		// allocated at all.
		List<Integer> endless = Collections.nCopies(Integer.MAX_VALUE, 7);
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> ToyModel.tokens(null, endless, 8192))
			.withMessageContaining("2147483647 tokens", "at most 8192");
	}

	@Test
	void aTextPromptHasOneTokenPerUtf8Byte() {
		// 1-, 2-, 3- and 4-byte characters, and unpaired surrogates (encoded as '?').
		for (String text : List.of("a", "\u00e9", "\u20ac", "\ud83d\ude00", "a\ud800b", "\udc00",
				"x\ud83d\ude00\ud83d")) {
			byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
			assertThat(ToyModel.tokens(text, null, bytes.length)).as(text).hasSize(bytes.length);
			assertThatExceptionOfType(SampleException.class).as(text)
				.isThrownBy(() -> ToyModel.tokens(text, null, bytes.length - 1))
				.withMessageContaining("has " + bytes.length + " tokens");
		}
	}

}
