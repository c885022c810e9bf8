package dev.nixl4j.micrometer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Names from outside keep their own tag value up to the bound, and share {@code other}
 * past it.
 */
class BoundedTagValuesTests {

	@Test
	void namesPastTheBoundShareOther() {
		BoundedTagValues values = new BoundedTagValues();
		for (int i = 0; i < BoundedTagValues.MAX; i++) {
			assertThat(values.valueOf("peer-" + i)).isEqualTo("peer-" + i);
		}
		assertThat(values.valueOf("one-too-many")).isEqualTo(BoundedTagValues.OTHER);
		assertThat(values.isNamed("one-too-many")).isFalse();
		assertThat(values.valueOf("peer-0")).as("a name seen before keeps its value").isEqualTo("peer-0");
	}

	@Test
	void aPeerNamedOtherDoesNotTakeASlot() {
		BoundedTagValues values = new BoundedTagValues();
		assertThat(values.valueOf(BoundedTagValues.OTHER)).isEqualTo(BoundedTagValues.OTHER);
		assertThat(values.isNamed(BoundedTagValues.OTHER)).isFalse();
	}

}
