package dev.nixl4j.cli;

import java.util.Arrays;

/**
 * Durations measured in nanoseconds, summarised the way nixlbench does: the mean, and a
 * percentile read at index {@code floor(n * p)} of the sorted samples.
 */
final class Samples {

	private final long[] nanos;

	private int count;

	/**
	 * Creates room for a number of samples.
	 * @param capacity how many will be added
	 */
	Samples(int capacity) {
		this.nanos = new long[capacity];
	}

	/**
	 * Adds one sample.
	 * @param duration nanoseconds
	 */
	void add(long duration) {
		this.nanos[this.count++] = duration;
	}

	/**
	 * Returns the mean in microseconds.
	 * @return the mean, 0 without samples
	 */
	double meanMicros() {
		if (this.count == 0) {
			return 0;
		}
		double sum = 0;
		for (int i = 0; i < this.count; i++) {
			sum += this.nanos[i];
		}
		return sum / this.count / 1000.0;
	}

	/**
	 * Returns a percentile in microseconds.
	 * @param fraction the rank, for example 0.99
	 * @return the percentile, 0 without samples
	 */
	double percentileMicros(double fraction) {
		if (this.count == 0) {
			return 0;
		}
		long[] sorted = Arrays.copyOf(this.nanos, this.count);
		Arrays.sort(sorted);
		int index = Math.min((int) (this.count * fraction), this.count - 1);
		return sorted[index] / 1000.0;
	}

}
