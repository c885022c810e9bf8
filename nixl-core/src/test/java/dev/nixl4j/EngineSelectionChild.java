package dev.nixl4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import dev.nixl4j.testsupport.Bytes;

/**
 * Creates agents with {@link Engine#AUTO} and {@link Engine#NATIVE} in a fresh JVM (a
 * library loads once per JVM) and prints what it got: {@code AUTO <engine>},
 * {@code COPIED <true|false>} after a READ between two AUTO agents, and
 * {@code NATIVE <status>}.
 */
public final class EngineSelectionChild {

	private EngineSelectionChild() {
	}

	/**
	 * Runs the selection.
	 * @param args none
	 */
	public static void main(String[] args) {
		try (Arena arena = Arena.ofShared();
				NixlAgent first = NixlAgent.create(AgentConfig.builder("auto-first").build());
				NixlAgent second = NixlAgent.create(AgentConfig.builder("auto-second").build())) {
			System.out.println("AUTO " + first.engine());
			MemorySegment local = Bytes.pattern(arena, 1 << 20, 1);
			MemorySegment remote = Bytes.pattern(arena, 1 << 20, 2);
			first.register(local);
			second.register(remote);
			first.loadRemoteMetadata(second.localMetadata());
			try (Transfer read = first.transfer(XferOp.READ, DescriptorList.of(local), DescriptorList.of(remote),
					second.name(), null)) {
				read.await(Duration.ofSeconds(30));
			}
			System.out.println("COPIED " + Bytes.hasPattern(local, 2));
		}
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("native-only").engine(Engine.NATIVE).build())) {
			System.out.println("NATIVE " + agent.engine());
		}
		catch (NixlException ex) {
			System.out.println("NATIVE " + ex.status());
		}
	}

}
