package dev.nixl4j;

import java.lang.System.Logger.Level;
import java.util.EnumMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Chooses the engine of a new agent: the {@link EngineProvider}s on the class path, found
 * once, and the policy of {@link Engine#AUTO}.
 */
final class Engines {

	private static final System.Logger logger = System.getLogger(Engines.class.getName());

	private static final AtomicBoolean fallbackReported = new AtomicBoolean();

	private Engines() {
	}

	/**
	 * The providers, by engine; found with the class loader that loaded nixl-core's API.
	 */
	private static final class Providers {

		static final Map<Engine, EngineProvider> BY_ENGINE = load();

		private static Map<Engine, EngineProvider> load() {
			Map<Engine, EngineProvider> providers = new EnumMap<>(Engine.class);
			for (EngineProvider provider : ServiceLoader.load(EngineProvider.class,
					EngineProvider.class.getClassLoader())) {
				providers.putIfAbsent(provider.engine(), provider);
			}
			return providers;
		}

	}

	/**
	 * Creates an agent. {@link Engine#NATIVE} loads NIXL or fails with an error that
	 * names every place tried and how to install it; {@link Engine#EMBEDDED} uses the
	 * pure-Java engine; {@link Engine#AUTO} uses NIXL when it loads and otherwise the
	 * embedded engine (also when the JVM denies native access), saying so once per
	 * process.
	 */
	static NixlAgent create(AgentConfig config) {
		return switch (config.engine()) {
			case NATIVE -> provider(Engine.NATIVE).create(config);
			case EMBEDDED -> provider(Engine.EMBEDDED).create(config);
			case AUTO -> createAuto(config);
		};
	}

	private static NixlAgent createAuto(AgentConfig config) {
		try {
			return provider(Engine.NATIVE).create(config);
		}
		catch (NixlException ex) {
			if (ex.status() != NixlStatus.LIBRARY_UNAVAILABLE && ex.status() != NixlStatus.NATIVE_ACCESS_DENIED) {
				throw ex;
			}
			if (fallbackReported.compareAndSet(false, true)) {
				logger.log(Level.WARNING,
						"Native NIXL is not available, so agents use the embedded engine (pure Java, "
								+ "DRAM only, TCP between processes; no RDMA or GPU memory). To use NIXL, fix this: "
								+ ex.getMessage());
			}
			return provider(Engine.EMBEDDED).create(config);
		}
	}

	private static EngineProvider provider(Engine engine) {
		EngineProvider provider = Providers.BY_ENGINE.get(engine);
		if (provider == null) {
			throw new NixlException(NixlStatus.LIBRARY_UNAVAILABLE, "create_agent", null, null,
					"no provider of the " + engine + " engine is on the class path (META-INF/services/"
							+ EngineProvider.class.getName()
							+ " of nixl-core is missing: a jar merged without its service files?)");
		}
		return provider;
	}

}
