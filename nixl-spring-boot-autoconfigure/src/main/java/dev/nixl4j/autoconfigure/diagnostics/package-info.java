/**
 * Start-up failure analysis for nixl4j: what is wrong and what to do when NIXL cannot be
 * used.
 */
@NullMarked
package dev.nixl4j.autoconfigure.diagnostics;

import org.jspecify.annotations.NullMarked;
