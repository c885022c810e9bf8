package dev.nixl4j.sample;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SequencedSet;

import dev.nixl4j.NativeLibraryInfo;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvProducerSession;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

/**
 * Hides agent names and the native library's place from callers without a worker's token,
 * by the rule of {@code /actuator/nixl} ({@code nixl.endpoint.show-names},
 * {@code when-authorized}): a name is what a holder of a registry token needs to squat an
 * agent's entry, and a path tells where the worker's libraries lie. The sample's answers
 * to such callers (problem documents, {@code POST /generate}) pass their words through
 * {@link #hide(String)}, which replaces this worker's agent name, its peers' (whose
 * metadata it loaded), its KV producers', the producers named in the prefill worker's
 * recent answers and the NIXL library's directory and source with {@value #HIDDEN}.
 */
@Component
public final class HiddenNames {

	/** What stands for a name or path the caller may not see, as in /actuator/nixl. */
	public static final String HIDDEN = NixlEndpoint.HIDDEN;

	private static final int REMEMBERED = 64;

	private final NixlAgent agent;

	private final ObjectProvider<KvConsumer> consumer;

	/** Producer names of recent prefill answers, oldest first; guarded by itself. */
	private final SequencedSet<String> remembered = new LinkedHashSet<>();

	HiddenNames(NixlAgent agent, ObjectProvider<KvConsumer> consumer) {
		this.agent = agent;
		this.consumer = consumer;
	}

	/**
	 * Remembers an agent name that this worker learnt from another (the producer of a
	 * lease), so that words about it are hidden too, while it is one of the last 64.
	 * @param name the agent's name
	 */
	public void remember(String name) {
		synchronized (this.remembered) {
			this.remembered.remove(name);
			this.remembered.addLast(name);
			if (this.remembered.size() > REMEMBERED) {
				this.remembered.removeFirst();
			}
		}
	}

	/**
	 * Replaces every name and path a caller without a token may not see.
	 * @param text words for such a caller, or {@code null}
	 * @return the words with {@value #HIDDEN} in their place; {@code null} for
	 * {@code null}
	 */
	public @Nullable String hide(@Nullable String text) {
		if (text == null || text.isEmpty()) {
			return text;
		}
		String hidden = text;
		for (String secret : secrets()) {
			hidden = hidden.replace(secret, HIDDEN);
		}
		return hidden;
	}

	/** What to hide, the longest first, so that a name inside another goes with it. */
	private List<String> secrets() {
		List<String> secrets = new ArrayList<>();
		secrets.add(this.agent.name());
		secrets.addAll(this.agent.remoteAgents());
		KvConsumer kv = this.consumer.getIfUnique();
		if (kv != null) {
			kv.sessions().stream().map(KvProducerSession::producer).forEach(secrets::add);
		}
		synchronized (this.remembered) {
			secrets.addAll(this.remembered);
		}
		this.agent.nativeLibrary().ifPresent((library) -> addLibrary(secrets, library));
		return secrets.stream()
			.filter((secret) -> !secret.isBlank())
			.distinct()
			.sorted(Comparator.comparingInt(String::length).reversed())
			.toList();
	}

	private static void addLibrary(List<String> secrets, NativeLibraryInfo library) {
		Path directory = library.path().toAbsolutePath().getParent();
		// the library's directory hides its path and its neighbours'; never the root
		secrets.add(
				(directory != null && directory.getNameCount() > 0) ? directory.toString() : library.path().toString());
		secrets.add(library.pluginDirectory().toString());
		secrets.add(library.source());
	}

}
