/**
 * The sample jar's entry point, which chooses between a worker and the load generator.
 */
@NullMarked
package dev.nixl4j.sample.launch;

import org.jspecify.annotations.NullMarked;
