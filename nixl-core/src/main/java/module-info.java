/**
 * nixl-core: NIXL's agent model in Java. Exports the API packages only; the engines
 * ({@code dev.nixl4j.internal.*}) are not API and are reached through
 * {@link dev.nixl4j.EngineProvider} and the other service interfaces below.
 *
 * <p>
 * The native engine makes restricted FFM calls: an application on the module path runs
 * with {@code --enable-native-access=dev.nixl4j.core}. NIXL's native artifact
 * ({@code nixl-native-linux-x86_64}) holds resources only; on the module path it is an
 * automatic module that nothing requires, so add it with
 * {@code --add-modules dev.nixl4j.natives.linux.x86_64} (or put it on the class path).
 */
module dev.nixl4j.core {

	requires static org.jspecify;

	exports dev.nixl4j;
	exports dev.nixl4j.cuda;
	exports dev.nixl4j.lifecycle;
	exports dev.nixl4j.metadata;
	exports dev.nixl4j.readiness;

	// The strict JSON reader and writer of the wire forms (cache handles, lease parameters,
	// Dynamo's RDMA metadata) and of the CLI's and the etcd launcher's documents, for
	// nixl4j's own modules only: not an API for users. (The last two are automatic modules,
	// named by their manifests.)
	exports dev.nixl4j.json to dev.nixl4j.kv, dev.nixl4j.connect, dev.nixl4j.cli, dev.nixl4j.etcd.launcher;

	// The seam through which nixl-test-support's FaultInjectingDriver wraps a real engine's
	// driver; no other module reads internal packages.
	exports dev.nixl4j.internal.engine to dev.nixl4j.testsupport;

	uses dev.nixl4j.EngineProvider;
	uses dev.nixl4j.cuda.Cuda.Binding;
	uses dev.nixl4j.ShareableMemory.Allocator;
	uses dev.nixl4j.readiness.ReadinessProbe;
	uses dev.nixl4j.internal.engine.DriverProvider;

	provides dev.nixl4j.EngineProvider with dev.nixl4j.internal.ffm.NativeEngineProvider,
			dev.nixl4j.internal.embedded.EmbeddedEngineProvider;
	provides dev.nixl4j.cuda.Cuda.Binding with dev.nixl4j.internal.cuda.CudaBinding;
	provides dev.nixl4j.ShareableMemory.Allocator with dev.nixl4j.internal.embedded.SharedMemory;
	provides dev.nixl4j.readiness.ReadinessProbe with dev.nixl4j.internal.readiness.NativeReadinessProbe;
	provides dev.nixl4j.internal.engine.DriverProvider with dev.nixl4j.internal.ffm.NativeEngineProvider,
			dev.nixl4j.internal.embedded.EmbeddedEngineProvider;

}
