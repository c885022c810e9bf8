package dev.nixl4j.micrometer;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The values a tag takes from names that come from outside (producers, senders): the
 * first {@link #MAX} distinct names keep their own value, the rest share {@link #OTHER},
 * so that a peer that makes up names cannot grow the number of series without bound.
 */
final class BoundedTagValues {

	/** How many distinct names get their own tag value. */
	static final int MAX = 100;

	/** The tag value of the names past {@link #MAX}. */
	static final String OTHER = "other";

	private final Set<String> named = ConcurrentHashMap.newKeySet();

	/**
	 * Returns the tag value of a name: the name itself while fewer than {@link #MAX}
	 * names have one, else {@link #OTHER}.
	 * @param name the name
	 * @return the tag value
	 */
	String valueOf(String name) {
		if (this.named.contains(name)) {
			return name;
		}
		synchronized (this) {
			if (this.named.size() < MAX && !OTHER.equals(name)) {
				this.named.add(name);
				return name;
			}
		}
		return this.named.contains(name) ? name : OTHER;
	}

	/**
	 * Returns whether a name has its own tag value.
	 * @param name the name
	 * @return whether it has
	 */
	boolean isNamed(String name) {
		return this.named.contains(name);
	}

}
