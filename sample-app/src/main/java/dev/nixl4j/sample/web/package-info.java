/**
 * What the sample's HTTP server accepts: bounded request bodies, strict JSON types, and a
 * deadline on request headers that Tomcat's per-read timeouts do not give.
 */
@NullMarked
package dev.nixl4j.sample.web;

import org.jspecify.annotations.NullMarked;
