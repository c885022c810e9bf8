package dev.nixl4j.metadata.http;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import dev.nixl4j.metadata.MetadataExchange;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP layout of the metadata exchange, shared by {@link HttpMetadataExchange} and
 * {@link MetadataHttpServer}: {@code {base}/agents/{name}/metadata}, the name one
 * percent-encoded path segment.
 */
final class AgentPaths {

	static final String AGENTS = "/agents/";

	static final String METADATA = "/metadata";

	static final String DOCUMENTS = "/documents/";

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	private AgentPaths() {
	}

	/**
	 * Encodes an agent name as one path segment: every byte of its UTF-8 form other than
	 * RFC 3986's unreserved characters is percent-encoded, and so are the dots of the
	 * names {@code .} and {@code ..}, which would otherwise be dot-segments.
	 * @param agentName the name
	 * @return the segment
	 */
	static String encode(String agentName) {
		boolean dotsOnly = agentName.equals(".") || agentName.equals("..");
		StringBuilder segment = new StringBuilder(agentName.length() + 8);
		for (byte b : agentName.getBytes(StandardCharsets.UTF_8)) {
			int c = b & 0xFF;
			boolean unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
					|| c == '_' || c == '~' || (c == '.' && !dotsOnly);
			if (unreserved) {
				segment.append((char) c);
			}
			else {
				segment.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
			}
		}
		return segment.toString();
	}

	/**
	 * Decodes a path segment made by {@link #encode}.
	 * @param segment the raw segment
	 * @return the agent name, or {@code null} when the segment is not a valid encoding of
	 * a non-empty UTF-8 name
	 */
	static @Nullable String decode(String segment) {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(segment.length());
		for (int i = 0; i < segment.length(); i++) {
			char c = segment.charAt(i);
			if (c == '%') {
				if (i + 2 >= segment.length()) {
					return null;
				}
				int high = Character.digit(segment.charAt(i + 1), 16);
				int low = Character.digit(segment.charAt(i + 2), 16);
				if (high < 0 || low < 0) {
					return null;
				}
				bytes.write((high << 4) | low);
				i += 2;
			}
			else if (c == '/' || c > 0x7F) {
				return null;
			}
			else {
				bytes.write(c);
			}
		}
		if (bytes.size() == 0) {
			return null;
		}
		try {
			return StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(bytes.toByteArray()))
				.toString();
		}
		catch (CharacterCodingException ex) {
			return null;
		}
	}

	/**
	 * Returns the path of an agent's metadata below a base path.
	 * @param basePath the base path, without a trailing slash ({@code ""} for the root)
	 * @param agentName the agent
	 * @return the raw path
	 */
	static String metadataPath(String basePath, String agentName) {
		return basePath + AGENTS + encode(agentName) + METADATA;
	}

	/**
	 * Returns the path of an agent's document of a kind below a base path. Kinds are
	 * checked ({@link MetadataExchange#requireDocumentKind}) and need no encoding.
	 * @param basePath the base path, without a trailing slash ({@code ""} for the root)
	 * @param agentName the agent
	 * @param kind the document's kind
	 * @return the raw path
	 */
	static String documentPath(String basePath, String agentName, String kind) {
		return basePath + AGENTS + encode(agentName) + DOCUMENTS + kind;
	}

	/**
	 * Removes trailing slashes of a base path.
	 * @param path the path
	 * @return the path without them ({@code ""} for the root)
	 */
	static String trimBase(@Nullable String path) {
		String trimmed = (path != null) ? path : "";
		while (trimmed.endsWith("/")) {
			trimmed = trimmed.substring(0, trimmed.length() - 1);
		}
		return trimmed;
	}

	/** Trims a base path and checks that a non-root one starts with {@code /}. */
	static String checkBasePath(String basePath) {
		String trimmed = trimBase(basePath);
		if (!trimmed.isEmpty() && !trimmed.startsWith("/")) {
			throw new IllegalArgumentException("the base path must start with '/', was " + basePath);
		}
		return trimmed;
	}

}
