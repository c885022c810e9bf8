package dev.nixl4j.metadata;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.assertj.core.api.AbstractStringAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.ForgedMetadata;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataValues;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.fail;

/**
 * Tests the check of UCX connection info ({@link UcxWorkerAddress}, through
 * {@link MetadataFraming}): real worker addresses in both formats pass, the forged blob
 * that aborted native agents inside UCX and damaged addresses are refused with
 * {@link NixlStatus#INVALID_METADATA}.
 */
class UcxConnectionInfoTest {

	private static final List<String> REAL = List.of("one-dram-1mib", "no-registrations", "long-name-1024", "utf8-name",
			"partial-empty-dlist", "ucx-v2", "ucx-debug-info", "ucx-v2-debug-info", "ucx-loopback-only",
			"ucx-tcp-self");

	// Where the first two interfaces of the v1 address in one-dram-1mib.bin (self, then
	// tcp on
	// the host's interface) keep their fields; the test checks the bytes before it uses
	// them.
	private static final int SELF_IFACE_LENGTH = 29;

	private static final int TCP_MD = 38;

	private static final int TCP_DEVICE_LENGTH = 39;

	private static final int TCP_ATTRIBUTES = 48;

	private static final int TCP_IFACE_LENGTH = 64;

	@Test
	void refusesTheForgedBlobThatAbortedNativeAgents() {
		// A valid nixlSerDes frame, one connection of backend UCX whose info is the
		// single byte 'x',
		// no memory sections: 145 bytes. UCX read 'x' as address format version 8 and
		// aborted
		// (address.c:1146, "*addr_version == UCP_OBJECT_VERSION_V2").
		byte[] forged = ForgedMetadata.oneByteUcxConnection("prefill-" + "0".repeat(19));
		assertThat(forged).hasSize(145);
		assertInvalid(forged).contains("UCX connection info of 1 bytes: unknown address format version 8");
		NixlException refused = (NixlException) catchThrowable(
				() -> MetadataValues.check("fetch_remote_md", "prefill-" + "0".repeat(19), forged, 1 << 20));
		assertThat(refused.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		assertThat(refused.getMessage()).contains("unknown address format version 8");
	}

	@Test
	void acceptsTheWorkerAddressesNativeAgentsWrote() {
		for (String sample : REAL) {
			byte[] blob = MetadataFramingTest.sample(sample);
			assertThat(MetadataFraming.parse(blob).connections()).as(sample)
				.singleElement()
				.satisfies(connection -> assertThat(connection.backend()).isEqualTo("UCX"));
		}
	}

	@Test
	@Timeout(value = 60, unit = TimeUnit.SECONDS)
	void acceptsWhatLiveNativeAndEmbeddedAgentsWrite() {
		NativeNixl.require();
		// UCX's two address formats, with and without the worker name, from agents made
		// now.
		List<String> configs = List.of("", "ADDRESS_VERSION=v2", "ADDRESS_DEBUG_INFO=y",
				"ADDRESS_VERSION=v2,ADDRESS_DEBUG_INFO=y");
		for (int i = 0; i < configs.size(); i++) {
			String config = configs.get(i);
			Map<String, String> parameters = config.isEmpty() ? Map.of() : Map.of("engine_config", config);
			try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("ucx-check-" + i)
				.engine(Engine.NATIVE)
				.nativeProgressThread(false)
				.backends(new BackendConfig("UCX", parameters), BackendConfig.of("POSIX"))
				.build())) {
				byte[] blob = agent.localMetadata().toByteArray();
				MetadataFraming.ParsedMetadata parsed = MetadataFraming.parse(blob);
				assertThat(parsed.connections()).as(config)
					.singleElement()
					.satisfies(connection -> assertThat(connection.backend()).isEqualTo("UCX"));
				// The format version the setting asked for: 0 is v1, 1 is v2.
				assertThat(MetadataFramingTest.connectionInfo(blob)[0] & 0x0f).as(config)
					.isEqualTo(config.contains("v2") ? 1 : 0);
			}
		}
		try (NixlAgent embedded = NixlAgent
			.create(AgentConfig.builder("embedded-check").engine(Engine.EMBEDDED).build())) {
			assertThatNoException().isThrownBy(() -> MetadataFraming.parse(embedded.localMetadata().toByteArray()));
		}
	}

	@Test
	void refusesUnknownFormatVersions() {
		byte[] address = realAddress();
		for (int version = 2; version < 16; version++) {
			byte[] edited = address.clone();
			edited[0] = (byte) ((edited[0] & 0xf0) | version);
			assertInvalidAddress(edited).contains("unknown address format version " + version);
		}
	}

	@Test
	void refusesEveryTruncationAndTrailingBytes() {
		for (byte[] address : List.of(realAddress(), addressOf("ucx-v2"), addressOf("ucx-v2-debug-info"))) {
			for (int length = 1; length < address.length; length++) {
				assertInvalidAddress(Arrays.copyOf(address, length));
			}
			assertInvalidAddress(Arrays.copyOf(address, address.length + 1)).contains("1 bytes after the last device");
			assertInvalidAddress(concat(address, address)).contains("bytes after the last device");
		}
	}

	@Test
	void refusesHeaderFlagsAWorkerAddressNeverHas() {
		byte[] address = realAddress();
		assertThat(address[0]).isEqualTo((byte) 0x20);
		// No worker UUID, then the client id and AM-only flags of other kinds of address.
		for (int flags : new int[] { 0x0, 0x1, 0x6, 0xa }) {
			byte[] edited = address.clone();
			edited[0] = (byte) (flags << 4);
			assertInvalidAddress(edited).contains("header flags 0x" + Integer.toHexString(flags));
		}
		byte[] v2 = addressOf("ucx-v2");
		v2[1] = 0x06;
		assertInvalidAddress(v2).contains("header flags 0x6");
	}

	@Test
	void refusesWrongLengthsOfDeviceAndInterfaceAddresses() {
		byte[] address = realAddress();
		assertThat(address[SELF_IFACE_LENGTH]).as("self: LAST and 8 bytes").isEqualTo((byte) 0x88);
		assertThat(address[TCP_DEVICE_LENGTH]).as("tcp device: 6 bytes").isEqualTo((byte) 0x06);
		assertThat(address[TCP_IFACE_LENGTH]).as("tcp: LAST and 2 bytes").isEqualTo((byte) 0x82);
		// Longer or shorter, the rest of the address no longer lines up: refused one way
		// or another.
		for (int delta : new int[] { -2, -1, 1, 2 }) {
			assertInvalidAddress(edit(address, SELF_IFACE_LENGTH, 0x88 + delta));
			assertInvalidAddress(edit(address, TCP_DEVICE_LENGTH, 0x06 + delta));
			assertInvalidAddress(edit(address, TCP_IFACE_LENGTH, 0x82 + delta));
		}
		// The self interface address one byte shorter, its length byte saying so: the
		// framing
		// holds, the shape does not.
		assertInvalidAddress(Edit.remove(edit(address, SELF_IFACE_LENGTH, 0x87), SELF_IFACE_LENGTH + 1))
			.contains("transport self");
		// A tcp device address of another family than its length says.
		assertInvalidAddress(edit(address, TCP_DEVICE_LENGTH + 2, 10)).contains("transport tcp");
		assertInvalidAddress(edit(address, TCP_DEVICE_LENGTH + 1, 0x02)).contains("transport tcp");
	}

	@Test
	void refusesWhatUcxWouldIndexOutOfBounds() {
		byte[] address = realAddress();
		assertThat(address[TCP_MD]).isEqualTo((byte) 0x01);
		// Memory domain 64 and more index UCX's arrays of 64 (UCX 1.23 writes a release
		// trailer, so
		// UCX clears no legacy bits).
		assertInvalidAddress(edit(address, TCP_MD, 0x40)).contains("memory domain index 64 is not below 64");
		assertInvalidAddress(edit(address, TCP_MD, 0x7f)).contains("memory domain index 127");
		// v2 extends the index into the next byte.
		byte[] v2 = addressOf("ucx-v2");
		int md = 10;
		assertThat(v2[md]).isEqualTo((byte) 0x00);
		assertInvalidAddress(Edit.insert(edit(v2, md, 0x7f), md + 1, (byte) 200)).contains("memory domain index 200");
		// A bandwidth that is not a positive number.
		for (float bandwidth : new float[] { Float.NaN, 0f, -1f, Float.POSITIVE_INFINITY }) {
			byte[] edited = address.clone();
			ByteBuffer.wrap(edited).order(ByteOrder.LITTLE_ENDIAN).putFloat(TCP_ATTRIBUTES + 4, bandwidth);
			assertInvalidAddress(edited).contains("no bandwidth");
		}
	}

	@Test
	void refusesShapesOnlyOtherAddressesHave() {
		byte[] address = realAddress();
		// No device at all.
		assertInvalidAddress(new byte[] { 0x20, 1, 2, 3, 4, 5, 6, 7, 8, (byte) 0xff }).contains("no device");
		// An endpoint address behind the tcp interface.
		assertInvalidAddress(edit(address, TCP_IFACE_LENGTH, 0x82 | 0x40)).contains("endpoint addresses");
		// An empty device that is not the v1 trailer: in the middle, or in a v2 address.
		assertInvalidAddress(edit(address, TCP_MD, 0x81)).contains("flagged empty");
		byte[] v2 = addressOf("ucx-v2");
		assertInvalidAddress(edit(v2, 10, 0x80)).contains("flagged empty");
		// A path count of 1 and the unknown system device are never packed.
		assertInvalidAddress(Edit.insert(edit(address, TCP_DEVICE_LENGTH, 0x46), TCP_DEVICE_LENGTH + 1, (byte) 1))
			.contains("path count");
		assertInvalidAddress(Edit.insert(edit(address, TCP_DEVICE_LENGTH, 0x26), TCP_DEVICE_LENGTH + 1, (byte) 0xff))
			.contains("system device");
		// The same shapes with a path count of 2 and a system device are what UCX writes
		// on GPU hosts.
		byte[] gpuHost = Edit.insert(
				Edit.insert(edit(address, TCP_DEVICE_LENGTH, 0x66), TCP_DEVICE_LENGTH + 1, (byte) 2),
				TCP_DEVICE_LENGTH + 2, (byte) 0);
		assertThatNoException().isThrownBy(() -> MetadataFraming.parse(blob("a", gpuHost)));
	}

	@Test
	void boundsTheInterfaceCount() {
		// One device of a transport this UCX lacks (checksum 0x1234), with 128 or 129
		// interfaces.
		for (int interfaces : new int[] { 128, 129 }) {
			ByteArrayOutputStream out = new ByteArrayOutputStream();
			out.writeBytes(new byte[] { 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 5, (byte) 0x80 });
			for (int i = 0; i < interfaces; i++) {
				out.writeBytes(new byte[] { 0x34, 0x12 });
				out.writeBytes(ByteBuffer.allocate(16)
					.order(ByteOrder.LITTLE_ENDIAN)
					.putFloat(1e-8f)
					.putFloat(1e9f)
					.putFloat(1e-7f)
					.putInt(0)
					.array());
				out.write(i == interfaces - 1 ? 0x81 : 0x01);
				out.write(7);
			}
			byte[] blob = blob("a", out.toByteArray());
			if (interfaces == 128) {
				assertThatNoException().isThrownBy(() -> MetadataFraming.parse(blob));
			}
			else {
				assertInvalid(blob).contains("more than 128 interfaces");
			}
		}
	}

	@Test
	void survivesRandomDamageWithInvalidMetadataOnly() {
		List<byte[]> addresses = List.of(realAddress(), addressOf("ucx-v2"), addressOf("ucx-debug-info"),
				addressOf("ucx-v2-debug-info"));
		Random random = new Random(0x75637821L);
		int accepted = 0;
		for (int i = 0; i < 20_000; i++) {
			byte[] address = addresses.get(random.nextInt(addresses.size())).clone();
			for (int round = 0; round < 1 + random.nextInt(3); round++) {
				int at = random.nextInt(address.length);
				switch (random.nextInt(4)) {
					case 0 -> address[at] ^= (byte) (1 << random.nextInt(8));
					case 1 -> address[at] = (byte) random.nextInt(256);
					case 2 -> address = Edit.remove(address, at);
					default -> address = Edit.insert(address, at, (byte) random.nextInt(256));
				}
			}
			try {
				MetadataFraming.parse(blob("a", address));
				accepted++;
			}
			catch (NixlException ex) {
				assertThat(ex.status()).isEqualTo(NixlStatus.INVALID_METADATA);
			}
			catch (RuntimeException ex) {
				fail("damaged address " + i + " escaped as " + ex, ex);
			}
		}
		// Bytes inside addresses and attributes carry no structure: some damage is still
		// well-formed.
		assertThat(accepted).isPositive().isLessThan(20_000);
	}

	private static byte[] edit(byte[] address, int at, int value) {
		byte[] edited = address.clone();
		edited[at] = (byte) value;
		return edited;
	}

	private static byte[] realAddress() {
		return MetadataFramingTest.ucxWorkerAddress();
	}

	/** The UCX connection info of a fixture. */
	private static byte[] addressOf(String sample) {
		return MetadataFramingTest.connectionInfo(MetadataFramingTest.sample(sample));
	}

	/**
	 * Metadata of an agent with one UCX connection of the given info and no memory
	 * sections.
	 */
	private static byte[] blob(String agent, byte[] connectionInfo) {
		return ForgedMetadata.withUcxConnection(agent, connectionInfo);
	}

	private static byte[] concat(byte[] first, byte[] second) {
		byte[] result = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, result, first.length, second.length);
		return result;
	}

	private static AbstractStringAssert<?> assertInvalidAddress(byte[] address) {
		return assertInvalid(blob("a", address));
	}

	private static AbstractStringAssert<?> assertInvalid(byte[] blob) {
		Throwable thrown = catchThrowable(() -> MetadataFraming.parse(blob));
		assertThat(thrown).isInstanceOf(NixlException.class);
		NixlException ex = (NixlException) thrown;
		assertThat(ex.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		return assertThat(ex.getMessage()).contains("load_remote_md");
	}

	/** Byte edits of an address. */
	private static final class Edit {

		static byte[] remove(byte[] bytes, int at) {
			return dev.nixl4j.testsupport.Bytes.splice(bytes, at, 1, new byte[0]);
		}

		static byte[] insert(byte[] bytes, int at, byte value) {
			return dev.nixl4j.testsupport.Bytes.splice(bytes, at, 0, new byte[] { value });
		}

	}

}
