package dev.nixl4j.sample.model;

import java.util.Arrays;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Picks the next token from logits: greedily (the highest logit, the lowest id on ties),
 * or at random with a temperature and top-p (nucleus) cut, from a seeded generator so
 * that a run can be reproduced. Not thread-safe.
 */
public final class Sampler {

	private final float temperature;

	private final float topP;

	private final SplittableRandom random;

	private Sampler(float temperature, float topP, long seed) {
		this.temperature = temperature;
		this.topP = topP;
		this.random = new SplittableRandom(seed);
	}

	/**
	 * Returns a greedy sampler.
	 * @return the sampler
	 */
	public static Sampler greedy() {
		return new Sampler(0, 1, 0);
	}

	/**
	 * Returns a sampler that draws from the softmax of {@code logits / temperature},
	 * restricted to the smallest set of most probable tokens whose probabilities add up
	 * to at least {@code topP}.
	 * @param temperature 0 for greedy, else positive and finite
	 * @param topP the nucleus, in (0, 1]
	 * @param seed the generator's seed
	 * @return the sampler
	 * @throws IllegalArgumentException if the temperature or top-p is out of range
	 */
	public static Sampler of(float temperature, float topP, long seed) {
		if (!(temperature >= 0) || !Float.isFinite(temperature)) {
			throw new IllegalArgumentException("temperature " + temperature + " is not 0 or positive and finite");
		}
		if (!(topP > 0 && topP <= 1)) {
			throw new IllegalArgumentException("topP " + topP + " is not in (0, 1]");
		}
		return new Sampler(temperature, topP, seed);
	}

	/**
	 * Picks a token.
	 * @param logits the logits, one per token id, none NaN
	 * @return the token id
	 * @throws IllegalArgumentException if there are no logits or one is NaN
	 */
	public int next(float[] logits) {
		Objects.requireNonNull(logits, "logits");
		if (logits.length == 0) {
			throw new IllegalArgumentException("no logits");
		}
		int best = 0;
		for (int i = 0; i < logits.length; i++) {
			if (Float.isNaN(logits[i])) {
				throw new IllegalArgumentException("logit " + i + " is NaN");
			}
			if (logits[i] > logits[best]) {
				best = i;
			}
		}
		if (this.temperature == 0 || logits[best] == Float.POSITIVE_INFINITY) {
			return best;
		}
		double max = logits[best];
		double[] probabilities = new double[logits.length];
		double sum = 0;
		for (int i = 0; i < logits.length; i++) {
			probabilities[i] = Math.exp((logits[i] - max) / this.temperature);
			sum += probabilities[i];
		}
		// Most probable first, lower id first among equals: sort (-p, id) packed in
		// longs.
		long[] order = new long[logits.length];
		for (int i = 0; i < logits.length; i++) {
			long bits = Float.floatToIntBits((float) (probabilities[i] / sum));
			order[i] = ((long) (Integer.MAX_VALUE - bits) << 32) | i;
		}
		Arrays.sort(order);
		double nucleus = 0;
		int size = 0;
		while (size < order.length) {
			nucleus += probabilities[(int) order[size]];
			size++;
			if (nucleus >= this.topP * sum) {
				break;
			}
		}
		double draw = this.random.nextDouble() * nucleus;
		double cumulative = 0;
		for (int i = 0; i < size; i++) {
			int id = (int) order[i];
			cumulative += probabilities[id];
			if (draw < cumulative) {
				return id;
			}
		}
		return (int) order[size - 1];
	}

}
