package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.lang.System.Logger.Level;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * NIXL's libraries carried as resources by one of the native artifacts
 * ({@code nixl-native-linux-x86_64}, {@code nixl-native-linux-x86_64-cu13},
 * {@code nixl-native-linux-aarch64}: the {@link NativeVariant variants}), and their
 * extraction into the cache.
 *
 * <p>
 * The artifact holds, under {@code META-INF/nixl4j/native/<variant>/} (for example
 * {@value #PREFIX}), {@code bundle.properties} (keys {@code nixl.version},
 * {@code bundle.id}), {@code files.sha256} (one {@code sha256sum} line per file) and the
 * files at the relative paths it lists. They are read as resources, never as files, so
 * that they load from inside a Spring Boot jar too. They are extracted once into
 * {@code <cache>/native/<nixl.version>-<first 16 hex of bundle.id>/}: written to a
 * temporary sibling directory under a file lock and moved into place, so two JVMs
 * starting at once are safe. Every file is checked against {@code files.sha256} before
 * NIXL is loaded, also when the directory was extracted earlier: a directory that does
 * not match is extracted again. Nothing is loaded from a place another user could write
 * to.
 */
final class ClassPathBundle {

	/** Where the default artifact ({@link #ARTIFACT}) keeps its resources. */
	static final String PREFIX = "META-INF/nixl4j/native/linux-x86_64/";

	/**
	 * The default artifact's name (x86-64, CUDA 12), as users add it to their build; the
	 * Spring Boot starter brings it.
	 */
	static final String ARTIFACT = "nixl-native-linux-x86_64";

	private static final System.Logger logger = System.getLogger(ClassPathBundle.class.getName());

	private static final int MAX_PROPERTIES_BYTES = 64 * 1024;

	private static final int MAX_INDEX_BYTES = 1024 * 1024;

	private static final int MAX_FILES = 4096;

	private static final long MAX_TOTAL_BYTES = 2L * 1024 * 1024 * 1024;

	private static final long LOCK_TIMEOUT_NANOS = 120_000_000_000L;

	private static final int MAX_STALE_ENTRIES = 256;

	private static final Set<PosixFilePermission> DIRECTORY_PERMISSIONS = PosixFilePermissions.fromString("rwxr-xr-x");

	private static final Set<PosixFilePermission> FILE_PERMISSIONS = PosixFilePermissions.fromString("rw-r--r--");

	private static final Pattern VERSION = Pattern.compile("[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}");

	private static final Pattern HEX_64 = Pattern.compile("[0-9a-f]{64}");

	private static final Pattern INDEX_LINE = Pattern.compile("([0-9a-f]{64}) [ *](.+)");

	private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._+@-]{1,255}");

	private final ClassLoader loader;

	private final NativeVariant variant;

	private final String prefix;

	private final String version;

	private final String bundleId;

	private final Path cacheRoot;

	private ClassPathBundle(ClassLoader loader, NativeVariant variant, String version, String bundleId,
			Path cacheRoot) {
		this.loader = loader;
		this.variant = variant;
		this.prefix = variant.prefix();
		this.version = version;
		this.bundleId = bundleId;
		this.cacheRoot = cacheRoot;
	}

	/** Why the artifact's libraries cannot be used; the message says it for the user. */
	static final class BundleException extends Exception {

		private static final long serialVersionUID = 1L;

		BundleException(String message) {
			super(message);
		}

		/** Never null: the constructor requires one. */
		@Override
		public String getMessage() {
			return Objects.requireNonNull(super.getMessage());
		}

	}

	/**
	 * Returns the class loaders the artifacts are looked for with: nixl4j's, then the
	 * thread's context class loader (which, in an application server, may be the one that
	 * sees the application's jars).
	 * @return the loaders, without repeats
	 */
	static List<ClassLoader> loaders() {
		List<ClassLoader> loaders = new ArrayList<>();
		ClassLoader own = ClassPathBundle.class.getClassLoader();
		loaders.add((own != null) ? own : ClassLoader.getSystemClassLoader());
		ClassLoader context = Thread.currentThread().getContextClassLoader();
		if (context != null && !loaders.contains(context)) {
			loaders.add(context);
		}
		return loaders;
	}

	/**
	 * Lists the variants whose {@code bundle.properties} a loader serves, each with the
	 * first loader that does. Resources are opened as streams: some loaders serve them no
	 * other way.
	 * @param loaders the loaders, in order
	 * @return variant to loader, in the order of {@link NativeVariant#values()}
	 */
	static Map<NativeVariant, ClassLoader> present(List<ClassLoader> loaders) {
		Map<NativeVariant, ClassLoader> present = new LinkedHashMap<>();
		for (NativeVariant variant : NativeVariant.values()) {
			for (ClassLoader loader : loaders) {
				try (InputStream in = loader.getResourceAsStream(variant.prefix() + "bundle.properties")) {
					if (in != null) {
						present.put(variant, loader);
						break;
					}
				}
				catch (IOException ex) {
					// Present but unreadable: open() reports it if this variant is chosen
					present.put(variant, loader);
					break;
				}
			}
		}
		return present;
	}

	/**
	 * Reads a variant's {@code bundle.properties}.
	 * @param variant the variant
	 * @param loader the loader that serves it
	 * @param cacheRoot where to extract
	 * @return the artifact
	 * @throws BundleException when its {@code bundle.properties} is missing or unusable
	 */
	static ClassPathBundle open(NativeVariant variant, ClassLoader loader, Path cacheRoot) throws BundleException {
		byte[] bytes;
		try (InputStream in = loader.getResourceAsStream(variant.prefix() + "bundle.properties")) {
			if (in == null) {
				throw new BundleException("it has no " + variant.prefix() + "bundle.properties");
			}
			bytes = readBounded(in, MAX_PROPERTIES_BYTES, "bundle.properties");
		}
		catch (IOException ex) {
			throw new BundleException("its bundle.properties cannot be read (" + ex + ")");
		}
		Properties properties = new Properties();
		try {
			properties.load(new StringReader(new String(bytes, StandardCharsets.UTF_8)));
		}
		catch (IOException | IllegalArgumentException ex) {
			throw new BundleException("its bundle.properties is malformed (" + ex.getMessage() + ")");
		}
		String version = properties.getProperty("nixl.version", "").strip();
		String id = properties.getProperty("bundle.id", "").strip().toLowerCase(Locale.ROOT);
		String declared = properties.getProperty("variant", variant.variantName()).strip();
		if (!VERSION.matcher(version).matches()) {
			throw new BundleException(
					"its bundle.properties has no valid nixl.version ('" + abbreviate(version) + "')");
		}
		if (!HEX_64.matcher(id).matches()) {
			throw new BundleException("its bundle.properties has no valid bundle.id (64 hex digits expected)");
		}
		if (!declared.equals(variant.variantName())) {
			throw new BundleException("its bundle.properties under " + variant.prefix() + " names the variant '"
					+ abbreviate(declared) + "'");
		}
		return new ClassPathBundle(loader, variant, version, id, cacheRoot);
	}

	/**
	 * Returns the variant the artifact carries.
	 * @return the variant
	 */
	NativeVariant variant() {
		return this.variant;
	}

	/**
	 * Returns the NIXL version the artifact carries.
	 * @return the version
	 */
	String version() {
		return this.version;
	}

	/**
	 * Returns where the artifact is extracted.
	 * @return {@code <cache>/native/<version>-<id>}
	 */
	Path directory() {
		return this.cacheRoot.resolve("native").resolve(name());
	}

	private String name() {
		return this.version + "-" + this.bundleId.substring(0, 16);
	}

	/**
	 * Makes sure a verified copy of the artifact's files is in {@link #directory()},
	 * extracting it when it is missing or does not match.
	 * @return the directory
	 * @throws BundleException when it cannot be extracted or must not be used
	 */
	Path prepare() throws BundleException {
		List<Entry> index = readIndex();
		Path nativeDirectory = this.cacheRoot.resolve("native");
		Path target = directory();
		try {
			// Only when missing: a cache prepared in a read-only image must not need a
			// write. Made rwxr-xr-x whatever the umask: a directory its group could write
			// to
			// is refused.
			if (!Files.isDirectory(nativeDirectory)) {
				Files.createDirectories(nativeDirectory, PosixFilePermissions.asFileAttribute(DIRECTORY_PERMISSIONS));
			}
		}
		catch (IOException | SecurityException ex) {
			throw new BundleException("the cache directory " + nativeDirectory + " cannot be created (" + ex
					+ "); point -D" + NativeLibrary.CACHE_PROPERTY + " or NIXL4J_CACHE at a writable directory");
		}
		requireSafe(this.cacheRoot, true);
		requireSafe(nativeDirectory, false);
		String problem;
		try {
			problem = verify(target, index);
		}
		catch (BundleException ex) {
			// Another process may be replacing the directory; decided again under the
			// lock.
			problem = ex.getMessage();
		}
		if (problem == null) {
			return target;
		}
		if (!Files.isWritable(nativeDirectory)) {
			throw new BundleException("the cache directory " + nativeDirectory + " is not writable, so the libraries "
					+ "cannot be extracted there (" + problem + "); point -D" + NativeLibrary.CACHE_PROPERTY
					+ " or NIXL4J_CACHE at a writable directory");
		}
		Path lockFile = nativeDirectory.resolve("." + name() + ".lock");
		try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
				FileLock lock = lock(channel, lockFile)) {
			problem = verify(target, index);
			if (problem == null) {
				return target;
			}
			if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
				logger.log(Level.WARNING, "Refusing the extracted NIXL libraries in {0}: {1}; extracting them again",
						target, problem);
			}
			removeStale(nativeDirectory);
			// Each file's bytes are checked against files.sha256 as they are written.
			extract(index, nativeDirectory, target);
		}
		catch (IOException | SecurityException ex) {
			throw new BundleException("the libraries cannot be extracted into the cache directory " + nativeDirectory
					+ " (" + ex + "); point -D" + NativeLibrary.CACHE_PROPERTY
					+ " or NIXL4J_CACHE at a writable directory");
		}
		return target;
	}

	private static FileLock lock(FileChannel channel, Path lockFile) throws IOException, BundleException {
		long deadline = System.nanoTime() + LOCK_TIMEOUT_NANOS;
		while (true) {
			try {
				FileLock lock = channel.tryLock();
				if (lock != null) {
					return lock;
				}
			}
			catch (OverlappingFileLockException ex) {
				// nixl4j loaded by another class loader of this JVM holds it: wait as for
				// another process
			}
			if (System.nanoTime() - deadline > 0) {
				throw new BundleException("another process held the extraction lock " + lockFile + " for longer than "
						+ LOCK_TIMEOUT_NANOS / 1_000_000_000L + " s");
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new BundleException("interrupted while waiting for the extraction lock " + lockFile);
			}
		}
	}

	/** One line of {@code files.sha256}. */
	private record Entry(String sha256, String path) {
	}

	private List<Entry> readIndex() throws BundleException {
		byte[] bytes;
		try (InputStream in = this.loader.getResourceAsStream(this.prefix + "files.sha256")) {
			if (in == null) {
				throw new BundleException("it has bundle.properties but no files.sha256");
			}
			bytes = readBounded(in, MAX_INDEX_BYTES, "files.sha256");
		}
		catch (IOException ex) {
			throw new BundleException("its files.sha256 cannot be read (" + ex + ")");
		}
		if (!HexFormat.of().formatHex(sha256().digest(bytes)).equals(this.bundleId)) {
			throw new BundleException("its files.sha256 does not match bundle.id: the artifact is damaged");
		}
		List<Entry> entries = new ArrayList<>();
		Set<String> paths = new HashSet<>();
		for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
			if (line.isBlank()) {
				continue;
			}
			Matcher matcher = INDEX_LINE.matcher(line.strip());
			if (!matcher.matches()) {
				throw new BundleException("its files.sha256 has a malformed line: '" + abbreviate(line) + "'");
			}
			String path = matcher.group(2);
			if (!isSafe(path)) {
				throw new BundleException("its files.sha256 names an unsafe path '" + abbreviate(path)
						+ "' (only relative paths of plain names are allowed)");
			}
			if (!paths.add(path)) {
				throw new BundleException("its files.sha256 names '" + path + "' twice");
			}
			if (entries.size() == MAX_FILES) {
				throw new BundleException("its files.sha256 lists more than " + MAX_FILES + " files");
			}
			entries.add(new Entry(matcher.group(1), path));
		}
		if (!paths.contains("lib/" + NativeLibrary.LIBRARY_FILE)) {
			throw new BundleException("its files.sha256 does not list lib/" + NativeLibrary.LIBRARY_FILE);
		}
		return entries;
	}

	private static boolean isSafe(String path) {
		if (path.length() > 1024) {
			return false;
		}
		for (String segment : path.split("/", -1)) {
			if (!SEGMENT.matcher(segment).matches() || segment.equals(".") || segment.equals("..")) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Refuses a directory another user could have changed, by the rule that every library
	 * load follows ({@link TrustedFiles}): the cache directory and every directory above
	 * it owned by root or this process's user and writable by nobody else (a sticky
	 * directory such as {@code /tmp} may lie above it); a directory nixl4j made inside it
	 * ({@code native/}, the extracted tree) also never writable by others, sticky bit or
	 * not.
	 * @param directory the directory
	 * @param cacheRoot whether it is the cache directory itself, which may be a link
	 */
	private static void requireSafe(Path directory, boolean cacheRoot) throws BundleException {
		if (!cacheRoot && !Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
			throw new BundleException(directory + " is not a directory (or is a link)");
		}
		if (cacheRoot && !Files.isDirectory(directory)) {
			throw new BundleException(directory + " is not a directory");
		}
		TrustedFiles trust = TrustedFiles.forThisProcess();
		TrustedFiles.Refusal refusal = cacheRoot ? trust.directory(directory) : trust.home(directory);
		if (refusal == null) {
			return;
		}
		String where = refusal.place().equals(directory.toAbsolutePath()) ? "the cache directory " + refusal
				: "the cache directory " + directory + " lies under " + refusal;
		throw new BundleException(where + ", so another user could replace the libraries: make it owned by root or "
				+ "this user and not writable by group or others (chmod go-w), or point -D"
				+ NativeLibrary.CACHE_PROPERTY + " or NIXL4J_CACHE at a private directory");
	}

	/**
	 * Checks an extracted directory: every listed file a plain file (no link) under plain
	 * directories, owned by root or this user and writable by no other user
	 * ({@link TrustedFiles}), with the listed SHA-256.
	 * @return {@code null} when it matches, else what is wrong
	 */
	private static @Nullable String verify(Path target, List<Entry> index) throws BundleException {
		if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
			return "not extracted yet";
		}
		requireSafe(target, false);
		Set<Path> checkedDirectories = new HashSet<>();
		checkedDirectories.add(target);
		MessageDigest digest = sha256();
		byte[] buffer = new byte[64 * 1024];
		long total = 0;
		for (Entry entry : index) {
			Path file = target.resolve(entry.path());
			for (Path parent = file.getParent(); parent != null
					&& !checkedDirectories.contains(parent); parent = parent.getParent()) {
				if (!Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS)) {
					return parent + " is not a plain directory";
				}
				requireSafe(parent, false);
				checkedDirectories.add(parent);
			}
			try {
				BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
						LinkOption.NOFOLLOW_LINKS);
				if (!attributes.isRegularFile()) {
					return file + " is not a plain file";
				}
				total += attributes.size();
				if (total > MAX_TOTAL_BYTES) {
					return "its files exceed " + MAX_TOTAL_BYTES + " bytes";
				}
				TrustedFiles.Refusal refusal = TrustedFiles.forThisProcess().plainFile(file);
				if (refusal != null) {
					return refusal.toString();
				}
				digest.reset();
				try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
					for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
						digest.update(buffer, 0, n);
					}
				}
			}
			catch (IOException | UnsupportedOperationException | IllegalArgumentException ex) {
				return entry.path() + " cannot be read (" + ex + ")";
			}
			if (!HexFormat.of().formatHex(digest.digest()).equals(entry.sha256())) {
				return entry.path() + " does not match its SHA-256 in files.sha256";
			}
		}
		return null;
	}

	private void extract(List<Entry> index, Path nativeDirectory, Path target) throws IOException, BundleException {
		Path temporary = Files.createTempDirectory(nativeDirectory, "." + name() + ".tmp-");
		try {
			MessageDigest digest = sha256();
			byte[] buffer = new byte[64 * 1024];
			long total = 0;
			for (Entry entry : index) {
				Path file = temporary.resolve(entry.path());
				Files.createDirectories(file.getParent(), PosixFilePermissions.asFileAttribute(DIRECTORY_PERMISSIONS));
				digest.reset();
				try (InputStream in = this.loader.getResourceAsStream(this.prefix + entry.path());
						OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE_NEW,
								StandardOpenOption.WRITE)) {
					if (in == null) {
						throw new BundleException(
								"the artifact lists " + entry.path() + " in files.sha256 but does not " + "hold it");
					}
					for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
						total += n;
						if (total > MAX_TOTAL_BYTES) {
							throw new BundleException("the artifact's files exceed " + MAX_TOTAL_BYTES + " bytes");
						}
						digest.update(buffer, 0, n);
						out.write(buffer, 0, n);
					}
				}
				Files.setPosixFilePermissions(file, FILE_PERMISSIONS);
				if (!HexFormat.of().formatHex(digest.digest()).equals(entry.sha256())) {
					throw new BundleException(entry.path() + " in the artifact does not match its SHA-256 in "
							+ "files.sha256: the artifact is damaged");
				}
			}
			if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
				Path old = Files.createTempDirectory(nativeDirectory, "." + name() + ".old-");
				Files.move(target, old.resolve("tree"), StandardCopyOption.ATOMIC_MOVE);
				deleteTree(old);
			}
			Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
			logger.log(Level.INFO, "Extracted NIXL {0} from the class path ({1}) into {2}: {3} files, {4} bytes",
					this.version, this.variant.artifact(), target, index.size(), total);
		}
		finally {
			if (Files.exists(temporary, LinkOption.NOFOLLOW_LINKS)) {
				deleteTree(temporary);
			}
		}
	}

	/** Removes what an extraction that was killed left behind; runs under the lock. */
	private void removeStale(Path nativeDirectory) throws IOException {
		List<Path> stale = new ArrayList<>();
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(nativeDirectory, "." + name() + ".{tmp,old}-*")) {
			for (Path entry : entries) {
				if (stale.size() == MAX_STALE_ENTRIES) {
					break;
				}
				stale.add(entry);
			}
		}
		for (Path entry : stale) {
			deleteTree(entry);
		}
	}

	private static void deleteTree(Path root) throws IOException {
		Files.walkFileTree(root, new SimpleFileVisitor<>() {

			@Override
			public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
				Files.delete(file);
				return FileVisitResult.CONTINUE;
			}

			@Override
			public FileVisitResult postVisitDirectory(Path directory, @Nullable IOException failure)
					throws IOException {
				if (failure != null) {
					throw failure;
				}
				Files.delete(directory);
				return FileVisitResult.CONTINUE;
			}

		});
	}

	private static byte[] readBounded(InputStream in, int limit, String what) throws IOException {
		byte[] bytes = in.readNBytes(limit + 1);
		if (bytes.length > limit) {
			throw new IOException(what + " is larger than " + limit + " bytes");
		}
		return bytes;
	}

	private static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("every JVM has SHA-256", ex);
		}
	}

	private static String abbreviate(String text) {
		return (text.length() <= 80) ? text : text.substring(0, 80) + "...";
	}

}
