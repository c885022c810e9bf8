/**
 * nixl-kv: the KV session over NIXL. A paged KV cache in vLLM's shape
 * ({@link dev.nixl4j.kv.PagedKvCache}), leases held by a {@link dev.nixl4j.kv.KvProducer}
 * and pulled by a {@link dev.nixl4j.kv.KvConsumer}, with compatibility and integrity
 * checks. Exports {@code dev.nixl4j.kv} only; it reads nixl-core's API and, through a
 * qualified export, its JSON reader and writer.
 */
module dev.nixl4j.kv {

	requires transitive dev.nixl4j.core;

	requires static org.jspecify;

	// The physical memory, which a KV cache must fit in.
	requires jdk.management;

	exports dev.nixl4j.kv;

}
