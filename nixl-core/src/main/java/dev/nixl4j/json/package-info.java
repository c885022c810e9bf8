/**
 * nixl4j's one JSON implementation: a strict, bounded reader
 * ({@link dev.nixl4j.json.JsonReader}) and a writer ({@link dev.nixl4j.json.JsonWriter})
 * of RFC 8259 JSON, for Dynamo's wire format in the connect layer, the command line's
 * reports and tests. Everything it reads may come from outside, so every size is capped
 * and every error names its offset.
 */
@NullMarked
package dev.nixl4j.json;

import org.jspecify.annotations.NullMarked;
