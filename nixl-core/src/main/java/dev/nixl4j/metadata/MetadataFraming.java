package dev.nixl4j.metadata;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * Structural check of NIXL's agent metadata blob, the bytes that
 * {@code nixl_capi_get_local_md} and {@code nixl_capi_get_local_partial_md} produce and
 * {@code nixl_capi_load_remote_md} consumes, done in Java before the bytes reach native
 * code.
 *
 * <p>
 * NIXL 1.5.1 frames the blob with its {@code nixlSerDes} serializer: the header
 * {@code "nixlSerDes|"}, then fields of the form <em>tag</em>, a 64-bit little-endian
 * length, that many value bytes, and a {@code '|'}. The fields come in this order (counts
 * are 8-byte values, the memory type a 4-byte value): <pre>
 * "Agent"       agent name (non-empty)
 * "Conns"       connection count C
 * C times:      "t" backend name (non-empty), "c" connection info (non-empty; see below)
 * ""            the literal "MemSection"
 * "nixlSecElms" section count S
 * S times:      "bknd" backend name (non-empty)
 *               "nixlDList" the literal "nixlSDList"
 *               "t" memory type (0 DRAM .. 4 FILE), "n" descriptor count N (at least 1)
 *               N times: "" address, length and device id (8 bytes each) + backend key (opaque)
 * </pre> Nothing may follow the last section. The connection info of backend {@code UCX}
 * is a packed UCP worker address, which UCX reads without bounds and aborts the process
 * on when it does not know its format version; it must have one of the shapes UCX writes
 * ({@code UcxWorkerAddress}). The connection info of other backends is opaque here. The
 * key of a descriptor in a {@code UCX} section is a packed UCX remote key, which UCX
 * reads without bounds: a 64-bit map of memory domains, a UCX memory type (one byte, 0
 * HOST .. 9 GAUDI), then per domain in the map a size byte and that many bytes; what
 * follows is not read. NIXL's own reader is laxer (it accepts any separator byte, ignores
 * trailing bytes and does not guard its length arithmetic against wrap-around); every
 * blob NIXL writes passes this check.
 *
 * <p>
 * The backend keys in the blob (UCX rkeys, for example) grant remote access to the
 * registered memory, so neither the failure messages nor the {@code toString} of the
 * parsed types show addresses or opaque bytes; they show tags, counts, lengths and
 * offsets.
 */
public final class MetadataFraming {

	/** The default upper bound on the size of a metadata blob: 64 MiB. */
	public static final int DEFAULT_MAX_BYTES = 64 << 20;

	/** The number of NIXL memory types, {@code DRAM_SEG} (0) to {@code FILE_SEG} (4). */
	private static final int MEMORY_TYPES = 5;

	private static final String OPERATION = "load_remote_md";

	private static final byte[] HEADER = ascii("nixlSerDes|");

	private static final byte[] MEM_SECTION = ascii("MemSection");

	private static final byte[] BLOB_DESC_LIST = ascii("nixlSDList");

	private static final byte SEPARATOR = '|';

	/** Address, length and device id of a {@code nixlBasicDesc}. */
	private static final int BASIC_DESC_BYTES = 3 * Long.BYTES;

	/**
	 * The backend whose descriptor keys are packed UCX remote keys
	 * ({@code ucp_rkey_pack}).
	 */
	private static final String UCX_BACKEND = "UCX";

	/** The memory-domain map and the memory type that start a packed UCX remote key. */
	private static final int UCX_KEY_HEADER_BYTES = Long.BYTES + 1;

	/**
	 * The UCX memory types ({@code ucs_memory_type_t}, HOST to GAUDI) of the UCX that
	 * NIXL 1.5.1 ships.
	 */
	private static final int UCX_MEMORY_TYPES = 10;

	private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class,
			ByteOrder.LITTLE_ENDIAN);

	private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

	private static final Tag AGENT = new Tag("Agent", "agent name");

	private static final Tag CONNS = new Tag("Conns", "connection count");

	private static final Tag CONN_BACKEND = new Tag("t", "connection backend");

	private static final Tag CONN_INFO = new Tag("c", "connection info");

	private static final Tag MARKER = new Tag("", "memory section marker");

	private static final Tag SECTION_COUNT = new Tag("nixlSecElms", "section count");

	private static final Tag SECTION_BACKEND = new Tag("bknd", "section backend");

	private static final Tag LIST_TYPE = new Tag("nixlDList", "descriptor list type");

	private static final Tag MEMORY_TYPE = new Tag("t", "memory type");

	private static final Tag DESC_COUNT = new Tag("n", "descriptor count");

	private static final Tag DESC = new Tag("", "descriptor");

	// Smallest encodings of the repeated elements; a count that the remaining bytes
	// cannot hold
	// is rejected before the loop, which also bounds every list capacity by the input
	// size.
	private static final int MIN_CONNECTION_BYTES = CONN_BACKEND.fieldBytes(1) + CONN_INFO.fieldBytes(1);

	private static final int MIN_DESC_BYTES = DESC.fieldBytes(BASIC_DESC_BYTES);

	private static final int MIN_SECTION_BYTES = SECTION_BACKEND.fieldBytes(1)
			+ LIST_TYPE.fieldBytes(BLOB_DESC_LIST.length) + MEMORY_TYPE.fieldBytes(Integer.BYTES)
			+ DESC_COUNT.fieldBytes(Long.BYTES) + MIN_DESC_BYTES;

	private MetadataFraming() {
	}

	/**
	 * Checks and parses a metadata blob of at most {@link #DEFAULT_MAX_BYTES}.
	 * @param data the blob as produced by NIXL's {@code getLocalMD} or
	 * {@code getLocalPartialMD}
	 * @return what the blob describes
	 * @throws NixlException with {@link NixlStatus#INVALID_METADATA} if the blob is
	 * malformed
	 */
	public static ParsedMetadata parse(byte[] data) {
		return parse(data, DEFAULT_MAX_BYTES);
	}

	/**
	 * Checks and parses a metadata blob.
	 * @param data the blob as produced by NIXL's {@code getLocalMD} or
	 * {@code getLocalPartialMD}
	 * @param maxBytes the largest blob to accept
	 * @return what the blob describes
	 * @throws NixlException with {@link NixlStatus#INVALID_METADATA} if the blob is
	 * malformed or larger than {@code maxBytes}
	 * @throws IllegalArgumentException if {@code maxBytes} is negative
	 */
	public static ParsedMetadata parse(byte[] data, int maxBytes) {
		Objects.requireNonNull(data, "data");
		if (maxBytes < 0) {
			throw new IllegalArgumentException("maxBytes must not be negative: " + maxBytes);
		}
		if (data.length > maxBytes) {
			throw invalid("metadata of " + data.length + " bytes exceeds the limit of " + maxBytes + " bytes");
		}
		return new Reader(data).metadata();
	}

	private static NixlException invalid(String detail) {
		return new NixlException(NixlStatus.INVALID_METADATA, OPERATION, null, null, detail);
	}

	/**
	 * A failure at a byte offset of the blob; the message names what is wrong, never the
	 * bytes.
	 */
	static NixlException failure(int offset, String what) {
		return invalid(what + " at byte offset " + offset);
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * What a metadata blob describes.
	 *
	 * @param agentName the name of the agent the metadata belongs to
	 * @param connections the connection info entries, one per backend; empty in partial
	 * metadata that carries descriptors only
	 * @param sections the registered memory, one section per memory type and backend
	 */
	public record ParsedMetadata(String agentName, List<BackendConnection> connections, List<MemorySection> sections) {

		/**
		 * Creates parsed metadata; the lists are copied.
		 * @param agentName the agent name
		 * @param connections the connection entries
		 * @param sections the memory sections
		 */
		public ParsedMetadata {
			Objects.requireNonNull(agentName, "agentName");
			connections = List.copyOf(connections);
			sections = List.copyOf(sections);
		}

		/**
		 * Says whether one registered region contains the range
		 * {@code [address, address + length)} on the given device, the condition NIXL
		 * checks for each remote descriptor of a transfer.
		 * @param backend the backend whose section to search, or {@code null} for any
		 * backend
		 * @param memoryType the NIXL memory type ({@code 0} DRAM, {@code 1} VRAM,
		 * {@code 2} block, {@code 3} object, {@code 4} file)
		 * @param address the start of the range, as an unsigned 64-bit value
		 * @param length the length of the range, as an unsigned 64-bit value
		 * @param deviceId the device id
		 * @return {@code true} if a single region covers the whole range
		 */
		public boolean covers(@Nullable String backend, int memoryType, long address, long length, long deviceId) {
			for (MemorySection section : this.sections) {
				if (section.memoryType() == memoryType && (backend == null || backend.equals(section.backend()))
						&& section.covers(address, length, deviceId)) {
					return true;
				}
			}
			return false;
		}

		@Override
		public String toString() {
			int regions = 0;
			for (MemorySection section : this.sections) {
				regions += section.regions().size();
			}
			return "ParsedMetadata[agent='" + this.agentName + "', connections=" + this.connections.size()
					+ ", sections=" + this.sections.size() + ", regions=" + regions + "]";
		}

	}

	/**
	 * A backend's connection info entry.
	 *
	 * @param backend the backend name, for example {@code UCX}
	 * @param connectionInfoLength the size of the opaque connection info in bytes
	 */
	public record BackendConnection(String backend, int connectionInfoLength) {
	}

	/**
	 * The registered memory of one memory type on one backend.
	 *
	 * @param backend the backend name, for example {@code UCX}
	 * @param memoryType the NIXL memory type, {@code 0} (DRAM) to {@code 4} (file)
	 * @param regions the registered regions, never empty
	 */
	public record MemorySection(String backend, int memoryType, List<Region> regions) {

		/**
		 * Creates a section; the region list is copied.
		 * @param backend the backend name
		 * @param memoryType the memory type
		 * @param regions the regions
		 */
		public MemorySection {
			Objects.requireNonNull(backend, "backend");
			regions = List.copyOf(regions);
		}

		/**
		 * Says whether one region of this section contains the given range on the given
		 * device.
		 * @param address the start of the range, unsigned
		 * @param length the length of the range, unsigned
		 * @param deviceId the device id
		 * @return {@code true} if a single region covers the whole range
		 */
		public boolean covers(long address, long length, long deviceId) {
			for (Region region : this.regions) {
				if (region.covers(address, length, deviceId)) {
					return true;
				}
			}
			return false;
		}

		@Override
		public String toString() {
			return "MemorySection[backend=" + this.backend + ", memoryType=" + this.memoryType + ", regions="
					+ this.regions.size() + "]";
		}

	}

	/**
	 * A registered region. Address and length are unsigned 64-bit values; a file
	 * registered with length 0 appears with length {@code 0xFFFF_FFFF_FFFF_FFFF} (no
	 * limit).
	 *
	 * @param address the start address
	 * @param length the length in bytes
	 * @param deviceId the device id (GPU ordinal, file descriptor, ...)
	 */
	public record Region(long address, long length, long deviceId) {

		/**
		 * Says whether this region contains {@code [address, address + length)} on the
		 * given device.
		 * @param address the start of the range, unsigned
		 * @param length the length of the range, unsigned
		 * @param deviceId the device id
		 * @return {@code true} if the range lies within this region
		 */
		public boolean covers(long address, long length, long deviceId) {
			if (deviceId != this.deviceId || Long.compareUnsigned(address, this.address) < 0) {
				return false;
			}
			// Unsigned and without forming address + length, which may wrap for huge
			// ranges.
			long offset = address - this.address;
			return Long.compareUnsigned(offset, this.length) <= 0
					&& Long.compareUnsigned(length, this.length - offset) <= 0;
		}

		// The address locates memory that the blob's keys unlock; it stays out of logs.
		@Override
		public String toString() {
			return "Region[length=" + Long.toUnsignedString(this.length) + ", deviceId=" + this.deviceId + "]";
		}

	}

	/** A field tag with the words that name it in failure messages. */
	private static final class Tag {

		private final String text;

		private final String role;

		private final byte[] bytes;

		Tag(String text, String role) {
			this.text = text;
			this.role = role;
			this.bytes = ascii(text);
		}

		int fieldBytes(int valueBytes) {
			return this.bytes.length + Long.BYTES + valueBytes + 1;
		}

		String describe() {
			return this.role + " (tag '" + this.text + "')";
		}

	}

	/**
	 * A cursor over the blob; every read checks its bounds against the bytes that remain.
	 */
	private static final class Reader {

		private final byte[] data;

		private int position;

		private int valueOffset;

		private int valueLength;

		Reader(byte[] data) {
			this.data = data;
		}

		ParsedMetadata metadata() {
			header();
			String agentName = text(AGENT);
			int connectionCount = count(u64(CONNS), MIN_CONNECTION_BYTES, "connection");
			List<BackendConnection> connections = new ArrayList<>(connectionCount);
			for (int i = 0; i < connectionCount; i++) {
				String backend = text(CONN_BACKEND);
				field(CONN_INFO);
				if (this.valueLength == 0) {
					throw failure(this.valueOffset, "empty connection info for backend " + backend);
				}
				if (UCX_BACKEND.equals(backend)) {
					UcxWorkerAddress.check(this.data, this.valueOffset, this.valueLength);
				}
				connections.add(new BackendConnection(backend, this.valueLength));
			}
			literal(MARKER, MEM_SECTION);
			int sectionCount = count(u64(SECTION_COUNT), MIN_SECTION_BYTES, "memory section");
			List<MemorySection> sections = new ArrayList<>(sectionCount);
			for (int i = 0; i < sectionCount; i++) {
				sections.add(section());
			}
			if (this.position != this.data.length) {
				throw failure(this.position,
						(this.data.length - this.position) + " bytes after the last memory section");
			}
			return new ParsedMetadata(agentName, connections, sections);
		}

		private MemorySection section() {
			String backend = text(SECTION_BACKEND);
			literal(LIST_TYPE, BLOB_DESC_LIST);
			int memoryTypeAt = this.position;
			int memoryType = u32(MEMORY_TYPE);
			// NIXL 1.5.1 does not check this value: loading a section of type 7 kills the
			// process (SIGSEGV).
			if (Integer.compareUnsigned(memoryType, MEMORY_TYPES) >= 0) {
				throw failure(memoryTypeAt, "unknown memory type " + Integer.toUnsignedString(memoryType));
			}
			int descCountAt = this.position;
			int descCount = count(u64(DESC_COUNT), MIN_DESC_BYTES, "descriptor");
			// NIXL never writes an empty section and refuses to load one.
			if (descCount == 0) {
				throw failure(descCountAt, "memory section of backend " + backend + " without descriptors");
			}
			List<Region> regions = new ArrayList<>(descCount);
			for (int i = 0; i < descCount; i++) {
				field(DESC);
				if (this.valueLength < BASIC_DESC_BYTES) {
					throw failure(this.valueOffset,
							"descriptor of " + this.valueLength + " bytes, shorter than " + BASIC_DESC_BYTES);
				}
				int at = this.valueOffset;
				if (UCX_BACKEND.equals(backend)) {
					ucxRemoteKey(at + BASIC_DESC_BYTES, this.valueLength - BASIC_DESC_BYTES);
				}
				regions.add(new Region(longAt(at), longAt(at + Long.BYTES), longAt(at + 2 * Long.BYTES)));
			}
			return new MemorySection(backend, memoryType, regions);
		}

		/**
		 * Checks the packed UCX remote key of a descriptor. NIXL 1.5.1 passes it to
		 * {@code ucp_ep_rkey_unpack} without its length and UCX trusts what it reads.
		 * Loading such keys killed the process with SIGSEGV (found by MetadataFuzzTest):
		 * a memory type of 10 or more indexes UCX's per-type tables out of bounds (in
		 * {@code ucp_proto_init_add_buffer_copy_time} or
		 * {@code ucp_worker_iface_estimate_perf}), and a key shorter than 9 bytes (an
		 * empty one crashed in libc) or than its domain map says is read past its end.
		 */
		private void ucxRemoteKey(int offset, int length) {
			if (length < UCX_KEY_HEADER_BYTES) {
				throw failure(offset, "UCX remote key of " + length + " bytes, shorter than " + UCX_KEY_HEADER_BYTES);
			}
			int memoryType = this.data[offset + Long.BYTES] & 0xff;
			if (memoryType >= UCX_MEMORY_TYPES) {
				throw failure(offset + Long.BYTES, "UCX remote key of unknown UCX memory type " + memoryType);
			}
			int domains = Long.bitCount(longAt(offset));
			int at = offset + UCX_KEY_HEADER_BYTES;
			int end = offset + length;
			for (int i = 0; i < domains; i++) {
				// A size byte, then that many bytes of the domain's key.
				int next = at < end ? at + 1 + (this.data[at] & 0xff) : end + 1;
				if (next > end) {
					throw failure(offset, "UCX remote key of " + length + " bytes ends within the key of memory domain "
							+ (i + 1) + " of " + domains);
				}
				at = next;
			}
		}

		private void header() {
			if (this.data.length == 0) {
				throw failure(0, "metadata is empty");
			}
			if (!startsWith(0, HEADER)) {
				throw failure(0, "missing the nixlSerDes header");
			}
			this.position = HEADER.length;
		}

		/**
		 * Reads one field, leaving its value's bounds in {@link #valueOffset} and
		 * {@link #valueLength}.
		 */
		private void field(Tag tag) {
			int start = this.position;
			byte[] tagBytes = tag.bytes;
			if (remaining() < tagBytes.length + Long.BYTES) {
				throw failure(start, "truncated before " + tag.describe());
			}
			if (!startsWith(start, tagBytes)) {
				throw failure(start, "expected " + tag.describe());
			}
			int lengthAt = start + tagBytes.length;
			long length = longAt(lengthAt);
			this.position = lengthAt + Long.BYTES;
			// The value is followed by its separator, so it can use at most remaining() -
			// 1 bytes.
			int room = remaining() - 1;
			if (room < 0 || Long.compareUnsigned(length, room) > 0) {
				throw failure(lengthAt, tag.describe() + " claims " + Long.toUnsignedString(length)
						+ " bytes where at most " + Math.max(room, 0) + " remain");
			}
			this.valueOffset = this.position;
			this.valueLength = (int) length;
			this.position += this.valueLength;
			if (this.data[this.position] != SEPARATOR) {
				throw failure(this.position, tag.describe() + " is not terminated by '|'");
			}
			this.position++;
		}

		private String text(Tag tag) {
			field(tag);
			if (this.valueLength == 0) {
				throw failure(this.valueOffset, "empty " + tag.describe());
			}
			// NIXL keeps names as raw bytes: a name Java would decode differently
			// (invalid UTF-8,
			// or a NUL that ends it early for C) could never be addressed or invalidated
			// again.
			for (int i = this.valueOffset; i < this.valueOffset + this.valueLength; i++) {
				if (this.data[i] == 0) {
					throw failure(i, tag.describe() + " contains a NUL byte");
				}
			}
			try {
				return StandardCharsets.UTF_8.newDecoder()
					.onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
					.onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
					.decode(java.nio.ByteBuffer.wrap(this.data, this.valueOffset, this.valueLength))
					.toString();
			}
			catch (java.nio.charset.CharacterCodingException ex) {
				throw failure(this.valueOffset, tag.describe() + " is not valid UTF-8");
			}
		}

		private void literal(Tag tag, byte[] expected) {
			field(tag);
			if (this.valueLength != expected.length || !startsWith(this.valueOffset, expected)) {
				throw failure(this.valueOffset,
						tag.describe() + " is not '" + new String(expected, StandardCharsets.US_ASCII) + "'");
			}
		}

		private long u64(Tag tag) {
			fixed(tag, Long.BYTES);
			return longAt(this.valueOffset);
		}

		private int u32(Tag tag) {
			fixed(tag, Integer.BYTES);
			return (int) INT_LE.get(this.data, this.valueOffset);
		}

		private void fixed(Tag tag, int size) {
			field(tag);
			if (this.valueLength != size) {
				throw failure(this.valueOffset,
						tag.describe() + " has " + this.valueLength + " bytes instead of " + size);
			}
		}

		/** Checks an element count against what the remaining bytes can hold at best. */
		private int count(long count, int minBytesEach, String element) {
			int fit = remaining() / minBytesEach;
			if (Long.compareUnsigned(count, fit) > 0) {
				throw failure(this.valueOffset, Long.toUnsignedString(count) + " " + element
						+ " entries cannot fit in the " + remaining() + " remaining bytes");
			}
			return (int) count;
		}

		private int remaining() {
			return this.data.length - this.position;
		}

		private long longAt(int offset) {
			return (long) LONG_LE.get(this.data, offset);
		}

		private boolean startsWith(int offset, byte[] expected) {
			return this.data.length - offset >= expected.length
					&& Arrays.equals(this.data, offset, offset + expected.length, expected, 0, expected.length);
		}

		private static NixlException failure(int offset, String what) {
			return MetadataFraming.failure(offset, what);
		}

	}

}
