package dev.nixl4j.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * HTTP/1.1 over a plain socket, the way a slow or hostile client speaks it: a request
 * head sent as text, a body trickled a byte at a time, an answer waited for with a
 * deadline.
 */
public final class RawHttp {

	private RawHttp() {
	}

	/**
	 * Sends text as ISO-8859-1 bytes and flushes.
	 * @param socket the connection
	 * @param text what to send
	 * @throws IOException when the connection breaks
	 */
	public static void send(Socket socket, String text) throws IOException {
		OutputStream out = socket.getOutputStream();
		out.write(text.getBytes(StandardCharsets.ISO_8859_1));
		out.flush();
	}

	/**
	 * Waits for the start of an answer.
	 * @param socket the connection
	 * @param wait how long to wait
	 * @return what arrived ({@code ""} when the connection was closed), or {@code null}
	 * when nothing did within the wait
	 * @throws IOException when the connection breaks
	 */
	public static @Nullable String answerWithin(Socket socket, Duration wait) throws IOException {
		int before = socket.getSoTimeout();
		socket.setSoTimeout((int) wait.toMillis());
		try {
			byte[] buffer = new byte[4096];
			int n = socket.getInputStream().read(buffer);
			return (n < 0) ? "" : new String(buffer, 0, n, StandardCharsets.ISO_8859_1);
		}
		catch (SocketTimeoutException ex) {
			return null;
		}
		finally {
			socket.setSoTimeout(before);
		}
	}

	/**
	 * Sends one byte every {@code period}, on a virtual thread, until the connection
	 * breaks or {@code stop} is set.
	 * @param socket the connection
	 * @param period the pause between two bytes
	 * @param stop set to end the trickle
	 */
	public static void trickle(Socket socket, Duration period, AtomicBoolean stop) {
		Thread.ofVirtual().start(() -> {
			try {
				OutputStream out = socket.getOutputStream();
				while (!stop.get()) {
					out.write('x');
					out.flush();
					Thread.sleep(period);
				}
			}
			catch (IOException | InterruptedException ex) {
				// the server closed the connection
			}
		});
	}

	/**
	 * Reads what the server sends until it closes the connection (a reset counts as a
	 * close), or the wait passes.
	 * @param socket the connection
	 * @param wait the longest wait for each read
	 * @return what arrived
	 * @throws IOException when reading fails otherwise
	 */
	public static String readUntilClosed(Socket socket, Duration wait) throws IOException {
		socket.setSoTimeout((int) wait.toMillis());
		ByteArrayOutputStream received = new ByteArrayOutputStream();
		InputStream in = socket.getInputStream();
		byte[] buffer = new byte[1024];
		try {
			int n;
			while ((n = in.read(buffer)) >= 0) {
				received.write(buffer, 0, n);
			}
		}
		catch (SocketException | SocketTimeoutException ex) {
			// what came is the answer
		}
		return received.toString(StandardCharsets.ISO_8859_1);
	}

}
