package dev.nixl4j.sample;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Request ids that the decode worker makes.
 */
class RequestIdsTests {

	@Test
	void generatedIdsAre128RandomBitsThatTheKvHelpersAccept() {
		Set<String> ids = new HashSet<>();
		int[] ones = new int[128];
		int count = 1000;
		for (int i = 0; i < count; i++) {
			String id = RequestIds.generate();
			assertThat(RequestIds.require(id)).matches("gen-[0-9a-f]{32}");
			ids.add(id);
			for (int bit = 0; bit < 128; bit++) {
				int digit = Character.digit(id.charAt(4 + bit / 4), 16);
				ones[bit] += (digit >> (3 - bit % 4)) & 1;
			}
		}
		assertThat(ids).hasSize(count);
		// every bit varies: none is fixed as a counter's high bits would be (a fair bit
		// is 1 in 500 +- 16 of 1000; 350 is more than 9 standard deviations off)
		assertThat(Arrays.stream(ones).boxed().toList()).allSatisfy((n) -> assertThat(n).isBetween(350, 650));
	}

}
