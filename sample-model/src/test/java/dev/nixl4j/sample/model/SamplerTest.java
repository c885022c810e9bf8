package dev.nixl4j.sample.model;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/**
 * Greedy picks and seeded temperature + top-p draws.
 */
class SamplerTest {

	@Test
	void greedyTakesTheHighestLogitAndTheLowestIdOnTies() {
		assertThat(Sampler.greedy().next(new float[] { 0, 2, -1, 5, 1, 5, 3 })).isEqualTo(3);
		assertThat(Sampler.greedy().next(new float[] { 1, 1, 1 })).isZero();
		assertThat(Sampler.greedy().next(new float[] { Float.NEGATIVE_INFINITY, -3 })).isEqualTo(1);
		assertThat(Sampler.of(0, 0.5f, 7).next(new float[] { 0, 2, -1, 5, 1, 5, 3 })).isEqualTo(3);
		Random random = new Random(1);
		for (int i = 0; i < 100; i++) {
			float[] logits = logits(random, 50);
			int expected = 0;
			for (int j = 1; j < logits.length; j++) {
				if (logits[j] > logits[expected]) {
					expected = j;
				}
			}
			assertThat(Sampler.greedy().next(logits)).isEqualTo(expected);
		}
	}

	@Test
	void seededDrawsRepeatAndStayInTheNucleus() {
		Random random = new Random(2);
		Set<Integer> drawn = new HashSet<>();
		for (int seed = 0; seed < 300; seed++) {
			float[] logits = logits(random, 40);
			float temperature = 0.3f + random.nextFloat() * 1.5f;
			float topP = 0.05f + random.nextFloat() * 0.9f;
			Set<Integer> nucleus = nucleus(logits, temperature, topP);
			Sampler a = Sampler.of(temperature, topP, seed);
			Sampler b = Sampler.of(temperature, topP, seed);
			for (int i = 0; i < 20; i++) {
				int token = a.next(logits);
				assertThat(b.next(logits)).isEqualTo(token);
				assertThat(nucleus).as("seed %d, T %.2f, top-p %.2f", seed, temperature, topP).contains(token);
				drawn.add(token);
			}
		}
		assertThat(drawn).as("tokens drawn across seeds").hasSizeGreaterThan(20);
	}

	@Test
	void drawsFollowTheSoftmax() {
		float[] logits = { 1.0f, 2.0f, 0.5f, -1.0f, 1.5f };
		double temperature = 0.8;
		double[] p = new double[logits.length];
		double sum = 0;
		for (int i = 0; i < p.length; i++) {
			p[i] = Math.exp(logits[i] / temperature);
			sum += p[i];
		}
		Sampler sampler = Sampler.of((float) temperature, 1, 5);
		int draws = 100_000;
		int[] counts = new int[logits.length];
		for (int i = 0; i < draws; i++) {
			counts[sampler.next(logits)]++;
		}
		for (int i = 0; i < p.length; i++) {
			// Five standard deviations of a binomial count.
			double expected = p[i] / sum;
			double sigma = Math.sqrt(expected * (1 - expected) / draws);
			assertThat((double) counts[i] / draws).as("token %d", i).isCloseTo(expected, within(5 * sigma));
		}
	}

	@Test
	void refusesBadArguments() {
		assertThatIllegalArgumentException().isThrownBy(() -> Sampler.of(-0.1f, 0.9f, 1))
			.withMessageContaining("temperature");
		assertThatIllegalArgumentException().isThrownBy(() -> Sampler.of(Float.NaN, 0.9f, 1))
			.withMessageContaining("temperature");
		assertThatIllegalArgumentException().isThrownBy(() -> Sampler.of(1, 0, 1)).withMessageContaining("topP");
		assertThatIllegalArgumentException().isThrownBy(() -> Sampler.of(1, 1.01f, 1)).withMessageContaining("topP");
		assertThatIllegalArgumentException().isThrownBy(() -> Sampler.greedy().next(new float[0]))
			.withMessageContaining("no logits");
		assertThatIllegalArgumentException().isThrownBy(() -> Sampler.of(1, 1, 1).next(new float[] { 0, Float.NaN }))
			.withMessageContaining("logit 1");
	}

	private static float[] logits(Random random, int n) {
		float[] logits = new float[n];
		for (int i = 0; i < n; i++) {
			logits[i] = (float) (random.nextGaussian() * 3);
		}
		return logits;
	}

	/** The smallest set of most probable tokens whose probability reaches top-p. */
	private static Set<Integer> nucleus(float[] logits, float temperature, float topP) {
		double[] p = new double[logits.length];
		double sum = 0;
		for (int i = 0; i < p.length; i++) {
			p[i] = Math.exp(logits[i] / (double) temperature);
			sum += p[i];
		}
		List<Integer> order = new ArrayList<>(IntStream.range(0, p.length).boxed().toList());
		order.sort(Comparator.comparingDouble((Integer i) -> -p[i]));
		Set<Integer> result = new HashSet<>();
		double cumulative = 0;
		for (int i : order) {
			result.add(i);
			cumulative += p[i] / sum;
			if (cumulative >= topP) {
				break;
			}
		}
		return result;
	}

}
