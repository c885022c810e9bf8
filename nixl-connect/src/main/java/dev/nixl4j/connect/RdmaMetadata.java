package dev.nixl4j.connect;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.json.JsonException;
import dev.nixl4j.json.JsonReader;
import dev.nixl4j.json.JsonWriter;
import org.jspecify.annotations.Nullable;

/**
 * What a passive operation hands to its peer so that the peer can move the data: the
 * memory (descriptors), the agent metadata that grants access to it, the notification key
 * that completes the passive operation, and what the peer may do. Wire-compatible with
 * Dynamo's {@code nixl_connect.RdmaMetadata} JSON:
 *
 * <pre>{"descriptors":[{"device":"cpu","ptr":140200000000000,"size":4096}],
 *  "nixl_metadata":"b64:eJz...","notification_key":"3f2a...","operation_kind":1}</pre>
 *
 * <p>
 * {@code nixl_metadata} is {@code "b64:"} + base64(zlib(agent metadata)); the older form,
 * zlib as hex without prefix, is accepted when reading. Reading is strict: unknown or
 * missing keys, malformed JSON, base64, hex or zlib, a zero {@code ptr}, a size below 1,
 * an empty descriptor list, mixed memory kinds and metadata that decompresses beyond a
 * cap are refused with {@link NixlStatus#ERROR_INVALID_PARAM} naming the field.
 *
 * <p>
 * The agent metadata is a secret (it grants access to the memory): {@link #toString()}
 * shows only its size.
 *
 * @param descriptors the passive side's memory, in order (never with segments)
 * @param nixlMetadata the passive side's agent metadata
 * @param notificationKey the message the active side sends when it is done
 * @param operationKind what the active side may do
 */
public record RdmaMetadata(List<Descriptor> descriptors, AgentMetadata nixlMetadata, String notificationKey,
		OperationKind operationKind) {

	/** The longest JSON text {@link #fromJson(String)} reads: 32 Mi characters. */
	public static final int DEFAULT_MAX_JSON_CHARS = 32 << 20;

	/**
	 * The largest decompressed agent metadata {@link #fromJson(String)} accepts: 16 MiB.
	 */
	public static final int DEFAULT_MAX_METADATA_BYTES = 16 << 20;

	/** The longest notification key accepted. */
	public static final int MAX_NOTIFICATION_KEY_LENGTH = 1024;

	/**
	 * The most descriptors read: more than fit in {@link #DEFAULT_MAX_JSON_CHARS}, so
	 * that only a larger text limit makes it matter.
	 */
	private static final int MAX_DESCRIPTORS = 1 << 20;

	/**
	 * The nesting of Dynamo's form is two levels; this leaves room and refuses deep input
	 * early.
	 */
	private static final int MAX_DEPTH = 32;

	private static final String OPERATION = "parse_rdma_metadata";

	private static final Set<String> KEYS = Set.of("descriptors", "nixl_metadata", "notification_key",
			"operation_kind");

	private static final Set<String> DESCRIPTOR_KEYS = Set.of("device", "ptr", "size");

	private static final BigInteger MAX_POINTER = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

	/**
	 * Validates the metadata.
	 * @param descriptors the descriptors: at least one, all of one memory type
	 * @param nixlMetadata the agent metadata
	 * @param notificationKey the key: 1 to {@value #MAX_NOTIFICATION_KEY_LENGTH}
	 * characters
	 * @param operationKind the kind
	 * @throws IllegalArgumentException when a rule is broken
	 */
	public RdmaMetadata {
		Objects.requireNonNull(nixlMetadata, "nixlMetadata");
		Objects.requireNonNull(notificationKey, "notificationKey");
		Objects.requireNonNull(operationKind, "operationKind");
		descriptors = descriptors.stream().map(Descriptor::withoutSegment).toList();
		if (descriptors.isEmpty()) {
			throw new IllegalArgumentException("descriptors must not be empty");
		}
		MemoryType type = descriptors.get(0).device().memoryType();
		for (int i = 1; i < descriptors.size(); i++) {
			if (descriptors.get(i).device().memoryType() != type) {
				throw new IllegalArgumentException("descriptors must all be of one memory kind: descriptors[0] is on "
						+ descriptors.get(0).device() + ", descriptors[" + i + "] on " + descriptors.get(i).device());
			}
		}
		if (notificationKey.isEmpty() || notificationKey.length() > MAX_NOTIFICATION_KEY_LENGTH) {
			throw new IllegalArgumentException("notification_key must have 1 to " + MAX_NOTIFICATION_KEY_LENGTH
					+ " characters, had " + notificationKey.length());
		}
	}

	/**
	 * Returns the memory type of the descriptors.
	 * @return DRAM or VRAM
	 */
	public MemoryType memoryType() {
		return this.descriptors.get(0).device().memoryType();
	}

	/**
	 * Writes Dynamo's JSON form (compact, keys in Dynamo's order, {@code nixl_metadata}
	 * as {@code "b64:"} + base64(zlib)). The result carries the agent metadata: treat it
	 * as a secret.
	 * @return the JSON text
	 */
	public String toJson() {
		List<Object> list = new ArrayList<>();
		for (Descriptor descriptor : this.descriptors) {
			Map<String, Object> entry = new LinkedHashMap<>();
			entry.put("device", descriptor.device().wireName());
			entry.put("ptr", unsigned(descriptor.address()));
			entry.put("size", descriptor.size());
			list.add(entry);
		}
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("descriptors", list);
		json.put("nixl_metadata", MetadataEncoding.encode(this.nixlMetadata.toByteArray()));
		json.put("notification_key", this.notificationKey);
		json.put("operation_kind", this.operationKind.code());
		return JsonWriter.write(json);
	}

	private static Object unsigned(long address) {
		return (address >= 0) ? (Object) address : BigInteger.valueOf(address).add(BigInteger.ONE.shiftLeft(64));
	}

	/**
	 * Reads Dynamo's JSON form with the default limits.
	 * @param json the JSON text
	 * @return the metadata
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} naming the field that
	 * is wrong
	 */
	public static RdmaMetadata fromJson(String json) {
		return fromJson(json, DEFAULT_MAX_JSON_CHARS, DEFAULT_MAX_METADATA_BYTES);
	}

	/**
	 * Reads Dynamo's JSON form.
	 * @param json the JSON text
	 * @param maxJsonChars the longest text accepted (checked before parsing)
	 * @param maxMetadataBytes the largest decompressed agent metadata accepted (checked
	 * while inflating, chunk by chunk)
	 * @return the metadata
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} naming the field that
	 * is wrong
	 */
	public static RdmaMetadata fromJson(String json, int maxJsonChars, int maxMetadataBytes) {
		Objects.requireNonNull(json, "json");
		JsonReader reader = JsonReader.builder()
			.maxChars(maxJsonChars)
			.maxDepth(MAX_DEPTH)
			.maxMembers(MAX_DESCRIPTORS)
			.build();
		@Nullable Object root;
		try {
			root = reader.read(json);
		}
		catch (JsonException ex) {
			throw invalid("the RDMA metadata is not valid JSON: " + ex.getMessage());
		}
		if (!(root instanceof Map<?, ?> object)) {
			throw invalid("the RDMA metadata must be a JSON object");
		}
		checkKeys(object, KEYS, "");
		List<Descriptor> descriptors = descriptors(object.get("descriptors"));
		String encoded = string(object.get("nixl_metadata"), "nixl_metadata");
		byte[] metadata;
		try {
			metadata = MetadataEncoding.decode(encoded, maxMetadataBytes);
		}
		catch (IllegalArgumentException ex) {
			throw invalid("field 'nixl_metadata' " + ex.getMessage());
		}
		String key = string(object.get("notification_key"), "notification_key");
		if (key.isEmpty() || key.length() > MAX_NOTIFICATION_KEY_LENGTH) {
			throw invalid("field 'notification_key' must have 1 to " + MAX_NOTIFICATION_KEY_LENGTH + " characters, had "
					+ key.length());
		}
		BigInteger code = integer(object.get("operation_kind"), "operation_kind");
		OperationKind kind = switch ((code.bitLength() < 32) ? code.intValue() : 0) {
			case 1 -> OperationKind.READ;
			case 2 -> OperationKind.WRITE;
			default -> throw invalid(
					"field 'operation_kind' must be 1 (READ) or 2 (WRITE), was " + object.get("operation_kind"));
		};
		try {
			return new RdmaMetadata(descriptors, AgentMetadata.of(metadata), key, kind);
		}
		catch (IllegalArgumentException ex) {
			// the fields were checked one by one above: what is left are rules across
			// descriptors
			throw invalid("field 'descriptors': " + ex.getMessage());
		}
	}

	private static List<Descriptor> descriptors(@Nullable Object value) {
		if (!(value instanceof List<?> list)) {
			throw invalid("field 'descriptors' must be an array, was " + kind(value));
		}
		if (list.isEmpty()) {
			throw invalid("field 'descriptors' must not be empty");
		}
		List<Descriptor> descriptors = new ArrayList<>(list.size());
		for (int i = 0; i < list.size(); i++) {
			String field = "descriptors[" + i + "]";
			if (!(list.get(i) instanceof Map<?, ?> entry)) {
				throw invalid("field '" + field + "' must be an object, was " + kind(list.get(i)));
			}
			checkKeys(entry, DESCRIPTOR_KEYS, field + ".");
			Device device;
			try {
				device = Device.ofWireName(string(entry.get("device"), field + ".device"));
			}
			catch (IllegalArgumentException ex) {
				throw invalid("field '" + field + ".device': " + ex.getMessage());
			}
			BigInteger pointer = integer(entry.get("ptr"), field + ".ptr");
			if (pointer.signum() == 0) {
				throw invalid("field '" + field + ".ptr' must not be 0");
			}
			if (pointer.signum() < 0 || pointer.compareTo(MAX_POINTER) > 0) {
				throw invalid("field '" + field + ".ptr' must be an address within 1..2^64-1, was " + pointer);
			}
			BigInteger size = integer(entry.get("size"), field + ".size");
			if (size.signum() < 0) {
				throw invalid("field '" + field + ".size' must not be negative, was " + size);
			}
			if (size.signum() == 0 || size.bitLength() > 63) {
				throw invalid("field '" + field + ".size' must be within 1.." + Long.MAX_VALUE + ", was " + size);
			}
			try {
				descriptors.add(Descriptor.of(pointer.longValue(), size.longValueExact(), device));
			}
			catch (IllegalArgumentException ex) {
				throw invalid("field '" + field + "': " + ex.getMessage());
			}
		}
		return descriptors;
	}

	private static void checkKeys(Map<?, ?> object, Set<String> expected, String prefix) {
		for (Object key : object.keySet()) {
			if (!expected.contains(key)) {
				throw invalid(
						"unknown key '" + prefix + key + "' (expected " + expected.stream().sorted().toList() + ")");
			}
		}
		for (String key : expected.stream().sorted().toList()) {
			if (!object.containsKey(key)) {
				throw invalid("missing key '" + prefix + key + "'");
			}
		}
	}

	private static String string(@Nullable Object value, String field) {
		if (!(value instanceof String string)) {
			throw invalid("field '" + field + "' must be a string, was " + kind(value));
		}
		return string;
	}

	private static BigInteger integer(@Nullable Object value, String field) {
		return switch (value) {
			case Long integer -> BigInteger.valueOf(integer);
			case BigInteger integer -> integer;
			case null, default -> throw invalid("field '" + field + "' must be an integer, was " + kind(value));
		};
	}

	private static String kind(@Nullable Object value) {
		return switch (value) {
			case Map<?, ?> map -> "an object";
			case List<?> list -> "an array";
			case String string -> "a string";
			case Long integer -> "the integer " + integer;
			case BigInteger integer -> "the integer " + integer;
			case BigDecimal decimal -> "the number " + decimal;
			case Boolean bool -> "a boolean";
			case null, default -> "null";
		};
	}

	private static NixlException invalid(String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, OPERATION, null, null, detail);
	}

	@Override
	public String toString() {
		return "RdmaMetadata[" + this.operationKind + ", " + this.descriptors.size() + " descriptors, key '"
				+ this.notificationKey + "', agent metadata of " + this.nixlMetadata.size() + " bytes]";
	}

}
