package com.example.intruder;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.internal.engine.EngineDrivers;

/**
 * Must not compile: {@code dev.nixl4j.internal.engine} is not exported to this module.
 */
public final class Intruder {

	private Intruder() {
	}

	/**
	 * Opens an engine's driver through the internal seam.
	 * @param args none
	 */
	public static void main(String[] args) {
		EngineDrivers.open(AgentConfig.builder("intruder").build()).close();
	}

}
