package dev.nixl4j.sample.model;

import java.util.Arrays;

/**
 * The merge table of a byte-level BPE: each pair of token ids that merges, with its rank
 * (its position in the merge list) and the id of the token it merges into, in an
 * open-addressing hash table keyed by the pair. {@link #merge} applies the merges to one
 * word: lowest rank first, leftmost first among equal ranks, over a linked list of
 * symbols with a heap of candidate pairs, so a word of n bytes takes O(n log n).
 */
final class BpeMerges {

	private final long[] keys;

	private final int[] ranks;

	private final int[] results;

	private final int mask;

	BpeMerges(int count) {
		int capacity = Integer.highestOneBit(Math.max(4, count) * 2 - 1) << 1;
		this.keys = new long[capacity];
		this.ranks = new int[capacity];
		Arrays.fill(this.ranks, -1);
		this.results = new int[count];
		this.mask = capacity - 1;
	}

	/**
	 * Adds the merge of rank {@code rank}.
	 * @return {@code -1}, or the rank of an earlier merge of the same pair (then nothing
	 * was added)
	 */
	int put(int left, int right, int rank, int result) {
		long key = key(left, right);
		int slot = slot(key);
		while (this.ranks[slot] >= 0) {
			if (this.keys[slot] == key) {
				return this.ranks[slot];
			}
			slot = (slot + 1) & this.mask;
		}
		this.keys[slot] = key;
		this.ranks[slot] = rank;
		this.results[rank] = result;
		return -1;
	}

	/** The rank of the pair's merge, or {@code -1} if the pair does not merge. */
	int rank(int left, int right) {
		long key = key(left, right);
		int slot = slot(key);
		while (this.ranks[slot] >= 0) {
			if (this.keys[slot] == key) {
				return this.ranks[slot];
			}
			slot = (slot + 1) & this.mask;
		}
		return -1;
	}

	private static long key(int left, int right) {
		return ((long) left << 32) | (right & 0xFFFF_FFFFL);
	}

	private int slot(long key) {
		long h = key * 0x9E37_79B9_7F4A_7C15L;
		return (int) (h ^ (h >>> 29)) & this.mask;
	}

	/** Working arrays for {@link #merge}, grown as needed; one per encoding thread. */
	static final class Scratch {

		int[] prev = new int[0];

		int[] next = new int[0];

		long[] heap = new long[0];

		void ensure(int n) {
			if (this.prev.length < n) {
				int capacity = Math.max(n, Math.min(2 * this.prev.length, Integer.MAX_VALUE / 4));
				this.prev = new int[capacity];
				this.next = new int[capacity];
				this.heap = new long[3 * capacity];
			}
		}

	}

	/**
	 * Merges the symbols {@code ids[0, n)} of one word in place.
	 * @return the number of symbols left, now in {@code ids[0, count)}
	 */
	int merge(int[] ids, int n, Scratch s) {
		if (n < 2) {
			return n;
		}
		s.ensure(n);
		int[] prev = s.prev;
		int[] next = s.next;
		long[] heap = s.heap;
		int size = 0;
		for (int i = 0; i < n; i++) {
			prev[i] = i - 1;
			next[i] = (i + 1 < n) ? i + 1 : -1;
		}
		for (int i = 0; i + 1 < n; i++) {
			int r = rank(ids[i], ids[i + 1]);
			if (r >= 0) {
				size = push(heap, size, r, i);
			}
		}
		while (size > 0) {
			long top = heap[0];
			size = pop(heap, size);
			int r = (int) (top >>> 32);
			int p = (int) top;
			int q = next[p];
			if (ids[p] < 0 || q < 0) {
				continue; // merged into its left neighbour, or now the last symbol
			}
			// A pair queued before a neighbour changed: apply it only if the symbols now
			// there still merge into the same token.
			int current = rank(ids[p], ids[q]);
			if (current < 0 || this.results[current] != this.results[r]) {
				continue;
			}
			ids[p] = this.results[r];
			ids[q] = -1;
			int after = next[q];
			next[p] = after;
			if (after >= 0) {
				prev[after] = p;
			}
			if (prev[p] >= 0) {
				int left = rank(ids[prev[p]], ids[p]);
				if (left >= 0) {
					size = push(heap, size, left, prev[p]);
				}
			}
			if (after >= 0) {
				int right = rank(ids[p], ids[after]);
				if (right >= 0) {
					size = push(heap, size, right, p);
				}
			}
		}
		int count = 0;
		for (int i = 0; i >= 0; i = next[i]) {
			ids[count++] = ids[i];
		}
		return count;
	}

	/** Min-heap of (rank, position) packed in a long: rank first, then position. */
	private static int push(long[] heap, int size, int rank, int position) {
		long value = ((long) rank << 32) | position;
		int i = size;
		while (i > 0) {
			int parent = (i - 1) >>> 1;
			if (heap[parent] <= value) {
				break;
			}
			heap[i] = heap[parent];
			i = parent;
		}
		heap[i] = value;
		return size + 1;
	}

	private static int pop(long[] heap, int size) {
		int last = size - 1;
		long value = heap[last];
		int i = 0;
		while (true) {
			int child = 2 * i + 1;
			if (child >= last) {
				break;
			}
			if (child + 1 < last && heap[child + 1] < heap[child]) {
				child++;
			}
			if (heap[child] >= value) {
				break;
			}
			heap[i] = heap[child];
			i = child;
		}
		heap[i] = value;
		return last;
	}

}
