package com.example.modular;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.lang.module.ModuleDescriptor;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.connect.Connector;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.metadata.http.HttpMetadataExchange;

/**
 * Two agents in one process on the module path: the reader READs one MiB from the server
 * with a notification and checks every byte. Then it checks that each of nixl4j's named
 * modules exports its API packages only, and tries nixl-core's internal seam and its JSON
 * package by reflection, which the module system must refuse. Prints the engine, the
 * library, the modules and the outcome of each check; exits 0 when all hold.
 */
public final class ModularConsumer {

	private static final int SIZE = 1 << 20;

	private static final String DONE = "module-path:done";

	private static final String INTERNAL_PACKAGE = "dev.nixl4j.internal.engine";

	private static final String JSON_PACKAGE = "dev.nixl4j.json";

	/** What each named module exports to every module. */
	private static final Map<Class<?>, Set<String>> API = Map.of(NixlAgent.class,
			Set.of("dev.nixl4j", "dev.nixl4j.cuda", "dev.nixl4j.lifecycle", "dev.nixl4j.metadata",
					"dev.nixl4j.readiness"),
			KvConsumer.class, Set.of("dev.nixl4j.kv"), Connector.class, Set.of("dev.nixl4j.connect"),
			HttpMetadataExchange.class, Set.of("dev.nixl4j.metadata.http"));

	private ModularConsumer() {
	}

	/**
	 * Runs the checks.
	 * @param args none
	 * @throws Exception when a step fails; the process then exits non-zero
	 */
	public static void main(String[] args) throws Exception {
		Module core = NixlAgent.class.getModule();
		System.out.println("application module: " + ModularConsumer.class.getModule().getName());
		System.out.println("nixl4j module: " + core.getName());
		int status = transfer();
		status |= exportsApiOnly();
		status |= internalIsClosed(core);
		status |= jsonIsClosed(core);
		System.exit(status);
	}

	private static byte patternByte(long offset) {
		return (byte) ((offset * 31 + (offset >>> 11)) ^ 0x5A);
	}

	private static int transfer() throws Exception {
		try (Arena arena = Arena.ofShared();
				NixlAgent server = NixlAgent.create(AgentConfig.builder("module-path-server").build());
				NixlAgent reader = NixlAgent.create(AgentConfig.builder("module-path-reader").build())) {
			System.out.println("engine: " + reader.engine());
			System.out.println("library: " + reader.engineDescription());
			MemorySegment source = arena.allocate(SIZE, 4096);
			for (long i = 0; i < SIZE; i++) {
				source.set(ValueLayout.JAVA_BYTE, i, patternByte(i));
			}
			MemorySegment local = arena.allocate(SIZE, 4096);
			try (Registration served = server.register(source); Registration read = reader.register(local)) {
				reader.loadRemoteMetadata(server.localMetadata());
				CompletableFuture<Notification> done = server
					.expectNotification(NotificationMatcher.exact("module-path-reader", DONE), Duration.ofSeconds(30));
				try (Transfer transfer = reader.transfer(XferOp.READ, DescriptorList.of(local),
						DescriptorList.of(source), "module-path-server", DONE.getBytes(StandardCharsets.UTF_8))) {
					transfer.await(Duration.ofSeconds(30));
				}
				done.get();
			}
			for (long i = 0; i < SIZE; i++) {
				byte got = local.get(ValueLayout.JAVA_BYTE, i);
				if (got != patternByte(i)) {
					System.out.println("MISMATCH at byte " + i + ": read " + got + ", expected " + patternByte(i));
					return 1;
				}
			}
			System.out.println("VERIFIED " + SIZE + " bytes");
			return 0;
		}
	}

	private static int exportsApiOnly() {
		int status = 0;
		for (Map.Entry<Class<?>, Set<String>> module : API.entrySet()) {
			ModuleDescriptor descriptor = module.getKey().getModule().getDescriptor();
			Set<String> exported = new TreeSet<>();
			for (ModuleDescriptor.Exports exports : descriptor.exports()) {
				if (!exports.isQualified()) {
					exported.add(exports.source());
				}
			}
			boolean api = exported.equals(new TreeSet<>(module.getValue())) && descriptor.opens().isEmpty();
			System.out.println((api ? "EXPORTS API ONLY: " : "UNEXPECTED EXPORTS: ") + descriptor.name() + " "
					+ exported);
			status |= api ? 0 : 1;
		}
		return status;
	}

	/**
	 * The JSON package is shared with nixl4j's own modules only: not exported to this one.
	 */
	private static int jsonIsClosed(Module core) {
		if (!core.getPackages().contains(JSON_PACKAGE) || core.isExported(JSON_PACKAGE, ModularConsumer.class.getModule())
				|| !core.isExported(JSON_PACKAGE, KvConsumer.class.getModule())) {
			System.out.println("UNEXPECTED: " + JSON_PACKAGE + " is not shared with dev.nixl4j.kv only");
			return 1;
		}
		System.out.println("JSON NOT EXPORTED TO THE APPLICATION");
		return 0;
	}

	/**
	 * The internal package exists in nixl-core but is not exported to this module:
	 * calling into it by reflection is refused.
	 */
	private static int internalIsClosed(Module core) throws ClassNotFoundException {
		if (!core.getPackages().contains(INTERNAL_PACKAGE)) {
			System.out.println("UNEXPECTED: " + core.getName() + " has no package " + INTERNAL_PACKAGE);
			return 1;
		}
		if (core.isExported(INTERNAL_PACKAGE, ModularConsumer.class.getModule())) {
			System.out.println("UNEXPECTED: " + INTERNAL_PACKAGE + " is exported to the application");
			return 1;
		}
		Class<?> seam = Class.forName(INTERNAL_PACKAGE + ".EngineDrivers");
		try {
			seam.getMethod("open", AgentConfig.class).invoke(null, AgentConfig.builder("module-path-intruder").build());
			System.out.println("UNEXPECTED: " + seam.getName() + ".open ran for the application");
			return 1;
		}
		catch (IllegalAccessException ex) {
			System.out.println("INTERNAL NOT ACCESSIBLE: " + ex.getClass().getName());
			return 0;
		}
		catch (ReflectiveOperationException ex) {
			System.out.println("UNEXPECTED: " + ex);
			return 1;
		}
	}

}
