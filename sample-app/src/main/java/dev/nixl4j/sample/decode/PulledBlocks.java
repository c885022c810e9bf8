package dev.nixl4j.sample.decode;

import java.util.zip.CRC32C;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.ToyModel;

import org.springframework.http.HttpStatus;

/**
 * The sample's own check of pulled blocks, beyond the library's: every byte is what the
 * toy model derives from the prompt, and the CRC32C of all of them is the prefill
 * worker's.
 */
final class PulledBlocks {

	private PulledBlocks() {
	}

	/**
	 * Checks the local blocks of a request.
	 * @return the CRC32C of the blocks, region by region, blocks in token order
	 * @throws SampleException 502 naming the first wrong byte or the CRC mismatch
	 */
	static long verify(ToyModel model, PagedKvCache cache, int[] local, int[] tokens, String requestId,
			long expectedCrc) {
		CRC32C crc = new CRC32C();
		KvCacheLayout layout = cache.layout();
		for (int region = 0; region < layout.regionCount(); region++) {
			for (int b = 0; b < local.length; b++) {
				var block = cache.block(region, local[b]);
				String wrong = model.check(block, region, tokens, b);
				if (wrong != null) {
					throw new SampleException(HttpStatus.BAD_GATEWAY, "KV blocks corrupted",
							"request '" + requestId + "': the pulled KV data is not what its prompt gives: " + wrong);
				}
				crc.update(block.asByteBuffer());
			}
		}
		if (crc.getValue() != expectedCrc) {
			throw new SampleException(HttpStatus.BAD_GATEWAY, "KV blocks corrupted",
					"request '" + requestId + "': CRC32C of the pulled blocks differs from the prefill worker's");
		}
		return crc.getValue();
	}

}
