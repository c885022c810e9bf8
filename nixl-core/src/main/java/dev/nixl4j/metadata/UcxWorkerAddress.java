package dev.nixl4j.metadata;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

import dev.nixl4j.NixlException;

/**
 * Structural check of the connection info of NIXL's {@code UCX} backend: a packed UCP
 * worker address, as {@code ucp_worker_query} writes it, which NIXL passes to
 * {@code ucp_ep_create} without its length. UCX 1.23 (the UCX inside the nixl-cu12 1.5.1
 * wheel) unpacks it in {@code ucp_address_unpack} ({@code src/ucp/wireup/address.c})
 * without bounds checks, aborts the process on a format version it does not know
 * ({@code ucs_assertv_always}), and hands the device and interface addresses it finds to
 * the transport with a matching name checksum, which reads them as its own structures,
 * mostly without looking at their lengths.
 *
 * <p>
 * Accepted are the shapes UCX 1.23 writes for a worker address in its default
 * (non-unified) mode, in both address formats (v1 is UCX's default; NIXL switches to v2
 * on hosts with EFA devices, and {@code UCX_ADDRESS_VERSION} can choose either): <pre>
 * header      v1: one byte, version 0 in the low nibble, flags in the high one
 *             v2: version 1 in the low nibble and the peer's release in the high one, then the flags byte
 *             flags: worker UUID (always), debug info (optional), nothing else
 * uuid        8 bytes
 * name        with the debug-info flag: a length byte and that many bytes
 * per device  md byte: memory domain index (below 64; v2: 127 means "in the next byte")
 *             length byte: LAST, NUM_PATHS, SYS_DEVICE flags and the device address length
 *               (v2: 31 means "in the next byte"); a path count (2 or more) and a system device
 *               (not 255) follow when flagged, then the device address
 *             per interface: transport name checksum (2 bytes), attributes (v1: 16 bytes of
 *               overhead, bandwidth, latency as finite floats, bandwidth above zero, and flags;
 *               v2: 8 bytes), a length byte with the LAST flag and the interface address length
 *               (v2: 63 means "in the next byte"), then the interface address; never an
 *               endpoint address
 * v1 trailer  a device flagged empty and LAST, whose md byte carries the release (UCX 1.16 and
 *             later); older peers flag their last real device LAST instead
 * </pre> At least one device, at most 128 interfaces, and nothing after the last device.
 * For the transports of this UCX whose address formats were checked against real
 * addresses ({@code self}, {@code tcp}, {@code sysv}, {@code posix}, {@code cma}), the
 * device and interface addresses must also have the lengths those transports write and
 * read; an interface of any other transport is checked for its framing only (one this UCX
 * does not have is never handed to a transport). Peers in UCX's unified mode
 * ({@code UCX_UNIFIED_MODE=y}) write another layout and are refused.
 */
final class UcxWorkerAddress {

	private static final int VERSION_V1 = 0;

	private static final int VERSION_V2 = 1;

	private static final int FLAG_DEBUG_INFO = 0x01;

	private static final int FLAG_WORKER_UUID = 0x02;

	/** {@code UCP_NULL_RESOURCE}: the md byte of an address without devices. */
	private static final int NULL_RESOURCE = 0xff;

	private static final int MD_EMPTY_DEVICE = 0x80;

	private static final int MD_INDEX_MASK = 0x7f;

	/**
	 * Bits that UCX 1.18 and older set in the md index, cleared when reading their
	 * addresses.
	 */
	private static final int MD_LEGACY_BITS = 0x60;

	/** The last release that sets {@link #MD_LEGACY_BITS}. */
	private static final int MD_LEGACY_LAST_RELEASE = 18;

	/** {@code UCP_MAX_MDS}: UCX indexes arrays of this size with the md index. */
	private static final int MAX_MDS = 64;

	/** {@code UCP_MAX_RESOURCES}: the most interfaces UCX unpacks. */
	private static final int MAX_INTERFACES = 128;

	private static final int FLAG_LAST = 0x80;

	private static final int DEVICE_NUM_PATHS = 0x40;

	private static final int DEVICE_SYS_DEVICE = 0x20;

	private static final int DEVICE_LENGTH_MASK = 0x1f;

	private static final int IFACE_HAS_EP_ADDRESS = 0x40;

	private static final int IFACE_LENGTH_MASK = 0x3f;

	private static final int ATTRIBUTES_V1 = 16;

	private static final int ATTRIBUTES_V2 = 8;

	/**
	 * The minor version of the UCX inside NIXL 1.5.1, against which peers' releases are
	 * read.
	 */
	private static final int LOCAL_RELEASE = 23;

	private static final int RELEASE_RANGE = 16;

	// ucs_crc16_string of the transport names whose addresses are checked here.
	private static final int TL_SELF = 0x7563;

	private static final int TL_TCP = 0x19cf;

	private static final int TL_SYSV = 0x538d;

	private static final int TL_POSIX = 0xd3a7;

	private static final int TL_CMA = 0x8b47;

	private static final int AF_INET = 2;

	private static final int AF_INET6 = 10;

	private static final int TCP_FLAG_LOOPBACK = 0x01;

	/** {@code uct_tcp_device_addr_t}: flags and address family. */
	private static final int TCP_DEVICE_HEADER = 2;

	/**
	 * {@code uct_iface_local_addr_ns_t}: system id (bit 63: namespace follows) and
	 * namespace.
	 */
	private static final int LOCAL_ADDRESS_NS = 12;

	private static final int LOCAL_ADDRESS_BASE = 8;

	private static final VarHandle SHORT_LE = MethodHandles.byteArrayViewVarHandle(short[].class,
			ByteOrder.LITTLE_ENDIAN);

	private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

	private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class,
			ByteOrder.LITTLE_ENDIAN);

	private final byte[] data;

	private final int start;

	private final int end;

	private int position;

	private int version;

	private UcxWorkerAddress(byte[] data, int offset, int length) {
		this.data = data;
		this.start = offset;
		this.end = offset + length;
		this.position = offset;
	}

	/**
	 * Checks a UCX worker address inside a metadata blob.
	 * @param data the blob
	 * @param offset where the address starts
	 * @param length the address's length
	 * @throws NixlException with {@code INVALID_METADATA} naming what is wrong (offsets,
	 * lengths and field names, never the bytes)
	 */
	static void check(byte[] data, int offset, int length) {
		new UcxWorkerAddress(data, offset, length).check();
	}

	private void check() {
		int header = u8("header");
		this.version = header & 0x0f;
		if (this.version != VERSION_V1 && this.version != VERSION_V2) {
			throw failure(this.start, "unknown address format version " + this.version + " (UCX writes " + VERSION_V1
					+ " and " + VERSION_V2 + ")");
		}
		int flags = this.version == VERSION_V1 ? header >>> 4 : u8("header flags");
		if ((flags & FLAG_WORKER_UUID) == 0 || (flags & ~(FLAG_WORKER_UUID | FLAG_DEBUG_INFO)) != 0) {
			throw failure(this.position - 1, "header flags 0x" + Integer.toHexString(flags)
					+ " (a worker address has the worker UUID flag and at most the debug info flag)");
		}
		skip(Long.BYTES, "worker UUID");
		if ((flags & FLAG_DEBUG_INFO) != 0) {
			skip(u8("worker name length"), "worker name");
		}
		if (peek("first device") == NULL_RESOURCE) {
			throw failure(this.position, "no device (UCX always has at least one)");
		}
		int[] mdIndexes = new int[MAX_INTERFACES];
		int[] mdOffsets = new int[MAX_INTERFACES];
		int devices = 0;
		int interfaces = 0;
		int peerRelease = 0;
		boolean last = false;
		while (!last) {
			int deviceAt = this.position;
			int mdByte = u8("memory domain index");
			int mdIndex = extended(mdByte & MD_INDEX_MASK, MD_INDEX_MASK, "memory domain index");
			int lengthByte = u8("device address length");
			last = (lengthByte & FLAG_LAST) != 0;
			int length = extended(lengthByte & DEVICE_LENGTH_MASK, DEVICE_LENGTH_MASK, "device address length");
			if ((mdByte & MD_EMPTY_DEVICE) != 0) {
				// UCX never writes a device without interfaces except the release trailer
				// of v1.
				if (this.version != VERSION_V1 || !last || length != 0
						|| (lengthByte & (DEVICE_NUM_PATHS | DEVICE_SYS_DEVICE)) != 0 || mdIndex >= RELEASE_RANGE) {
					throw failure(deviceAt, "device " + devices + " is flagged empty but is not the release trailer"
							+ " of a v1 address");
				}
				peerRelease = release(mdIndex);
				break;
			}
			if ((lengthByte & DEVICE_NUM_PATHS) != 0 && u8("path count") < 2) {
				throw failure(this.position - 1, "device " + devices + " has a path count below 2");
			}
			if ((lengthByte & DEVICE_SYS_DEVICE) != 0 && u8("system device") == NULL_RESOURCE) {
				throw failure(this.position - 1, "device " + devices + " names the unknown system device");
			}
			int deviceAddress = this.position;
			skip(length, "device address");
			boolean lastInterface = false;
			while (!lastInterface) {
				if (interfaces == MAX_INTERFACES) {
					throw failure(this.position, "more than " + MAX_INTERFACES + " interfaces");
				}
				mdIndexes[interfaces] = mdIndex;
				mdOffsets[interfaces] = deviceAt;
				interfaces++;
				lastInterface = iface(devices, deviceAddress, length);
			}
			devices++;
		}
		if (this.position != this.end) {
			throw failure(this.position, (this.end - this.position) + " bytes after the last device");
		}
		// UCX clears the legacy bits of peers of release 18 and older (and of v1 peers
		// without
		// a release trailer), then uses the index for arrays of MAX_MDS entries.
		boolean legacy = this.version == VERSION_V1 && peerRelease <= MD_LEGACY_LAST_RELEASE;
		for (int i = 0; i < interfaces; i++) {
			int index = legacy ? mdIndexes[i] & ~MD_LEGACY_BITS : mdIndexes[i];
			if (index >= MAX_MDS) {
				throw failure(mdOffsets[i], "memory domain index " + index + " is not below " + MAX_MDS);
			}
		}
	}

	/** Checks one interface entry; returns whether it is the last of its device. */
	private boolean iface(int device, int deviceAddress, int deviceLength) {
		int at = this.position;
		need(Short.BYTES, "transport checksum");
		int transport = Short.toUnsignedInt((short) SHORT_LE.get(this.data, this.position));
		this.position += Short.BYTES;
		if (this.version == VERSION_V1) {
			need(ATTRIBUTES_V1, "interface attributes");
			float overhead = Float.intBitsToFloat((int) INT_LE.get(this.data, this.position));
			float bandwidth = Float.intBitsToFloat((int) INT_LE.get(this.data, this.position + 4));
			float latency = Float.intBitsToFloat((int) INT_LE.get(this.data, this.position + 8));
			if (!Float.isFinite(overhead) || !Float.isFinite(latency) || !Float.isFinite(bandwidth)
					|| !(bandwidth > 0)) {
				throw failure(this.position,
						"interface attributes of device " + device + " are not finite or have no bandwidth");
			}
			this.position += ATTRIBUTES_V1;
		}
		else {
			skip(ATTRIBUTES_V2, "interface attributes");
		}
		int lengthByte = u8("interface address length");
		if ((lengthByte & IFACE_HAS_EP_ADDRESS) != 0) {
			throw failure(this.position - 1, "an interface of device " + device
					+ " carries endpoint addresses, which a worker address never has");
		}
		int length = extended(lengthByte & IFACE_LENGTH_MASK, IFACE_LENGTH_MASK, "interface address length");
		int ifaceAddress = this.position;
		skip(length, "interface address");
		transport(transport, at, deviceAddress, deviceLength, ifaceAddress, length);
		return (lengthByte & FLAG_LAST) != 0;
	}

	/** The address shapes that the transports of this UCX write and expect to read. */
	private void transport(int transport, int at, int device, int deviceLength, int iface, int ifaceLength) {
		switch (transport) {
			case TL_SELF -> shape(deviceLength == 0 && ifaceLength == Long.BYTES, "self", at);
			case TL_TCP -> shape(ifaceLength == Short.BYTES && tcpDevice(device, deviceLength), "tcp", at);
			case TL_SYSV -> shape(localDevice(device, deviceLength) && ifaceLength == Long.BYTES, "sysv", at);
			// The segment id, then nothing, a PID namespace or a NUL-terminated
			// directory.
			case TL_POSIX -> shape(
					localDevice(device, deviceLength)
							&& (ifaceLength == Long.BYTES || ifaceLength == Long.BYTES + Integer.BYTES
									|| (ifaceLength > Long.BYTES && this.data[iface + ifaceLength - 1] == 0)),
					"posix", at);
			case TL_CMA ->
				shape(localDevice(device, deviceLength) && (ifaceLength == Integer.BYTES || ifaceLength == Long.BYTES),
						"cma", at);
			default -> {
				// A transport this UCX does not have: UCX compares the checksum and skips
				// it.
			}
		}
	}

	/**
	 * {@code uct_tcp_device_addr_t}: flags, family, then the IP address or, for loopback,
	 * a namespace address.
	 */
	private boolean tcpDevice(int device, int length) {
		if (length < TCP_DEVICE_HEADER) {
			return false;
		}
		int flags = this.data[device] & 0xff;
		int family = this.data[device + 1] & 0xff;
		if (family != AF_INET && family != AF_INET6) {
			return false;
		}
		if (flags == TCP_FLAG_LOOPBACK) {
			return length == TCP_DEVICE_HEADER + LOCAL_ADDRESS_NS;
		}
		return flags == 0 && length == TCP_DEVICE_HEADER + (family == AF_INET ? 4 : 16);
	}

	/**
	 * A shared-memory device address: the system id, and a namespace if its bit 63 says
	 * so.
	 */
	private boolean localDevice(int device, int length) {
		if (length == LOCAL_ADDRESS_BASE) {
			return (long) LONG_LE.get(this.data, device) >= 0;
		}
		return length == LOCAL_ADDRESS_NS && (long) LONG_LE.get(this.data, device) < 0;
	}

	private void shape(boolean valid, String transport, int at) {
		if (!valid) {
			throw failure(at, "the device or interface address of transport " + transport
					+ " does not have the shape UCX writes");
		}
	}

	/**
	 * The peer's release from the 4 bits it packs, as
	 * {@code ucp_address_unpack_release_version} reads them.
	 */
	private static int release(int packed) {
		int delta = LOCAL_RELEASE % RELEASE_RANGE - packed;
		int base = LOCAL_RELEASE / RELEASE_RANGE + (delta >= RELEASE_RANGE / 2 ? 1 : 0)
				- (delta <= -RELEASE_RANGE / 2 ? 1 : 0);
		return packed + Math.max(0, base) * RELEASE_RANGE;
	}

	/** A value that, in format v2, continues in the next byte when it equals its mask. */
	private int extended(int value, int mask, String what) {
		return this.version == VERSION_V2 && value == mask ? u8(what) : value;
	}

	private int peek(String what) {
		need(1, what);
		return this.data[this.position] & 0xff;
	}

	private int u8(String what) {
		int value = peek(what);
		this.position++;
		return value;
	}

	private void skip(int bytes, String what) {
		need(bytes, what);
		this.position += bytes;
	}

	private void need(int bytes, String what) {
		if (this.end - this.position < bytes) {
			throw failure(this.position, "truncated in the " + what + " (" + bytes + " bytes needed, "
					+ (this.end - this.position) + " left)");
		}
	}

	private NixlException failure(int offset, String what) {
		return MetadataFraming.failure(offset, "UCX connection info of " + (this.end - this.start) + " bytes: " + what);
	}

}
