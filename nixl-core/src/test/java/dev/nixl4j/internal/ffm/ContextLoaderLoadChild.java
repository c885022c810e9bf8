package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Path;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Runs {@link LibraryLoadChild} with the native artifact seen only by the thread's
 * context class loader, and only as streams, never as files or URLs: as an application
 * server's loader, or a Spring Boot jar's loader for a jar nested in it, may offer it.
 */
public final class ContextLoaderLoadChild {

	private ContextLoaderLoadChild() {
	}

	/**
	 * Runs the load.
	 * @param args the artifact jar
	 * @throws IOException when the jar cannot be opened
	 */
	public static void main(String[] args) throws IOException {
		try (ZipFile jar = new ZipFile(Path.of(args[0]).toFile())) {
			Thread.currentThread().setContextClassLoader(new StreamOnlyLoader(jar));
			LibraryLoadChild.main(new String[0]);
		}
	}

	/** Serves the jar's entries as streams; has no URLs and no classes. */
	private static final class StreamOnlyLoader extends ClassLoader {

		private final ZipFile jar;

		StreamOnlyLoader(ZipFile jar) {
			super(null);
			this.jar = jar;
		}

		@Override
		protected URL findResource(String name) {
			return null;
		}

		@Override
		public InputStream getResourceAsStream(String name) {
			ZipEntry entry = this.jar.getEntry(name);
			try {
				return (entry != null) ? this.jar.getInputStream(entry) : null;
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
