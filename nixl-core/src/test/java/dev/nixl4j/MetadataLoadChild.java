package dev.nixl4j;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * Loads metadata blobs into a native NIXL agent one after the other, in a child JVM that
 * {@link MetadataFuzzTest} starts, so that a native crash ends this process instead of
 * the test run.
 *
 * <p>
 * Arguments: the batch file, the first record to load and the record to stop before. The
 * batch file holds an {@code int} record count, then per record the prelude and the blob,
 * each as an {@code int} length and its bytes (see {@link #write}). The prelude, when not
 * empty, is the genuine full metadata of the blob's agent, loaded first, so that a
 * mutated blob meets an agent that is already known (partial metadata needs that; full
 * metadata then takes NIXL's update path).
 *
 * <p>
 * Output, one line each, starting with {@code '@'} (UCX logs to stdout as well):
 * {@code @ready} once the agent exists, then per record
 * {@code @<index> LOADED <name as UTF-8 hex>}, {@code @<index> REFUSED <status>},
 * {@code @<index> PRELUDE-REFUSED <status>} or {@code @<index> ERROR <exception>}, with
 * notes appended (see {@link #forgetRemotes()}), and {@code @done} at the end. A record's
 * line is printed only after everything loaded for it has been invalidated again, so a
 * missing line points at the record that was being processed.
 */
public final class MetadataLoadChild {

	/** The name of the child's agent (a mutant may claim it). */
	static final String AGENT_NAME = "fuzz-loader";

	/**
	 * How many peers (or their UCX connections) may stay behind before the agent is
	 * replaced.
	 */
	private static final int MAX_LEFTOVERS = 64;

	private NixlAgent agent = newAgent();

	/**
	 * Names nixl4j lists that NIXL does not know (or knows by other bytes): nothing to
	 * invalidate.
	 */
	private final Set<String> gone = new HashSet<>();

	/** What stayed behind in the native agent since it was created. */
	private int leftovers;

	/**
	 * The name under which nixl4j lists the peer of the last load, when NIXL registered
	 * it under other bytes, else {@code null}.
	 */
	private String alias;

	private MetadataLoadChild() {
	}

	/**
	 * Runs the child.
	 * @param args the batch file, the first index, the end index (exclusive)
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		List<byte[][]> records = read(Path.of(args[0]));
		int from = Integer.parseInt(args[1]);
		int to = Math.min(records.size(), Integer.parseInt(args[2]));
		// stdout carries the protocol; UCX prints its log there too, so protocol lines
		// start with '@'.
		PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
		MetadataLoadChild child = new MetadataLoadChild();
		out.println("@ready");
		for (int i = from; i < to; i++) {
			byte[][] record = records.get(i);
			String result;
			try {
				result = child.load(record[0], record[1]) + child.forgetRemotes();
			}
			catch (RuntimeException ex) {
				// A Java failure is a finding of its own; it must not pass for a native
				// crash.
				result = "ERROR " + oneLine(ex);
				child.replaceAgent();
			}
			out.println("@" + i + " " + result);
		}
		child.agent.close();
		out.println("@done");
	}

	private static NixlAgent newAgent() {
		// NIXL's progress thread stays on, as in production, but does not spin: the
		// machine is small.
		return NixlAgent.create(AgentConfig.builder(AGENT_NAME)
			.engine(Engine.NATIVE)
			.nativeProgressDelay(Duration.ofMillis(1))
			.build());
	}

	private String load(byte[] prelude, byte[] blob) {
		this.alias = null;
		try {
			if (prelude.length > 0) {
				try {
					this.agent.loadRemoteMetadata(AgentMetadata.of(prelude));
				}
				catch (NixlException ex) {
					return "PRELUDE-REFUSED " + ex.status();
				}
			}
			String name = this.agent.loadRemoteMetadata(AgentMetadata.of(blob));
			byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
			// A name with a NUL or with bytes that are not UTF-8 does not survive the
			// trip into Java.
			if (!Arrays.equals(nameBytes, MetadataMutator.fields(blob).getFirst().value)) {
				this.alias = name;
			}
			return "LOADED " + HexFormat.of().formatHex(nameBytes);
		}
		catch (NixlException ex) {
			return "REFUSED " + ex.status();
		}
	}

	private static String oneLine(Throwable ex) {
		return String.valueOf(ex).replace('\n', ' ');
	}

	private void replaceAgent() {
		this.agent.close();
		this.agent = newAgent();
		this.gone.clear();
		this.leftovers = 0;
	}

	/**
	 * Invalidates every loaded peer, so that the next record meets a clean agent. What
	 * cannot be invalidated stays behind under a name no later record uses (each record
	 * has its own); the agent is replaced once too much has piled up.
	 * @return what the result line should add: {@code " ALIAS"} when the peer was loaded
	 * under a name nixl4j cannot address, {@code " DROPPED"} when NIXL had already
	 * forgotten a peer, {@code " RESET"} when the agent was replaced
	 */
	private String forgetRemotes() {
		StringBuilder notes = new StringBuilder();
		if (this.alias != null) {
			// Invalidating by the name nixl4j has would not reach the peer NIXL
			// registered.
			this.gone.add(this.alias);
			this.leftovers++;
			notes.append(" ALIAS");
		}
		for (String remote : this.agent.remoteAgents()) {
			if (this.gone.contains(remote)) {
				continue;
			}
			try {
				this.agent.invalidateRemoteMetadata(remote);
			}
			catch (NixlException ex) {
				if (ex.status() != NixlStatus.ERROR_NOT_FOUND || this.agent.hasRemoteMetadata(remote)) {
					throw ex;
				}
				// A failed update made NIXL drop the peer it had loaded (keeping its UCX
				// connection,
				// which makes NIXL refuse that name from now on); nixl4j still lists it.
				this.gone.add(remote);
				this.leftovers++;
				notes.append(" DROPPED");
			}
		}
		if (this.leftovers >= MAX_LEFTOVERS) {
			replaceAgent();
			notes.append(" RESET");
		}
		return notes.toString();
	}

	/**
	 * Writes a batch file.
	 * @param file the file
	 * @param records per record the prelude (possibly empty) and the blob
	 * @throws IOException on failure
	 */
	static void write(Path file, List<byte[][]> records) throws IOException {
		try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
			out.writeInt(records.size());
			for (byte[][] record : records) {
				for (byte[] part : record) {
					out.writeInt(part.length);
					out.write(part);
				}
			}
		}
	}

	private static List<byte[][]> read(Path file) throws IOException {
		try (InputStream in = Files.newInputStream(file); DataInputStream data = new DataInputStream(in)) {
			int count = data.readInt();
			List<byte[][]> records = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				byte[] prelude = new byte[data.readInt()];
				data.readFully(prelude);
				byte[] blob = new byte[data.readInt()];
				data.readFully(blob);
				records.add(new byte[][] { prelude, blob });
			}
			return records;
		}
	}

}
