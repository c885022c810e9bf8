package dev.nixl4j.metadata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import org.assertj.core.api.AbstractStringAssert;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import dev.nixl4j.testsupport.Bytes;
import org.junit.jupiter.api.Test;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataFraming.BackendConnection;
import dev.nixl4j.metadata.MetadataFraming.MemorySection;
import dev.nixl4j.metadata.MetadataFraming.ParsedMetadata;
import dev.nixl4j.metadata.MetadataFraming.Region;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.fail;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Tests {@link MetadataFraming} against real NIXL 1.5.1 metadata (the fixtures under
 * {@code /metadata}, made by {@code src/python/make_metadata_samples.py}) and against
 * blobs built here, intact and damaged.
 */
class MetadataFramingTest {

	private static final int MIB = 1 << 20;

	private static final List<String> SAMPLES = List.of("no-registrations", "one-dram-1mib", "three-dram",
			"seventeen-dram", "partial-two-of-three", "partial-one-with-backend", "partial-empty-dlist",
			"partial-empty-dlist-with-backend", "long-name-1024", "utf8-name");

	private static final long[] HOSTILE_LENGTHS = { -1L, Long.MIN_VALUE, Long.MAX_VALUE, 0xFFFF_FFFFL, 0x8000_0000L,
			0x7FFF_FFFFL, 1L << 32, 64L << 20 };

	@Test
	void parsesMetadataWithoutRegistrations() {
		ParsedMetadata md = MetadataFraming.parse(sample("no-registrations"));
		assertThat(md.agentName()).isEqualTo("empty-agent");
		assertUcxConnection(md);
		assertThat(md.sections()).isEmpty();
	}

	@Test
	void parsesOneDramRegistration() {
		ParsedMetadata md = MetadataFraming.parse(sample("one-dram-1mib"));
		assertThat(md.agentName()).isEqualTo("one-dram");
		assertUcxConnection(md);
		assertThat(md.sections()).singleElement().satisfies(section -> {
			assertThat(section.backend()).isEqualTo("UCX");
			assertThat(section.memoryType()).isZero();
			assertThat(section.regions()).singleElement().satisfies(region -> {
				assertThat(region.length()).isEqualTo(MIB);
				assertThat(region.deviceId()).isZero();
				assertThat(region.address()).isNotZero();
			});
		});
	}

	@Test
	void parsesSeveralRegistrations() {
		ParsedMetadata three = MetadataFraming.parse(sample("three-dram"));
		assertThat(three.agentName()).isEqualTo("three-dram");
		assertUcxConnection(three);
		assertThat(lengths(three)).containsExactlyInAnyOrder(4096L, 64L * 1024, 3L * MIB);

		ParsedMetadata seventeen = MetadataFraming.parse(sample("seventeen-dram"));
		assertThat(seventeen.agentName()).isEqualTo("seventeen-dram");
		assertThat(seventeen.sections()).singleElement()
			.satisfies(section -> assertThat(section.regions()).hasSize(17));
		List<Long> expected = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			expected.add(4096L * i);
		}
		for (int i = 1; i <= 7; i++) {
			expected.add(8192L * i);
		}
		assertThat(lengths(seventeen)).containsExactlyInAnyOrderElementsOf(expected);
		assertThat(seventeen.sections().getFirst().regions()).filteredOn(region -> region.deviceId() == 3).hasSize(7);
	}

	@Test
	void parsesPartialMetadataWithoutConnectionInfo() {
		ParsedMetadata twoOfThree = MetadataFraming.parse(sample("partial-two-of-three"));
		assertThat(twoOfThree.agentName()).isEqualTo("partial");
		assertThat(twoOfThree.connections()).isEmpty();
		assertThat(lengths(twoOfThree)).containsExactlyInAnyOrder((long) MIB, 2L * MIB);

		ParsedMetadata oneWithBackend = MetadataFraming.parse(sample("partial-one-with-backend"));
		assertThat(oneWithBackend.connections()).isEmpty();
		assertThat(lengths(oneWithBackend)).containsExactly(4096L);
	}

	@Test
	void parsesPartialMetadataOfAnEmptyListAsConnectionInfoOnly() {
		for (String name : List.of("partial-empty-dlist", "partial-empty-dlist-with-backend")) {
			ParsedMetadata md = MetadataFraming.parse(sample(name));
			assertThat(md.agentName()).isEqualTo("partial");
			assertUcxConnection(md);
			assertThat(md.sections()).isEmpty();
		}
	}

	@Test
	void parsesLongAndNonAsciiAgentNames() {
		assertThat(MetadataFraming.parse(sample("long-name-1024")).agentName()).hasSize(1024)
			.isEqualTo("agent-" + "x".repeat(1018));
		assertThat(MetadataFraming.parse(sample("utf8-name")).agentName())
			.isEqualTo("prefill-worker-\u00e9\u00e8-\u4e2d\u6587-7");
	}

	@Test
	void rejectsNamesThatJavaAndNixlWouldReadDifferently() {
		assertInvalid(standardBlob(b -> b.field("Agent", "peer\0x".getBytes(StandardCharsets.UTF_8))))
			.contains("NUL byte");
		assertInvalid(standardBlob(b -> b.field("Agent", new byte[] { 'p', (byte) 0xC3, (byte) 0x28 })))
			.contains("not valid UTF-8");
		assertInvalid(standardBlob(
				b -> b.text("Agent", "a").u64("Conns", 1).field("t", new byte[] { 'U', 0 }).opaque("c", 4)))
			.contains("NUL byte");
	}

	@Test
	void parsesSeveralBackendsAndSections() {
		byte[] blob = new Blob().text("Agent", "decode-3")
			.u64("Conns", 2)
			.text("t", "UCX")
			.field("c", ucxWorkerAddress())
			.text("t", "LIBFABRIC")
			.opaque("c", 57)
			.text("", "MemSection")
			.u64("nixlSecElms", 3)
			.section("UCX", 0, new Region(0x1000, 4096, 0), new Region(0x10_0000, MIB, 0))
			.section("UCX", 1, new Region(0x7f00_0000_0000L, 2L * MIB, 1))
			.section("LIBFABRIC", 0, new Region(0x1000, 4096, 0))
			.bytes();
		ParsedMetadata md = MetadataFraming.parse(blob);
		assertThat(md.connections()).containsExactly(new BackendConnection("UCX", ucxWorkerAddress().length),
				new BackendConnection("LIBFABRIC", 57));
		assertThat(md.sections()).extracting(MemorySection::backend, MemorySection::memoryType)
			.containsExactly(tuple("UCX", 0), tuple("UCX", 1), tuple("LIBFABRIC", 0));
		assertThat(md.sections().get(1).regions()).containsExactly(new Region(0x7f00_0000_0000L, 2L * MIB, 1));
		assertThat(md.covers("LIBFABRIC", 0, 0x1800, 16, 0)).isTrue();
		assertThat(md.covers("LIBFABRIC", 0, 0x10_0000, 16, 0)).isFalse();
		assertThat(md.covers(null, 1, 0x7f00_0000_0000L + MIB, MIB, 1)).isTrue();
	}

	@Test
	void coversChecksRangeDeviceMemoryTypeAndBackend() {
		ParsedMetadata md = MetadataFraming.parse(sample("one-dram-1mib"));
		long address = md.sections().getFirst().regions().getFirst().address();
		assertThat(md.covers("UCX", 0, address, MIB, 0)).isTrue();
		assertThat(md.covers(null, 0, address, MIB, 0)).isTrue();
		assertThat(md.covers("UCX", 0, address + 1, MIB - 1, 0)).isTrue();
		assertThat(md.covers("UCX", 0, address + MIB, 0, 0)).isTrue();
		assertThat(md.covers("UCX", 0, address, MIB + 1, 0)).isFalse();
		assertThat(md.covers("UCX", 0, address - 1, 2, 0)).isFalse();
		assertThat(md.covers("UCX", 0, address + 1, MIB, 0)).isFalse();
		assertThat(md.covers("UCX", 0, address, -1L, 0)).isFalse();
		assertThat(md.covers("UCX", 0, address, MIB, 1)).isFalse();
		assertThat(md.covers("UCX", 1, address, MIB, 0)).isFalse();
		assertThat(md.covers("LIBFABRIC", 0, address, MIB, 0)).isFalse();
	}

	@Test
	void coversUsesUnsignedArithmeticWithoutWrapping() {
		Region high = new Region(-4096L, 4096, 0);
		assertThat(high.covers(-4096L, 4096, 0)).isTrue();
		assertThat(high.covers(-1L, 1, 0)).isTrue();
		assertThat(high.covers(-1L, 2, 0)).isFalse();
		assertThat(high.covers(0, 1, 0)).isFalse();
		// A file registered with length 0 is unlimited: NIXL stores SIZE_MAX.
		Region file = new Region(0, -1L, 7);
		assertThat(file.covers(Long.MAX_VALUE, Long.MAX_VALUE, 7)).isTrue();
		assertThat(file.covers(1, -1L, 7)).isFalse();
	}

	@Test
	void toStringShowsNeitherAddressesNorKeys() {
		ParsedMetadata md = MetadataFraming.parse(sample("three-dram"));
		String text = md + " " + md.sections() + " " + md.connections() + " " + md.sections().getFirst().regions();
		assertThat(text).contains("three-dram", "sections=1", "regions=3");
		for (Region region : md.sections().getFirst().regions()) {
			assertThat(text).doesNotContain(Long.toString(region.address()), Long.toHexString(region.address()),
					Long.toUnsignedString(region.address()));
		}
	}

	@Test
	void rejectsEveryTruncation() {
		for (String name : SAMPLES) {
			byte[] blob = sample(name);
			for (int length = 0; length < blob.length; length++) {
				assertInvalid(Arrays.copyOf(blob, length));
			}
		}
	}

	@Test
	void rejectsEmptyInputAndBareHeader() {
		assertInvalid(new byte[0]).contains("empty");
		assertInvalid("nixlSerDes|".getBytes(StandardCharsets.US_ASCII)).contains("offset 11");
		assertInvalid("nixlSerDes".getBytes(StandardCharsets.US_ASCII)).contains("header");
	}

	@Test
	void rejectsRandomBytes() {
		Random random = new Random(7);
		byte[] header = "nixlSerDes|".getBytes(StandardCharsets.US_ASCII);
		for (int i = 0; i < 2000; i++) {
			byte[] bytes = new byte[random.nextInt(2048)];
			random.nextBytes(bytes);
			if (i % 2 == 1 && bytes.length >= header.length) {
				System.arraycopy(header, 0, bytes, 0, header.length);
			}
			assertInvalid(bytes);
		}
	}

	@Test
	void rejectsTrailingBytes() {
		byte[] blob = sample("one-dram-1mib");
		assertInvalid(concat(blob, new byte[1])).contains("1 bytes after the last memory section");
		assertInvalid(concat(blob, "|".getBytes(StandardCharsets.US_ASCII)));
		assertInvalid(concat(blob, blob));
	}

	@Test
	void rejectsBlobsAboveTheSizeLimit() {
		byte[] blob = sample("seventeen-dram");
		assertThatNoException().isThrownBy(() -> MetadataFraming.parse(blob, blob.length));
		assertThat(catchNixl(() -> MetadataFraming.parse(blob, blob.length - 1)).getMessage())
			.contains("exceeds the limit");
		assertThat(MetadataFraming.DEFAULT_MAX_BYTES).isEqualTo(64 * MIB);
	}

	@Test
	void rejectsHostileLengthsAndCountsQuicklyWithoutAllocating() {
		Blob blob = standardBlob();
		byte[] bytes = blob.bytes();
		assertThatNoException().isThrownBy(() -> MetadataFraming.parse(bytes));
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		long started = System.nanoTime();
		for (int offset : blob.lengthAndCountOffsets) {
			for (long hostile : HOSTILE_LENGTHS) {
				byte[] edited = bytes.clone();
				putLong(edited, offset, hostile);
				long before = threads.getCurrentThreadAllocatedBytes();
				assertInvalid(edited);
				assertThat(threads.getCurrentThreadAllocatedBytes() - before).as("bytes allocated").isLessThan(MIB);
			}
		}
		assertThat(System.nanoTime() - started).as("nanoseconds").isLessThan(2_000_000_000L);
		// The same holds for the fields of a real sample: the agent name's length is at
		// offset 16.
		byte[] real = sample("one-dram-1mib");
		for (long hostile : HOSTILE_LENGTHS) {
			byte[] edited = real.clone();
			putLong(edited, 16, hostile);
			assertInvalid(edited).contains("agent name");
		}
	}

	@Test
	void rejectsEachStructuralViolation() {
		assertInvalid(standardBlob(b -> b.text("Agentx", "a")));
		assertInvalid(standardBlob(b -> b.text("Agent", ""))).contains("empty agent name");
		assertInvalid(standardBlob(b -> b.text("Agent", "a").u64("Conns", 1).text("t", "").opaque("c", 4)));
		assertInvalid(standardBlob(b -> b.text("Agent", "a").u64("Conns", 1).text("t", "UCX").opaque("c", 0)))
			.contains("empty connection info");
		assertInvalid(standardBlob(b -> b.text("Agent", "a").field("Conns", new byte[4])))
			.contains("has 4 bytes instead of 8");
		assertInvalid(new Blob().text("Agent", "a").u64("Conns", 0).text("", "MemSectio").u64("nixlSecElms", 0).bytes())
			.contains("is not 'MemSection'");
		assertInvalid(new Blob().text("Agent", "a").u64("Conns", 0).text("", "MemSection").bytes())
			.contains("section count");
		Region region = new Region(0x1000, 4096, 0);
		assertInvalid(sections(
				b -> b.text("bknd", "").text("nixlDList", "nixlSDList").u32("t", 0).u64("n", 1).desc(region, 11)));
		assertInvalid(sections(
				b -> b.text("bknd", "UCX").text("nixlDList", "nixlBDList").u32("t", 0).u64("n", 1).desc(region, 11)))
			.contains("is not 'nixlSDList'");
		assertInvalid(sections(b -> b.section("UCX", 5, region))).contains("unknown memory type 5");
		assertInvalid(sections(b -> b.section("UCX", -1, region))).contains("unknown memory type 4294967295");
		assertInvalid(sections(
				b -> b.text("bknd", "UCX").text("nixlDList", "nixlSDList").u32("t", 0).u64("n", 0).opaque("", 40)))
			.contains("without descriptors");
		assertInvalid(sections(b -> b.text("bknd", "UCX")
			.text("nixlDList", "nixlSDList")
			.u32("t", 0)
			.u64("n", 2)
			.opaque("", 23)
			.desc(region, 11))).contains("shorter than 24");
		assertInvalid(sections(b -> b.text("bknd", "UCX")
			.text("nixlDList", "nixlSDList")
			.field("t", new byte[8])
			.u64("n", 1)
			.desc(region, 11))).contains("has 8 bytes instead of 4");
		byte[] unterminated = new Blob().text("Agent", "a").bytes();
		unterminated[unterminated.length - 1] = '#';
		assertInvalid(unterminated).contains("not terminated by '|'");
		// A descriptor without key bytes is what NIXL accepts too (but not from UCX, see
		// below).
		assertThatNoException().isThrownBy(() -> MetadataFraming.parse(sections(b -> b.text("bknd", "POSIX")
			.text("nixlDList", "nixlSDList")
			.u32("t", 4)
			.u64("n", 1)
			.desc(new Region(0, -1L, 9), 0))));
	}

	@Test
	void acceptsUcxRemoteKeysAsUcxPacksThem() {
		// What a NIXL 1.5.1 agent on this machine packs: one memory domain with an empty
		// key, then the
		// system device byte (unknown) that UCX does not read back.
		assertParses(ucxSection(ucxKey(1L, 0, 0, 0xff)));
		// Three domains with keys of 2, 0 and 3 bytes, CUDA memory, system device 1 and
		// one distance entry.
		assertParses(ucxSection(ucxKey(0b1011L, 1, 2, 7, 7, 0, 3, 1, 2, 3, 1, 0, 9, 9)));
		// No domain at all, and every memory type UCX knows, HOST (0) to GAUDI (9).
		for (int memoryType = 0; memoryType <= 9; memoryType++) {
			assertParses(ucxSection(ucxKey(0L, memoryType)));
		}
		for (String sample : SAMPLES) {
			assertParses(sample(sample));
		}
	}

	@Test
	void rejectsUcxRemoteKeysThatUcxWouldMisread() {
		// UCX indexes per-memory-type tables with this byte: 10 and more crashed NIXL
		// 1.5.1 with
		// SIGSEGV in ucp_proto_init_add_buffer_copy_time (MetadataFuzzTest).
		for (int memoryType : new int[] { 10, 15, 0x40, 0x7f, 0xff }) {
			assertInvalid(ucxSection(ucxKey(1L, memoryType, 0, 0xff)))
				.contains("unknown UCX memory type " + memoryType);
		}
		// UCX reads the domain map and the memory type without knowing the key's length:
		// an empty
		// key made it read both from the bytes after it.
		assertInvalid(ucxSection(new byte[0])).contains("UCX remote key of 0 bytes, shorter than 9");
		assertInvalid(ucxSection(new byte[8])).contains("UCX remote key of 8 bytes, shorter than 9");
		// The map names two domains, the key holds one.
		assertInvalid(ucxSection(ucxKey(0b11L, 0, 2, 7, 7))).contains("memory domain 2 of 2");
		// The size byte of the only domain claims more than is left.
		assertInvalid(ucxSection(ucxKey(1L, 0, 5, 7, 7))).contains("memory domain 1 of 1");
		// The same bytes are no UCX key in a section of another backend, and are left
		// alone there.
		assertParses(sections(b -> b.text("bknd", "POSIX")
			.text("nixlDList", "nixlSDList")
			.u32("t", 0)
			.u64("n", 1)
			.desc(new Region(0x1000, 4096, 0), ucxKey(1L, 0xff, 5))));
	}

	private static void assertParses(byte[] blob) {
		assertThatNoException().isThrownBy(() -> MetadataFraming.parse(blob));
	}

	/** A blob with one UCX section of one descriptor with the given key. */
	private static byte[] ucxSection(byte[] key) {
		return sections(b -> b.text("bknd", "UCX")
			.text("nixlDList", "nixlSDList")
			.u32("t", 0)
			.u64("n", 1)
			.desc(new Region(0x1000, 4096, 0), key));
	}

	/** A packed UCX remote key: the domain map, the memory type and the given bytes. */
	private static byte[] ucxKey(long domains, int memoryType, int... rest) {
		ByteBuffer key = ByteBuffer.allocate(9 + rest.length).order(ByteOrder.LITTLE_ENDIAN);
		key.putLong(domains).put((byte) memoryType);
		for (int b : rest) {
			key.put((byte) b);
		}
		return key.array();
	}

	@Test
	void failureMessagesHideAddressesAndKeys() {
		long secretAddress = 0x7f12_3456_789aL;
		byte[] blob = concat(new Blob().text("Agent", "a")
			.u64("Conns", 0)
			.text("", "MemSection")
			.u64("nixlSecElms", 1)
			.section("UCX", 0, new Region(secretAddress, 4096, 0))
			.bytes(), new byte[] { 1 });
		String message = catchNixl(() -> MetadataFraming.parse(blob)).getMessage();
		assertThat(message).doesNotContain(Long.toString(secretAddress), Long.toHexString(secretAddress));
	}

	@Test
	void survivesSeededMutationsWithInvalidMetadataOnly() {
		List<byte[]> samples = new ArrayList<>();
		for (String name : SAMPLES) {
			samples.add(sample(name));
		}
		samples.add(standardBlob().bytes());
		Random random = new Random(0x6e69786cL);
		int mutations = 20_000;
		int accepted = 0;
		int rejected = 0;
		long started = System.nanoTime();
		for (int i = 0; i < mutations; i++) {
			byte[] mutant = mutate(samples.get(random.nextInt(samples.size())), random);
			try {
				MetadataFraming.parse(mutant);
				accepted++;
			}
			catch (NixlException ex) {
				assertThat(ex.status()).isEqualTo(NixlStatus.INVALID_METADATA);
				rejected++;
			}
			catch (Throwable ex) {
				fail("mutation " + i + " escaped as " + ex, ex);
			}
		}
		long millis = (System.nanoTime() - started) / 1_000_000;
		System.out.printf("MetadataFraming mutations: %d accepted, %d rejected, %d ms%n", accepted, rejected, millis);
		assertThat(accepted + rejected).isEqualTo(mutations);
		assertThat(rejected).isGreaterThan(mutations / 2);
		assertThat(millis).isLessThan(3_000);
	}

	private static byte[] mutate(byte[] original, Random random) {
		byte[] bytes = original.clone();
		int rounds = 1 + random.nextInt(3);
		for (int round = 0; round < rounds && bytes.length > 0; round++) {
			int at = random.nextInt(bytes.length);
			switch (random.nextInt(6)) {
				case 0 -> bytes[at] ^= (byte) (1 << random.nextInt(8));
				case 1 -> bytes = Bytes.splice(bytes, at, 0, new byte[] { (byte) random.nextInt(256) });
				case 2 -> bytes = Bytes.splice(bytes, at, 1, new byte[0]);
				case 3 -> {
					if (at + Long.BYTES <= bytes.length) {
						long current = ByteBuffer.wrap(bytes, at, Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).getLong();
						long[] choices = { current + 1, current - 1, 0, -1L, Long.MIN_VALUE, random.nextLong(),
								random.nextInt(4096) };
						putLong(bytes, at, choices[random.nextInt(choices.length)]);
					}
				}
				case 4 -> bytes = Arrays.copyOf(bytes, at);
				default -> {
					int from = random.nextInt(bytes.length);
					int length = Math.min(bytes.length - from, 1 + random.nextInt(64));
					bytes = Bytes.splice(bytes, at, 0, Arrays.copyOfRange(bytes, from, from + length));
				}
			}
		}
		return bytes;
	}

	private static AbstractStringAssert<?> assertInvalid(byte[] bytes) {
		NixlException ex = catchNixl(() -> MetadataFraming.parse(bytes));
		return assertThat(ex.getMessage()).contains("load_remote_md", "INVALID_METADATA");
	}

	private static NixlException catchNixl(ThrowingCallable call) {
		Throwable thrown = catchThrowable(call);
		assertThat(thrown).isInstanceOf(NixlException.class);
		NixlException ex = (NixlException) thrown;
		assertThat(ex.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		assertThat(ex.operation()).isEqualTo("load_remote_md");
		return ex;
	}

	private static void assertUcxConnection(ParsedMetadata md) {
		assertThat(md.connections()).singleElement().satisfies(connection -> {
			assertThat(connection.backend()).isEqualTo("UCX");
			assertThat(connection.connectionInfoLength()).isPositive();
		});
	}

	private static List<Long> lengths(ParsedMetadata md) {
		return md.sections().stream().flatMap(section -> section.regions().stream()).map(Region::length).toList();
	}

	static byte[] sample(String name) {
		try (InputStream in = MetadataFramingTest.class.getResourceAsStream("/metadata/" + name + ".bin")) {
			assertThat(in).as("fixture %s", name).isNotNull();
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The UCX connection info of a real agent (from {@code one-dram-1mib.bin}): the only
	 * connection info of backend UCX that the check accepts is a UCX worker address.
	 */
	static byte[] ucxWorkerAddress() {
		return connectionInfo(sample("one-dram-1mib"));
	}

	/**
	 * The connection info of a well-formed blob whose agent has at least one connection.
	 */
	static byte[] connectionInfo(byte[] bytes) {
		ByteBuffer blob = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
		// Header, then the "Agent", "Conns" and "t" fields, then the tag "c" and its
		// length.
		int at = "nixlSerDes|".length();
		for (String tag : List.of("Agent", "Conns", "t")) {
			at += tag.length() + Long.BYTES + (int) blob.getLong(at + tag.length()) + 1;
		}
		int length = (int) blob.getLong(at + 1);
		return Arrays.copyOfRange(bytes, at + 1 + Long.BYTES, at + 1 + Long.BYTES + length);
	}

	private static byte[] concat(byte[] first, byte[] second) {
		byte[] result = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, result, first.length, second.length);
		return result;
	}

	private static void putLong(byte[] bytes, int offset, long value) {
		ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(offset, value);
	}

	/**
	 * A well-formed blob with two connections and two sections, built with {@link Blob}.
	 */
	private static Blob standardBlob() {
		return new Blob().text("Agent", "prefill-0")
			.u64("Conns", 2)
			.text("t", "UCX")
			.field("c", ucxWorkerAddress())
			.text("t", "LIBFABRIC")
			.opaque("c", 40)
			.text("", "MemSection")
			.u64("nixlSecElms", 2)
			.section("UCX", 0, new Region(0x1000, 4096, 0), new Region(0x4000, 8192, 0))
			.section("UCX", 1, new Region(0x7f00_0000_0000L, MIB, 2));
	}

	private static byte[] standardBlob(Consumer<Blob> head) {
		Blob blob = new Blob();
		head.accept(blob);
		return blob.u64("Conns", 0).text("", "MemSection").u64("nixlSecElms", 0).bytes();
	}

	/**
	 * A blob with a header, no connections and one section written by {@code section}.
	 */
	private static byte[] sections(Consumer<Blob> section) {
		Blob blob = new Blob().text("Agent", "a").u64("Conns", 0).text("", "MemSection").u64("nixlSecElms", 1);
		section.accept(blob);
		return blob.bytes();
	}

	/**
	 * Writes NIXL's {@code nixlSerDes} framing, independently of the parser, and records
	 * where the length fields and the element counts sit.
	 */
	private static final class Blob {

		private final ByteArrayOutputStream out = new ByteArrayOutputStream();

		private final List<Integer> lengthAndCountOffsets = new ArrayList<>();

		Blob() {
			this.out.writeBytes("nixlSerDes|".getBytes(StandardCharsets.US_ASCII));
		}

		Blob field(String tag, byte[] value) {
			this.out.writeBytes(tag.getBytes(StandardCharsets.US_ASCII));
			this.lengthAndCountOffsets.add(this.out.size());
			this.out.writeBytes(le(Long.BYTES).putLong(value.length).array());
			this.out.writeBytes(value);
			this.out.write('|');
			return this;
		}

		Blob text(String tag, String value) {
			return field(tag, value.getBytes(StandardCharsets.UTF_8));
		}

		Blob opaque(String tag, int length) {
			byte[] value = new byte[length];
			Arrays.fill(value, (byte) '|');
			return field(tag, value);
		}

		Blob u64(String tag, long value) {
			this.lengthAndCountOffsets.add(this.out.size() + tag.length() + Long.BYTES);
			return field(tag, le(Long.BYTES).putLong(value).array());
		}

		Blob u32(String tag, int value) {
			return field(tag, le(Integer.BYTES).putInt(value).array());
		}

		Blob desc(Region region, int keyLength) {
			return desc(region, new byte[keyLength]);
		}

		Blob desc(Region region, byte[] key) {
			ByteBuffer value = le(3 * Long.BYTES + key.length).putLong(region.address())
				.putLong(region.length())
				.putLong(region.deviceId())
				.put(key);
			return field("", value.array());
		}

		Blob section(String backend, int memoryType, Region... regions) {
			text("bknd", backend).text("nixlDList", "nixlSDList").u32("t", memoryType).u64("n", regions.length);
			for (Region region : regions) {
				desc(region, 11);
			}
			return this;
		}

		byte[] bytes() {
			return this.out.toByteArray();
		}

		private static ByteBuffer le(int size) {
			return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
		}

	}

}
