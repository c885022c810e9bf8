/**
 * Test helpers shared by nixl4j's modules, and usable in users' own tests: the native
 * gate ({@link dev.nixl4j.testsupport.NativeNixl}), peer agents in child processes
 * ({@link dev.nixl4j.testsupport.PeerProcess}), byte patterns
 * ({@link dev.nixl4j.testsupport.Bytes}), a real etcd server
 * ({@link dev.nixl4j.testsupport.EtcdServer}, one per test class with
 * {@link dev.nixl4j.testsupport.EtcdServerExtension}), test-only TLS material, and real
 * NIXL metadata samples. Not for production code.
 */
@NullMarked
package dev.nixl4j.testsupport;

import org.jspecify.annotations.NullMarked;
