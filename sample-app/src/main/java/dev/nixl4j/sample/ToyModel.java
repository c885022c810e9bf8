package dev.nixl4j.sample;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.zip.CRC32C;

import dev.nixl4j.kv.KvCacheLayout;
import org.jspecify.annotations.Nullable;

/**
 * The sample's stand-in for a model: a byte-level tokenizer, KV values that are a pure
 * function of (token, position, layer, K or V, head), so that any byte of any block can
 * be checked, and a "generation" that depends on every KV byte through their checksum.
 *
 * <p>
 * Each head of each token holds {@code headDim x dtypeSize} bytes drawn from a SplitMix64
 * stream seeded by (token id, position, region, part, head); slots of a block past the
 * prompt's end are zero. Both roles and the load generator compute the same bytes.
 */
public final class ToyModel {

	/** Token ids lie in {@code [0, VOCABULARY)}. */
	public static final int VOCABULARY = 1 << 20;

	private static final long GOLDEN = 0x9E3779B97F4A7C15L;

	private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz      ";

	private final KvCacheLayout layout;

	private final int parts;

	private final int runBytes;

	/**
	 * Creates the model for a cache layout.
	 * @param layout the layout both roles agree on
	 */
	public ToyModel(KvCacheLayout layout) {
		this.layout = layout;
		this.parts = layout.splitKv() ? 1 : 2;
		this.runBytes = layout.headDim() * layout.dtypeSize();
	}

	/**
	 * Returns the layout.
	 * @return the layout
	 */
	public KvCacheLayout layout() {
		return this.layout;
	}

	/**
	 * Turns a prompt, given as text or as token ids, into token ids.
	 * @param prompt the text (one token per UTF-8 byte), or {@code null}
	 * @param tokens the token ids, or {@code null}
	 * @param maxTokens the longest prompt accepted
	 * @return the token ids
	 * @throws SampleException (400) for neither or both, an empty prompt, one too long or
	 * a token id outside the vocabulary
	 */
	public static int[] tokens(@Nullable String prompt, @Nullable List<Integer> tokens, int maxTokens) {
		if ((prompt == null) == (tokens == null)) {
			throw SampleException.badRequest("give the prompt either as 'prompt' (text) or as 'tokens' (ids), not "
					+ ((prompt == null) ? "neither" : "both"));
		}
		// The length is checked before anything proportional to the prompt is allocated.
		long length = (prompt != null) ? utf8Length(prompt) : tokens.size();
		if (length == 0) {
			throw SampleException.badRequest("the prompt is empty");
		}
		if (length > maxTokens) {
			throw SampleException.badRequest("the prompt has " + length + " tokens; this worker takes at most "
					+ maxTokens + " (sample.max-prompt-tokens)");
		}
		int[] ids;
		if (prompt != null) {
			byte[] bytes = prompt.getBytes(StandardCharsets.UTF_8);
			ids = new int[bytes.length];
			for (int i = 0; i < bytes.length; i++) {
				ids[i] = bytes[i] & 0xff;
			}
		}
		else {
			ids = new int[tokens.size()];
			for (int i = 0; i < ids.length; i++) {
				Integer id = tokens.get(i);
				if (id == null || id < 0 || id >= VOCABULARY) {
					throw SampleException
						.badRequest("token " + i + " is " + id + ": token ids lie in [0, " + VOCABULARY + ")");
				}
				ids[i] = id;
			}
		}
		return ids;
	}

	/**
	 * Counts the bytes of a text in UTF-8 as {@link String#getBytes} writes them (an
	 * unpaired surrogate as one byte), without encoding it.
	 */
	private static long utf8Length(String text) {
		long bytes = 0;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c < 0x80) {
				bytes++;
			}
			else if (c < 0x800) {
				bytes += 2;
			}
			else if (Character.isHighSurrogate(c) && i + 1 < text.length()
					&& Character.isLowSurrogate(text.charAt(i + 1))) {
				bytes += 4;
				i++;
			}
			else if (Character.isSurrogate(c)) {
				bytes++;
			}
			else {
				bytes += 3;
			}
		}
		return bytes;
	}

	/**
	 * Returns how many blocks a prompt fills.
	 * @param tokens the prompt's length
	 * @return the blocks
	 */
	public int blocksFor(int tokens) {
		return Math.ceilDiv(tokens, this.layout.blockSize());
	}

	/**
	 * Returns the bytes of one block in all regions.
	 * @return {@code regionCount x blockLength}
	 */
	public long bytesPerBlock() {
		return this.layout.regionCount() * this.layout.blockLength();
	}

	/**
	 * Writes the values of one block of one region.
	 * @param block the block ({@link KvCacheLayout#blockLength()} bytes)
	 * @param region the region (layer, and K or V when split)
	 * @param tokens the prompt
	 * @param blockIndex the block's place in the prompt (its first token is
	 * {@code blockIndex x blockSize})
	 */
	public void fill(MemorySegment block, int region, int[] tokens, int blockIndex) {
		eachRun(region, tokens, blockIndex, (offset, seed, filled) -> {
			if (filled) {
				writeRun(block, offset, seed);
			}
			else {
				block.asSlice(offset, this.runBytes).fill((byte) 0);
			}
			return -1;
		});
	}

	/**
	 * Checks every byte of one block of one region.
	 * @param block the block
	 * @param region the region
	 * @param tokens the prompt
	 * @param blockIndex the block's place in the prompt
	 * @return {@code null} when every byte is right, else where the first wrong byte is
	 */
	public @Nullable String check(MemorySegment block, int region, int[] tokens, int blockIndex) {
		return eachRun(region, tokens, blockIndex, (offset, seed, filled) -> checkRun(block, offset, seed, filled));
	}

	/**
	 * Visits the runs of one block of one region (one head of one token of K or V each)
	 * in order, until the action reports a wrong byte.
	 * @return {@code null}, or where the wrong byte the action reported is
	 */
	private @Nullable String eachRun(int region, int[] tokens, int blockIndex, RunAction action) {
		int first = blockIndex * this.layout.blockSize();
		for (int part = 0; part < this.parts; part++) {
			for (int slot = 0; slot < this.layout.blockSize(); slot++) {
				int position = first + slot;
				boolean filled = position < tokens.length;
				for (int head = 0; head < this.layout.numKvHeads(); head++) {
					long seed = filled ? seed(tokens[position], position, region, part, head) : 0;
					long bad = action.run(offset(part, slot, head), seed, filled);
					if (bad >= 0) {
						return String.format(Locale.ROOT,
								"region %d (layer %d), block %d of the request, token position %d, head %d: byte %d differs",
								region, region / this.layout.regionsPerLayer(), blockIndex, position, head, bad);
					}
				}
			}
		}
		return null;
	}

	/**
	 * Computes the CRC32C of a prompt's blocks as both roles lay them out: region by
	 * region, blocks in token order.
	 * @param tokens the prompt
	 * @return the checksum
	 */
	public long expectedCrc32c(int[] tokens) {
		MemorySegment scratch = MemorySegment.ofArray(new byte[Math.toIntExact(this.layout.blockLength())]);
		CRC32C crc = new CRC32C();
		int blocks = blocksFor(tokens.length);
		for (int region = 0; region < this.layout.regionCount(); region++) {
			for (int b = 0; b < blocks; b++) {
				fill(scratch, region, tokens, b);
				crc.update(scratch.asByteBuffer());
			}
		}
		return crc.getValue();
	}

	/**
	 * "Generates" text that depends on every KV byte: a stream seeded by the checksum of
	 * the blocks and the prompt's length.
	 * @param kvCrc32c the checksum of the blocks
	 * @param promptTokens the prompt's length
	 * @param count how many characters
	 * @return the text
	 */
	public static String generate(long kvCrc32c, int promptTokens, int count) {
		StringBuilder text = new StringBuilder(count);
		long state = mix(kvCrc32c * GOLDEN + promptTokens);
		for (int i = 0; i < count; i++) {
			state = mix(state + GOLDEN);
			text.append(ALPHABET.charAt((int) (state >>> 59)));
		}
		return text.toString();
	}

	private long offset(int part, int slot, int head) {
		return part * this.layout.partLength() + this.layout.elementOffset(slot, head, 0);
	}

	private void writeRun(MemorySegment block, long offset, long seed) {
		int longs = this.runBytes >>> 3;
		for (int i = 0; i < longs; i++) {
			block.set(ValueLayout.JAVA_LONG_UNALIGNED, offset + ((long) i << 3), mix(seed + i * GOLDEN));
		}
		int tail = this.runBytes & 7;
		if (tail != 0) {
			long last = mix(seed + longs * GOLDEN);
			for (int i = 0; i < tail; i++) {
				block.set(ValueLayout.JAVA_BYTE, offset + ((long) longs << 3) + i, (byte) (last >>> (i << 3)));
			}
		}
	}

	/** Returns the offset within the run of the first wrong byte, or -1. */
	private long checkRun(MemorySegment block, long offset, long seed, boolean filled) {
		int longs = this.runBytes >>> 3;
		for (int i = 0; i < longs; i++) {
			long expected = filled ? mix(seed + i * GOLDEN) : 0;
			long actual = block.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + ((long) i << 3));
			if (actual != expected) {
				return ((long) i << 3) + (Long.numberOfTrailingZeros(actual ^ expected) >>> 3);
			}
		}
		int tail = this.runBytes & 7;
		long last = filled ? mix(seed + longs * GOLDEN) : 0;
		for (int i = 0; i < tail; i++) {
			if (block.get(ValueLayout.JAVA_BYTE, offset + ((long) longs << 3) + i) != (byte) (last >>> (i << 3))) {
				return ((long) longs << 3) + i;
			}
		}
		return -1;
	}

	private static long seed(int token, int position, int region, int part, int head) {
		return mix(((long) token << 32) ^ position) ^ mix(((long) region << 20) ^ ((long) part << 16) ^ head ^ GOLDEN);
	}

	/**
	 * What {@link #eachRun} does with one run; returns the offset of a wrong byte in it,
	 * or -1.
	 */
	@FunctionalInterface
	private interface RunAction {

		long run(long offset, long seed, boolean filled);

	}

	/** SplitMix64's finalizer. */
	private static long mix(long x) {
		long z = x;
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		return z ^ (z >>> 31);
	}

}
