package dev.nixl4j.connect;

import java.io.ByteArrayOutputStream;
import java.util.Base64;
import java.util.HexFormat;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * The encoding of {@code nixl_metadata} in Dynamo's {@link RdmaMetadata}: {@code "b64:"}
 * followed by base64 of the zlib-compressed agent metadata; older peers send the zlib
 * bytes as hex without a prefix. Decompression stops as soon as the output passes a cap,
 * so a small input that inflates to gigabytes costs at most the cap.
 */
final class MetadataEncoding {

	static final String BASE64_PREFIX = "b64:";

	private static final int CHUNK = 64 * 1024;

	private MetadataEncoding() {
	}

	static String encode(byte[] metadata) {
		Deflater deflater = new Deflater();
		try {
			deflater.setInput(metadata);
			deflater.finish();
			ByteArrayOutputStream compressed = new ByteArrayOutputStream(metadata.length / 2 + 64);
			byte[] chunk = new byte[CHUNK];
			while (!deflater.finished()) {
				int n = deflater.deflate(chunk);
				compressed.write(chunk, 0, n);
			}
			return BASE64_PREFIX + Base64.getEncoder().encodeToString(compressed.toByteArray());
		}
		finally {
			deflater.end();
		}
	}

	/**
	 * Decodes the field.
	 * @param field the field's text
	 * @param maxBytes the largest decompressed size accepted
	 * @return the agent metadata bytes
	 * @throws IllegalArgumentException naming what is wrong
	 */
	static byte[] decode(String field, int maxBytes) {
		byte[] compressed;
		if (field.startsWith(BASE64_PREFIX)) {
			try {
				compressed = Base64.getDecoder().decode(field.substring(BASE64_PREFIX.length()));
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException("is not valid base64 after \"b64:\" (" + ex.getMessage() + ")");
			}
		}
		else {
			if (field.length() % 2 != 0) {
				throw new IllegalArgumentException(
						"is neither \"b64:\"-prefixed base64 nor hex (odd length " + field.length() + ")");
			}
			try {
				compressed = HexFormat.of().parseHex(field);
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException(
						"is neither \"b64:\"-prefixed base64 nor hex (" + ex.getMessage() + ")");
			}
		}
		if (compressed.length == 0) {
			throw new IllegalArgumentException("is empty");
		}
		return inflate(compressed, maxBytes);
	}

	private static byte[] inflate(byte[] compressed, int maxBytes) {
		Inflater inflater = new Inflater();
		try {
			inflater.setInput(compressed);
			ByteArrayOutputStream out = new ByteArrayOutputStream(
					Math.min(maxBytes, Math.max(CHUNK, compressed.length * 4)));
			byte[] chunk = new byte[CHUNK];
			while (!inflater.finished()) {
				int n = inflater.inflate(chunk);
				if (n == 0) {
					if (inflater.needsDictionary()) {
						throw new IllegalArgumentException("is a zlib stream that needs a preset dictionary");
					}
					if (inflater.needsInput()) {
						throw new IllegalArgumentException("is a truncated zlib stream");
					}
				}
				if (out.size() + (long) n > maxBytes) {
					throw new IllegalArgumentException("decompresses to more than " + maxBytes
							+ " bytes, the limit for agent metadata (rejected without inflating the rest)");
				}
				out.write(chunk, 0, n);
			}
			if (inflater.getRemaining() > 0) {
				throw new IllegalArgumentException(
						"has " + inflater.getRemaining() + " bytes after the end of its zlib stream");
			}
			if (out.size() == 0) {
				throw new IllegalArgumentException("decompresses to no bytes");
			}
			return out.toByteArray();
		}
		catch (DataFormatException ex) {
			throw new IllegalArgumentException("is not a valid zlib stream (" + ex.getMessage() + ")");
		}
		finally {
			inflater.end();
		}
	}

}
