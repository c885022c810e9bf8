package dev.nixl4j.engine;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.embedded.EmbeddedDriver;
import dev.nixl4j.ffm.NativeDriver;

/**
 * Creates agents for {@link NixlAgent#create(AgentConfig)}, choosing the engine.
 */
public final class Agents {

	private static final System.Logger logger = System.getLogger(Agents.class.getName());

	private static final AtomicBoolean fallbackReported = new AtomicBoolean();

	private Agents() {
	}

	/**
	 * Creates an agent. {@link dev.nixl4j.Engine#NATIVE} loads NIXL or fails with an error that
	 * names every place tried and how to install it; {@link dev.nixl4j.Engine#EMBEDDED} uses the
	 * pure-Java engine; {@link dev.nixl4j.Engine#AUTO} uses NIXL when it loads and otherwise the
	 * embedded engine (also when the JVM denies native access), saying so once per process.
	 * @param config the configuration
	 * @return the agent
	 */
	public static NixlAgent create(AgentConfig config) {
		return switch (config.engine()) {
			case NATIVE -> new AgentCore(config, NativeDriver.open(config));
			case EMBEDDED -> new AgentCore(config, EmbeddedDriver.open(config));
			case AUTO -> new AgentCore(config, autoDriver(config));
		};
	}

	private static EngineDriver autoDriver(AgentConfig config) {
		try {
			return NativeDriver.open(config);
		}
		catch (NixlException ex) {
			if (ex.status() != NixlStatus.LIBRARY_UNAVAILABLE && ex.status() != NixlStatus.NATIVE_ACCESS_DENIED) {
				throw ex;
			}
			if (fallbackReported.compareAndSet(false, true)) {
				logger.log(Level.WARNING, "Native NIXL is not available, so agents use the embedded engine (pure Java, "
						+ "DRAM only, TCP between processes; no RDMA or GPU memory). To use NIXL, fix this: "
						+ ex.getMessage());
			}
			return EmbeddedDriver.open(config);
		}
	}

}
