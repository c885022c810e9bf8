package dev.nixl4j.sample.model;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Writes small GGUF files for the tests: metadata written by callbacks (so that a test
 * can write any bytes, well formed or not) and tensors whose offsets it lays out with the
 * alignment, unless a test sets one. Records the section boundaries it wrote.
 */
final class GgufWriter {

	/** Little-endian bytes. */
	static final class Bytes {

		private final ByteArrayOutputStream out = new ByteArrayOutputStream();

		Bytes u8(int v) {
			this.out.write(v);
			return this;
		}

		Bytes u16(int v) {
			return u8(v).u8(v >>> 8);
		}

		Bytes u32(long v) {
			return u16((int) v).u16((int) (v >>> 16));
		}

		Bytes u64(long v) {
			return u32(v).u32(v >>> 32);
		}

		Bytes f32(float v) {
			return u32(Float.floatToRawIntBits(v));
		}

		Bytes f64(double v) {
			return u64(Double.doubleToRawLongBits(v));
		}

		Bytes str(String s) {
			return raw(s.getBytes(StandardCharsets.UTF_8), true);
		}

		Bytes raw(byte[] bytes, boolean withLength) {
			if (withLength) {
				u64(bytes.length);
			}
			this.out.writeBytes(bytes);
			return this;
		}

		int size() {
			return this.out.size();
		}

		byte[] toArray() {
			return this.out.toByteArray();
		}

	}

	record Tensor(String name, long typeId, long[] dims, byte[] data, long offset) {
	}

	static final long AUTO = Long.MIN_VALUE;

	int magic = 0x46554747;

	long version = 3;

	long alignment = GgufFile.DEFAULT_ALIGNMENT;

	Long tensorCount;

	Long keyCount;

	private final List<Consumer<Bytes>> keys = new ArrayList<>();

	private final List<Tensor> tensors = new ArrayList<>();

	/**
	 * Offsets where a section (header, each key/value, each tensor info, data, each
	 * tensor) ends.
	 */
	final List<Integer> boundaries = new ArrayList<>();

	/**
	 * Adds a key/value: the key, then the value's type id and bytes as {@code value}
	 * writes them.
	 */
	GgufWriter kv(String key, Consumer<Bytes> value) {
		this.keys.add((b) -> value.accept(b.str(key)));
		return this;
	}

	/** Adds a key/value written entirely by {@code entry} (the key included). */
	GgufWriter rawKv(Consumer<Bytes> entry) {
		this.keys.add(entry);
		return this;
	}

	GgufWriter tensor(String name, GgmlType type, long[] dims, byte[] data) {
		return tensor(name, type.id(), dims, data, AUTO);
	}

	/** Adds a tensor; {@code offset} {@link #AUTO} lays it out after the previous one. */
	GgufWriter tensor(String name, long typeId, long[] dims, byte[] data, long offset) {
		this.tensors.add(new Tensor(name, typeId, dims, data, offset));
		return this;
	}

	byte[] write() {
		this.boundaries.clear();
		Bytes b = new Bytes();
		b.u32(this.magic).u32(this.version);
		b.u64((this.tensorCount != null) ? this.tensorCount : this.tensors.size());
		b.u64((this.keyCount != null) ? this.keyCount : this.keys.size());
		this.boundaries.add(b.size());
		for (Consumer<Bytes> key : this.keys) {
			key.accept(b);
			this.boundaries.add(b.size());
		}
		long next = 0;
		List<Long> offsets = new ArrayList<>();
		for (Tensor t : this.tensors) {
			long offset = (t.offset() != AUTO) ? t.offset() : next;
			offsets.add(offset);
			next = align(offset + t.data().length);
			b.str(t.name()).u32(t.dims().length);
			for (long d : t.dims()) {
				b.u64(d);
			}
			b.u32(t.typeId()).u64(offset);
			this.boundaries.add(b.size());
		}
		int data = (int) align(b.size());
		while (b.size() < data) {
			b.u8(0);
		}
		this.boundaries.add(data);
		for (int i = 0; i < this.tensors.size(); i++) {
			// A test's offset far past the data goes unwritten: the file ends before it.
			while (b.size() < data + offsets.get(i) && data + offsets.get(i) - b.size() < 4096) {
				b.u8(0);
			}
			if (b.size() == data + offsets.get(i)) {
				b.raw(this.tensors.get(i).data(), false);
				this.boundaries.add(b.size());
			}
		}
		return b.toArray();
	}

	private long align(long offset) {
		return (offset + this.alignment - 1) / this.alignment * this.alignment;
	}

}
