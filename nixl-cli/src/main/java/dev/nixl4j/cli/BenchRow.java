package dev.nixl4j.cli;

import dev.nixl4j.XferOp;

/**
 * One line of the benchmark: one direction and block size, in nixlbench's columns plus
 * the median time from post to completion.
 *
 * @param op the direction
 * @param blockSize bytes per block
 * @param batchSize blocks per transfer
 * @param iterations timed posts
 * @param warmup untimed posts before them
 * @param bandwidthGBps bytes moved by the timed posts divided by their wall time, in 10^9
 * bytes per second
 * @param avgLatencyUs wall time of the timed posts divided by iterations x batch size
 * (nixlbench's "Avg Lat.", per block)
 * @param avgPrepUs mean time to create a transfer from the prepared lists
 * @param p99PrepUs 99th percentile of that time
 * @param avgPostUs mean time spent inside {@code post()}
 * @param p99PostUs 99th percentile of that time
 * @param avgTxUs mean time from the return of {@code post()} to completion
 * @param p99TxUs 99th percentile of that time
 * @param medianPostToCompletionUs median time from the call of {@code post()} to
 * completion
 * @param allocatedPerPost bytes the benchmark thread allocated per timed post, -1 when
 * unknown
 * @param progressAllocatedPerPost bytes the initiator's progress thread allocated per
 * timed post, -1 when unknown
 * @param verified whether the destination held the source's bytes afterwards
 */
record BenchRow(XferOp op, long blockSize, int batchSize, int iterations, int warmup, double bandwidthGBps,
		double avgLatencyUs, double avgPrepUs, double p99PrepUs, double avgPostUs, double p99PostUs, double avgTxUs,
		double p99TxUs, double medianPostToCompletionUs, long allocatedPerPost, long progressAllocatedPerPost,
		boolean verified) {
}
