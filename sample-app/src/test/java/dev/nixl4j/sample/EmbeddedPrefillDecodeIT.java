package dev.nixl4j.sample;

/**
 * The sample on the embedded engine: the two workers move blocks over its TCP path.
 */
class EmbeddedPrefillDecodeIT extends PrefillDecodeEndToEndTests {

	@Override
	String engine() {
		return "embedded";
	}

}
