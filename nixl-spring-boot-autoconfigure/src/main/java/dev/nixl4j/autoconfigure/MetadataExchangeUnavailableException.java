package dev.nixl4j.autoconfigure;

import dev.nixl4j.NixlException;

/**
 * The metadata exchange could not be reached when the application started and published
 * its agent: it names the property that says where the exchange lives and that property's
 * value. Spring Boot's failure report explains it in one paragraph.
 */
public class MetadataExchangeUnavailableException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String property;

	private final String value;

	private final NixlException exchangeFailure;

	/**
	 * Creates the exception.
	 * @param property the property that says where the exchange lives, for example
	 * {@code nixl.metadata.etcd.endpoints}
	 * @param value the property's value, for example {@code http://10.0.0.5:2379}
	 * @param cause what publishing failed with
	 */
	public MetadataExchangeUnavailableException(String property, String value, NixlException cause) {
		super("the metadata exchange at " + property + "=" + value + " could not be reached: " + cause.getMessage(),
				cause);
		this.property = property;
		this.value = value;
		this.exchangeFailure = cause;
	}

	/**
	 * Returns the property that says where the exchange lives.
	 * @return the property's name
	 */
	public String property() {
		return this.property;
	}

	/**
	 * Returns the value of {@link #property()}.
	 * @return the value
	 */
	public String value() {
		return this.value;
	}

	/**
	 * Returns what publishing failed with.
	 * @return the exchange's failure, also the {@link #getCause() cause}
	 */
	public NixlException exchangeFailure() {
		return this.exchangeFailure;
	}

}
