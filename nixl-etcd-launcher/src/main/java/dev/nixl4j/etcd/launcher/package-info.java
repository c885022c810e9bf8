/**
 * A local etcd server started as a child process
 * ({@link dev.nixl4j.etcd.launcher.EtcdLauncher}): what the command line's
 * {@code registry-bench} and nixl4j's tests both start. No test framework.
 */
@NullMarked
package dev.nixl4j.etcd.launcher;

import org.jspecify.annotations.NullMarked;
