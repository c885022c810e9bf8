package dev.nixl4j.sample.model;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Writes GGUF files with every metadata type and F32, F16, Q8_0, Q4_1 and Q4_K tensors,
 * and reads them back.
 */
class GgufFileTest {

	@TempDir
	Path dir;

	private final Random random = new Random(31);

	private final TestTensors.Quantized f32 = TestTensors.f32(this.random, 8 * 3);

	private final TestTensors.Quantized f16 = TestTensors.f16(this.random, 4 * 2);

	private final TestTensors.Quantized q8 = TestTensors.q8(this.random, 64 * 5);

	private final TestTensors.Quantized q41 = TestTensors.q41(this.random, 96 * 2 * 2);

	private GgufWriter writer(long alignment) {
		GgufWriter w = new GgufWriter();
		w.alignment = alignment;
		w.kv("general.architecture", (b) -> b.u32(8).str("llama"))
			.kv("t.u8", (b) -> b.u32(0).u8(200))
			.kv("t.i8", (b) -> b.u32(1).u8(-5))
			.kv("t.u16", (b) -> b.u32(2).u16(60000))
			.kv("t.i16", (b) -> b.u32(3).u16(-300))
			.kv("t.u32", (b) -> b.u32(4).u32(4_000_000_000L))
			.kv("t.i32", (b) -> b.u32(5).u32(-70000))
			.kv("t.f32", (b) -> b.u32(6).f32(100000f))
			.kv("t.bool", (b) -> b.u32(7).u8(1))
			.kv("t.u64", (b) -> b.u32(10).u64(1L << 40))
			.kv("t.u64.huge", (b) -> b.u32(10).u64(-1L))
			.kv("t.i64", (b) -> b.u32(11).u64(-(1L << 40)))
			.kv("t.f64", (b) -> b.u32(12).f64(1e-300))
			.kv("t.strings", (b) -> b.u32(9).u32(8).u64(3).str("a").str("").str("Ġthe ü"))
			.kv("t.i32s", (b) -> b.u32(9).u32(5).u64(3).u32(1).u32(-2).u32(Integer.MAX_VALUE))
			.kv("t.u8s", (b) -> b.u32(9).u32(0).u64(2).u8(255).u8(0))
			.kv("t.f32s", (b) -> b.u32(9).u32(6).u64(2).f32(0.5f).f32(-1.25f))
			.kv("t.i64s", (b) -> b.u32(9).u32(11).u64(1).u64(1L << 33));
		if (alignment != GgufFile.DEFAULT_ALIGNMENT) {
			w.kv("general.alignment", (b) -> b.u32(4).u32(alignment));
		}
		return w.tensor("t.f32", GgmlType.F32, new long[] { 8, 3 }, this.f32.bytes())
			.tensor("t.f16", GgmlType.F16, new long[] { 4, 2 }, this.f16.bytes())
			.tensor("t.q8", GgmlType.Q8_0, new long[] { 64, 5 }, this.q8.bytes())
			.tensor("t.q41", GgmlType.Q4_1, new long[] { 96, 2, 2 }, this.q41.bytes())
			.tensor("t.q4k", GgmlType.Q4_K, new long[] { 256 }, new byte[144]);
	}

	private Path write(GgufWriter writer) throws IOException {
		return Files.write(Files.createTempFile(this.dir, "t", ".gguf"), writer.write());
	}

	@Test
	void readsEveryMetadataType() throws IOException {
		try (GgufFile file = GgufFile.open(write(writer(32)))) {
			GgufMetadata m = file.metadata();
			assertThat(file.version()).isEqualTo(3);
			assertThat(m.keys()).hasSize(18).first().isEqualTo("general.architecture");
			assertThat(m.getString("general.architecture")).isEqualTo("llama");
			assertThat(m.getInt("t.u8")).isEqualTo(200);
			assertThat(m.getInt("t.i8")).isEqualTo(-5);
			assertThat(m.getInt("t.u16")).isEqualTo(60000);
			assertThat(m.getInt("t.i16")).isEqualTo(-300);
			assertThat(m.getLong("t.u32")).isEqualTo(4_000_000_000L);
			assertThat(m.getInt("t.i32")).isEqualTo(-70000);
			assertThat(m.getFloat("t.f32")).isEqualTo(100000f);
			assertThat(m.getBoolean("t.bool")).isTrue();
			assertThat(m.getLong("t.u64")).isEqualTo(1L << 40);
			assertThat(m.getLong("t.i64")).isEqualTo(-(1L << 40));
			assertThat(m.getDouble("t.f64")).isEqualTo(1e-300);
			assertThat(m.getStringArray("t.strings")).containsExactly("a", "", "Ġthe ü");
			assertThat(m.getIntArray("t.i32s")).containsExactly(1, -2, Integer.MAX_VALUE);
			assertThat(m.getIntArray("t.u8s")).containsExactly(255, 0);
			assertThat(m.getFloatArray("t.f32s")).containsExactly(0.5f, -1.25f);
			assertThat(m.getLongArray("t.i64s")).containsExactly(1L << 33);
			assertThat(m.arrayLength("t.strings")).isEqualTo(3);
			assertThat(m.type("t.strings")).isEqualTo(GgufValueType.ARRAY);
			assertThat(m.elementType("t.strings")).isEqualTo(GgufValueType.STRING);
			assertThat(m.elementType("t.u8")).isNull();
			assertThat(m.contains("t.missing")).isFalse();

			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getString("t.missing"))
				.withMessage("metadata key 't.missing' is missing");
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getString("t.u8"))
				.withMessage("metadata key 't.u8' is UINT8, not STRING");
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getInt("t.u32"))
				.withMessage("metadata key 't.u32': 4000000000 does not fit an int");
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getLong("t.u64.huge"))
				.withMessage("metadata key 't.u64.huge': 18446744073709551615 does not fit a long");
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getFloat("t.i32"))
				.withMessage("metadata key 't.i32' is INT32, not FLOAT32 or FLOAT64");
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getIntArray("t.strings"))
				.withMessage("metadata key 't.strings' is an array of STRING, not an array of an integer type");
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getStringArray("t.u8"))
				.withMessage("metadata key 't.u8' is UINT8, not an array");
			assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> m.getIntArray("t.i64s"))
				.withMessage("metadata key 't.i64s' element 0: 8589934592 does not fit an int");
		}
	}

	@Test
	void readsTensorsAndDequantizesEveryRow() throws IOException {
		for (long alignment : new long[] { 32, 64, 1 }) {
			try (GgufFile file = GgufFile.open(write(writer(alignment)))) {
				assertThat(file.alignment()).isEqualTo(alignment);
				assertThat(file.dataOffset() % alignment).isZero();
				assertThat(file.tensors()).extracting(GgufTensorInfo::name)
					.containsExactly("t.f32", "t.f16", "t.q8", "t.q41", "t.q4k");
				for (GgufTensorInfo t : file.tensors()) {
					assertThat(t.offset() % alignment).as(t.name()).isZero();
				}
				check(file, "t.f32", GgmlType.F32, new long[] { 8, 3 }, this.f32);
				check(file, "t.f16", GgmlType.F16, new long[] { 4, 2 }, this.f16);
				check(file, "t.q8", GgmlType.Q8_0, new long[] { 64, 5 }, this.q8);
				check(file, "t.q41", GgmlType.Q4_1, new long[] { 96, 2, 2 }, this.q41);

				GgufTensorInfo q4k = file.tensor("t.q4k");
				assertThat(q4k.type()).isEqualTo(GgmlType.Q4_K);
				assertThat(q4k.byteSize()).isEqualTo(144);
				assertThatExceptionOfType(UnsupportedTensorTypeException.class)
					.isThrownBy(() -> file.tensorData("t.q4k"))
					.withMessageContaining("tensor 't.q4k' has type Q4_K")
					.satisfies((ex) -> assertThat(ex.type()).isEqualTo(GgmlType.Q4_K));
				assertThatExceptionOfType(GgufFormatException.class).isThrownBy(() -> file.tensor("t.none"))
					.withMessageEndingWith("tensor 't.none' is missing");
				assertThat(file.findTensor("t.none")).isEmpty();
				assertThatExceptionOfType(IndexOutOfBoundsException.class)
					.isThrownBy(() -> file.dequantizeRow(file.tensor("t.q8"), 5));
			}
		}
	}

	private static void check(GgufFile file, String name, GgmlType type, long[] dims, TestTensors.Quantized expected) {
		GgufTensorInfo t = file.tensor(name);
		assertThat(t.type()).isEqualTo(type);
		assertThat(t.dimensions()).containsExactly(dims);
		assertThat(t.elementCount()).isEqualTo(expected.values().length);
		assertThat(t.byteSize()).isEqualTo(expected.bytes().length);
		MemorySegment data = file.tensorData(t);
		assertThat(data.isReadOnly()).isTrue();
		assertThat(data.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected.bytes());
		int rowLength = (int) t.rowLength();
		assertThat(t.rowCount() * rowLength).isEqualTo(expected.values().length);
		for (int row = 0; row < t.rowCount(); row++) {
			float[] values = file.dequantizeRow(t, row);
			assertThat(values).as("%s row %d", name, row)
				.containsExactly(Arrays.copyOfRange(expected.values(), row * rowLength, (row + 1) * rowLength));
		}
	}

	@Test
	void dequantizesQ41NibblesLowFirst() {
		// d = 0.5, m = -1; byte 0 = 0x3A: value 0 is 10 (low nibble), value 16 is 3 (high
		// nibble).
		ByteBuffer block = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
		block.putShort(Float.floatToFloat16(0.5f)).putShort(Float.floatToFloat16(-1f)).put((byte) 0x3A);
		float[] values = new float[32];
		Dequantize.values(GgmlType.Q4_1, MemorySegment.ofArray(block.array()), values, 0, 32);
		assertThat(values[0]).isEqualTo(4f);
		assertThat(values[16]).isEqualTo(0.5f);
		assertThat(values[1]).isEqualTo(-1f);
		// Q8_0: d = 0.25, q = -128, 127.
		ByteBuffer q8 = ByteBuffer.allocate(34).order(ByteOrder.LITTLE_ENDIAN);
		q8.putShort(Float.floatToFloat16(0.25f)).put((byte) -128).put((byte) 127);
		Dequantize.values(GgmlType.Q8_0, MemorySegment.ofArray(q8.array()), values, 0, 32);
		assertThat(values[0]).isEqualTo(-32f);
		assertThat(values[1]).isEqualTo(31.75f);
		assertThat(values[2]).isZero();
	}

	@Test
	void closedFileRefusesTensorData() throws IOException {
		GgufFile file = GgufFile.open(write(writer(32)));
		MemorySegment data = file.tensorData("t.f32");
		file.close();
		assertThatIllegalStateException().isThrownBy(() -> file.tensorData("t.f32"));
		assertThatIllegalStateException().isThrownBy(() -> data.get(ValueLayout.JAVA_BYTE, 0));
		assertThatIllegalStateException().isThrownBy(() -> file.metadata().getStringArray("t.strings"));
		assertThat(file.metadata().getString("general.architecture")).isEqualTo("llama");
		file.close();
	}

	@Test
	void emptyFileHasNoTensors() throws IOException {
		GgufWriter w = new GgufWriter();
		try (GgufFile file = GgufFile.open(write(w))) {
			assertThat(file.tensors()).isEmpty();
			assertThat(file.metadata().keys()).isEmpty();
			assertThat(file.dataOffset()).isEqualTo(32);
			assertThat(file.size()).isEqualTo(32);
		}
	}

}
