package dev.nixl4j.kv;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

import dev.nixl4j.json.JsonException;
import dev.nixl4j.json.JsonReader;
import dev.nixl4j.json.JsonWriter;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The wire form of {@link KvTransferParams}: what it writes reads back equal, and every
 * document it refuses is refused with an {@link IllegalArgumentException} that names the
 * member at fault.
 */
class KvTransferParamsTest {

	private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

	private static final KvTransferParams FULL = KvTransferParams.builder()
		.producerAgent("prefill-0")
		.requestId("req-42")
		.blockIds(7, 3, 12)
		.layoutFingerprint(
				KvCacheLayout.builder().layers(2).blocks(16).blockSize(4).kvHeads(2).headDim(4).build().fingerprint())
		.leaseId(Long.MAX_VALUE - 17)
		.consumerRanks(2)
		.generation(-0x7edc_ba98_7654_3210L)
		.checksums(List.of(0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 0x1234_5678, 0xCAFE_BABE))
		.producerIncarnation("9f0c2d7e11aa4b6f8c3d0e1f2a3b4c5d")
		.traceContext(KvTraceContext.parse(TRACEPARENT, "vendor=value,other=1"))
		.build();

	@Test
	void everyComponentTravelsAndReadsBackEqual() {
		String json = FULL.toJson();

		KvTransferParams read = KvTransferParams.fromJson(json);

		assertThat(read).isEqualTo(FULL);
		assertThat(read.traceContext()).isEqualTo(FULL.traceContext());
		assertThat(read.toJson()).isEqualTo(json);
	}

	@Test
	void theDocumentNamesItsFormatAndVersionAndWrites64BitValuesAsDecimalStrings() {
		Map<?, ?> json = document(FULL);

		assertThat(json.get("format")).isEqualTo(KvTransferParams.FORMAT);
		assertThat(json.get("version")).isEqualTo(KvTransferParams.VERSION);
		assertThat(json.get("leaseId")).isEqualTo(Long.toString(FULL.leaseId()));
		assertThat(json.get("generation")).isEqualTo(Long.toString(FULL.generation()));
		assertThat(new ArrayList<Object>((List<?>) json.get("checksums"))).containsExactly(0L, 0xFFFF_FFFFL,
				0x8000_0000L, (long) Integer.MAX_VALUE, 0x1234_5678L, 0xCAFE_BABEL);
		assertThat(new ArrayList<Object>(json.keySet())).containsExactly("format", "version", "producerAgent",
				"requestId", "blockIds", "layoutFingerprint", "leaseId", "consumerRanks", "generation", "checksums",
				"producerIncarnation", "traceparent", "tracestate");
	}

	@Test
	void parametersWithoutIntegrityDataOrTraceContextTravelToo() {
		KvTransferParams plain = KvTransferParams.builder()
			.producerAgent("p")
			.requestId("r")
			.blockIds(List.of(0))
			.layoutFingerprint("f")
			.build();

		KvTransferParams read = KvTransferParams.fromJson(plain.toJson());

		assertThat(read).isEqualTo(plain);
		assertThat(read.leaseId()).isZero();
		assertThat(read.consumerRanks()).isEqualTo(1);
		assertThat(read.checksums()).isEmpty();
		assertThat(read.traceContext()).isNull();
	}

	@Test
	void randomParametersReadBackEqual() {
		Random random = new Random(20261207L);
		for (int i = 0; i < 200; i++) {
			int blocks = 1 + random.nextInt(40);
			int ranks = 1 + random.nextInt(4);
			List<Integer> checksums = random.nextBoolean() ? List.of()
					: IntStream.range(0, blocks * ranks).map((n) -> random.nextInt()).boxed().toList();
			KvTransferParams params = KvTransferParams.builder()
				.producerAgent("agent-" + random.nextInt(1000) + "-\u00e9\u4e2d\"\\")
				.requestId("req-" + random.nextLong())
				.blockIds(IntStream.range(0, blocks).map((n) -> random.nextInt(Integer.MAX_VALUE)).toArray())
				.layoutFingerprint("kv-layout/1;" + random.nextInt())
				.leaseId(random.nextLong())
				.consumerRanks(ranks)
				.generation(random.nextLong())
				.checksums(checksums)
				.build();

			assertThat(KvTransferParams.fromJson(params.toJson())).isEqualTo(params);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "producerAgent", "requestId", "blockIds", "layoutFingerprint", "leaseId", "consumerRanks",
			"generation", "checksums", "producerIncarnation", "traceparent", "tracestate" })
	void aMissingMemberIsNamed(String member) {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.remove(member);

		assertRefused(json, "have no " + member);
	}

	@ParameterizedTest
	@ValueSource(strings = { "producerAgent", "requestId", "blockIds", "layoutFingerprint", "leaseId", "consumerRanks",
			"generation", "checksums", "producerIncarnation", "traceparent", "tracestate" })
	void aMemberOfTheWrongTypeIsNamed(String member) {
		Map<String, @Nullable Object> json = mutable(FULL);
		Object value = json.get(member);
		json.put(member, (value instanceof String) ? (Object) 42L : "42");

		assertRefused(json, member + " must be");
	}

	@ParameterizedTest
	@ValueSource(strings = { "producerAgent", "requestId", "blockIds", "layoutFingerprint", "leaseId", "consumerRanks",
			"generation", "checksums", "producerIncarnation", "traceparent", "tracestate" })
	void aNullMemberIsNamed(String member) {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put(member, null);

		assertRefused(json, member + " must not be null");
	}

	@ParameterizedTest
	@ValueSource(strings = { "producerAgent", "requestId", "layoutFingerprint", "producerIncarnation", "traceparent",
			"tracestate", "leaseId", "generation" })
	void anOversizedStringIsNamed(String member) {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put(member, "1".repeat(4000));

		assertRefused(json, member + " must be at most");
	}

	@Test
	void tooManyBlockIdsAreRefusedByName() {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put("blockIds", LongList.of(KvTransferParams.MAX_BLOCK_IDS + 1));
		json.put("checksums", List.of());

		assertRefused(json, "blockIds must have at most " + KvTransferParams.MAX_BLOCK_IDS + " entries");
	}

	@Test
	void tooManyChecksumsAreRefused() {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put("checksums", LongList.of(KvTransferParams.MAX_CHECKSUMS + 2));

		assertThatThrownBy(() -> KvTransferParams.fromJson(JsonWriter.write(json)))
			.isInstanceOf(IllegalArgumentException.class)
			.hasCauseInstanceOf(JsonException.class)
			.hasMessageContaining("more than " + (KvTransferParams.MAX_CHECKSUMS + 1) + " elements");
	}

	@Test
	void checksumsThatDoNotMatchTheBlocksAndRanksAreRefused() {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put("checksums", List.of(1L, 2L));

		assertRefused(json, "checksums must be empty or one per block and consumer rank (6), were 2");
	}

	@Test
	void hugeAndNegativeNumbersAreRefusedByName() {
		assertRefused(with("consumerRanks", new java.math.BigInteger("1" + "0".repeat(40))), "consumerRanks must be");
		assertRefused(with("consumerRanks", 0L), "consumerRanks must be from 1");
		assertRefused(with("consumerRanks", 1L << 40), "consumerRanks must be from 1");
		assertRefused(with("blockIds", List.of(1L, -1L)), "blockIds[1] must be from 0");
		assertRefused(with("blockIds", List.of(1L, 1L << 31)), "blockIds[1] must be from 0");
		assertRefused(with("blockIds", List.of(1.5)), "blockIds[0] must be a whole number");
		assertRefused(with("checksums", List.of(1L, 2L, 3L, 4L, 5L, 1L << 32)), "checksums[5] must be from 0");
		assertRefused(with("leaseId", "9223372036854775808"), "leaseId must be a decimal string");
		assertRefused(with("generation", "0x10"), "generation must be a decimal string");
		assertRefused(with("leaseId", ""), "leaseId must be a decimal string");
	}

	@Test
	void emptyBlocksAndBadRequestIdsAreRefusedAsTheConstructorRefusesThem() {
		assertRefused(with("blockIds", List.of()), "at least one block");
		assertRefused(with("requestId", "a:b"), "requestId must not contain ':'");
		assertRefused(with("producerAgent", " "), "producerAgent must be 1 to");
	}

	@Test
	void aMalformedTraceContextIsDroppedAsTheConstructorDropsIt() {
		KvTransferParams read = KvTransferParams.fromJson(JsonWriter.write(with("traceparent", "00-zz")));

		assertThat(read.traceContext()).isNull();
		assertThat(read.tracestate()).isEmpty();
		assertThat(read.checksums()).isEqualTo(FULL.checksums());
	}

	@Test
	void anUnknownMemberOfThisVersionIsRefused() {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put("integrity", "none");

		assertRefused(json, "unknown member \"integrity\"");
	}

	@Test
	void aLaterMinorVersionIsReadAndItsNewMembersIgnored() {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put("version", "1.7");
		json.put("priority", Map.of("level", 3L));

		assertThat(KvTransferParams.fromJson(JsonWriter.write(json))).isEqualTo(FULL);
	}

	@Test
	void aLaterMinorVersionStillNeedsEveryMemberOfThisOne() {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put("version", "1.7");
		json.remove("generation");

		assertRefused(json, "have no generation");
	}

	@ParameterizedTest
	@ValueSource(strings = { "2.0", "0.9", "10.0" })
	void anotherMajorVersionIsRefusedNamingBothVersions(String version) {
		assertRefused(with("version", version), "of version " + version + ", whose major version this reader (version "
				+ KvTransferParams.VERSION + ") does not read");
	}

	@ParameterizedTest
	@ValueSource(strings = { "1", "1.", ".1", "1.0.0", "one", "1.-1", "99999.0", "" })
	void aMalformedVersionIsRefused(String version) {
		assertRefused(with("version", version), "version must be \"<major>.<minor>\"");
	}

	@Test
	void anotherFormatIsRefused() {
		assertRefused(with("format", "nixl4j.kv-cache-handle/1"), "format must be");
		Map<String, @Nullable Object> json = mutable(FULL);
		json.remove("format");
		assertRefused(json, "format must be");
	}

	@Test
	void aDuplicateMemberIsRefused() {
		String json = FULL.toJson();
		String duplicated = json.replace("\"requestId\":", "\"requestId\":\"other\",\"requestId\":");

		assertThatThrownBy(() -> KvTransferParams.fromJson(duplicated)).isInstanceOf(IllegalArgumentException.class)
			.hasCauseInstanceOf(JsonException.class)
			.hasMessageContaining("duplicate key \"requestId\"");
	}

	@Test
	void everyTruncationOfADocumentIsRefused() {
		String json = FULL.toJson();
		for (int length = 0; length < json.length(); length++) {
			String truncated = json.substring(0, length);
			assertThatThrownBy(() -> KvTransferParams.fromJson(truncated)).as("the first %d characters", length)
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("not valid JSON");
		}
	}

	@Test
	void deepNestingIsRefusedWithoutReadingIt() {
		String deep = "{\"blockIds\":" + "[".repeat(100_000) + "]".repeat(100_000) + "}";

		assertThatThrownBy(() -> KvTransferParams.fromJson(deep)).isInstanceOf(IllegalArgumentException.class)
			.hasCauseInstanceOf(JsonException.class)
			.hasMessageContaining("nested deeper than 2 levels");
		assertRefused(with("producerAgent", Map.of("a", List.of(1L))), "nested deeper");
	}

	@Test
	void anOversizedDocumentIsRefusedBeforeItIsRead() {
		String huge = " ".repeat(KvTransferParams.MAX_JSON_CHARS + 1);

		assertThatThrownBy(() -> KvTransferParams.fromJson(huge)).isInstanceOf(IllegalArgumentException.class)
			.hasCauseInstanceOf(JsonException.class)
			.hasMessageContaining("more than the limit of " + KvTransferParams.MAX_JSON_CHARS);
	}

	@Test
	void whatIsNotAnObjectIsRefused() {
		for (String json : List.of("[]", "\"params\"", "42", "null", "true")) {
			assertThatThrownBy(() -> KvTransferParams.fromJson(json)).as(json)
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("must be a JSON object");
		}
	}

	@Test
	void randomMutationsOfADocumentAreReadOrRefusedWithAnIllegalArgumentException() {
		String json = FULL.toJson();
		Random random = new Random(7L);
		String alphabet = "{}[],:\"\\0123456789-.eE abtrunfl";
		int read = 0;
		for (int i = 0; i < 5000; i++) {
			StringBuilder mutated = new StringBuilder(json);
			for (int edits = 1 + random.nextInt(3); edits > 0; edits--) {
				int at = random.nextInt(mutated.length());
				switch (random.nextInt(3)) {
					case 0 -> mutated.deleteCharAt(at);
					case 1 -> mutated.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
					default -> mutated.setCharAt(at, alphabet.charAt(random.nextInt(alphabet.length())));
				}
			}
			try {
				KvTransferParams.fromJson(mutated.toString());
				read++;
			}
			catch (IllegalArgumentException ex) {
				assertThat(ex.getMessage()).as(mutated.toString()).isNotBlank();
			}
		}
		System.out.println("KvTransferParams: " + read + " of 5000 random mutations read as parameters");
	}

	@Test
	void theBuilderNamesAMissingComponent() {
		assertThatThrownBy(() -> KvTransferParams.builder().producerAgent("p").requestId("r").blockIds(1).build())
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("need layoutFingerprint");
		assertThatThrownBy(() -> KvTransferParams.builder().requestId("r").blockIds(1).layoutFingerprint("f").build())
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("need producerAgent");
	}

	private static Map<?, ?> document(KvTransferParams params) {
		return (Map<?, ?>) JsonReader.strict().read(params.toJson());
	}

	private static Map<String, @Nullable Object> mutable(KvTransferParams params) {
		Map<String, @Nullable Object> json = new LinkedHashMap<>();
		document(params).forEach((key, value) -> json.put((String) key, value));
		return json;
	}

	private static Map<String, @Nullable Object> with(String member, @Nullable Object value) {
		Map<String, @Nullable Object> json = mutable(FULL);
		json.put(member, value);
		return json;
	}

	private static void assertRefused(Map<String, @Nullable Object> json, String message) {
		String text = JsonWriter.write(json);
		assertThatThrownBy(() -> KvTransferParams.fromJson(text)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining(message);
	}

	/** Arrays of whole numbers 0, 1, 2, ... */
	private static final class LongList {

		static List<Long> of(int size) {
			List<Long> list = new ArrayList<>(size);
			for (long i = 0; i < size; i++) {
				list.add(i % 1000);
			}
			return list;
		}

	}

}
