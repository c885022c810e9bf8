package dev.nixl4j.internal.engine;

import java.util.EnumMap;
import java.util.Map;
import java.util.ServiceLoader;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlException;

/**
 * Opens the {@link EngineDriver} of an engine through its {@link DriverProvider}: the
 * seam through which nixl4j's test support reaches the real engines. nixl-core's
 * {@code module-info} exports this package to that module only.
 */
public final class EngineDrivers {

	private EngineDrivers() {
	}

	/**
	 * Opens a driver of the configured engine.
	 * @param config the agent's configuration; its engine is {@link Engine#NATIVE} or
	 * {@link Engine#EMBEDDED}
	 * @return the driver, owned by the caller
	 * @throws NixlException when the engine cannot serve the configuration
	 */
	public static EngineDriver open(AgentConfig config) {
		return provider(config.engine()).openDriver(config);
	}

	/**
	 * Loads what the configured engine's drivers need, without opening one.
	 * @param config the configuration; its engine is {@link Engine#NATIVE} or
	 * {@link Engine#EMBEDDED}
	 * @throws NixlException when it cannot be loaded
	 */
	public static void requireLoadable(AgentConfig config) {
		provider(config.engine()).requireLoadable(config);
	}

	private static DriverProvider provider(Engine engine) {
		DriverProvider provider = Providers.BY_ENGINE.get(engine);
		if (provider == null) {
			throw new IllegalArgumentException("no driver provider of the " + engine + " engine (choose "
					+ Engine.NATIVE + " or " + Engine.EMBEDDED + ")");
		}
		return provider;
	}

	/** The providers, by engine; found once. */
	private static final class Providers {

		static final Map<Engine, DriverProvider> BY_ENGINE = load();

		private static Map<Engine, DriverProvider> load() {
			Map<Engine, DriverProvider> providers = new EnumMap<>(Engine.class);
			for (DriverProvider provider : ServiceLoader.load(DriverProvider.class,
					DriverProvider.class.getClassLoader())) {
				providers.putIfAbsent(provider.engine(), provider);
			}
			return providers;
		}

	}

}
