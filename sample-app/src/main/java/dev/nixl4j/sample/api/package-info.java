/**
 * The JSON documents of the sample's HTTP API, shared by both roles and the load
 * generator.
 */
@NullMarked
package dev.nixl4j.sample.api;

import org.jspecify.annotations.NullMarked;
