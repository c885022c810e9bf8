package dev.nixl4j.metadata.http;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

import org.jspecify.annotations.Nullable;

/**
 * A response body read up to a cap: past the cap the subscription is cancelled and the
 * body is {@linkplain #oversize() oversize}, so a hostile server cannot make the client
 * buffer more than the cap plus one network buffer.
 */
final class CappedBody {

	private final byte @Nullable [] bytes;

	private CappedBody(byte @Nullable [] bytes) {
		this.bytes = bytes;
	}

	/**
	 * Whether the body was larger than the cap.
	 * @return {@code true} if it was (the bytes were dropped)
	 */
	boolean oversize() {
		return this.bytes == null;
	}

	/**
	 * Returns the body.
	 * @return the bytes
	 * @throws IllegalStateException when the body was oversize
	 */
	byte[] bytes() {
		if (this.bytes == null) {
			throw new IllegalStateException("the body was over the cap");
		}
		return this.bytes;
	}

	/**
	 * A body handler that reads 200 responses up to {@code maxBytes} and other responses
	 * up to {@code otherMaxBytes}. A declared {@code Content-Length} over the cap is
	 * refused without reading.
	 * @param maxBytes the cap of a 200 body
	 * @param otherMaxBytes the cap of any other body
	 * @return the handler
	 */
	static HttpResponse.BodyHandler<CappedBody> handler(int maxBytes, int otherMaxBytes) {
		return info -> {
			int cap = (info.statusCode() == 200) ? maxBytes : otherMaxBytes;
			long declared = info.headers().firstValueAsLong("Content-Length").orElse(-1);
			return new Subscriber(cap, declared > cap);
		};
	}

	private static final class Subscriber implements HttpResponse.BodySubscriber<CappedBody> {

		private final int cap;

		private final boolean refuse;

		private final CompletableFuture<CappedBody> result = new CompletableFuture<>();

		private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

		private Flow.@Nullable Subscription subscription;

		Subscriber(int cap, boolean refuse) {
			this.cap = cap;
			this.refuse = refuse;
		}

		@Override
		public CompletionStage<CappedBody> getBody() {
			return this.result;
		}

		@Override
		public void onSubscribe(Flow.Subscription subscription) {
			this.subscription = subscription;
			if (this.refuse) {
				overflow();
			}
			else {
				subscription.request(Long.MAX_VALUE);
			}
		}

		@Override
		public void onNext(List<ByteBuffer> buffers) {
			if (this.result.isDone()) {
				return;
			}
			for (ByteBuffer buffer : buffers) {
				if ((long) this.buffer.size() + buffer.remaining() > this.cap) {
					overflow();
					return;
				}
				byte[] chunk = new byte[buffer.remaining()];
				buffer.get(chunk);
				this.buffer.writeBytes(chunk);
			}
		}

		private void overflow() {
			Flow.Subscription current = this.subscription;
			if (current != null) {
				current.cancel();
			}
			this.buffer.reset();
			this.result.complete(new CappedBody(null));
		}

		@Override
		public void onError(Throwable throwable) {
			this.result.completeExceptionally(throwable);
		}

		@Override
		public void onComplete() {
			this.result.complete(new CappedBody(this.buffer.toByteArray()));
		}

	}

}
