/**
 * The {@code nixl4j} command line ({@link dev.nixl4j.cli.Nixl4jCli}): {@code info},
 * {@code doctor}, {@code selftest}, {@code bench}, {@code kv-bench} and {@code memcpy}.
 * {@code bin/nixl4j} runs it from a checkout.
 *
 * <p>
 * Only {@link dev.nixl4j.cli.Nixl4jCli} is API; the other types serve the command line.
 */
@NullMarked
package dev.nixl4j.cli;

import org.jspecify.annotations.NullMarked;
