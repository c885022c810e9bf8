/**
 * KV-cache helpers in the shape vLLM uses: a {@link dev.nixl4j.kv.KvCacheLayout} (layers,
 * K and V, blocks of tokens, KV heads, head size, element size, HND or NHD), a
 * {@link dev.nixl4j.kv.PagedKvCache} that allocates one off-heap region per layer and
 * K/V, registers it once and hands out blocks by reference count, and the two ends of a
 * block transfer between a prefill worker and a decode worker:
 * {@link dev.nixl4j.kv.KvProducer} holds a request's blocks under a
 * {@link dev.nixl4j.kv.KvLease}, {@link dev.nixl4j.kv.KvConsumer} pulls them (READ) into
 * {@link dev.nixl4j.kv.KvBlocks} of its own cache and returns them only once the producer
 * confirmed that the lease was still held, or receives them when the producer pushes them
 * (WRITE).
 *
 * <p>
 * The records that travel between workers ({@link dev.nixl4j.kv.RemoteCacheHandle},
 * {@link dev.nixl4j.kv.KvTransferParams}, {@link dev.nixl4j.kv.KvPushParams}) are plain
 * data: a handle and transfer parameters have a JSON form of their own ({@code toJson},
 * {@code fromJson}) that any carrier can send; whoever carries push parameters chooses
 * their encoding. They carry no NIXL metadata: peers load each other's metadata through a
 * {@link dev.nixl4j.kv.PeerLoader}.
 */
@NullMarked
package dev.nixl4j.kv;

import org.jspecify.annotations.NullMarked;
