package dev.nixl4j;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Native agents whose metadata {@link MetadataFuzzTest} mutates, in a child JVM that
 * shares the network namespace of the {@link MetadataLoadChild} processes: the connection
 * info in the metadata must be reachable from where it is loaded, and in an isolated
 * namespace only an agent inside it is.
 *
 * <p>
 * The shapes: an agent without registrations, one with a single region, one with many (in
 * one registration, in several, and on device id 3), partial metadata of some
 * registrations, and an agent whose UCX writes the v2 address format with its worker
 * name. Output: per blob
 * {@code @source <agent> <base64 blob> <base64 full metadata of the agent>}, then
 * {@code @ready}. The agents stay up until stdin closes, as their connection info must
 * stay live while the mutants are loaded.
 */
public final class MetadataSourceChild {

	private static final int MIB = 1 << 20;

	private MetadataSourceChild() {
	}

	/**
	 * Runs the child.
	 * @param args none
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		// stdout carries the protocol; UCX prints its log there too, so protocol lines
		// start with '@'.
		PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
		List<NixlAgent> agents = new ArrayList<>();
		try (Arena arena = Arena.ofShared()) {
			try {
				NixlAgent empty = agent("fuzz-empty", agents);
				byte[] emptyFull = empty.localMetadata().toByteArray();
				print(out, "fuzz-empty", emptyFull, emptyFull);

				NixlAgent one = agent("fuzz-one", agents);
				Registration single = one.register(arena.allocate(MIB, 64));
				byte[] oneFull = one.localMetadata().toByteArray();
				print(out, "fuzz-one", oneFull, oneFull);
				print(out, "fuzz-one", one.localMetadata(single).toByteArray(), oneFull);

				NixlAgent many = agent("fuzz-many", agents);
				MemorySegment[] small = new MemorySegment[8];
				for (int i = 0; i < small.length; i++) {
					small[i] = arena.allocate(4096L * (i + 1), 64);
				}
				Registration batch = many.register(small);
				for (int i = 1; i <= 4; i++) {
					many.register(arena.allocate(64L * 1024 * i, 64));
				}
				MemoryDescriptor[] onDevice3 = new MemoryDescriptor[4];
				for (int i = 0; i < onDevice3.length; i++) {
					long size = 8192L * (i + 1);
					onDevice3[i] = new MemoryDescriptor(arena.allocate(size, 64).address(), size, 3);
				}
				Registration device3 = many.register(DescriptorList.of(MemoryType.DRAM, onDevice3));
				byte[] manyFull = many.localMetadata().toByteArray();
				print(out, "fuzz-many", manyFull, manyFull);
				print(out, "fuzz-many", many.localMetadata(batch, device3).toByteArray(), manyFull);
				print(out, "fuzz-many", many.localMetadata(device3).toByteArray(), manyFull);

				// UCX's other address format (NIXL's choice on EFA hosts), with the
				// worker name in it.
				NixlAgent v2 = agent("fuzz-v2", agents,
						Map.of("engine_config", "ADDRESS_VERSION=v2,ADDRESS_DEBUG_INFO=y"));
				v2.register(arena.allocate(MIB, 64));
				byte[] v2Full = v2.localMetadata().toByteArray();
				print(out, "fuzz-v2", v2Full, v2Full);

				out.println("@ready");
				while (System.in.read() >= 0) {
					// Wait for the test to close stdin.
				}
			}
			finally {
				for (NixlAgent agent : agents.reversed()) {
					agent.close();
				}
			}
		}
	}

	private static NixlAgent agent(String name, List<NixlAgent> agents) {
		return agent(name, agents, Map.of());
	}

	private static NixlAgent agent(String name, List<NixlAgent> agents, Map<String, String> ucxParameters) {
		// No progress thread: the agents only publish metadata, and spinning threads
		// would
		// starve the loaders on a small machine.
		NixlAgent agent = NixlAgent.create(AgentConfig.builder(name)
			.engine(Engine.NATIVE)
			.nativeProgressThread(false)
			.backends(new BackendConfig("UCX", ucxParameters))
			.build());
		agents.add(agent);
		return agent;
	}

	private static void print(PrintStream out, String agent, byte[] blob, byte[] full) {
		Base64.Encoder base64 = Base64.getEncoder();
		out.println("@source " + agent + " " + base64.encodeToString(blob) + " " + base64.encodeToString(full));
	}

}
