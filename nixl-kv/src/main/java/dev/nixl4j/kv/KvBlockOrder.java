package dev.nixl4j.kv;

/**
 * How the elements of one block of one layer's K (or V) are ordered in memory.
 */
public enum KvBlockOrder {

	/**
	 * Heads outermost: {@code [heads][tokens][headDim]}. The heads of a block form
	 * contiguous runs, so a slice of heads is one piece of memory; heterogeneous tensor
	 * parallelism needs it.
	 */
	HND,

	/**
	 * Tokens outermost: {@code [tokens][heads][headDim]}. A slice of heads is scattered
	 * over every token.
	 */
	NHD

}
