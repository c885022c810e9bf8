package dev.nixl4j.internal.ffm;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;

import org.jspecify.annotations.Nullable;

/**
 * Whether the JVM lets nixl4j make the restricted calls of {@code java.lang.foreign} that
 * binding NIXL needs.
 *
 * <p>
 * On JDK 25 restricted calls run by default: the JVM prints a warning the first time a
 * module that was not granted native access makes one. They are refused only when the JVM
 * runs with {@code --illegal-native-access=deny}, or for a named module that was not
 * granted access. nixl4j therefore uses NIXL unless the JVM {@linkplain #DENIED denies}
 * it, and when access was not granted explicitly it logs once how to grant it, which also
 * silences the JVM's warning.
 */
public enum NativeAccess {

	/**
	 * Granted explicitly: {@code --enable-native-access} or an executable jar's manifest.
	 */
	ENABLED,

	/**
	 * Not granted, but allowed: restricted calls run and the JVM warns once (JDK 25's
	 * default).
	 */
	ALLOWED_WITH_WARNING,

	/** Denied: restricted calls throw {@link IllegalCallerException}. */
	DENIED;

	private static final System.Logger logger = System.getLogger(NativeAccess.class.getName());

	private static @Nullable NativeAccess probed;

	/**
	 * Returns what the JVM allows nixl4j. The first call decides, before nixl4j makes any
	 * other restricted call: a restricted call made where the JVM only warns grants
	 * access to the module from then on, so a later look could no longer tell the two
	 * apart. The first call that finds {@link #ALLOWED_WITH_WARNING} logs how to enable
	 * native access, at INFO: nixl4j works as it should and the JVM has already printed
	 * its own warning; this line adds only the remedy.
	 * @return the access nixl4j has
	 */
	public static synchronized NativeAccess current() {
		NativeAccess access = probed;
		if (access == null) {
			access = probe();
			probed = access;
			if (access == ALLOWED_WITH_WARNING) {
				logger.log(Level.INFO, "Native access is not enabled for nixl4j, so the JVM warns about its calls into "
						+ "NIXL. To enable it and silence that warning: " + howToEnable());
			}
		}
		return access;
	}

	private static NativeAccess probe() {
		if (NativeAccess.class.getModule().isNativeAccessEnabled()) {
			return ENABLED;
		}
		try {
			// A restricted method that touches no memory: a zero-length view of the null
			// address.
			MemorySegment.NULL.reinterpret(0);
			return ALLOWED_WITH_WARNING;
		}
		catch (IllegalCallerException ex) {
			return DENIED;
		}
	}

	/**
	 * Says how to grant nixl4j native access where it runs: the module it is in on the
	 * module path, {@code ALL-UNNAMED} on the class path, and the manifest entry of an
	 * executable jar (a Spring Boot jar included).
	 * @return the advice
	 */
	public static String howToEnable() {
		Module module = NativeAccess.class.getModule();
		if (module.isNamed()) {
			return "start the JVM with --enable-native-access=" + module.getName() + " (nixl4j is on the module path)";
		}
		return "start the JVM with --enable-native-access=ALL-UNNAMED, or, for an executable jar (a Spring Boot jar "
				+ "too), add the line 'Enable-Native-Access: ALL-UNNAMED' to its manifest";
	}

}
