package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.nixl4j.MemoryType;
import dev.nixl4j.json.JsonException;
import dev.nixl4j.json.JsonReader;
import dev.nixl4j.json.JsonWriter;
import org.jspecify.annotations.Nullable;

/**
 * What a peer needs to address another worker's KV cache, learned once per worker (the
 * handshake of vLLM's connector): the agent that owns the cache, its layout and the base
 * address of each region. Block {@code b} of region {@code r} lies at
 * {@code regionBases.get(r) + b * layout.blockLength()}.
 *
 * <p>
 * The handle also names the cache's {@linkplain #incarnation() incarnation}, which
 * changes every time the cache is allocated (a restarted worker's cache has a new one
 * even under the same agent name), and the {@linkplain #modelFingerprint() model
 * fingerprint} the application gave, which two caches must share to exchange blocks
 * beside their layouts ({@link #compatibility()}).
 *
 * <p>
 * Plain data, safe to log and to send in any encoding ({@link #toJson()}): the handle
 * grants nothing by itself; access needs the owner's NIXL metadata, which travels
 * separately (a {@link dev.nixl4j.metadata.MetadataExchange}). A producer publishes its
 * handle beside its metadata as the document {@link KvDirectory#HANDLE_DOCUMENT}.
 *
 * @param agentName the agent that registered the cache
 * @param layout the cache's layout
 * @param regionBases the base address of each region, in region order
 * @param memoryType where the regions live
 * @param deviceId the device of the regions (0 for host memory)
 * @param incarnation the cache's incarnation, or {@code ""} when not known
 * @param modelFingerprint what the application says its model is, or {@code ""}
 */
public record RemoteCacheHandle(String agentName, KvCacheLayout layout, List<Long> regionBases, MemoryType memoryType,
		long deviceId, String incarnation, String modelFingerprint) {

	/** The longest incarnation or model fingerprint a handle carries. */
	public static final int MAX_LABEL = 256;

	private static final String FORMAT = "nixl4j.kv-cache-handle/1";

	/**
	 * Checks the handle.
	 * @param agentName owner
	 * @param layout layout
	 * @param regionBases base addresses
	 * @param memoryType memory type
	 * @param deviceId device id
	 * @param incarnation incarnation
	 * @param modelFingerprint model fingerprint
	 * @throws IllegalArgumentException when the bases do not match the layout
	 */
	public RemoteCacheHandle {
		Objects.requireNonNull(agentName, "agentName");
		Objects.requireNonNull(layout, "layout");
		Objects.requireNonNull(memoryType, "memoryType");
		if (agentName.isBlank()) {
			throw new IllegalArgumentException("agentName must not be blank");
		}
		requireLabel("incarnation", incarnation);
		requireLabel("modelFingerprint", modelFingerprint);
		regionBases = List.copyOf(regionBases);
		if (regionBases.size() != layout.regionCount()) {
			throw new IllegalArgumentException("the layout has " + layout.regionCount() + " regions but "
					+ regionBases.size() + " base addresses were given");
		}
		for (int i = 0; i < regionBases.size(); i++) {
			long base = regionBases.get(i);
			if (base == 0) {
				throw new IllegalArgumentException("base address of region " + i + " is 0");
			}
			if (Long.compareUnsigned(base + layout.regionLength(), base) < 0) {
				throw new IllegalArgumentException("region " + i + " wraps around the address space");
			}
		}
		if (deviceId < 0) {
			throw new IllegalArgumentException("deviceId must not be negative, was " + deviceId);
		}
	}

	/**
	 * Creates a handle of an unknown incarnation and no model fingerprint.
	 * @param agentName owner
	 * @param layout layout
	 * @param regionBases base addresses
	 * @param memoryType memory type
	 * @param deviceId device id
	 */
	public RemoteCacheHandle(String agentName, KvCacheLayout layout, List<Long> regionBases, MemoryType memoryType,
			long deviceId) {
		this(agentName, layout, regionBases, memoryType, deviceId, "", "");
	}

	/**
	 * Checks a model fingerprint as a handle takes it: at most {@link #MAX_LABEL}
	 * characters, none of them a control character.
	 * @param modelFingerprint the fingerprint
	 * @return the fingerprint
	 * @throws IllegalArgumentException naming what is wrong
	 */
	public static String requireModelFingerprint(String modelFingerprint) {
		requireLabel("modelFingerprint", modelFingerprint);
		return modelFingerprint;
	}

	private static void requireLabel(String name, @Nullable String value) {
		Objects.requireNonNull(value, name);
		if (value.length() > MAX_LABEL) {
			throw new IllegalArgumentException(
					name + " must be at most " + MAX_LABEL + " characters, was " + value.length());
		}
		if (value.chars().anyMatch((c) -> c < 0x20 || c == 0x7f)) {
			throw new IllegalArgumentException(name + " must not contain control characters");
		}
	}

	/**
	 * Returns the address of a block of a region.
	 * @param region the region
	 * @param blockId the block
	 * @return its first byte
	 */
	public long blockAddress(int region, int blockId) {
		Objects.checkIndex(blockId, this.layout.numBlocks());
		return this.regionBases.get(region) + blockId * this.layout.blockLength();
	}

	/**
	 * Returns what two caches must agree on to exchange blocks: the layout's
	 * {@linkplain KvCacheLayout#fingerprint() fingerprint} and the model fingerprint.
	 * @return the compatibility fingerprint
	 */
	public String compatibility() {
		return this.layout.fingerprint() + ";model=" + this.modelFingerprint;
	}

	/**
	 * Writes the handle as JSON, the form {@link #fromJson} reads.
	 * @return the UTF-8 bytes of the JSON text
	 */
	public byte[] toJson() {
		Map<String, Object> layoutJson = new LinkedHashMap<>();
		layoutJson.put("layers", this.layout.numLayers());
		layoutJson.put("splitKv", this.layout.splitKv());
		layoutJson.put("blocks", this.layout.numBlocks());
		layoutJson.put("blockSize", this.layout.blockSize());
		layoutJson.put("kvHeads", this.layout.numKvHeads());
		layoutJson.put("headDim", this.layout.headDim());
		layoutJson.put("dtypeSize", this.layout.dtypeSize());
		layoutJson.put("order", this.layout.order().name());
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("format", FORMAT);
		json.put("agent", this.agentName);
		json.put("incarnation", this.incarnation);
		json.put("model", this.modelFingerprint);
		json.put("layout", layoutJson);
		json.put("memoryType", this.memoryType.name());
		json.put("deviceId", this.deviceId);
		json.put("regionBases", new ArrayList<Object>(this.regionBases));
		return JsonWriter.write(json).getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Reads a handle written by {@link #toJson()}: untrusted input, read with bounds and
	 * checked like any handle.
	 * @param json the UTF-8 bytes
	 * @return the handle
	 * @throws IllegalArgumentException naming what is wrong
	 */
	public static RemoteCacheHandle fromJson(byte[] json) {
		Object value;
		try {
			value = JsonReader.strict().read(new String(json, StandardCharsets.UTF_8));
		}
		catch (JsonException ex) {
			throw new IllegalArgumentException("the KV cache handle is not valid JSON: " + ex.getMessage(), ex);
		}
		Map<?, ?> root = object(value, "the KV cache handle");
		if (!FORMAT.equals(root.get("format"))) {
			throw new IllegalArgumentException("the KV cache handle's format is not " + FORMAT);
		}
		Map<?, ?> layoutJson = object(root.get("layout"), "layout");
		KvBlockOrder order;
		try {
			order = KvBlockOrder.valueOf(text(layoutJson, "order"));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("layout.order is not HND or NHD");
		}
		KvCacheLayout layout = new KvCacheLayout(integer(layoutJson, "layers"), bool(layoutJson, "splitKv"),
				integer(layoutJson, "blocks"), integer(layoutJson, "blockSize"), integer(layoutJson, "kvHeads"),
				integer(layoutJson, "headDim"), integer(layoutJson, "dtypeSize"), order);
		MemoryType memoryType;
		try {
			memoryType = MemoryType.valueOf(text(root, "memoryType"));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("memoryType is not a NIXL memory type");
		}
		if (!(root.get("regionBases") instanceof List<?> bases) || bases.size() != layout.regionCount()) {
			throw new IllegalArgumentException(
					"regionBases must be an array of " + layout.regionCount() + " addresses");
		}
		List<Long> regionBases = new ArrayList<>(bases.size());
		for (Object base : bases) {
			regionBases.add(number(base, "regionBases"));
		}
		return new RemoteCacheHandle(text(root, "agent"), layout, regionBases, memoryType,
				number(root.get("deviceId"), "deviceId"), text(root, "incarnation"), text(root, "model"));
	}

	private static Map<?, ?> object(@Nullable Object value, String what) {
		if (value instanceof Map<?, ?> map) {
			return map;
		}
		throw new IllegalArgumentException(what + " must be a JSON object");
	}

	private static String text(Map<?, ?> object, String key) {
		if (object.get(key) instanceof String text) {
			return text;
		}
		throw new IllegalArgumentException(key + " must be a string");
	}

	private static boolean bool(Map<?, ?> object, String key) {
		if (object.get(key) instanceof Boolean value) {
			return value;
		}
		throw new IllegalArgumentException("layout." + key + " must be true or false");
	}

	private static int integer(Map<?, ?> object, String key) {
		long value = number(object.get(key), "layout." + key);
		if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("layout." + key + " is out of range");
		}
		return (int) value;
	}

	private static long number(@Nullable Object value, String what) {
		if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
			return ((Number) value).longValue();
		}
		throw new IllegalArgumentException(what + " must be a whole number of at most 64 bits");
	}

}
