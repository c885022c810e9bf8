package dev.nixl4j.internal.ffm;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Binds a downcall handle to a function of a native library, so that a function the
 * library does not export breaks only the calls that need it: its handle throws a new
 * {@link MissingSymbolException} on each call instead of failing the class that holds the
 * handles.
 */
final class Downcalls {

	private static final Linker LINKER = Linker.nativeLinker();

	private static final MethodHandle MISSING;

	static {
		try {
			MISSING = MethodHandles.lookup()
				.findStatic(Downcalls.class, "missing", MethodType.methodType(int.class, String.class, String.class));
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private Downcalls() {
	}

	/**
	 * Returns the downcall handle of a function that returns an {@code int}, or, when the
	 * library does not export it, a handle of the same type that throws a
	 * {@link MissingSymbolException}.
	 * @param lookup the library's symbols
	 * @param library the library, as messages name it
	 * @param name the function
	 * @param descriptor its signature
	 * @return the handle
	 */
	static MethodHandle bind(SymbolLookup lookup, String library, String name, FunctionDescriptor descriptor) {
		MemorySegment symbol = lookup.find(name).orElse(null);
		if (symbol != null) {
			return LINKER.downcallHandle(symbol, descriptor);
		}
		MethodHandle thrower = MethodHandles.insertArguments(MISSING, 0, name, library);
		return MethodHandles.dropArguments(thrower, 0, descriptor.toMethodType().parameterList());
	}

	private static int missing(String symbol, String library) throws MissingSymbolException {
		throw new MissingSymbolException(symbol, library);
	}

}
