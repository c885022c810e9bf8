package dev.nixl4j.sample.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Model files the engine cannot run and arguments it refuses: each gets an exception that
 * names the key, tensor, token or position.
 */
class ModelInputTest {

	@TempDir
	Path directory;

	private void assertShapeError(Consumer<TinyLlamaFile> change, String... parts) throws IOException {
		TinyLlamaFile tiny = new TinyLlamaFile();
		change.accept(tiny);
		Path path = tiny.write(this.directory);
		assertThatExceptionOfType(ModelShapeException.class).isThrownBy(() -> LlamaModel.load(path, 1))
			.withMessageContainingAll(parts);
	}

	@Test
	void refusesModelsOfTheWrongShape() throws IOException {
		assertShapeError((t) -> t.omitKeys.add("llama.block_count"), "llama.block_count", "missing");
		assertShapeError((t) -> t.omitKeys.add("llama.attention.layer_norm_rms_epsilon"),
				"llama.attention.layer_norm_rms_epsilon", "missing");
		assertShapeError((t) -> t.keyValues.put("llama.attention.head_count", 5L), "llama.attention.head_count",
				"divide");
		assertShapeError((t) -> t.keyValues.put("llama.attention.head_count_kv", 3L), "llama.attention.head_count_kv",
				"divide");
		assertShapeError((t) -> t.keyValues.put("llama.block_count", 3L), "blk.2.attn_norm.weight", "missing");
		assertShapeError((t) -> t.keyValues.put("llama.vocab_size", 301L), "llama.vocab_size", "301");
		assertShapeError((t) -> t.keyValues.put("llama.rope.dimension_count", 8L), "llama.rope.dimension_count");
		assertShapeError((t) -> t.keyValues.put("llama.context_length", 0L), "llama.context_length", "0");
		assertShapeError((t) -> t.tensorDimensions.put("blk.1.attn_k.weight", new long[] { 32, 64 }),
				"blk.1.attn_k.weight", "[32, 64]", "[64, 32]");
		assertShapeError((t) -> t.tensorDimensions.put("blk.0.ffn_norm.weight", new long[] { 32 }),
				"blk.0.ffn_norm.weight", "[32]");
		assertShapeError((t) -> t.omitTensors.add("output_norm.weight"), "output_norm.weight", "missing");
		assertShapeError((t) -> t.omitTensors.add("blk.1.ffn_down.weight"), "blk.1.ffn_down.weight", "missing");
	}

	@Test
	void refusesBadArguments() throws IOException {
		Path path = new TinyLlamaFile().write(this.directory);
		assertThatIllegalArgumentException().isThrownBy(() -> LlamaModel.load(path, 0))
			.withMessageContaining("threads");
		try (LlamaModel model = LlamaModel.load(path, 2); Arena arena = Arena.ofShared()) {
			LlamaConfig config = model.config();
			KvPages pages = KvPages.allocate(arena, config, 4, 4);
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { 1, 300, 2 }, 0, pages))
				.withMessageContainingAll("token 300", "index 1", "0..299");
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { -1 }, 0, pages))
				.withMessageContaining("token -1");
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[0], 0, pages))
				.withMessageContaining("no tokens");
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { 1, 2 }, 15, pages))
				.withMessageContainingAll("15..16", "capacity 16");
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { 1 }, -1, pages))
				.withMessageContaining("-1");
			KvPages big = KvPages.allocate(arena, config, 48, 2);
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { 1 }, 64, big))
				.withMessageContainingAll("64..64", "context 64");
			assertThatIllegalArgumentException().isThrownBy(() -> KvPages.allocate(arena, config, 16, 5))
				.withMessageContaining("context");
			assertThatExceptionOfType(IndexOutOfBoundsException.class).isThrownBy(() -> pages.keys(2, 0));
			assertThatExceptionOfType(IndexOutOfBoundsException.class).isThrownBy(() -> pages.values(0, 4));
			KvPages wrongSize = new Delegate(pages) {
				@Override
				public MemorySegment values(int layer, int page) {
					return super.values(layer, page).asSlice(4);
				}
			};
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { 1 }, 0, wrongSize))
				.withMessageContainingAll("pages.values(0, 0)", "508 bytes", "512");
			KvPages readOnly = new Delegate(pages) {
				@Override
				public MemorySegment keys(int layer, int page) {
					return super.keys(layer, page).asReadOnly();
				}
			};
			assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { 1 }, 0, readOnly))
				.withMessageContaining("read-only");
			try (Arena confined = Arena.ofConfined()) {
				KvPages mine = KvPages.allocate(confined, config, 4, 4);
				assertThatIllegalArgumentException().isThrownBy(() -> model.forward(new int[] { 1 }, 0, mine))
					.withMessageContaining("confined");
			}
			// Nothing above ran the model into a bad state.
			assertThat(model.forward(new int[] { 1, 2, 3 }, 0, pages)).hasSize(300);
		}
	}

	@Test
	void refusesToRunWhenClosed() throws IOException {
		LlamaModel model = LlamaModel.load(new TinyLlamaFile().write(this.directory), 1);
		try (Arena arena = Arena.ofShared()) {
			KvPages pages = KvPages.allocate(arena, model.config(), 4, 4);
			model.close();
			assertThatIllegalStateException().isThrownBy(() -> model.forward(new int[] { 1 }, 0, pages))
				.withMessageContaining("closed");
		}
	}

	private static class Delegate implements KvPages {

		private final KvPages pages;

		Delegate(KvPages pages) {
			this.pages = pages;
		}

		@Override
		public int blockSize() {
			return this.pages.blockSize();
		}

		@Override
		public int capacity() {
			return this.pages.capacity();
		}

		@Override
		public MemorySegment keys(int layer, int page) {
			return this.pages.keys(layer, page);
		}

		@Override
		public MemorySegment values(int layer, int page) {
			return this.pages.values(layer, page);
		}

	}

}
