package dev.nixl4j.sample.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A GGUF (version 3) file, memory-mapped and read: its metadata, its tensor infos and a
 * {@link MemorySegment} slice of each tensor's bytes. Opening checks every count, string
 * length, array length, tensor dimension, offset and size against the file's size and the
 * limits below before it uses it; a file that is truncated, oversized or not well formed
 * gets a {@link GgufFormatException} naming the key or tensor and what was wrong.
 *
 * <p>
 * Limits: at most {@value #MAX_KEYS} metadata keys, {@value #MAX_TENSORS} tensors, keys
 * of at most {@value #MAX_KEY_BYTES} bytes, tensor names of at most
 * {@value #MAX_NAME_BYTES} bytes, 1 to {@value #MAX_DIMENSIONS} dimensions, arrays of at
 * most {@link Integer#MAX_VALUE} - 8 elements; no nested arrays.
 * {@code general.alignment}, when present, is a UINT32 power of two.
 *
 * <p>
 * The mapping lives until {@link #close()}: tensor slices and array metadata read after
 * it throw {@link IllegalStateException}. Safe for use by several threads.
 */
public final class GgufFile implements AutoCloseable {

	/** The most metadata keys a file may have. */
	public static final int MAX_KEYS = 65_536;

	/** The most tensors a file may have. */
	public static final int MAX_TENSORS = 1 << 20;

	/** The longest metadata key, in bytes. */
	public static final int MAX_KEY_BYTES = 65_535;

	/** The longest tensor name, in bytes. */
	public static final int MAX_NAME_BYTES = 1024;

	/** The most dimensions a tensor may have. */
	public static final int MAX_DIMENSIONS = 4;

	/**
	 * The alignment of the data section and tensor offsets when the file does not set
	 * one.
	 */
	public static final int DEFAULT_ALIGNMENT = 32;

	private static final int MAGIC = 0x46554747; // "GGUF", little-endian

	private static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

	private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED
		.withOrder(ByteOrder.LITTLE_ENDIAN);

	private final Path path;

	private final Arena arena;

	private final MemorySegment file;

	private final int version;

	private final long alignment;

	private final long dataOffset;

	private final GgufMetadata metadata;

	private final Map<String, GgufTensorInfo> tensors;

	private GgufFile(Path path, Arena arena, MemorySegment file) {
		this.path = path;
		this.arena = arena;
		this.file = file;
		Cursor in = new Cursor(file);
		in.context = "header";
		int magic = in.u32("magic");
		if (magic != MAGIC) {
			throw new GgufFormatException("not a GGUF file: the magic is 0x" + Integer.toHexString(magic) + " (bytes "
					+ describeMagic(file) + "), not \"GGUF\"");
		}
		long version = in.u32("version") & 0xFFFF_FFFFL;
		if (version != 3) {
			throw new GgufFormatException("GGUF version " + version + " is not read (only version 3 is)");
		}
		this.version = 3;
		long tensorCount = in.count("tensor count", MAX_TENSORS);
		long keyCount = in.count("metadata key count", MAX_KEYS);
		in.fits(keyCount, "metadata key count", 14);
		Map<String, GgufMetadata.Value> values = new LinkedHashMap<>();
		for (long i = 0; i < keyCount; i++) {
			in.context = "metadata key #" + i;
			String key = in.string("key", MAX_KEY_BYTES);
			if (key.isEmpty()) {
				throw in.error("the key is empty");
			}
			in.context = "metadata key '" + key + "'";
			if (values.containsKey(key)) {
				throw in.error("the key appears twice");
			}
			values.put(key, readValue(in));
		}
		this.metadata = new GgufMetadata(values);
		this.alignment = alignment(this.metadata);
		Map<String, GgufTensorInfo> infos = new LinkedHashMap<>();
		List<GgufTensorInfo> read = new ArrayList<>();
		Set<String> names = new HashSet<>();
		in.context = "tensor infos";
		in.fits(tensorCount, "tensor count", 32);
		for (int i = 0; i < tensorCount; i++) {
			in.context = "tensor #" + i;
			String name = in.string("name", MAX_NAME_BYTES);
			in.context = "tensor '" + name + "'";
			if (!names.add(name)) {
				throw in.error("the name appears twice");
			}
			long dimensionCount = in.u32("dimension count") & 0xFFFF_FFFFL;
			if (dimensionCount < 1 || dimensionCount > MAX_DIMENSIONS) {
				throw in.error(dimensionCount + " dimensions (1 to " + MAX_DIMENSIONS + " allowed)");
			}
			long[] dimensions = new long[(int) dimensionCount];
			long elements = 1;
			for (int d = 0; d < dimensions.length; d++) {
				dimensions[d] = in.u64("dimension " + d);
				if (dimensions[d] < 0) {
					throw in.error("dimension " + d + " is " + Long.toUnsignedString(dimensions[d]) + ", too large");
				}
				try {
					elements = Math.multiplyExact(elements, dimensions[d]);
				}
				catch (ArithmeticException ex) {
					throw in
						.error("the dimensions " + Arrays.toString(dimensions) + " overflow a 64-bit element count");
				}
			}
			long typeId = in.u32("type") & 0xFFFF_FFFFL;
			GgmlType type = GgmlType.ofId(typeId);
			if (type == null) {
				throw in.error("unknown tensor type " + typeId);
			}
			if (dimensions[0] % type.blockValues() != 0) {
				throw in.error("a row of " + dimensions[0] + " values is not whole " + type + " blocks of "
						+ type.blockValues());
			}
			long byteSize;
			try {
				byteSize = Math.multiplyExact(elements / type.blockValues(), (long) type.blockBytes());
			}
			catch (ArithmeticException ex) {
				throw in.error(elements + " values of " + type + " overflow a 64-bit size");
			}
			long offset = in.u64("offset");
			if (offset < 0) {
				throw in.error("the offset " + Long.toUnsignedString(offset) + " is too large");
			}
			if (offset % this.alignment != 0) {
				throw in.error("the offset " + Long.toUnsignedString(offset) + " is not a multiple of the alignment "
						+ this.alignment);
			}
			read.add(new GgufTensorInfo(name, type, dimensions, offset, elements, byteSize));
		}
		long end = in.position;
		long data = (end + this.alignment - 1) / this.alignment * this.alignment;
		this.dataOffset = data;
		long dataBytes = file.byteSize() - data;
		for (GgufTensorInfo info : read) {
			long offset = info.offset();
			long byteSize = info.byteSize();
			if (byteSize > dataBytes || offset > dataBytes - byteSize) {
				throw new GgufFormatException("tensor '" + info.name() + "': its " + byteSize + " bytes at data offset "
						+ offset + " end past the end of the file (the data section starts at " + data
						+ ", the file has " + file.byteSize() + " bytes)");
			}
			infos.put(info.name(), info);
		}
		this.tensors = Collections.unmodifiableMap(infos);
	}

	/**
	 * Opens, maps and checks a GGUF file.
	 * @param path the file
	 * @return the open file; close it to unmap
	 * @throws IOException if the file cannot be read
	 * @throws GgufFormatException if it is not a well-formed GGUF version 3 file
	 */
	public static GgufFile open(Path path) throws IOException {
		Arena arena = Arena.ofShared();
		try {
			MemorySegment file;
			try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
				long size = channel.size();
				file = (size == 0) ? MemorySegment.ofArray(new byte[0])
						: channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
			}
			return new GgufFile(path, arena, file);
		}
		catch (IOException | RuntimeException ex) {
			arena.close();
			if (ex instanceof GgufFormatException format) {
				throw new GgufFormatException(path + ": " + format.getMessage(), format.getCause());
			}
			throw ex;
		}
	}

	/**
	 * Returns the file's path.
	 * @return the path
	 */
	public Path path() {
		return this.path;
	}

	/**
	 * Returns the GGUF version: 3.
	 * @return the version
	 */
	public int version() {
		return this.version;
	}

	/**
	 * Returns the alignment of the data section and of tensor offsets.
	 * @return the alignment in bytes
	 */
	public long alignment() {
		return this.alignment;
	}

	/**
	 * Returns where the data section starts in the file.
	 * @return the offset in bytes from the start of the file
	 */
	public long dataOffset() {
		return this.dataOffset;
	}

	/**
	 * Returns the size of the file.
	 * @return the size in bytes
	 */
	public long size() {
		return this.file.byteSize();
	}

	/**
	 * Returns the metadata.
	 * @return the metadata
	 */
	public GgufMetadata metadata() {
		return this.metadata;
	}

	/**
	 * Returns the tensor infos, in the file's order.
	 * @return the tensor infos
	 */
	public List<GgufTensorInfo> tensors() {
		return List.copyOf(this.tensors.values());
	}

	/**
	 * Returns a tensor's info, if the file has it.
	 * @param name the tensor's name
	 * @return its info, or empty
	 */
	public Optional<GgufTensorInfo> findTensor(String name) {
		return Optional.ofNullable(this.tensors.get(name));
	}

	/**
	 * Returns a tensor's info.
	 * @param name the tensor's name
	 * @return its info
	 * @throws GgufFormatException if the file has no such tensor
	 */
	public GgufTensorInfo tensor(String name) {
		GgufTensorInfo info = this.tensors.get(name);
		if (info == null) {
			throw new GgufFormatException(this.path + ": tensor '" + name + "' is missing");
		}
		return info;
	}

	/**
	 * Returns a tensor's bytes: a read-only slice of the mapping, valid until
	 * {@link #close()}.
	 * @param name the tensor's name
	 * @return its bytes
	 * @throws GgufFormatException if the file has no such tensor
	 * @throws UnsupportedTensorTypeException if its type is not F32, F16, Q8_0 or Q4_1
	 * @throws IllegalStateException if the file is closed
	 */
	public MemorySegment tensorData(String name) {
		return tensorData(tensor(name));
	}

	/**
	 * Returns a tensor's bytes: a read-only slice of the mapping, valid until
	 * {@link #close()}.
	 * @param tensor the tensor, one of this file's
	 * @return its bytes
	 * @throws IllegalArgumentException if the tensor is not one of this file's
	 * @throws UnsupportedTensorTypeException if its type is not F32, F16, Q8_0 or Q4_1
	 * @throws IllegalStateException if the file is closed
	 */
	public MemorySegment tensorData(GgufTensorInfo tensor) {
		if (this.tensors.get(tensor.name()) != tensor) {
			throw new IllegalArgumentException("tensor '" + tensor.name() + "' is not one of " + this.path + "'s");
		}
		if (!tensor.type().isReadable()) {
			throw new UnsupportedTensorTypeException(tensor.name(), tensor.type());
		}
		if (!this.arena.scope().isAlive()) {
			throw new IllegalStateException(this.path + " is closed");
		}
		return this.file.asSlice(this.dataOffset + tensor.offset(), tensor.byteSize()).asReadOnly();
	}

	/**
	 * Dequantizes one row (the first dimension's values) of a tensor.
	 * @param tensor the tensor, one of this file's
	 * @param row the row, from 0 to {@link GgufTensorInfo#rowCount()} - 1
	 * @return the row's values
	 * @throws IndexOutOfBoundsException if there is no such row
	 * @throws UnsupportedTensorTypeException if the tensor's type is not F32, F16, Q8_0
	 * or Q4_1
	 */
	public float[] dequantizeRow(GgufTensorInfo tensor, long row) {
		if (tensor.rowLength() > MAX_ARRAY) {
			throw new IllegalArgumentException("tensor '" + tensor.name() + "': a row of " + tensor.rowLength()
					+ " values does not fit a float[]");
		}
		float[] result = new float[(int) tensor.rowLength()];
		dequantizeRow(tensor, row, result, 0);
		return result;
	}

	/**
	 * Dequantizes one row (the first dimension's values) of a tensor into an array.
	 * @param tensor the tensor, one of this file's
	 * @param row the row, from 0 to {@link GgufTensorInfo#rowCount()} - 1
	 * @param dst where the values go
	 * @param dstOffset the index in {@code dst} of the row's first value
	 * @throws IndexOutOfBoundsException if there is no such row
	 * @throws IllegalArgumentException if the row does not fit {@code dst} at
	 * {@code dstOffset}
	 * @throws UnsupportedTensorTypeException if the tensor's type is not F32, F16, Q8_0
	 * or Q4_1
	 */
	public void dequantizeRow(GgufTensorInfo tensor, long row, float[] dst, int dstOffset) {
		MemorySegment data = tensorData(tensor);
		if (row < 0 || row >= tensor.rowCount()) {
			throw new IndexOutOfBoundsException(
					"tensor '" + tensor.name() + "' has " + tensor.rowCount() + " rows, not a row " + row);
		}
		if (tensor.rowLength() > dst.length) {
			throw new IllegalArgumentException("tensor '" + tensor.name() + "': a row of " + tensor.rowLength()
					+ " values does not fit a float[" + dst.length + "]");
		}
		long rowBytes = tensor.rowBytes();
		Dequantize.values(tensor.type(), data.asSlice(row * rowBytes, rowBytes), dst, dstOffset,
				(int) tensor.rowLength());
	}

	/**
	 * Unmaps the file. Tensor slices and array metadata can no longer be read.
	 */
	@Override
	public void close() {
		if (this.arena.scope().isAlive()) {
			this.arena.close();
		}
	}

	private static long alignment(GgufMetadata metadata) {
		String key = "general.alignment";
		if (!metadata.contains(key)) {
			return DEFAULT_ALIGNMENT;
		}
		if (metadata.type(key) != GgufValueType.UINT32) {
			throw new GgufFormatException("metadata key '" + key + "' is " + metadata.type(key) + ", not UINT32");
		}
		long alignment = metadata.getLong(key);
		if (alignment == 0 || Long.bitCount(alignment) != 1) {
			throw new GgufFormatException("metadata key '" + key + "': " + alignment + " is not a power of two");
		}
		return alignment;
	}

	private static GgufMetadata.Value readValue(Cursor in) {
		long typeId = in.u32("value type") & 0xFFFF_FFFFL;
		GgufValueType type = GgufValueType.ofId(typeId);
		if (type == null) {
			throw in.error("unknown value type " + typeId);
		}
		if (type != GgufValueType.ARRAY) {
			return new GgufMetadata.Value(type, readScalar(in, type));
		}
		long elementId = in.u32("array element type") & 0xFFFF_FFFFL;
		GgufValueType elementType = GgufValueType.ofId(elementId);
		if (elementType == null) {
			throw in.error("unknown array element type " + elementId);
		}
		if (elementType == GgufValueType.ARRAY) {
			throw in.error("an array of arrays (not read)");
		}
		long length = in.u64("array length");
		long minimum = (elementType == GgufValueType.STRING) ? 8 : elementType.size();
		if (length < 0 || length > MAX_ARRAY) {
			throw in.error("the array length " + Long.toUnsignedString(length) + " of " + elementType
					+ " is more than the " + MAX_ARRAY + " elements allowed");
		}
		if (length > in.remaining() / minimum) {
			throw in.error("truncated: the array length " + length + " of " + elementType + " does not fit the "
					+ in.remaining() + " bytes left in the file");
		}
		long start = in.position;
		if (elementType == GgufValueType.STRING) {
			for (long i = 0; i < length; i++) {
				in.skipString("element " + i);
			}
		}
		else {
			in.skip(length * elementType.size(), "the array's elements");
		}
		MemorySegment elements = in.segment.asSlice(start, in.position - start);
		return new GgufMetadata.Value(type, new GgufMetadata.ArrayValue(elementType, (int) length, elements));
	}

	private static Object readScalar(Cursor in, GgufValueType type) {
		return switch (type) {
			case UINT8 -> in.u8("value") & 0xFFL;
			case INT8 -> (long) in.u8("value");
			case UINT16 -> in.u16("value") & 0xFFFFL;
			case INT16 -> (long) in.u16("value");
			case UINT32 -> in.u32("value") & 0xFFFF_FFFFL;
			case INT32 -> (long) in.u32("value");
			case UINT64, INT64 -> in.u64("value");
			case FLOAT32 -> {
				in.need(4, "value");
				float value = in.segment.get(F32, in.position);
				in.position += 4;
				yield value;
			}
			case FLOAT64 -> {
				in.need(8, "value");
				double value = in.segment.get(F64, in.position);
				in.position += 8;
				yield value;
			}
			case BOOL -> {
				byte value = in.u8("value");
				if (value != 0 && value != 1) {
					throw in.error("the BOOL value is " + value + ", not 0 or 1");
				}
				yield value == 1;
			}
			case STRING -> in.string("value", MAX_ARRAY);
			case ARRAY -> throw new IllegalStateException();
		};
	}

	private static String describeMagic(MemorySegment file) {
		StringBuilder bytes = new StringBuilder();
		for (long i = 0; i < Math.min(4, file.byteSize()); i++) {
			bytes.append(String.format("%02x", file.get(ValueLayout.JAVA_BYTE, i)));
		}
		return bytes.toString();
	}

	/** Reads the file front to back; every read checks that the bytes are there first. */
	private static final class Cursor {

		private final MemorySegment segment;

		private long position;

		private String context = "";

		Cursor(MemorySegment segment) {
			this.segment = segment;
		}

		long remaining() {
			return this.segment.byteSize() - this.position;
		}

		GgufFormatException error(String what) {
			return new GgufFormatException(this.context + ": " + what);
		}

		void need(long bytes, String what) {
			if (bytes < 0 || bytes > remaining()) {
				throw error("truncated: the " + what + " needs " + Long.toUnsignedString(bytes) + " bytes at offset "
						+ this.position + ", the file ends at " + this.segment.byteSize());
			}
		}

		void skip(long bytes, String what) {
			need(bytes, what);
			this.position += bytes;
		}

		byte u8(String what) {
			need(1, what);
			return this.segment.get(ValueLayout.JAVA_BYTE, this.position++);
		}

		short u16(String what) {
			need(2, what);
			short value = this.segment.get(U16, this.position);
			this.position += 2;
			return value;
		}

		int u32(String what) {
			need(4, what);
			int value = this.segment.get(U32, this.position);
			this.position += 4;
			return value;
		}

		long u64(String what) {
			need(8, what);
			long value = this.segment.get(U64, this.position);
			this.position += 8;
			return value;
		}

		/** A u64 count, at most {@code max}. */
		long count(String what, long max) {
			long count = u64(what);
			if (count < 0 || count > max) {
				throw error("the " + what + " is " + Long.toUnsignedString(count) + " (at most " + max + " allowed)");
			}
			return count;
		}

		/**
		 * Checks that {@code count} items of at least {@code minBytes} each fit the bytes
		 * left.
		 */
		void fits(long count, String what, long minBytes) {
			if (count > remaining() / minBytes) {
				throw error("truncated: the " + what + " is " + count + ", more than the " + remaining()
						+ " bytes left in the file can hold");
			}
		}

		String string(String what, long maxBytes) {
			long length = stringLength(what, maxBytes);
			String value = GgufMetadata.utf8(this.segment.asSlice(this.position, length),
					this.context + ": the " + what);
			this.position += length;
			return value;
		}

		void skipString(String what) {
			long length = stringLength(what, MAX_ARRAY);
			this.position += length;
		}

		private long stringLength(String what, long maxBytes) {
			long length = u64(what + "'s length");
			if (length < 0 || length > maxBytes) {
				throw error("the " + what + "'s length is " + Long.toUnsignedString(length) + " (at most " + maxBytes
						+ " bytes allowed)");
			}
			need(length, what);
			return length;
		}

	}

}
