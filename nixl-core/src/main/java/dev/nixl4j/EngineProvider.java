package dev.nixl4j;

/**
 * Service-provider interface of an engine: what {@link NixlAgent#create(AgentConfig)}
 * finds with {@link java.util.ServiceLoader} to create agents of one {@link Engine}.
 * nixl-core provides {@link Engine#NATIVE} and {@link Engine#EMBEDDED}; applications do
 * not implement or call it.
 *
 * <p>
 * This interface is how the public API reaches the engines without depending on their
 * packages ({@code dev.nixl4j.internal.*}, which are not API).
 */
public interface EngineProvider {

	/**
	 * Returns the engine this provider creates agents of.
	 * @return {@link Engine#NATIVE} or {@link Engine#EMBEDDED}, never {@link Engine#AUTO}
	 */
	Engine engine();

	/**
	 * Creates an agent of this engine.
	 * @param config the configuration
	 * @return the agent
	 * @throws NixlException when the engine cannot serve the configuration: for the
	 * native engine {@link NixlStatus#LIBRARY_UNAVAILABLE} or
	 * {@link NixlStatus#NATIVE_ACCESS_DENIED} when NIXL cannot be loaded, or a backend
	 * that fails
	 */
	NixlAgent create(AgentConfig config);

}
