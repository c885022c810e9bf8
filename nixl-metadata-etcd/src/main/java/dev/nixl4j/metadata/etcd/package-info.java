/**
 * The etcd metadata exchange ({@link dev.nixl4j.metadata.etcd.EtcdMetadataExchange}),
 * through jetcd, in NIXL's own key layout, so Java agents and C++/Python NIXL agents find
 * each other. Its keys and protocol are described in "Metadata exchange in etcd" in
 * {@code docs/architecture.md}.
 */
@NullMarked
package dev.nixl4j.metadata.etcd;

import org.jspecify.annotations.NullMarked;
