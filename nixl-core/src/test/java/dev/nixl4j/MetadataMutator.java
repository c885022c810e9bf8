package dev.nixl4j;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import dev.nixl4j.testsupport.Bytes;

/**
 * Seeded mutations of NIXL metadata blobs for {@link MetadataFuzzTest}.
 *
 * <p>
 * A genuine blob is split into its {@code nixlSerDes} fields (tag, declared length,
 * value, separator), each labelled with its {@link Role} in the grammar of
 * {@link dev.nixl4j.metadata.MetadataFraming}. Structural mutations edit that field list
 * (names, counts, memory types, descriptors, keys, tags, lengths, whole connections,
 * sections and descriptors duplicated, dropped, moved or taken from another agent) and
 * mostly keep the framing intact, so that many mutants get past the Java check and reach
 * NIXL's own reader. Raw mutations then edit the serialized bytes (bit flips, inserted
 * and deleted bytes, truncation, duplicated chunks, trailing data) and mostly break the
 * framing.
 *
 * <p>
 * Connection info (the {@code c} values) is mutated on purpose as well: a UCX connection
 * info is a packed UCX worker address, whose header, device and interface entries
 * {@link #connectionInfo(List)} edits with knowledge of their layout. The caller decides
 * with {@link #connectionInfos(byte[])} which mutants may reach a loader, as a changed
 * connection info makes UCX connect wherever it points.
 *
 * <p>
 * Not thread-safe; one instance per seed.
 */
final class MetadataMutator {

	/** The header every blob starts with. */
	static final byte[] HEADER = ascii("nixlSerDes|");

	/** Where a field sits in the grammar. */
	enum Role {

		AGENT("Agent"), CONNS("Conns"), CONN_BACKEND("t"), CONN_INFO("c"), MARKER(""), SECTION_COUNT("nixlSecElms"),
		SECTION_BACKEND("bknd"), LIST_TYPE("nixlDList"), MEMORY_TYPE("t"), DESC_COUNT("n"), DESC("");

		final byte[] tag;

		Role(String tag) {
			this.tag = ascii(tag);
		}

	}

	/** One field; mutable, copied before each mutant. */
	static final class Field {

		final Role role;

		byte[] tag;

		byte[] value;

		/** The declared length when it differs from the value's, else {@code null}. */
		Long length;

		byte separator = '|';

		Field(Role role, byte[] tag, byte[] value) {
			this.role = role;
			this.tag = tag;
			this.value = value;
		}

		Field copy() {
			Field copy = new Field(this.role, this.tag.clone(), this.value.clone());
			copy.length = this.length;
			copy.separator = this.separator;
			return copy;
		}

	}

	/**
	 * A genuine blob to mutate.
	 *
	 * @param name the agent that wrote it
	 * @param blob the blob, full or partial metadata
	 * @param full the same agent's full metadata (the blob itself unless it is partial)
	 */
	record Source(String name, byte[] blob, byte[] full) {

		boolean partial() {
			return !Arrays.equals(this.blob, this.full);
		}

	}

	/**
	 * A mutant.
	 *
	 * @param source the genuine blob it was made from
	 * @param blob the mutant
	 * @param full the full metadata of the source's agent under the name the mutant
	 * started with
	 * @param operations the operations that made it
	 */
	record Mutant(Source source, byte[] blob, byte[] full, List<String> operations) {
	}

	private static final String[] BACKEND_NAMES = { "UCX", "POSIX", "GDS", "GDS_MT", "LIBFABRIC", "OBJ", "UCCL",
			"Mooncake", "ucx", "UCX ", "U", "UCX\0GDS", "\u00dcCX" };

	private static final String[] LITERALS = { "MemSectio", "MemSectionX", "memsection", "nixlBDList", "nixlSDLisT",
			"nixlXferDList", "nixlMetaDList", "", "nixlSDList\0" };

	private final Random random;

	private final List<Source> sources;

	/** Descriptor keys of all sources: genuine keys to place where they do not belong. */
	private final List<byte[]> keys = new ArrayList<>();

	/**
	 * Creates a mutator.
	 * @param seed the seed; the same seed makes the same operations on sources of the
	 * same shape
	 * @param sources genuine blobs
	 */
	MetadataMutator(long seed, List<Source> sources) {
		this.random = new Random(seed);
		this.sources = List.copyOf(sources);
		for (Source source : sources) {
			for (Field field : fields(source.blob())) {
				if (field.role == Role.DESC && field.value.length > 24) {
					this.keys.add(Arrays.copyOfRange(field.value, 24, field.value.length));
				}
			}
		}
	}

	/**
	 * Makes the next mutant: one to three operations, structural ones first, on a source
	 * whose agent was renamed first. NIXL 1.5.1 keeps a UCX connection behind when a load
	 * fails after the connection info and then refuses that agent name for good; a fresh
	 * name per mutant keeps one mutant's failure from deciding how the next one loads.
	 * @param name the agent name the mutant starts from
	 * @return the mutant
	 */
	Mutant next(String name) {
		Source source = this.sources.get(this.random.nextInt(this.sources.size()));
		List<Field> fields = fields(source.blob());
		fields.getFirst().value = name.getBytes(StandardCharsets.UTF_8);
		List<String> operations = new ArrayList<>();
		int rounds = 1 + this.random.nextInt(3);
		int structural = 0;
		for (int i = 0; i < rounds; i++) {
			if (this.random.nextInt(4) != 0) {
				structural++;
			}
		}
		for (int i = 0; i < structural; i++) {
			operations.add(structural(fields));
		}
		byte[] blob = serialize(fields);
		for (int i = structural; i < rounds; i++) {
			blob = raw(blob, operations);
		}
		return new Mutant(source, blob, renamed(source.full(), name), operations);
	}

	/**
	 * Returns a well-formed blob with another agent name.
	 * @param blob the blob
	 * @param name the new name
	 * @return the renamed blob
	 */
	static byte[] renamed(byte[] blob, String name) {
		List<Field> fields = fields(blob);
		fields.getFirst().value = name.getBytes(StandardCharsets.UTF_8);
		return serialize(fields);
	}

	// ---- structural mutations, on the field list

	private String structural(List<Field> fields) {
		// Each case returns null when the blob has nothing it applies to; then another is
		// tried.
		for (int attempt = 0; attempt < 20; attempt++) {
			String done = switch (this.random.nextInt(18)) {
				case 0 -> agentName(fields);
				case 1 -> count(fields);
				case 2 -> memoryType(fields);
				case 3 -> backendName(fields);
				case 4, 5 -> descriptor(fields);
				case 6 -> duplicate(fields);
				case 7 -> remove(fields);
				case 8 -> reorder(fields);
				case 9 -> tag(fields);
				case 10 -> literal(fields);
				case 11 -> valueSize(fields);
				case 12 -> length(fields);
				case 13 -> separator(fields);
				case 14 -> splice(fields);
				case 15, 16 -> connectionInfo(fields);
				default -> syntheticSection(fields);
			};
			if (done != null) {
				return done;
			}
		}
		return "none";
	}

	private String agentName(List<Field> fields) {
		Field agent = first(fields, Role.AGENT);
		if (agent == null) {
			return null;
		}
		byte[][] choices = { new byte[0], ascii("x"), ascii(MetadataLoadChild.AGENT_NAME),
				ascii(this.sources.get(this.random.nextInt(this.sources.size())).name()), ascii("a".repeat(300)),
				ascii("b".repeat(5000)), ascii("agent|with|bars"), ascii("nul\0inside"), ascii("line\nbreak"),
				utf8("prefill-\u00e9-\u4e2d\u6587"), { (byte) 0xff, (byte) 0xfe, 'x' }, { (byte) 0xc3 }, ascii("\0"),
				randomBytes(1 + this.random.nextInt(64)), Arrays.copyOf(agent.value, agent.value.length + 1) };
		agent.value = choices[this.random.nextInt(choices.length)];
		agent.length = null;
		return "agent-name";
	}

	private String count(List<Field> fields) {
		Field field = any(fields, Role.CONNS, Role.SECTION_COUNT, Role.DESC_COUNT);
		if (field == null || field.value.length != Long.BYTES) {
			return null;
		}
		long current = le(field.value).getLong(0);
		long[] choices = { current + 1, current - 1, 0, current * 2, this.random.nextInt(64), -1L, 1L << 32,
				Long.MIN_VALUE, current + 1 + this.random.nextInt(1000) };
		field.value = u64(choices[this.random.nextInt(choices.length)]);
		return "count";
	}

	private String memoryType(List<Field> fields) {
		Field field = any(fields, Role.MEMORY_TYPE);
		if (field == null) {
			return null;
		}
		// Mostly the five valid types, so that such sections reach NIXL; some invalid
		// ones for the Java check.
		int[] choices = { 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 7, 255, -1, 0x100, Integer.MIN_VALUE,
				this.random.nextInt() };
		field.value = u32(choices[this.random.nextInt(choices.length)]);
		field.length = null;
		return "memory-type";
	}

	private String backendName(List<Field> fields) {
		Field field = any(fields, Role.CONN_BACKEND, Role.SECTION_BACKEND);
		if (field == null) {
			return null;
		}
		int choice = this.random.nextInt(BACKEND_NAMES.length + 3);
		field.value = choice < BACKEND_NAMES.length ? utf8(BACKEND_NAMES[choice])
				: choice == BACKEND_NAMES.length ? new byte[0] : choice == BACKEND_NAMES.length + 1
						? ascii("X".repeat(300)) : randomBytes(1 + this.random.nextInt(16));
		field.length = null;
		return "backend-name";
	}

	private String descriptor(List<Field> fields) {
		Field field = any(fields, Role.DESC);
		if (field == null || field.value.length < 24) {
			return null;
		}
		byte[] value = field.value;
		int keyLength = value.length - 24;
		switch (this.random.nextInt(10)) {
			case 0, 1, 2 -> {
				// address, length or device id
				int at = 8 * this.random.nextInt(3);
				long current = le(value).getLong(at);
				long[] choices = { 0, -1L, current + 1, current - 1, current + 4096, current * 2, Long.MIN_VALUE,
						Long.MAX_VALUE, this.random.nextLong(), this.random.nextInt(16) };
				le(value).putLong(at, choices[this.random.nextInt(choices.length)]);
				return "descriptor-number";
			}
			case 3 -> {
				field.value = Arrays.copyOf(value, 24 + (keyLength == 0 ? 0 : this.random.nextInt(keyLength)));
				return "key-truncate";
			}
			case 4 -> {
				field.value = concat(value, randomBytes(1 + this.random.nextInt(32)));
				return "key-extend";
			}
			case 5 -> {
				if (keyLength == 0) {
					return null;
				}
				int at = 24 + this.random.nextInt(keyLength);
				value[at] ^= (byte) (1 << this.random.nextInt(8));
				return "key-bit-flip";
			}
			case 6 -> {
				if (keyLength == 0) {
					return null;
				}
				// A byte of a key set to an extreme value: lengths and counts inside the
				// key.
				byte[] extremes = { 0, (byte) 0xff, (byte) 0x7f, (byte) 0x80, 1 };
				value[24 + this.random.nextInt(keyLength)] = extremes[this.random.nextInt(extremes.length)];
				return "key-byte";
			}
			case 7 -> {
				field.value = concat(Arrays.copyOf(value, 24), randomBytes(keyLength));
				return "key-random";
			}
			case 8 -> {
				// The ninth byte of a UCX remote key is its UCX memory type; the values
				// around the last one.
				if (keyLength < 9) {
					return null;
				}
				value[24 + 8] = (byte) this.random.nextInt(16);
				return "key-memory-type";
			}
			default -> {
				if (this.keys.isEmpty()) {
					return null;
				}
				field.value = concat(Arrays.copyOf(value, 24), this.keys.get(this.random.nextInt(this.keys.size())));
				return "key-foreign";
			}
		}
	}

	/**
	 * Edits a connection info. UCX connection info is a packed UCX worker address (UCX
	 * 1.23, {@code src/ucp/wireup/address.c}): a header (v1: version 0 and flags in one
	 * byte; v2: version 1 and release, then a flags byte), a UUID, a worker name if
	 * flagged, then per device an md byte, a length byte with flags, optional path count
	 * and system device, the device address, and per interface a checksum, attributes
	 * (v1: 16 bytes, v2: 8), a length byte with flags and the interface address. Most
	 * edits hit one of those fields with a value UCX reads differently; the rest damage
	 * the bytes in general.
	 */
	private String connectionInfo(List<Field> fields) {
		Field field = any(fields, Role.CONN_INFO);
		if (field == null || field.value.length == 0) {
			return null;
		}
		byte[] value = field.value.clone();
		List<int[]> layout = ucxLayout(value);
		byte[] extremes = { 0, 1, 2, (byte) 0x1f, (byte) 0x3f, (byte) 0x40, (byte) 0x7f, (byte) 0x80, (byte) 0xff };
		switch (this.random.nextInt(12)) {
			case 0 -> value[0] = (byte) ((value[0] & 0xf0) | this.random.nextInt(16));
			case 1 -> {
				if ((value[0] & 0x0f) == 1 && value.length > 1) {
					value[1] = (byte) this.random.nextInt(16);
				}
				else {
					value[0] = (byte) ((value[0] & 0x0f) | (this.random.nextInt(16) << 4));
				}
			}
			case 2, 3, 4, 5 -> {
				// A structural byte of the address: an md, length, flag or count byte.
				if (layout.isEmpty()) {
					return null;
				}
				int at = layout.get(this.random.nextInt(layout.size()))[0];
				int choice = this.random.nextInt(4);
				value[at] = choice == 0 ? extremes[this.random.nextInt(extremes.length)]
						: choice == 1 ? (byte) (value[at] ^ (1 << this.random.nextInt(8)))
								: choice == 2 ? (byte) (value[at] + (this.random.nextBoolean() ? 1 : -1))
										: (byte) this.random.nextInt(256);
			}
			case 6 -> {
				// Inside a device or interface address, or the attributes: what the
				// transport reads.
				List<int[]> ranges = new ArrayList<>();
				for (int[] entry : layout) {
					if (entry[1] > 0) {
						ranges.add(entry);
					}
				}
				if (ranges.isEmpty()) {
					return null;
				}
				int[] range = ranges.get(this.random.nextInt(ranges.size()));
				int at = range[0] + 1 + this.random.nextInt(range[1]);
				if (at < value.length) {
					value[at] = this.random.nextBoolean() ? extremes[this.random.nextInt(extremes.length)]
							: (byte) this.random.nextInt(256);
				}
			}
			case 7 -> value = Arrays.copyOf(value, this.random.nextInt(value.length));
			case 8 -> value = concat(value, randomBytes(1 + this.random.nextInt(16)));
			case 9 -> value = Bytes.splice(value, this.random.nextInt(value.length), this.random.nextBoolean() ? 1 : 0,
					randomBytes(this.random.nextInt(3)));
			case 10 -> {
				// The forged info of the report, or a short random one.
				value = this.random.nextBoolean() ? ascii("x") : randomBytes(1 + this.random.nextInt(24));
			}
			default -> {
				// Another agent's genuine connection info: maybe the other address
				// format.
				Source other = this.sources.get(this.random.nextInt(this.sources.size()));
				List<byte[]> infos = connectionInfos(other.blob());
				if (infos.isEmpty()) {
					return null;
				}
				value = infos.get(this.random.nextInt(infos.size())).clone();
			}
		}
		field.value = value;
		field.length = null;
		return "connection-info";
	}

	/**
	 * The structural bytes of a UCX worker address, read as UCX 1.23 writes it (v1 or v2,
	 * default mode): per entry its offset and the length of the data it announces (a
	 * device or interface address, attributes) or 0. Stops quietly where the address does
	 * not follow the layout.
	 */
	static List<int[]> ucxLayout(byte[] address) {
		List<int[]> layout = new ArrayList<>();
		if (address.length < 2) {
			return layout;
		}
		boolean v2 = (address[0] & 0x0f) == 1;
		int flags = v2 ? address[1] & 0xff : (address[0] & 0xff) >>> 4;
		layout.add(new int[] { 0, 0 });
		int at = v2 ? 2 : 1;
		if (v2) {
			layout.add(new int[] { 1, 0 });
		}
		at += 8;
		if ((flags & 1) != 0 && at < address.length) {
			layout.add(new int[] { at, 0 });
			at += 1 + (address[at] & 0xff);
		}
		boolean lastDevice = false;
		while (!lastDevice && at + 1 < address.length) {
			int md = address[at] & 0xff;
			layout.add(new int[] { at, 0 });
			at += v2 && (md & 0x7f) == 0x7f ? 2 : 1;
			if (at >= address.length) {
				break;
			}
			int lengthByte = address[at] & 0xff;
			int length = lengthByte & 0x1f;
			if (v2 && length == 0x1f && at + 1 < address.length) {
				length = address[at + 1] & 0xff;
				at++;
			}
			layout.add(new int[] { at, length });
			at++;
			lastDevice = (lengthByte & 0x80) != 0;
			if ((lengthByte & 0x40) != 0) {
				layout.add(new int[] { at++, 0 });
			}
			if ((lengthByte & 0x20) != 0) {
				layout.add(new int[] { at++, 0 });
			}
			at += length;
			boolean lastInterface = (md & 0x80) != 0;
			while (!lastInterface && at + 2 < address.length) {
				int attributes = v2 ? 8 : 16;
				layout.add(new int[] { at, 2 + attributes - 1 });
				at += 2 + attributes;
				if (at >= address.length) {
					break;
				}
				int ifaceByte = address[at] & 0xff;
				int ifaceLength = ifaceByte & 0x3f;
				if (v2 && ifaceLength == 0x3f && at + 1 < address.length) {
					ifaceLength = address[at + 1] & 0xff;
					at++;
				}
				layout.add(new int[] { at, ifaceLength });
				at += 1 + ifaceLength;
				lastInterface = (ifaceByte & 0x80) != 0;
			}
		}
		// The walk follows lengths it does not check: keep what lies inside the address.
		layout.removeIf(entry -> entry[0] >= address.length);
		return layout;
	}

	private String duplicate(List<Field> fields) {
		List<int[]> groups = groups(fields);
		if (groups.isEmpty()) {
			return null;
		}
		int[] group = groups.get(this.random.nextInt(groups.size()));
		List<Field> copies = new ArrayList<>();
		for (int i = group[0]; i < group[1]; i++) {
			copies.add(fields.get(i).copy());
		}
		Field counter = counterOf(fields, group[0]);
		fields.addAll(group[1], copies);
		if (counter != null && this.random.nextInt(10) < 7) {
			adjust(counter, 1);
		}
		return "duplicate-" + fields.get(group[0]).role.name().toLowerCase();
	}

	private String remove(List<Field> fields) {
		List<int[]> groups = groups(fields);
		if (groups.isEmpty()) {
			return null;
		}
		int[] group = groups.get(this.random.nextInt(groups.size()));
		String name = "remove-" + fields.get(group[0]).role.name().toLowerCase();
		Field counter = counterOf(fields, group[0]);
		fields.subList(group[0], group[1]).clear();
		if (counter != null && this.random.nextInt(10) < 7) {
			adjust(counter, -1);
		}
		return name;
	}

	private String reorder(List<Field> fields) {
		List<int[]> sections = groups(fields, Role.SECTION_BACKEND);
		List<Integer> descs = indices(fields, Role.DESC);
		if (sections.size() >= 2 && this.random.nextBoolean()) {
			// Move the last section to the front of the section list.
			int[] last = sections.getLast();
			List<Field> moved = new ArrayList<>(fields.subList(last[0], last[1]));
			fields.subList(last[0], last[1]).clear();
			fields.addAll(sections.getFirst()[0], moved);
			return "reorder-sections";
		}
		if (descs.size() >= 2) {
			// Move a descriptor elsewhere, which may put it into another section.
			int from = descs.get(this.random.nextInt(descs.size()));
			Field desc = fields.remove(from);
			List<Integer> after = indices(fields, Role.DESC);
			int to = after.isEmpty() ? from : after.get(this.random.nextInt(after.size()));
			fields.add(to, desc);
			return "move-descriptor";
		}
		return null;
	}

	private String tag(List<Field> fields) {
		Field field = fields.get(this.random.nextInt(fields.size()));
		Role[] roles = Role.values();
		switch (this.random.nextInt(4)) {
			case 0 -> field.tag = roles[this.random.nextInt(roles.length)].tag.clone();
			case 1 -> {
				if (field.tag.length == 0) {
					field.tag = ascii("t");
				}
				else {
					field.tag = field.tag.clone();
					field.tag[this.random.nextInt(field.tag.length)] ^= 0x20;
				}
			}
			case 2 -> field.tag = Arrays.copyOf(field.tag, Math.max(0, field.tag.length - 1));
			default -> field.tag = concat(field.tag, ascii("x"));
		}
		return "tag";
	}

	private String literal(List<Field> fields) {
		Field field = any(fields, Role.MARKER, Role.LIST_TYPE);
		if (field == null) {
			return null;
		}
		field.value = ascii(LITERALS[this.random.nextInt(LITERALS.length)]);
		field.length = null;
		return "literal";
	}

	private String valueSize(List<Field> fields) {
		Field field = any(fields, Role.MEMORY_TYPE, Role.CONNS, Role.SECTION_COUNT, Role.DESC_COUNT);
		if (field == null) {
			return null;
		}
		int[] sizes = { 0, 1, 2, 4, 7, 8, 9, 16 };
		field.value = Arrays.copyOf(field.value, sizes[this.random.nextInt(sizes.length)]);
		field.length = null;
		return "value-size";
	}

	private String length(List<Field> fields) {
		Field field = fields.get(this.random.nextInt(fields.size()));
		long current = field.value.length;
		long[] choices = { current + 1, current - 1, current + 8, current - 8, 0, -1L, Long.MIN_VALUE, 1L << 32,
				0xFFFF_FFFFL, current + this.random.nextInt(4096), this.random.nextLong() };
		field.length = choices[this.random.nextInt(choices.length)];
		return "length";
	}

	private String separator(List<Field> fields) {
		Field field = fields.get(this.random.nextInt(fields.size()));
		byte[] choices = { 0, ',', '#', (byte) 0xff, '\n', (byte) this.random.nextInt(256) };
		field.separator = choices[this.random.nextInt(choices.length)];
		return "separator";
	}

	private String splice(List<Field> fields) {
		Source other = this.sources.get(this.random.nextInt(this.sources.size()));
		List<Field> theirs = fields(other.blob());
		Role kind = this.random.nextBoolean() ? Role.SECTION_BACKEND : Role.CONN_BACKEND;
		List<int[]> groups = groups(theirs, kind);
		if (groups.isEmpty()) {
			return null;
		}
		int[] group = groups.get(this.random.nextInt(groups.size()));
		List<Field> graft = new ArrayList<>(theirs.subList(group[0], group[1]));
		int at;
		Role counterRole;
		if (kind == Role.SECTION_BACKEND) {
			// Before a section of ours, or after the last field.
			List<Integer> starts = indices(fields, Role.SECTION_BACKEND);
			at = starts.isEmpty() || this.random.nextBoolean() ? fields.size()
					: starts.get(this.random.nextInt(starts.size()));
			counterRole = Role.SECTION_COUNT;
		}
		else {
			Field marker = first(fields, Role.MARKER);
			at = marker == null ? fields.size() : fields.indexOf(marker);
			counterRole = Role.CONNS;
		}
		fields.addAll(at, graft);
		Field counter = first(fields, counterRole);
		if (counter != null && this.random.nextInt(10) < 8) {
			adjust(counter, 1);
		}
		return "splice-" + (kind == Role.SECTION_BACKEND ? "section" : "connection");
	}

	private String syntheticSection(List<Field> fields) {
		List<Field> section = new ArrayList<>();
		String backend = this.random.nextInt(4) == 0 ? BACKEND_NAMES[this.random.nextInt(BACKEND_NAMES.length)] : "UCX";
		section.add(new Field(Role.SECTION_BACKEND, Role.SECTION_BACKEND.tag, utf8(backend)));
		section.add(new Field(Role.LIST_TYPE, Role.LIST_TYPE.tag, ascii("nixlSDList")));
		section.add(new Field(Role.MEMORY_TYPE, Role.MEMORY_TYPE.tag, u32(this.random.nextInt(5))));
		int count = 1 + this.random.nextInt(4);
		section.add(new Field(Role.DESC_COUNT, Role.DESC_COUNT.tag, u64(count)));
		for (int i = 0; i < count; i++) {
			ByteBuffer numbers = le(new byte[24]);
			long[] addresses = { 0, 0x1000, this.random.nextLong(), -4096L, 0x7f00_0000_0000L };
			long[] lengths = { 0, 1, 4096, -1L, this.random.nextLong() };
			numbers.putLong(0, addresses[this.random.nextInt(addresses.length)]);
			numbers.putLong(8, lengths[this.random.nextInt(lengths.length)]);
			numbers.putLong(16, this.random.nextInt(4));
			byte[] key = this.keys.isEmpty() || this.random.nextInt(3) == 0 ? randomBytes(this.random.nextInt(64))
					: this.keys.get(this.random.nextInt(this.keys.size()));
			section.add(new Field(Role.DESC, Role.DESC.tag, concat(numbers.array(), key)));
		}
		fields.addAll(section);
		Field counter = first(fields, Role.SECTION_COUNT);
		if (counter != null && this.random.nextInt(10) < 8) {
			adjust(counter, 1);
		}
		return "synthetic-section";
	}

	// ---- raw mutations, on the serialized bytes

	private byte[] raw(byte[] bytes, List<String> operations) {
		if (bytes.length == 0) {
			operations.add("trailing");
			return randomBytes(1 + this.random.nextInt(8));
		}
		int at = this.random.nextInt(bytes.length);
		switch (this.random.nextInt(7)) {
			case 0 -> {
				operations.add("bit-flip");
				byte[] copy = bytes.clone();
				copy[at] ^= (byte) (1 << this.random.nextInt(8));
				return copy;
			}
			case 1 -> {
				operations.add("insert-bytes");
				return Bytes.splice(bytes, at, 0, randomBytes(1 + this.random.nextInt(4)));
			}
			case 2 -> {
				operations.add("delete-bytes");
				return Bytes.splice(bytes, at, Math.min(bytes.length - at, 1 + this.random.nextInt(4)), new byte[0]);
			}
			case 3 -> {
				operations.add("truncate");
				return Arrays.copyOf(bytes, at);
			}
			case 4 -> {
				operations.add("duplicate-chunk");
				int from = this.random.nextInt(bytes.length);
				int length = Math.min(bytes.length - from, 1 + this.random.nextInt(128));
				return Bytes.splice(bytes, at, 0, Arrays.copyOfRange(bytes, from, from + length));
			}
			case 5 -> {
				operations.add("overwrite-u64");
				if (at + 8 > bytes.length) {
					return bytes;
				}
				byte[] copy = bytes.clone();
				long current = le(copy).getLong(at);
				long[] choices = { current + 1, current - 1, 0, -1L, Long.MIN_VALUE, this.random.nextLong(),
						this.random.nextInt(4096) };
				le(copy).putLong(at, choices[this.random.nextInt(choices.length)]);
				return copy;
			}
			default -> {
				operations.add("trailing");
				byte[] tail = this.random.nextBoolean() ? randomBytes(1 + this.random.nextInt(64))
						: Arrays.copyOfRange(bytes, at, bytes.length);
				return concat(bytes, tail);
			}
		}
	}

	// ---- the field model

	/**
	 * Splits a blob that {@link dev.nixl4j.metadata.MetadataFraming} accepts into its
	 * fields. The grammar is written out again here on purpose: the test must not trust
	 * the parser it tests.
	 * @param blob a well-formed blob
	 * @return its fields, in order
	 */
	static List<Field> fields(byte[] blob) {
		Cursor cursor = new Cursor(blob);
		List<Field> fields = new ArrayList<>();
		fields.add(cursor.field(Role.AGENT));
		Field conns = cursor.field(Role.CONNS);
		fields.add(conns);
		for (long i = 0, n = le(conns.value).getLong(0); i < n; i++) {
			fields.add(cursor.field(Role.CONN_BACKEND));
			fields.add(cursor.field(Role.CONN_INFO));
		}
		fields.add(cursor.field(Role.MARKER));
		Field sections = cursor.field(Role.SECTION_COUNT);
		fields.add(sections);
		for (long i = 0, n = le(sections.value).getLong(0); i < n; i++) {
			fields.add(cursor.field(Role.SECTION_BACKEND));
			fields.add(cursor.field(Role.LIST_TYPE));
			fields.add(cursor.field(Role.MEMORY_TYPE));
			Field descs = cursor.field(Role.DESC_COUNT);
			fields.add(descs);
			for (long j = 0, m = le(descs.value).getLong(0); j < m; j++) {
				fields.add(cursor.field(Role.DESC));
			}
		}
		if (cursor.position != blob.length) {
			throw new IllegalArgumentException("trailing bytes at " + cursor.position);
		}
		return fields;
	}

	/**
	 * Returns the connection info values of a well-formed blob.
	 * @param blob a blob that {@link dev.nixl4j.metadata.MetadataFraming} accepts
	 * @return the {@code c} values, in order
	 */
	static List<byte[]> connectionInfos(byte[] blob) {
		List<byte[]> infos = new ArrayList<>();
		for (Field field : fields(blob)) {
			if (field.role == Role.CONN_INFO) {
				infos.add(field.value);
			}
		}
		return infos;
	}

	static byte[] serialize(List<Field> fields) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		out.writeBytes(HEADER);
		for (Field field : fields) {
			out.writeBytes(field.tag);
			out.writeBytes(u64(field.length != null ? field.length : field.value.length));
			out.writeBytes(field.value);
			out.write(field.separator);
		}
		return out.toByteArray();
	}

	/** Reads fields in a known order from a well-formed blob. */
	private static final class Cursor {

		private final byte[] blob;

		private int position = HEADER.length;

		Cursor(byte[] blob) {
			if (!Arrays.equals(blob, 0, Math.min(blob.length, HEADER.length), HEADER, 0, HEADER.length)) {
				throw new IllegalArgumentException("no header");
			}
			this.blob = blob;
		}

		Field field(Role role) {
			byte[] tag = role.tag;
			if (!Arrays.equals(this.blob, this.position, this.position + tag.length, tag, 0, tag.length)) {
				throw new IllegalArgumentException("expected " + role + " at " + this.position);
			}
			int at = this.position + tag.length;
			int length = Math.toIntExact(le(this.blob).getLong(at));
			byte[] value = Arrays.copyOfRange(this.blob, at + 8, at + 8 + length);
			this.position = at + 8 + length + 1;
			return new Field(role, tag.clone(), value);
		}

	}

	/**
	 * The groups that repeat: connections, sections and descriptors, as [start, end)
	 * indices.
	 */
	private List<int[]> groups(List<Field> fields) {
		Role[] kinds = { Role.CONN_BACKEND, Role.SECTION_BACKEND, Role.DESC };
		for (int attempt = 0; attempt < kinds.length; attempt++) {
			List<int[]> groups = groups(fields, kinds[this.random.nextInt(kinds.length)]);
			if (!groups.isEmpty()) {
				return groups;
			}
		}
		return List.of();
	}

	private static List<int[]> groups(List<Field> fields, Role start) {
		List<int[]> groups = new ArrayList<>();
		for (int i = 0; i < fields.size(); i++) {
			if (fields.get(i).role != start) {
				continue;
			}
			int end = i + 1;
			switch (start) {
				case CONN_BACKEND -> end = Math.min(fields.size(), i + 2);
				case SECTION_BACKEND -> {
					while (end < fields.size() && fields.get(end).role != Role.SECTION_BACKEND) {
						end++;
					}
				}
				default -> {
				}
			}
			groups.add(new int[] { i, end });
		}
		return groups;
	}

	/** The count field that counts the group starting at {@code index}. */
	private static Field counterOf(List<Field> fields, int index) {
		Role role = fields.get(index).role;
		Role counter = switch (role) {
			case CONN_BACKEND -> Role.CONNS;
			case SECTION_BACKEND -> Role.SECTION_COUNT;
			default -> Role.DESC_COUNT;
		};
		for (int i = index; i >= 0; i--) {
			if (fields.get(i).role == counter) {
				return fields.get(i);
			}
		}
		return null;
	}

	private static void adjust(Field counter, long delta) {
		if (counter.value.length == Long.BYTES) {
			counter.value = u64(le(counter.value).getLong(0) + delta);
		}
	}

	private static List<Integer> indices(List<Field> fields, Role role) {
		List<Integer> indices = new ArrayList<>();
		for (int i = 0; i < fields.size(); i++) {
			if (fields.get(i).role == role) {
				indices.add(i);
			}
		}
		return indices;
	}

	private static Field first(List<Field> fields, Role role) {
		for (Field field : fields) {
			if (field.role == role) {
				return field;
			}
		}
		return null;
	}

	private Field any(List<Field> fields, Role... roles) {
		List<Field> matching = new ArrayList<>();
		for (Field field : fields) {
			for (Role role : roles) {
				if (field.role == role) {
					matching.add(field);
				}
			}
		}
		return matching.isEmpty() ? null : matching.get(this.random.nextInt(matching.size()));
	}

	private byte[] randomBytes(int length) {
		byte[] bytes = new byte[length];
		this.random.nextBytes(bytes);
		return bytes;
	}

	static byte[] concat(byte[] first, byte[] second) {
		byte[] result = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, result, first.length, second.length);
		return result;
	}

	private static ByteBuffer le(byte[] bytes) {
		return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
	}

	private static byte[] u64(long value) {
		return le(new byte[8]).putLong(0, value).array();
	}

	private static byte[] u32(int value) {
		return le(new byte[4]).putInt(0, value).array();
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.ISO_8859_1);
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
