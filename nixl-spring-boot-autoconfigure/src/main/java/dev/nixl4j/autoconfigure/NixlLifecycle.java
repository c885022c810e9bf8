package dev.nixl4j.autoconfigure;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.lifecycle.AgentLifecycle;
import dev.nixl4j.metadata.MetadataPublication;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Runs the agent's {@link AgentLifecycle} as part of the application's: it starts with
 * the application (publishing the agent's metadata and keeping it published) and stops,
 * in order and to {@code nixl.shutdown.timeout}, when the application stops. What start
 * and stop do is {@link AgentLifecycle}'s; this class only places them among Spring's
 * lifecycle phases and reports an exchange that cannot be reached at start against the
 * property that named it ({@link MetadataExchangeUnavailableException}).
 *
 * <p>
 * It stops after the web server's graceful shutdown (requests still running may finish
 * their transfers) and before the web server stops (peers can still fetch this agent's
 * metadata while its transfers drain).
 */
public class NixlLifecycle implements SmartLifecycle {

	/** The phase: between the web server's graceful shutdown and its stop. */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1536;

	private final AgentLifecycle lifecycle;

	/** The property that says where the exchange lives, and its value; for the report. */
	private @Nullable String exchangeProperty;

	private @Nullable String exchangeValue;

	/**
	 * Creates the Spring lifecycle of an agent's lifecycle.
	 * @param lifecycle the agent's lifecycle, started and stopped with the application
	 */
	public NixlLifecycle(AgentLifecycle lifecycle) {
		this.lifecycle = lifecycle;
	}

	/**
	 * Names the property that says where the metadata exchange lives, so that an exchange
	 * that cannot be reached at start is reported against it
	 * ({@link MetadataExchangeUnavailableException}).
	 * @param property the property's name
	 * @param value its value
	 * @return this lifecycle
	 */
	NixlLifecycle exchangeLocation(String property, String value) {
		this.exchangeProperty = property;
		this.exchangeValue = value;
		return this;
	}

	@Override
	public void start() {
		try {
			this.lifecycle.start();
		}
		catch (NixlException ex) {
			if (this.exchangeProperty != null && this.exchangeValue != null
					&& (ex.status() == NixlStatus.UNAVAILABLE || ex.status() == NixlStatus.TIMEOUT)) {
				throw new MetadataExchangeUnavailableException(this.exchangeProperty, this.exchangeValue, ex);
			}
			throw ex;
		}
	}

	/**
	 * Publishes the agent's metadata now, also when publishing at start is off
	 * ({@code nixl.metadata.publish=false}); see {@link AgentLifecycle#publish()}.
	 * @throws IllegalStateException when there is no metadata exchange
	 * ({@code nixl.metadata.exchange} is {@code none}) or the lifecycle stopped
	 * @throws NixlException when publishing failed (it is retried in the background)
	 */
	public void publish() {
		this.lifecycle.publish();
	}

	/**
	 * Republishes the agent's metadata, for memory registered after start that peers
	 * should learn of through the exchange; see {@link AgentLifecycle#republish()}.
	 */
	public void republish() {
		this.lifecycle.republish();
	}

	/**
	 * Returns the publication that keeps the agent's entry in the exchange: its state
	 * says whether the entry is published now.
	 * @return the publication, {@code null} when there is no metadata exchange or the
	 * exchange is NIXL's own
	 */
	public @Nullable MetadataPublication publication() {
		return this.lifecycle.publication();
	}

	/**
	 * Returns the agent's lifecycle, which this one runs.
	 * @return the agent's lifecycle
	 */
	public AgentLifecycle agentLifecycle() {
		return this.lifecycle;
	}

	@Override
	public void stop() {
		this.lifecycle.stop();
	}

	@Override
	public boolean isRunning() {
		return this.lifecycle.isRunning();
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * Whether new transfers are refused.
	 * @return {@code true} once stopping began
	 */
	public boolean isStopping() {
		return this.lifecycle.isStopping();
	}

}
