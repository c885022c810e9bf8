package dev.nixl4j.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.nixl4j.json.JsonException;
import dev.nixl4j.json.JsonReader;
import dev.nixl4j.json.JsonWriter;
import org.jspecify.annotations.Nullable;

/**
 * What a consumer needs to pull one request's blocks from a producer, as
 * {@link KvProducer#lease} returns it (vLLM's {@code kv_transfer_params}): the producer
 * agent, the request, the producer's block ids in token order, the fingerprint of the
 * producer's layout, the lease that holds the blocks and the number of consumer ranks
 * that will each read a slice of heads (1 when the tensor parallelism is the same on both
 * sides), with the integrity data and trace context of the lease.
 *
 * <p>
 * Plain data: a {@link KvConsumer} with a {@link KvDirectory} needs nothing else (it
 * finds the producer's {@link RemoteCacheHandle} by name and checks its incarnation); one
 * without learns the handle through {@link KvConsumer#connect}. Parameters travel from
 * the producer's process to the consumer's in their one wire form, {@link #toJson()},
 * which {@link #fromJson(String)} reads back with every component, so that nothing (the
 * integrity data least of all) is lost on the way. Built by hand with {@link #builder()}.
 *
 * <h2>Wire form</h2> A JSON object of format {@value #FORMAT} and version
 * {@value #VERSION}:
 *
 * <pre>{@code
 * {"format":"nixl4j.kv-transfer-params","version":"1.0","producerAgent":"prefill-0",
 *  "requestId":"req-42","blockIds":[7,3],"layoutFingerprint":"kv-layout/1;...",
 *  "leaseId":"5180397261583710209","consumerRanks":1,"generation":"-377120379212351842",
 *  "checksums":[],"producerIncarnation":"9f0c...","traceparent":"","tracestate":""}
 * }</pre>
 *
 * Every member is written and, in version 1.0, required. The 64-bit {@code leaseId} and
 * {@code generation} travel as decimal strings, so that readers that read JSON numbers as
 * doubles (JavaScript) keep them exact; the CRC32C {@code checksums} travel as unsigned
 * 32-bit numbers. The version is {@code major.minor}: a later minor version may add
 * optional members, which this reader ignores in a document of a higher minor version (a
 * member it does not know in a document of its own version is refused); a higher major
 * version changes the meaning of members, and this reader refuses it clearly, naming both
 * versions. Reading is bounded: the text's length ({@value #MAX_JSON_CHARS} characters),
 * nesting, strings, at most {@value #MAX_BLOCK_IDS} block ids and {@value #MAX_CHECKSUMS}
 * checksums.
 *
 * @param producerAgent the producer's agent
 * @param requestId the request
 * @param blockIds the producer's blocks, in order
 * @param layoutFingerprint {@link KvCacheLayout#fingerprint()} of the producer's layout
 * @param leaseId the lease that holds the blocks
 * @param consumerRanks how many consumer ranks read the blocks
 * @param generation the {@link BlockAllocator#generationDigest digest of the generations}
 * of the blocks when the lease was taken, which the consumer's notification carries back
 * and the producer compares with its blocks' current generations; 0 when none is given
 * ({@link KvIntegrity#NONE}, or parameters built without one)
 * @param checksums the CRC32C of every block over all regions
 * ({@link KvIntegrity#CRC32C}): entry {@code s * n + i} (for {@code n} blocks) covers
 * slice {@code s} of the heads of block {@code blockIds[i]}, as consumer rank {@code s}
 * reads it; with one consumer rank, entry {@code i} covers the whole block. Empty when
 * the producer computes none.
 * @param producerIncarnation the {@linkplain RemoteCacheHandle#incarnation() incarnation}
 * of the producer's cache that took the lease, or {@code ""} when not known
 * @param traceparent the W3C {@code traceparent} of the producer's work on the request,
 * which the consumer's pull continues, or {@code ""} for none; a value that is not one
 * ({@link KvTraceContext#isTraceparent}) is dropped, with the {@code tracestate}
 * @param tracestate the W3C {@code tracestate} that goes with the {@code traceparent}, or
 * {@code ""} for none; a malformed value ({@link KvTraceContext#isTracestate}) is dropped
 */
public record KvTransferParams(String producerAgent, String requestId, List<Integer> blockIds, String layoutFingerprint,
		long leaseId, int consumerRanks, long generation, List<Integer> checksums, String producerIncarnation,
		String traceparent, String tracestate) {

	/** The {@code format} member of the wire form. */
	public static final String FORMAT = "nixl4j.kv-transfer-params";

	/** The version of the wire form this class writes, {@code major.minor}. */
	public static final String VERSION = "1.0";

	/** The most block ids parameters carry. */
	public static final int MAX_BLOCK_IDS = 1 << 16;

	/** The most checksums parameters carry (one per block and consumer rank). */
	public static final int MAX_CHECKSUMS = 1 << 20;

	/** The longest wire form {@link #fromJson} reads, in characters. */
	public static final int MAX_JSON_CHARS = 16 << 20;

	/** The longest producer agent name or layout fingerprint parameters carry. */
	public static final int MAX_LABEL = RemoteCacheHandle.MAX_LABEL;

	private static final int MAJOR = 1;

	private static final int MINOR = 0;

	private static final List<String> MEMBERS = List.of("format", "version", "producerAgent", "requestId", "blockIds",
			"layoutFingerprint", "leaseId", "consumerRanks", "generation", "checksums", "producerIncarnation",
			"traceparent", "tracestate");

	private static final JsonReader READER = JsonReader.builder()
		.maxChars(MAX_JSON_CHARS)
		.maxDepth(2)
		.maxMembers(MAX_CHECKSUMS + 1)
		.maxStringChars(4096)
		.build();

	/**
	 * Checks the parameters; {@link #builder()} is the way to make them.
	 * @param producerAgent producer
	 * @param requestId request
	 * @param blockIds blocks
	 * @param layoutFingerprint fingerprint
	 * @param leaseId lease
	 * @param consumerRanks consumer ranks
	 * @param generation generation digest, 0 for none
	 * @param checksums CRC32C per block and slice, or empty
	 * @param producerIncarnation the producer cache's incarnation
	 * @param traceparent the W3C {@code traceparent}, {@code ""} (or {@code null}) for
	 * none; dropped when malformed
	 * @param tracestate the W3C {@code tracestate}, {@code ""} (or {@code null}) for
	 * none; dropped when malformed
	 */
	public KvTransferParams {
		Objects.requireNonNull(producerAgent, "producerAgent");
		if (producerAgent.isBlank() || producerAgent.length() > MAX_LABEL) {
			throw new IllegalArgumentException(
					"producerAgent must be 1 to " + MAX_LABEL + " characters, was " + producerAgent.length());
		}
		Objects.requireNonNull(producerIncarnation, "producerIncarnation");
		if (producerIncarnation.length() > RemoteCacheHandle.MAX_LABEL) {
			throw new IllegalArgumentException("producerIncarnation must be at most " + RemoteCacheHandle.MAX_LABEL
					+ " characters, was " + producerIncarnation.length());
		}
		Objects.requireNonNull(layoutFingerprint, "layoutFingerprint");
		if (layoutFingerprint.length() > MAX_LABEL) {
			throw new IllegalArgumentException("layoutFingerprint must be at most " + MAX_LABEL + " characters, was "
					+ layoutFingerprint.length());
		}
		KvMessages.requireRequestId(requestId);
		blockIds = List.copyOf(blockIds);
		if (blockIds.isEmpty()) {
			throw new IllegalArgumentException("a transfer needs at least one block");
		}
		if (blockIds.size() > MAX_BLOCK_IDS) {
			throw new IllegalArgumentException(
					"blockIds must be at most " + MAX_BLOCK_IDS + " blocks, were " + blockIds.size());
		}
		if (consumerRanks <= 0) {
			throw new IllegalArgumentException("consumerRanks must be positive, was " + consumerRanks);
		}
		checksums = List.copyOf(checksums);
		if (checksums.size() > MAX_CHECKSUMS) {
			throw new IllegalArgumentException(
					"checksums must be at most " + MAX_CHECKSUMS + ", were " + checksums.size());
		}
		if (!checksums.isEmpty() && checksums.size() != (long) blockIds.size() * consumerRanks) {
			throw new IllegalArgumentException("checksums must be empty or one per block and consumer rank ("
					+ ((long) blockIds.size() * consumerRanks) + "), were " + checksums.size());
		}
		// from another process: kept only when well formed, never repeated in an error
		KvTraceContext trace = KvTraceContext.parse(traceparent, tracestate);
		traceparent = (trace != null) ? trace.traceparent() : "";
		tracestate = (trace != null) ? trace.tracestate() : "";
	}

	/**
	 * Returns the trace context the parameters carry.
	 * @return the context, or {@code null} for none
	 */
	public @Nullable KvTraceContext traceContext() {
		return this.traceparent.isEmpty() ? null : new KvTraceContext(this.traceparent, this.tracestate);
	}

	/**
	 * Returns these parameters with another trace context.
	 * @param context the context, or {@code null} for none
	 * @return the parameters
	 */
	public KvTransferParams withTraceContext(@Nullable KvTraceContext context) {
		return toBuilder().traceContext(context).build();
	}

	/**
	 * Starts parameters made by hand; {@link KvProducer#lease} makes them for a lease.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Starts parameters like these, to change some of their components.
	 * @return a builder holding every component of these parameters
	 */
	public Builder toBuilder() {
		Builder builder = new Builder();
		builder.producerAgent = this.producerAgent;
		builder.requestId = this.requestId;
		builder.blockIds = this.blockIds;
		builder.layoutFingerprint = this.layoutFingerprint;
		builder.leaseId = this.leaseId;
		builder.consumerRanks = this.consumerRanks;
		builder.generation = this.generation;
		builder.checksums = this.checksums;
		builder.producerIncarnation = this.producerIncarnation;
		builder.traceparent = this.traceparent;
		builder.tracestate = this.tracestate;
		return builder;
	}

	/**
	 * Writes the parameters in their wire form, the form {@link #fromJson} reads (see the
	 * class description).
	 * @return the JSON text
	 */
	public String toJson() {
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("format", FORMAT);
		json.put("version", VERSION);
		json.put("producerAgent", this.producerAgent);
		json.put("requestId", this.requestId);
		json.put("blockIds", this.blockIds);
		json.put("layoutFingerprint", this.layoutFingerprint);
		json.put("leaseId", Long.toString(this.leaseId));
		json.put("consumerRanks", this.consumerRanks);
		json.put("generation", Long.toString(this.generation));
		List<Long> unsigned = new ArrayList<>(this.checksums.size());
		for (int checksum : this.checksums) {
			unsigned.add(Integer.toUnsignedLong(checksum));
		}
		json.put("checksums", unsigned);
		json.put("producerIncarnation", this.producerIncarnation);
		json.put("traceparent", this.traceparent);
		json.put("tracestate", this.tracestate);
		return JsonWriter.write(json);
	}

	/**
	 * Reads parameters written by {@link #toJson()}: untrusted input, read with bounds
	 * and checked like any parameters. Every member of version {@value #VERSION} is
	 * required; a malformed {@code traceparent} or {@code tracestate} is dropped, as the
	 * constructor drops it, but one longer than a W3C value can be is refused.
	 * @param json the JSON text
	 * @return the parameters
	 * @throws IllegalArgumentException naming the member that is missing, of the wrong
	 * type, out of range or unknown, or the version that is not read; for text that is
	 * not JSON or breaks the reader's bounds, with the {@link JsonException} that says
	 * where as its cause
	 */
	public static KvTransferParams fromJson(String json) {
		Objects.requireNonNull(json, "json");
		Object value;
		try {
			value = READER.read(json);
		}
		catch (JsonException ex) {
			throw new IllegalArgumentException("the KV transfer parameters are not valid JSON: " + ex.getMessage(), ex);
		}
		if (!(value instanceof Map<?, ?> root)) {
			throw new IllegalArgumentException("the KV transfer parameters must be a JSON object");
		}
		if (!FORMAT.equals(root.get("format"))) {
			throw new IllegalArgumentException("format must be \"" + FORMAT + "\"");
		}
		int minor = minorVersion(text(root, "version", 16));
		if (minor <= MINOR) {
			for (Object key : root.keySet()) {
				if (!MEMBERS.contains(key)) {
					throw new IllegalArgumentException("unknown member \"" + printable((String) key)
							+ "\" in KV transfer parameters of version " + VERSION);
				}
			}
		}
		List<Integer> blockIds = integers(root, "blockIds", MAX_BLOCK_IDS, 0, Integer.MAX_VALUE);
		List<Integer> checksums = new ArrayList<>();
		for (long checksum : longs(root, "checksums", MAX_CHECKSUMS, 0, 0xFFFF_FFFFL)) {
			checksums.add((int) checksum);
		}
		String traceparent = text(root, "traceparent", 55);
		String tracestate = text(root, "tracestate", KvTraceContext.MAX_TRACESTATE_LENGTH);
		return new KvTransferParams(text(root, "producerAgent", MAX_LABEL),
				text(root, "requestId", KvMessages.MAX_REQUEST_ID), blockIds,
				text(root, "layoutFingerprint", MAX_LABEL), decimal(root, "leaseId"),
				(int) number(root, "consumerRanks", 1, Integer.MAX_VALUE), decimal(root, "generation"), checksums,
				text(root, "producerIncarnation", RemoteCacheHandle.MAX_LABEL), traceparent, tracestate);
	}

	/** The minor version of a version this reader reads; refuses another major. */
	private static int minorVersion(String version) {
		int dot = version.indexOf('.');
		if (dot < 1 || dot > 4 || dot == version.length() - 1 || version.length() - dot > 5
				|| !version.chars().allMatch((c) -> c == '.' || (c >= '0' && c <= '9'))
				|| version.indexOf('.', dot + 1) >= 0) {
			throw new IllegalArgumentException("version must be \"<major>.<minor>\" (this reader reads " + VERSION
					+ "), was \"" + printable(version) + "\"");
		}
		int major = Integer.parseInt(version, 0, dot, 10);
		if (major != MAJOR) {
			throw new IllegalArgumentException("the KV transfer parameters are of version " + version
					+ ", whose major version this reader (version " + VERSION + ") does not read");
		}
		return Integer.parseInt(version, dot + 1, version.length(), 10);
	}

	private static Object member(Map<?, ?> root, String key) {
		if (!root.containsKey(key)) {
			throw new IllegalArgumentException("the KV transfer parameters have no " + key);
		}
		Object value = root.get(key);
		if (value == null) {
			throw new IllegalArgumentException(key + " must not be null");
		}
		return value;
	}

	private static String text(Map<?, ?> root, String key, int maxLength) {
		if (!(member(root, key) instanceof String text)) {
			throw new IllegalArgumentException(key + " must be a string");
		}
		if (text.length() > maxLength) {
			throw new IllegalArgumentException(
					key + " must be at most " + maxLength + " characters, was " + text.length());
		}
		return text;
	}

	private static long number(Map<?, ?> root, String key, long min, long max) {
		return range(member(root, key), key, min, max);
	}

	private static long range(@Nullable Object value, String what, long min, long max) {
		if (!(value instanceof Long number)) {
			throw new IllegalArgumentException(what + " must be a whole number from " + min + " to " + max);
		}
		if (number < min || number > max) {
			throw new IllegalArgumentException(what + " must be from " + min + " to " + max + ", was " + number);
		}
		return number;
	}

	private static List<Long> longs(Map<?, ?> root, String key, int maxSize, long min, long max) {
		if (!(member(root, key) instanceof List<?> list)) {
			throw new IllegalArgumentException(key + " must be an array");
		}
		if (list.size() > maxSize) {
			throw new IllegalArgumentException(key + " must have at most " + maxSize + " entries, had " + list.size());
		}
		List<Long> values = new ArrayList<>(list.size());
		for (int i = 0; i < list.size(); i++) {
			values.add(range(list.get(i), key + "[" + i + "]", min, max));
		}
		return values;
	}

	private static List<Integer> integers(Map<?, ?> root, String key, int maxSize, int min, int max) {
		List<Integer> values = new ArrayList<>();
		for (long value : longs(root, key, maxSize, min, max)) {
			values.add((int) value);
		}
		return values;
	}

	/** A 64-bit whole number written as a decimal string. */
	private static long decimal(Map<?, ?> root, String key) {
		String text = text(root, key, 20);
		try {
			return Long.parseLong(text, 10);
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(
					key + " must be a decimal string of a 64-bit whole number, was \"" + printable(text) + "\"");
		}
	}

	private static String printable(String text) {
		String shown = (text.length() > 64) ? text.substring(0, 64) + "..." : text;
		return shown.replaceAll("[^\\x20-\\x7e]", "?");
	}

	/**
	 * Checks a request id as the KV helpers take it: 1 to 256 characters, no {@code ':'}
	 * (their notifications use it as a separator) and no control characters.
	 * @param requestId the id
	 * @return the id
	 * @throws IllegalArgumentException naming what is wrong
	 */
	public static String requireRequestId(@Nullable String requestId) {
		KvMessages.requireRequestId(requestId);
		return Objects.requireNonNull(requestId);
	}

	/**
	 * Returns the block ids as an array.
	 * @return the ids
	 */
	public int[] blockIdArray() {
		return this.blockIds.stream().mapToInt(Integer::intValue).toArray();
	}

	/**
	 * Builds {@link KvTransferParams}: the producer agent, request, blocks and layout
	 * fingerprint are required; the rest default to lease 0, one consumer rank, no
	 * integrity data (generation 0, no checksums), an unknown incarnation and no trace
	 * context.
	 */
	public static final class Builder {

		private @Nullable String producerAgent;

		private @Nullable String requestId;

		private @Nullable List<Integer> blockIds;

		private @Nullable String layoutFingerprint;

		private long leaseId;

		private int consumerRanks = 1;

		private long generation;

		private List<Integer> checksums = List.of();

		private String producerIncarnation = "";

		private String traceparent = "";

		private String tracestate = "";

		private Builder() {
		}

		/**
		 * Sets the producer's agent (required).
		 * @param producerAgent the agent
		 * @return this builder
		 */
		public Builder producerAgent(String producerAgent) {
			this.producerAgent = Objects.requireNonNull(producerAgent, "producerAgent");
			return this;
		}

		/**
		 * Sets the request (required).
		 * @param requestId the request id
		 * @return this builder
		 */
		public Builder requestId(String requestId) {
			this.requestId = Objects.requireNonNull(requestId, "requestId");
			return this;
		}

		/**
		 * Sets the producer's blocks, in token order (required).
		 * @param blockIds the blocks
		 * @return this builder
		 */
		public Builder blockIds(List<Integer> blockIds) {
			this.blockIds = List.copyOf(blockIds);
			return this;
		}

		/**
		 * Sets the producer's blocks, in token order (required).
		 * @param blockIds the blocks
		 * @return this builder
		 */
		public Builder blockIds(int... blockIds) {
			return blockIds(Arrays.stream(blockIds).boxed().toList());
		}

		/**
		 * Sets the {@link KvCacheLayout#fingerprint()} of the producer's layout
		 * (required).
		 * @param layoutFingerprint the fingerprint
		 * @return this builder
		 */
		public Builder layoutFingerprint(String layoutFingerprint) {
			this.layoutFingerprint = Objects.requireNonNull(layoutFingerprint, "layoutFingerprint");
			return this;
		}

		/**
		 * Sets the lease that holds the blocks (default 0).
		 * @param leaseId the lease id
		 * @return this builder
		 */
		public Builder leaseId(long leaseId) {
			this.leaseId = leaseId;
			return this;
		}

		/**
		 * Sets how many consumer ranks read the blocks (default 1).
		 * @param consumerRanks the ranks, positive
		 * @return this builder
		 */
		public Builder consumerRanks(int consumerRanks) {
			this.consumerRanks = consumerRanks;
			return this;
		}

		/**
		 * Sets the digest of the blocks' generations (default 0, none).
		 * @param generation the digest
		 * @return this builder
		 */
		public Builder generation(long generation) {
			this.generation = generation;
			return this;
		}

		/**
		 * Sets the CRC32C of every block and consumer rank (default none).
		 * @param checksums the checksums, empty or one per block and rank
		 * @return this builder
		 */
		public Builder checksums(List<Integer> checksums) {
			this.checksums = List.copyOf(checksums);
			return this;
		}

		/**
		 * Sets the incarnation of the producer's cache (default {@code ""}, unknown).
		 * @param producerIncarnation the incarnation
		 * @return this builder
		 */
		public Builder producerIncarnation(String producerIncarnation) {
			this.producerIncarnation = Objects.requireNonNull(producerIncarnation, "producerIncarnation");
			return this;
		}

		/**
		 * Sets the trace context (default none).
		 * @param context the context, or {@code null} for none
		 * @return this builder
		 */
		public Builder traceContext(@Nullable KvTraceContext context) {
			this.traceparent = (context != null) ? context.traceparent() : "";
			this.tracestate = (context != null) ? context.tracestate() : "";
			return this;
		}

		/**
		 * Builds the parameters.
		 * @return the parameters
		 * @throws IllegalArgumentException naming a required component that is missing,
		 * or what is wrong with one given
		 */
		public KvTransferParams build() {
			return new KvTransferParams(required(this.producerAgent, "producerAgent"),
					required(this.requestId, "requestId"), required(this.blockIds, "blockIds"),
					required(this.layoutFingerprint, "layoutFingerprint"), this.leaseId, this.consumerRanks,
					this.generation, this.checksums, this.producerIncarnation, this.traceparent, this.tracestate);
		}

		private static <T> T required(@Nullable T value, String name) {
			if (value == null) {
				throw new IllegalArgumentException("the KV transfer parameters need " + name);
			}
			return value;
		}

	}

}
