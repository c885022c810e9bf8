/**
 * Diagnostics: the readiness report ({@link dev.nixl4j.diag.ReadinessReport}, the "doctor") that
 * says whether NIXL can move data in this process and, when it cannot, why; and the
 * {@code nixl4j} command line ({@link dev.nixl4j.diag.Nixl4jCli}) with its {@code info},
 * {@code doctor}, {@code selftest}, {@code bench}, {@code kv-bench} and {@code memcpy} commands.
 *
 * <p>Only {@link dev.nixl4j.diag.ReadinessReport}, {@link dev.nixl4j.diag.Readiness} and
 * {@link dev.nixl4j.diag.Nixl4jCli} are API; the other types serve the command line.
 */
@NullMarked
package dev.nixl4j.diag;

import org.jspecify.annotations.NullMarked;
