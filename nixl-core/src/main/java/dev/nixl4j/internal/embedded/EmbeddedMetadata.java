package dev.nixl4j.internal.embedded;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * Writes and reads the embedded engine's metadata in NIXL's own serialization (the layout
 * that {@link dev.nixl4j.metadata.MetadataFraming} checks), so that it passes the same
 * checks as NIXL's and carries the same information: the agent's name, one connection
 * entry of backend {@value #BACKEND}, and one DRAM section whose descriptors carry, after
 * NIXL's address, length and device id, the registration id and its key.
 *
 * <p>
 * Connection info: a version byte, the agent instance id (16 bytes), the access token (16
 * bytes), the port (2 bytes, big-endian) and the host (UTF-8, the rest). Version 2,
 * written by an agent that offers the same-host path, has after the port the host's
 * length (2 bytes) and the host, the process id (8 bytes), the host identity's length (2
 * bytes) and the host identity (UTF-8).
 */
final class EmbeddedMetadata {

	/** The backend name in the metadata and the plugin name of the embedded engine. */
	static final String BACKEND = "EMBEDDED";

	static final int SECRET_BYTES = 16;

	private static final int CONNECTION_VERSION = 1;

	private static final int SAME_HOST_VERSION = 2;

	/** Longest host identity accepted from a peer. */
	private static final int MAX_IDENTITY_BYTES = 256;

	private static final int DESCRIPTOR_BYTES = 3 * Long.BYTES + Long.BYTES + SECRET_BYTES;

	private static final String OPERATION = "load_remote_md";

	private EmbeddedMetadata() {
	}

	/**
	 * Where an embedded agent listens and what proves a caller holds its metadata.
	 *
	 * @param sameHost where the agent runs, when it offers the same-host path, else
	 * {@code null}
	 */
	record Connection(byte[] instance, byte[] token, String host, int port, @Nullable SameHost sameHost) {

		Connection(byte[] instance, byte[] token, String host, int port) {
			this(instance, token, host, port, null);
		}

		Connection withSameHost(@Nullable SameHost offered) {
			return new Connection(this.instance, this.token, this.host, this.port, offered);
		}

		byte[] encode() {
			byte[] hostBytes = this.host.getBytes(StandardCharsets.UTF_8);
			SameHost offered = this.sameHost;
			if (offered == null) {
				return ByteBuffer.allocate(1 + 2 * SECRET_BYTES + 2 + hostBytes.length)
					.put((byte) CONNECTION_VERSION)
					.put(this.instance)
					.put(this.token)
					.putShort((short) this.port)
					.put(hostBytes)
					.array();
			}
			byte[] identity = offered.identity().getBytes(StandardCharsets.UTF_8);
			return ByteBuffer.allocate(1 + 2 * SECRET_BYTES + 2 + 2 + hostBytes.length + 8 + 2 + identity.length)
				.put((byte) SAME_HOST_VERSION)
				.put(this.instance)
				.put(this.token)
				.putShort((short) this.port)
				.putShort((short) hostBytes.length)
				.put(hostBytes)
				.putLong(offered.pid())
				.putShort((short) identity.length)
				.put(identity)
				.array();
		}

		static Connection decode(String agent, byte[] info) {
			if (info.length < 1 + 2 * SECRET_BYTES + 2 + 1
					|| (info[0] != CONNECTION_VERSION && info[0] != SAME_HOST_VERSION)) {
				throw invalid(agent, "its EMBEDDED connection info is not of version " + CONNECTION_VERSION + " or "
						+ SAME_HOST_VERSION);
			}
			ByteBuffer buffer = ByteBuffer.wrap(info, 1, info.length - 1);
			byte[] instance = new byte[SECRET_BYTES];
			byte[] token = new byte[SECRET_BYTES];
			buffer.get(instance).get(token);
			int port = Short.toUnsignedInt(buffer.getShort());
			if (info[0] == CONNECTION_VERSION) {
				String host = new String(info, buffer.position(), buffer.remaining(), StandardCharsets.UTF_8);
				return new Connection(instance, token, host, port);
			}
			try {
				byte[] hostBytes = new byte[Short.toUnsignedInt(buffer.getShort())];
				buffer.get(hostBytes);
				long pid = buffer.getLong();
				int identityLength = Short.toUnsignedInt(buffer.getShort());
				if (hostBytes.length == 0 || pid <= 0 || identityLength == 0 || identityLength > MAX_IDENTITY_BYTES
						|| identityLength != buffer.remaining()) {
					throw invalid(agent, "its EMBEDDED same-host connection info is malformed");
				}
				byte[] identity = new byte[identityLength];
				buffer.get(identity);
				return new Connection(instance, token, new String(hostBytes, StandardCharsets.UTF_8), port,
						new SameHost(new String(identity, StandardCharsets.UTF_8), pid));
			}
			catch (java.nio.BufferUnderflowException ex) {
				throw invalid(agent, "its EMBEDDED same-host connection info is truncated");
			}
		}

		/**
		 * Identifies the agent's incarnation: a restarted agent of the same name has
		 * another.
		 */
		String instanceId() {
			return java.util.HexFormat.of().formatHex(this.instance);
		}

		boolean sameAs(Connection other) {
			return java.util.Arrays.equals(this.instance, other.instance)
					&& java.util.Arrays.equals(this.token, other.token) && this.host.equals(other.host)
					&& this.port == other.port;
		}

		// the token grants access: it never appears in text
		@Override
		public String toString() {
			return "Connection[" + this.host + ":" + this.port + "]";
		}

	}

	/**
	 * Where an agent that offers the same-host path runs.
	 *
	 * @param identity the host's identity: its boot id and the agent's pid namespace
	 * @param pid the agent's process id in that namespace
	 */
	record SameHost(String identity, long pid) {
	}

	/** A region a peer registered, with what a request for it must present. */
	record RemoteRegion(MemoryDescriptor descriptor, long registration, byte[] key) {

		@Override
		public String toString() {
			return "RemoteRegion[" + this.descriptor.length() + " bytes, registration " + this.registration + "]";
		}

	}

	/** What a peer's metadata says. */
	record Parsed(String agent, @Nullable Connection connection, List<RemoteRegion> regions) {
	}

	/**
	 * Writes metadata.
	 * @param agent the agent name
	 * @param connection the connection entry, or {@code null} for partial metadata
	 * @param regions the regions to describe (DRAM)
	 * @return the blob
	 */
	static byte[] write(String agent, @Nullable Connection connection, List<RemoteRegion> regions) {
		Writer writer = new Writer();
		writer.raw("nixlSerDes|".getBytes(StandardCharsets.US_ASCII));
		writer.field("Agent", agent.getBytes(StandardCharsets.UTF_8));
		writer.field("Conns", u64(connection == null ? 0 : 1));
		if (connection != null) {
			writer.field("t", ascii(BACKEND));
			writer.field("c", connection.encode());
		}
		writer.field("", ascii("MemSection"));
		writer.field("nixlSecElms", u64(regions.isEmpty() ? 0 : 1));
		if (!regions.isEmpty()) {
			writer.field("bknd", ascii(BACKEND));
			writer.field("nixlDList", ascii("nixlSDList"));
			writer.field("t",
					ByteBuffer.allocate(Integer.BYTES)
						.order(ByteOrder.LITTLE_ENDIAN)
						.putInt(MemoryType.DRAM.code())
						.array());
			writer.field("n", u64(regions.size()));
			for (RemoteRegion region : regions) {
				MemoryDescriptor d = region.descriptor();
				writer.field("",
						ByteBuffer.allocate(DESCRIPTOR_BYTES)
							.order(ByteOrder.LITTLE_ENDIAN)
							.putLong(d.address())
							.putLong(d.length())
							.putLong(d.deviceId())
							.putLong(region.registration())
							.put(region.key())
							.array());
			}
		}
		return writer.bytes();
	}

	/**
	 * Reads metadata that already passed {@link dev.nixl4j.metadata.MetadataFraming}'s
	 * check.
	 * @param data the blob
	 * @return what it says
	 * @throws NixlException when it is not an embedded agent's metadata
	 */
	static Parsed read(byte[] data) {
		Reader reader = new Reader(data);
		reader.skip("nixlSerDes|".length());
		String agent = new String(reader.field("Agent"), StandardCharsets.UTF_8);
		long connections = reader.u64("Conns");
		Connection connection = null;
		List<String> backends = new ArrayList<>();
		for (long i = 0; i < connections; i++) {
			String backend = new String(reader.field("t"), StandardCharsets.US_ASCII);
			byte[] info = reader.field("c");
			backends.add(backend);
			if (BACKEND.equals(backend)) {
				connection = Connection.decode(agent, info);
			}
		}
		if (connections > 0 && connection == null) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, OPERATION, null, agent,
					"the metadata comes from an " + "agent without the embedded engine's transport (its backends: "
							+ backends + "); an embedded agent "
							+ "only talks to embedded agents, a native one to native ones");
		}
		reader.field(""); // "MemSection"
		long sections = reader.u64("nixlSecElms");
		List<RemoteRegion> regions = new ArrayList<>();
		for (long s = 0; s < sections; s++) {
			String backend = new String(reader.field("bknd"), StandardCharsets.US_ASCII);
			reader.field("nixlDList");
			int memoryType = ByteBuffer.wrap(reader.field("t")).order(ByteOrder.LITTLE_ENDIAN).getInt();
			long count = reader.u64("n");
			for (long i = 0; i < count; i++) {
				byte[] value = reader.field("");
				if (!BACKEND.equals(backend)) {
					continue;
				}
				if (memoryType != MemoryType.DRAM.code() || value.length != DESCRIPTOR_BYTES) {
					throw invalid(agent, "its EMBEDDED section holds a descriptor the embedded engine does not write");
				}
				ByteBuffer buffer = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
				MemoryDescriptor descriptor;
				try {
					descriptor = new MemoryDescriptor(buffer.getLong(), buffer.getLong(), buffer.getLong());
				}
				catch (IllegalArgumentException ex) {
					throw invalid(agent, "it describes an impossible region: " + ex.getMessage());
				}
				long registration = buffer.getLong();
				byte[] key = new byte[SECRET_BYTES];
				buffer.get(key);
				regions.add(new RemoteRegion(descriptor, registration, key));
			}
		}
		return new Parsed(agent, connection, regions);
	}

	private static NixlException invalid(String agent, String detail) {
		return new NixlException(NixlStatus.INVALID_METADATA, OPERATION, null, agent, detail);
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	private static byte[] u64(long value) {
		return ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
	}

	private static final class Writer {

		private final ByteArrayOutputStream out = new ByteArrayOutputStream(256);

		void raw(byte[] bytes) {
			this.out.writeBytes(bytes);
		}

		void field(String tag, byte[] value) {
			raw(ascii(tag));
			raw(u64(value.length));
			raw(value);
			this.out.write('|');
		}

		byte[] bytes() {
			return this.out.toByteArray();
		}

	}

	/** Walks fields whose tags and framing the framing check has already verified. */
	private static final class Reader {

		private final ByteBuffer buffer;

		Reader(byte[] data) {
			this.buffer = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
		}

		void skip(int bytes) {
			this.buffer.position(this.buffer.position() + bytes);
		}

		/** Reads the value of the next field, which has the given tag. */
		byte[] field(String tag) {
			skip(tag.length());
			int length = Math.toIntExact(this.buffer.getLong());
			byte[] value = new byte[length];
			this.buffer.get(value);
			this.buffer.get(); // '|'
			return value;
		}

		long u64(String tag) {
			return ByteBuffer.wrap(field(tag)).order(ByteOrder.LITTLE_ENDIAN).getLong();
		}

	}

}
