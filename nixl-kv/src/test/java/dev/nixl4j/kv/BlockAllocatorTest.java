package dev.nixl4j.kv;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Reference counting of blocks, and the errors that leave every count as it was.
 */
class BlockAllocatorTest {

	private final BlockAllocator allocator = new BlockAllocator(8);

	@Test
	void aFreshAllocatorHandsOutContiguousBlocksWithOneReference() {
		assertThat(this.allocator.allocate(3)).containsExactly(0, 1, 2);
		assertThat(this.allocator.freeCount()).isEqualTo(5);
		assertThat(this.allocator.references(1)).isOne();
		assertThat(this.allocator.references(5)).isZero();
	}

	@Test
	void aBlockIsFreedWhenItsLastReferenceGoes() {
		int[] blocks = this.allocator.allocate(2);
		this.allocator.retain(blocks);

		assertThat(this.allocator.release(blocks)).isZero();
		assertThat(this.allocator.freeCount()).isEqualTo(6);
		assertThat(this.allocator.release(blocks)).isEqualTo(2);
		assertThat(this.allocator.freeCount()).isEqualTo(8);
		assertThat(this.allocator.allocate(2)).containsExactlyInAnyOrder(blocks);
	}

	@Test
	void aDoubleReleaseIsRefusedAndChangesNothing() {
		int[] blocks = this.allocator.allocate(2);
		this.allocator.release(blocks[0]);

		assertInvalid(() -> this.allocator.release(blocks[1], blocks[0]), "block 0 is already free (double release)");
		assertThat(this.allocator.references(blocks[1])).isOne();
		assertInvalid(() -> this.allocator.release(blocks[1], blocks[1]), "released 2 times but holds 1 references");
		assertThat(this.allocator.references(blocks[1])).isOne();
	}

	@Test
	void unknownIdsAreRefusedAndChangeNothing() {
		int[] blocks = this.allocator.allocate(1);

		assertInvalid(() -> this.allocator.release(blocks[0], 8), "unknown block id 8: ids run from 0 to 7");
		assertInvalid(() -> this.allocator.retain(blocks[0], -1), "unknown block id -1");
		assertInvalid(() -> this.allocator.retain(blocks[0], 5), "block 5 is free");
		assertThat(this.allocator.references(blocks[0])).isOne();
		assertInvalid(() -> this.allocator.allocate(0), "must be positive");
	}

	@Test
	void askingForMoreThanIsFreeTakesNothing() {
		this.allocator.allocate(6);

		assertThatThrownBy(() -> this.allocator.allocate(3))
			.isInstanceOfSatisfying(NixlException.class, ex -> assertThat(ex.status()).isEqualTo(NixlStatus.BUSY))
			.hasMessageContaining("3 blocks asked for, only 2 of 8 free");
		assertThat(this.allocator.freeCount()).isEqualTo(2);
	}

	private static void assertInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
		assertThatThrownBy(call)
			.isInstanceOfSatisfying(NixlException.class,
					ex -> assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM))
			.hasMessageContaining(message);
	}

	@Test
	void everyAllocationOfABlockBumpsItsGenerationAndTheDigest() {
		assertThat(this.allocator.generation(3)).isZero();
		int[] blocks = this.allocator.allocate(4);
		long[] first = this.allocator.generations(blocks);
		long digest = this.allocator.generationDigest(blocks);
		assertThat(first).containsExactly(1, 1, 1, 1);
		this.allocator.retain(blocks);
		this.allocator.release(blocks);
		assertThat(this.allocator.generationDigest(blocks)).as("retain and release keep the generation")
			.isEqualTo(digest);

		this.allocator.release(blocks[2]);
		assertThat(this.allocator.allocate(1)).containsExactly(blocks[2]);

		assertThat(this.allocator.generation(blocks[2])).isEqualTo(2);
		assertThat(this.allocator.generationDigest(blocks)).isNotEqualTo(digest).isNotZero();
	}

	@Test
	void aReleaseOfAGenerationSkipsBlocksHandedOutAgain() {
		int[] blocks = this.allocator.allocate(2);
		long[] generations = this.allocator.generations(blocks);
		this.allocator.retain(blocks);
		this.allocator.release(blocks[0]);
		this.allocator.release(blocks[0]);
		assertThat(this.allocator.allocate(1)).containsExactly(blocks[0]);

		assertThat(this.allocator.releaseOfGeneration(blocks, generations)).isOne();

		assertThat(this.allocator.references(blocks[0])).isOne();
		assertThat(this.allocator.references(blocks[1])).isOne();
	}

}
