package dev.nixl4j.kv;

/**
 * Which tensor of a layer a region holds.
 */
public enum KvPart {

	/** The keys, in a layout with separate K and V regions. */
	K,

	/** The values, in a layout with separate K and V regions. */
	V,

	/** Keys and values in one tensor: each block holds K, then V. */
	KV

}
