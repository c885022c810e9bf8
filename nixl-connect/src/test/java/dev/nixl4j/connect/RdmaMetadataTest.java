package dev.nixl4j.connect;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.Deflater;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Dynamo's RDMA metadata JSON: what is written, what is read, and what is refused.
 */
class RdmaMetadataTest {

	private static final byte[] AGENT_METADATA = "not really agent metadata, but bytes"
		.getBytes(StandardCharsets.UTF_8);

	private static final String KEY = "0123456789abcdef0123456789abcdef";

	private static RdmaMetadata sample() {
		return new RdmaMetadata(
				List.of(Descriptor.of(0x7f00_1000_0000L, 4096, Device.HOST),
						Descriptor.of(0x7f00_2000_0000L, 8192, Device.HOST)),
				AgentMetadata.of(AGENT_METADATA), KEY, OperationKind.READ);
	}

	private static String zlib(byte[] data) {
		Deflater deflater = new Deflater();
		deflater.setInput(data);
		deflater.finish();
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		byte[] chunk = new byte[4096];
		while (!deflater.finished()) {
			out.write(chunk, 0, deflater.deflate(chunk));
		}
		deflater.end();
		return "b64:" + Base64.getEncoder().encodeToString(out.toByteArray());
	}

	private static String json(String descriptors, String metadata, String extra) {
		return "{\"descriptors\":" + descriptors + ",\"nixl_metadata\":\"" + metadata + "\",\"notification_key\":\""
				+ KEY + "\",\"operation_kind\":1" + extra + "}";
	}

	private static NixlException refused(String json) {
		NixlException refused = catchThrowableOfType(NixlException.class, () -> RdmaMetadata.fromJson(json));
		assertThat(refused).as("refused: " + json).isNotNull();
		assertThat(refused.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		return refused;
	}

	private static final String ONE = "[{\"device\":\"cpu\",\"ptr\":4096,\"size\":64}]";

	@Test
	void writesDynamosCompactJsonAndReadsItBack() {
		RdmaMetadata metadata = sample();
		String json = metadata.toJson();
		assertThat(json)
			.startsWith("{\"descriptors\":[{\"device\":\"cpu\",\"ptr\":" + 0x7f00_1000_0000L
					+ ",\"size\":4096},{\"device\":\"cpu\",\"ptr\":" + 0x7f00_2000_0000L
					+ ",\"size\":8192}],\"nixl_metadata\":\"b64:")
			.endsWith("\",\"notification_key\":\"" + KEY + "\",\"operation_kind\":1}");
		RdmaMetadata read = RdmaMetadata.fromJson(json);
		assertThat(read).isEqualTo(metadata);
		assertThat(read.nixlMetadata().toByteArray()).isEqualTo(AGENT_METADATA);
	}

	@Test
	void cudaDevicesAndAddressesAboveTwoToTheSixtyThreeSurviveTheRoundTrip() {
		RdmaMetadata metadata = new RdmaMetadata(List.of(Descriptor.of(0xffff_8000_0000_0000L, 64, Device.cuda(3))),
				AgentMetadata.of(AGENT_METADATA), KEY, OperationKind.WRITE);
		String json = metadata.toJson();
		assertThat(json).contains("{\"device\":\"cuda:3\",\"ptr\":18446603336221196288,\"size\":64}")
			.endsWith("\"operation_kind\":2}");
		RdmaMetadata read = RdmaMetadata.fromJson(json);
		assertThat(read).isEqualTo(metadata);
		assertThat(read.descriptors().get(0).toMemoryDescriptor().deviceId()).isEqualTo(3);
	}

	@Test
	void theOlderHexFormWithoutPrefixIsAccepted() {
		String b64 = zlib(AGENT_METADATA);
		String hex = HexFormat.of().formatHex(Base64.getDecoder().decode(b64.substring(4)));
		RdmaMetadata read = RdmaMetadata.fromJson(json(ONE, hex, ""));
		assertThat(read.nixlMetadata().toByteArray()).isEqualTo(AGENT_METADATA);
		assertThat(RdmaMetadata.fromJson(json(ONE, hex.toUpperCase(), "")).nixlMetadata().toByteArray())
			.isEqualTo(AGENT_METADATA);
	}

	@Test
	void aZlibBombIsRejectedWithoutInflatingIt() {
		// 64 MiB of zeros (four times the cap) compress to about 64 KiB
		Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION);
		byte[] zeros = new byte[1 << 20];
		ByteArrayOutputStream compressed = new ByteArrayOutputStream();
		byte[] chunk = new byte[64 * 1024];
		for (int i = 0; i < 64; i++) {
			deflater.setInput(zeros);
			while (!deflater.needsInput()) {
				compressed.write(chunk, 0, deflater.deflate(chunk));
			}
		}
		deflater.finish();
		while (!deflater.finished()) {
			compressed.write(chunk, 0, deflater.deflate(chunk));
		}
		deflater.end();
		String bomb = "b64:" + Base64.getEncoder().encodeToString(compressed.toByteArray());
		NixlException refused = refused(json(ONE, bomb, ""));
		assertThat(refused.getMessage()).contains("field 'nixl_metadata'")
			.contains("decompresses to more than " + RdmaMetadata.DEFAULT_MAX_METADATA_BYTES + " bytes");
		NixlException small = catchThrowableOfType(NixlException.class,
				() -> RdmaMetadata.fromJson(json(ONE, zlib(new byte[4096]), ""), 1 << 20, 1024));
		assertThat(small.getMessage()).contains("decompresses to more than 1024 bytes");
	}

	@Test
	void unknownAndMissingKeysAreRejected() {
		assertThat(refused(json(ONE, zlib(AGENT_METADATA), ",\"extra\":true")).getMessage())
			.contains("unknown key 'extra'");
		assertThat(refused(
				"{\"descriptors\":[{\"device\":\"cpu\",\"ptr\":4096,\"size\":64,\"stride\":1}],\"nixl_metadata\":\""
						+ zlib(AGENT_METADATA) + "\",\"notification_key\":\"k\",\"operation_kind\":1}")
			.getMessage()).contains("unknown key 'descriptors[0].stride'");
		assertThat(refused(
				"{\"descriptors\":" + ONE + ",\"nixl_metadata\":\"" + zlib(AGENT_METADATA) + "\",\"operation_kind\":1}")
			.getMessage()).contains("missing key 'notification_key'");
	}

	@Test
	void malformedFieldsAreRejectedNamingTheField() {
		String md = zlib(AGENT_METADATA);
		assertThat(refused(json("[{\"device\":\"cpu\",\"ptr\":0,\"size\":64}]", md, "")).getMessage())
			.contains("field 'descriptors[0].ptr' must not be 0");
		assertThat(refused(json("[{\"device\":\"cpu\",\"ptr\":4096,\"size\":-1}]", md, "")).getMessage())
			.contains("field 'descriptors[0].size' must not be negative");
		assertThat(refused(json("[{\"device\":\"cpu\",\"ptr\":4096,\"size\":0}]", md, "")).getMessage())
			.contains("field 'descriptors[0].size' must be within 1..");
		assertThat(refused(json("[{\"device\":\"cpu\",\"ptr\":-4096,\"size\":1}]", md, "")).getMessage())
			.contains("field 'descriptors[0].ptr' must be an address");
		assertThat(refused(json("[{\"device\":\"cpu\",\"ptr\":4096.5,\"size\":1}]", md, "")).getMessage())
			.contains("field 'descriptors[0].ptr' must be an integer, was the number 4096.5");
		assertThat(refused(json("[{\"device\":\"gpu\",\"ptr\":4096,\"size\":1}]", md, "")).getMessage())
			.contains("field 'descriptors[0].device'");
		assertThat(refused(json("[]", md, "")).getMessage()).contains("field 'descriptors' must not be empty");
		assertThat(refused(
				json("[{\"device\":\"cpu\",\"ptr\":4096,\"size\":1},{\"device\":\"cuda:0\",\"ptr\":8192,\"size\":1}]",
						md, ""))
			.getMessage()).contains("field 'descriptors'").contains("one memory kind");
		assertThat(refused(json(ONE, "b64:%%%", "")).getMessage())
			.contains("field 'nixl_metadata' is not valid base64");
		assertThat(refused(json(ONE, "abc", "")).getMessage()).contains("field 'nixl_metadata' is neither");
		assertThat(refused(json(ONE, "zz", "")).getMessage()).contains("field 'nixl_metadata' is neither");
		assertThat(refused(json(ONE, "b64:" + Base64.getEncoder().encodeToString(AGENT_METADATA), "")).getMessage())
			.contains("field 'nixl_metadata' is not a valid zlib stream");
		String truncated = md.substring(0, md.length() - 8);
		assertThat(refused(json(ONE, truncated, "")).getMessage()).contains("field 'nixl_metadata'");
		assertThat(refused(json(ONE, md, "").replace("\"operation_kind\":1", "\"operation_kind\":3")).getMessage())
			.contains("field 'operation_kind' must be 1 (READ) or 2 (WRITE)");
		assertThat(refused(json(ONE, md, "").replace("\"" + KEY + "\"", "\"\"")).getMessage())
			.contains("field 'notification_key' must have 1 to");
	}

	@Test
	void anOperationKindBeyondAnIntIsRejectedNotWrapped() {
		String md = zlib(AGENT_METADATA);
		for (String kind : List.of("4294967297", "4294967298", "18446744073709551617", "-4294967295", "1.0", "\"1\"")) {
			assertThat(refused(json(ONE, md, "").replace("\"operation_kind\":1", "\"operation_kind\":" + kind))
				.getMessage()).as(kind).contains("field 'operation_kind' must");
		}
	}

	@Test
	void malformedJsonIsRejected() {
		String valid = sample().toJson();
		for (String broken : List.of(valid.substring(0, valid.length() - 1), valid + "x", valid.replace(":", ";"),
				"[" + valid + "]", "", "{\"descriptors\":[1,],}",
				valid.replace("{\"descriptors\"", "{\"descriptors\":[],\"descriptors\""), "{'descriptors':[]}",
				"{\"descriptors\":[{\"device\":\"cpu\",\"ptr\":01,\"size\":1}]}")) {
			NixlException refused = refused(broken);
			assertThat(refused.getMessage()).satisfiesAnyOf(message -> assertThat(message).contains("not valid JSON"),
					message -> assertThat(message).contains("must be a JSON object"));
		}
		assertThat(refused(valid.replace("{\"descriptors\"", "{\"descriptors\":[],\"descriptors\"")).getMessage())
			.contains("duplicate key \"descriptors\"");
		String deep = "[".repeat(10_000) + "]".repeat(10_000);
		assertThat(refused(deep).getMessage()).contains("nested deeper than");
	}

	@Test
	void inputLongerThanTheLimitIsRejectedBeforeParsing() {
		String json = sample().toJson();
		NixlException refused = catchThrowableOfType(NixlException.class,
				() -> RdmaMetadata.fromJson(json, json.length() - 1, RdmaMetadata.DEFAULT_MAX_METADATA_BYTES));
		assertThat(refused.getMessage()).contains("more than the limit of " + (json.length() - 1));
	}

	@Test
	void theAgentMetadataNeverAppearsInToString() {
		assertThat(sample().toString()).doesNotContain("b64:")
			.contains("agent metadata of " + AGENT_METADATA.length + " bytes");
	}

}
