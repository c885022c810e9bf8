package dev.nixl4j.sample.api;

import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.model.Sampler;
import org.jspecify.annotations.Nullable;

/**
 * How the language model picks tokens: greedily (no temperature, or 0), or by seeded
 * temperature and top-p sampling. Token {@code i} of an answer (the prefill worker's
 * first token is 0) draws from its own generator, seeded by {@code seed + i}, so the
 * tokens do not depend on which process picked which.
 *
 * @param temperature the temperature, in [0, {@value #MAX_TEMPERATURE}], or {@code null}
 * @param topP the nucleus, in (0, 1], or {@code null} for 1
 * @param seed the seed, or {@code null} for 0
 */
public record Sampling(@Nullable Float temperature, @Nullable Float topP, @Nullable Long seed) {

	/** The highest temperature taken. */
	public static final float MAX_TEMPERATURE = 10;

	/** Greedy decoding. */
	public static final Sampling GREEDY = new Sampling(null, null, null);

	/**
	 * Checks the settings.
	 * @return these settings
	 * @throws SampleException 400 naming the value out of range
	 */
	public Sampling validate() {
		if (this.temperature != null && !(this.temperature >= 0 && this.temperature <= MAX_TEMPERATURE)) {
			throw SampleException
				.badRequest("temperature must lie in [0, " + MAX_TEMPERATURE + "], was " + this.temperature);
		}
		if (this.topP != null && !(this.topP > 0 && this.topP <= 1)) {
			throw SampleException.badRequest("topP must lie in (0, 1], was " + this.topP);
		}
		return this;
	}

	/**
	 * Returns whether tokens are picked greedily.
	 * @return {@code true} without a temperature or with 0
	 */
	public boolean greedy() {
		return this.temperature == null || this.temperature == 0;
	}

	/**
	 * Returns the sampler of one token of an answer.
	 * @param step the token's index in the answer (0: the prefill worker's first token)
	 * @return the sampler
	 */
	public Sampler at(int step) {
		Float t = this.temperature;
		if (t == null || t == 0) {
			return Sampler.greedy();
		}
		float p = (this.topP != null) ? this.topP : 1f;
		long s = (this.seed != null) ? this.seed : 0L;
		return Sampler.of(t, p, s + step);
	}

}
