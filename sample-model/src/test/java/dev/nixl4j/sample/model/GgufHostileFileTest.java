package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Files that are truncated, oversized or not well formed: each gets a
 * {@link GgufFormatException} whose message names what was wrong, never another
 * exception.
 */
class GgufHostileFileTest {

	@TempDir
	Path dir;

	private static GgufWriter valid() {
		Random random = new Random(7);
		return new GgufWriter().kv("general.architecture", (b) -> b.u32(8).str("llama"))
			.kv("a.u32", (b) -> b.u32(4).u32(30))
			.kv("a.strings", (b) -> b.u32(9).u32(8).u64(2).str("x").str("yz"))
			.kv("a.f32s", (b) -> b.u32(9).u32(6).u64(2).f32(1f).f32(2f))
			.tensor("w.q8", GgmlType.Q8_0, new long[] { 32, 2 }, TestTensors.q8(random, 64).bytes())
			.tensor("w.q41", GgmlType.Q4_1, new long[] { 64 }, TestTensors.q41(random, 64).bytes())
			.tensor("w.f32", GgmlType.F32, new long[] { 3 }, TestTensors.f32(random, 3).bytes());
	}

	private Path file(byte[] bytes) throws IOException {
		return Files.write(Files.createTempFile(this.dir, "h", ".gguf"), bytes);
	}

	private GgufFormatException refused(byte[] bytes) throws IOException {
		Path path = file(bytes);
		GgufFormatException[] thrown = new GgufFormatException[1];
		assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> GgufFile.open(path).close())
			.satisfies((ex) -> thrown[0] = ex);
		assertThat(thrown[0].getMessage()).startsWith(path.toString() + ": ");
		return thrown[0];
	}

	private void refused(GgufWriter writer, String... messageParts) throws IOException {
		GgufFormatException ex = refused(writer.write());
		assertThat(ex.getMessage()).contains(messageParts);
	}

	@Test
	void theValidFileOpens() throws IOException {
		Path path = file(valid().write());
		assertThatNoException().isThrownBy(() -> {
			try (GgufFile file = GgufFile.open(path)) {
				assertThat(file.tensors()).hasSize(3);
			}
		});
	}

	@Test
	void truncatedAtEveryByteIsRefused() throws IOException {
		GgufWriter writer = valid();
		byte[] bytes = writer.write();
		// Every length short of the whole file: the section boundaries and every point
		// between.
		assertThat(writer.boundaries).hasSize(1 + 4 + 3 + 1 + 3).last().isEqualTo(bytes.length);
		for (int length = 0; length < bytes.length; length++) {
			GgufFormatException ex = refused(Arrays.copyOf(bytes, length));
			assertThat(ex.getMessage()).as("cut at %d", length)
				.containsAnyOf("truncated", "past the end of the file", "not a GGUF file");
		}
		int header = writer.boundaries.get(0);
		assertThat(refused(Arrays.copyOf(bytes, 2)).getMessage()).contains("header: truncated: the magic");
		assertThat(refused(Arrays.copyOf(bytes, header - 1)).getMessage())
			.contains("header: truncated: the metadata key count needs 8 bytes");
		assertThat(refused(Arrays.copyOf(bytes, writer.boundaries.get(2) + 20)).getMessage())
			.contains("metadata key 'a.strings': truncated");
		assertThat(refused(Arrays.copyOf(bytes, writer.boundaries.get(4) + 14)).getMessage())
			.contains("tensor infos: truncated: the tensor count is 3, more than the 14 bytes left");
		assertThat(refused(Arrays.copyOf(bytes, writer.boundaries.get(6) + 30)).getMessage())
			.contains("tensor 'w.f32': truncated: the offset needs 8 bytes");
		int data = writer.boundaries.get(8);
		assertThat(refused(Arrays.copyOf(bytes, data + 10)).getMessage())
			.contains("tensor 'w.q8': its 68 bytes at data offset 0 end past the end of the file");
		assertThat(refused(Arrays.copyOf(bytes, bytes.length - 1)).getMessage())
			.contains("tensor 'w.f32': its 12 bytes at data offset");
	}

	@Test
	void randomCorruptionGivesOnlyTheTypedException() throws IOException {
		GgufWriter writer = valid();
		byte[] bytes = writer.write();
		// The header, the metadata and the tensor infos.
		int end = writer.boundaries.get(8);
		Random random = new Random(11);
		for (int i = 0; i < 300; i++) {
			byte[] corrupt = bytes.clone();
			int flips = 1 + random.nextInt(4);
			for (int f = 0; f < flips; f++) {
				int at = random.nextInt(end);
				corrupt[at] = (byte) random.nextInt(256);
			}
			Path path = file(corrupt);
			try (GgufFile file = GgufFile.open(path)) {
				// Still well formed: every tensor reads.
				for (GgufTensorInfo t : file.tensors()) {
					if (t.type().isReadable() && t.rowCount() > 0) {
						file.dequantizeRow(t, t.rowCount() - 1);
					}
				}
			}
			catch (GgufFormatException ex) {
				assertThat(ex.getMessage()).isNotBlank();
			}
		}
	}

	@Test
	void badMagicAndVersions() throws IOException {
		GgufWriter w = valid();
		w.magic = 0x46554746;
		refused(w, "not a GGUF file: the magic is 0x46554746 (bytes 46475546)");
		for (long version : new long[] { 1, 2, 4, 0xFFFF_FFFFL }) {
			GgufWriter v = valid();
			v.version = version;
			refused(v, "GGUF version " + version + " is not read (only version 3 is)");
		}
	}

	@Test
	void hugeCounts() throws IOException {
		for (long count : new long[] { -1L, Long.MAX_VALUE, 1L << 40, GgufFile.MAX_TENSORS + 1L }) {
			GgufWriter w = valid();
			w.tensorCount = count;
			refused(w, "header: the tensor count is " + Long.toUnsignedString(count), "at most 1048576");
			GgufWriter k = valid();
			k.keyCount = count;
			refused(k, "header: the metadata key count is " + Long.toUnsignedString(count), "at most 65536");
		}
		GgufWriter w = valid();
		w.tensorCount = 1000L;
		refused(w, "tensor infos: truncated: the tensor count is 1000, more than the");
		GgufWriter k = new GgufWriter().kv("a", (b) -> b.u32(4).u32(1));
		k.keyCount = 2L;
		refused(k, "metadata key #1: ");
	}

	@Test
	void hugeStringAndArrayLengths() throws IOException {
		for (long length : new long[] { -1L, 1L << 62, 100_000L, GgufFile.MAX_KEY_BYTES + 1L }) {
			refused(valid().rawKv((b) -> b.u64(length).str("x")),
					"metadata key #4: the key's length is " + Long.toUnsignedString(length));
		}
		refused(new GgufWriter().rawKv((b) -> b.u64(100).raw("short".getBytes(), false)),
				"metadata key #0: truncated: the key needs 100 bytes");
		refused(valid().kv("s", (b) -> b.u32(8).u64(-1L)),
				"metadata key 's': the value's length is 18446744073709551615");
		refused(valid().kv("s", (b) -> b.u32(8).u64(1_000_000)),
				"metadata key 's': truncated: the value needs 1000000 bytes");
		for (long length : new long[] { -1L, 1L << 61, Integer.MAX_VALUE, 100_000L }) {
			String expected = (length == 100_000L) ? "does not fit the"
					: "is more than the 2147483639 elements allowed";
			refused(valid().kv("arr", (b) -> b.u32(9).u32(10).u64(length).u64(1)), "metadata key 'arr': ",
					"the array length " + Long.toUnsignedString(length) + " of UINT64 " + expected);
			refused(valid().kv("arr", (b) -> b.u32(9).u32(8).u64(length).str("a")), "metadata key 'arr': ",
					"the array length " + Long.toUnsignedString(length) + " of STRING " + expected);
		}
		// Fits the file's size, but an element's length does not.
		refused(valid().kv("arr", (b) -> b.u32(9).u32(8).u64(3).str("a").u64(1L << 50).str("b")),
				"metadata key 'arr': the element 1's length is 1125899906842624");
		refused(valid().kv("arr", (b) -> b.u32(9).u32(8).u64(3).str("a").u64(500).str("b")),
				"metadata key 'arr': truncated: the element 1 needs 500 bytes");
		refused(valid().rawKv((b) -> b.u64(2).raw(new byte[] { (byte) 0xC3, 0x28 }, false).u32(4).u32(1)),
				"metadata key #4: the key: the string is not valid UTF-8");
	}

	@Test
	void unknownAndBadValues() throws IOException {
		refused(valid().kv("v", (b) -> b.u32(13).u32(0)), "metadata key 'v': unknown value type 13");
		refused(valid().kv("v", (b) -> b.u32(0xFFFF_FFFFL).u32(0)), "metadata key 'v': unknown value type 4294967295");
		refused(valid().kv("v", (b) -> b.u32(9).u32(99).u64(0)), "metadata key 'v': unknown array element type 99");
		refused(valid().kv("v", (b) -> b.u32(9).u32(9).u64(1).u32(4).u64(1).u32(1)),
				"metadata key 'v': an array of arrays");
		refused(valid().kv("v", (b) -> b.u32(7).u8(2)), "metadata key 'v': the BOOL value is 2, not 0 or 1");
		refused(valid().kv("a.u32", (b) -> b.u32(4).u32(1)), "metadata key 'a.u32': the key appears twice");
		refused(valid().rawKv((b) -> b.u64(0).u32(4).u32(1)), "metadata key #4: the key is empty");
		refused(valid().kv("general.alignment", (b) -> b.u32(4).u32(0)),
				"metadata key 'general.alignment': 0 is not a power of two");
		refused(valid().kv("general.alignment", (b) -> b.u32(4).u32(48)),
				"metadata key 'general.alignment': 48 is not a power of two");
		refused(valid().kv("general.alignment", (b) -> b.u32(10).u64(32)),
				"metadata key 'general.alignment' is UINT64, not UINT32");
	}

	@Test
	void badTensorInfos() throws IOException {
		byte[] block = new byte[34];
		refused(valid().tensor("w.q8", GgmlType.Q8_0, new long[] { 32 }, block),
				"tensor 'w.q8': the name appears twice");
		refused(valid().tensor("t", 99, new long[] { 32 }, block, GgufWriter.AUTO),
				"tensor 't': unknown tensor type 99");
		refused(valid().tensor("t", GgmlType.Q8_0, new long[] { 33 }, block),
				"tensor 't': a row of 33 values is not whole Q8_0 blocks of 32");
		refused(valid().tensor("t", GgmlType.F32, new long[] { 1, 1, 1, 1, 1 }, new byte[4]),
				"tensor 't': 5 dimensions (1 to 4 allowed)");
		refused(valid().tensor("t", GgmlType.F32, new long[0], new byte[4]), "tensor 't': 0 dimensions");
		refused(valid().tensor("t", GgmlType.F32, new long[] { -1L }, new byte[4]),
				"tensor 't': dimension 0 is 18446744073709551615, too large");
		refused(valid().tensor("t", GgmlType.F32, new long[] { 1L << 32, 1L << 32 }, new byte[4]),
				"tensor 't': the dimensions [4294967296, 4294967296] overflow");
		refused(valid().tensor("t", GgmlType.F32, new long[] { 1L << 61 }, new byte[4]),
				"tensor 't': 2305843009213693952 values of F32 overflow a 64-bit size");
		refused(valid().tensor("t", GgmlType.F32, new long[] { 1L << 40 }, new byte[4]),
				"tensor 't': its 4398046511104 bytes at data offset");
		refused(valid().tensor("t", GgmlType.F32.id(), new long[] { 1 }, new byte[4], 16),
				"tensor 't': the offset 16 is not a multiple of the alignment 32");
		refused(valid().tensor("t", GgmlType.F32.id(), new long[] { 1 }, new byte[4], -32),
				"tensor 't': the offset 18446744073709551584 is too large");
		refused(valid().tensor("t", GgmlType.F32.id(), new long[] { 1 }, new byte[4], 1L << 20),
				"tensor 't': its 4 bytes at data offset 1048576 end past the end of the file");
		refused(valid().tensor("t", GgmlType.F32.id(), new long[] { 1 }, new byte[4], Long.MAX_VALUE - 31),
				"tensor 't': its 4 bytes at data offset 9223372036854775776 end past the end of the file");
		refused(valid().tensor("n".repeat(GgufFile.MAX_NAME_BYTES + 1), GgmlType.F32, new long[] { 1 }, new byte[4]),
				"tensor #3: the name's length is 1025 (at most 1024 bytes allowed)");
	}

}
