package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * Asks the dynamic loader why a shared object does not load. NIXL only says that a plugin
 * "could not be loaded"; {@code dlerror()} names the missing dependency (for example
 * {@code libcudart.so.12} for GDS on a host without CUDA), which is what an operator
 * needs.
 */
public final class SharedObjects {

	/**
	 * {@code RTLD_LAZY}: resolve functions on first call, so only missing libraries fail.
	 */
	private static final int RTLD_LAZY = 1;

	private SharedObjects() {
	}

	/**
	 * Tries to load a shared object and unloads it again, if {@link TrustedFiles} allows
	 * loading it.
	 * @param file the shared object
	 * @return the loader's error, a note that it loads when it does, or why it was not
	 * loaded
	 */
	public static String loadError(Path file) {
		TrustedFiles trust = TrustedFiles.forThisProcess();
		TrustedFiles.Refusal refusal = trust.library(file);
		if (refusal != null) {
			// Not even to ask: loading it runs its constructors.
			return trust.refused(refusal);
		}
		Linker linker = Linker.nativeLinker();
		try (Arena arena = Arena.ofConfined()) {
			MethodHandle dlopen = linker.downcallHandle(linker.defaultLookup().findOrThrow("dlopen"),
					FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
			MethodHandle dlerror = linker.downcallHandle(linker.defaultLookup().findOrThrow("dlerror"),
					FunctionDescriptor.of(ValueLayout.ADDRESS));
			MethodHandle dlclose = linker.downcallHandle(linker.defaultLookup().findOrThrow("dlclose"),
					FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
			MemorySegment handle = (MemorySegment) dlopen.invokeExact(arena.allocateFrom(file.toString()), RTLD_LAZY);
			if (!handle.equals(MemorySegment.NULL)) {
				int ignored = (int) dlclose.invokeExact(handle);
				return "it loads in isolation, so NIXL rejected it for another reason (see NIXL's log)";
			}
			MemorySegment message = (MemorySegment) dlerror.invokeExact();
			return message.equals(MemorySegment.NULL) ? "the loader gave no reason"
					: message.reinterpret(Integer.MAX_VALUE).getString(0);
		}
		catch (Throwable ex) {
			return "cannot ask the loader (" + ex + ")";
		}
	}

}
