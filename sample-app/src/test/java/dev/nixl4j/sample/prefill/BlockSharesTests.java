package dev.nixl4j.sample.prefill;

import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The prefill worker's shares of its cache: per request, per consumer, given back once.
 */
class BlockSharesTests {

	private final SampleProperties.Prefill properties = new SampleProperties.Prefill();

	@Test
	void defaultsAreAQuarterPerRequestAndThreeQuartersPerConsumer() {
		BlockShares shares = new BlockShares(512, this.properties);
		assertThat(shares.perRequest()).isEqualTo(128);
		assertThat(shares.perConsumer()).isEqualTo(384);
		BlockShares tiny = new BlockShares(2, this.properties);
		assertThat(tiny.perRequest()).isEqualTo(1);
		assertThat(tiny.perConsumer()).isEqualTo(1);
	}

	@Test
	void aRequestOverItsShareIsRefusedAndTakesNothing() {
		BlockShares shares = new BlockShares(512, this.properties);
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.take("decode-1", "big", 129))
			.satisfies((ex) -> assertThat(ex.status()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS))
			.withMessageContaining("request 'big' needs 129 KV blocks")
			.withMessageContaining("at most 128 (sample.prefill.max-blocks-per-request)");
		assertThat(shares.held("decode-1")).isZero();
		shares.take("decode-1", "at-the-share", 128);
		assertThat(shares.held("decode-1")).isEqualTo(128);
	}

	@Test
	void aConsumerOverItsShareIsRefusedWhileAnotherIsServed() {
		this.properties.setMaxBlocksPerConsumer(10);
		BlockShares shares = new BlockShares(512, this.properties);
		BlockShares.Share first = shares.take("decode-1", "r1", 6);
		shares.take("decode-1", "r2", 4);
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.take("decode-1", "r3", 1))
			.satisfies((ex) -> assertThat(ex.title()).isEqualTo("Consumer over its share"))
			.withMessageContaining("its consumer 'decode-1' holds 10 of the 10")
			.withMessageContaining("(sample.prefill.max-blocks-per-consumer)");
		assertThat(shares.held("decode-1")).isEqualTo(10);
		shares.take("decode-2", "r4", 10);
		shares.take(null, "r5", 10);
		assertThat(shares.held(null)).isEqualTo(10);

		first.close();
		first.close();
		assertThat(shares.held("decode-1")).isEqualTo(4);
		shares.take("decode-1", "r6", 6);
		assertThat(shares.held("decode-1")).isEqualTo(10);
	}

	@Test
	void aConsumerNameMustBeBounded() {
		BlockShares shares = new BlockShares(512, this.properties);
		for (String bad : new String[] { "", "x".repeat(257), "line\nbreak" }) {
			assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.take(bad, "r", 1))
				.satisfies((ex) -> assertThat(ex.status()).isEqualTo(HttpStatus.BAD_REQUEST))
				.withMessageContaining("consumerAgent must have 1 to 256 characters");
		}
	}

	@Test
	void sharesMustBePositive() {
		this.properties.setMaxBlocksPerRequest(0);
		assertThatIllegalStateException().isThrownBy(() -> new BlockShares(512, this.properties))
			.withMessage("sample.prefill.max-blocks-per-request must be positive, not 0");
	}

}
