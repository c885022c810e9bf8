package dev.nixl4j.cli;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.readiness.Patterns;

/**
 * {@code nixl4j bench}: bandwidth and latency of DRAM-to-DRAM READ and WRITE between two agents,
 * in nixlbench's columns.
 */
final class BenchCommand implements Command {

	@Override
	public String name() {
		return "bench";
	}

	@Override
	public String summary() {
		return "nixlbench-style bandwidth and latency table, DRAM to DRAM, READ and WRITE";
	}

	@Override
	public String help() {
		return """
				Usage: nixl4j bench [options] [agent options]

				Measures transfers between two agents, both in this JVM (--processes 1) or the target
				in a child JVM started here, metadata exchanged over its pipe (--processes 2). Memory
				is registered once; per block size the descriptor lists are prepared once, a transfer
				is made from them and posted repeatedly. After each block size the destination is
				compared with the source (CRC32C); a failed comparison fails the run.

				  --op read|write|both      directions (default both: WRITE then READ)
				  --min-block SIZE          smallest block (default 4k); sizes double up to
				  --max-block SIZE          the largest block (default 64m)
				  --batch N                 blocks per transfer (default 1)
				  --iterations N            timed posts per block size (default 1000, nixlbench's)
				  --warmup N                untimed posts before them (default 100, nixlbench's)
				  --large-block-factor N    blocks above 1 MiB run iterations/N and warmup/N posts
				                            (default 16, nixlbench's large_blk_iter_ftr); with the
				                            defaults a full run of both directions takes well under a
				                            minute on 2 cores
				  --processes 1|2           target agent in this JVM or in a child JVM (default 1)
				  --json                    print one JSON document instead of tables

				Columns, as nixlbench's: B/W = bytes of the timed posts / their wall time (GB = 10^9
				bytes); Avg Lat. = that wall time / (iterations x batch); Prep = making a transfer from
				the prepared lists (up to 100 samples); Post = time inside post(); Tx = from the return
				of post() to completion (0 when NIXL finished inside post()); Med Post-to-Done = median
				time from calling post() to completion, the latency a caller sees.

				""" + AgentOptions.HELP;
	}

	@Override
	public Set<String> valuedOptions() {
		Set<String> options = new HashSet<>(AgentOptions.NAMES);
		options.addAll(BenchOptions.VALUED);
		return options;
	}

	@Override
	public Set<String> flagOptions() {
		return Set.of(BenchOptions.JSON);
	}

	@Override
	public int run(Arguments arguments, PrintStream out) throws Exception {
		BenchOptions options = BenchOptions.from(arguments);
		String base = "nixl4j-bench-" + ProcessHandle.current().pid();
		AgentConfig config = AgentOptions.config(arguments, base + "-initiator");
		long size = options.maxBlock() * options.batch();
		try (Arena arena = Arena.ofShared();
				NixlAgent initiator = NixlAgent.create(config);
				BenchTarget target = (options.processes() == 1)
						? new LocalBenchTarget(config.toBuilder().name(base + "-target").build(), size)
						: new ChildBenchTarget(base + "-target", size, AgentOptions.tokens(arguments))) {
			MemorySegment local = arena.allocate(size, 4096);
			Patterns.fill(local, 0);
			initiator.register(local);
			initiator.loadRemoteMetadata(target.metadata());
			BenchReport report = new BenchReport(options, config, initiator.engineDescription());
			List<BenchRow> rows = new BenchRunner(options, initiator, local, target).run(row -> {
				if (!options.json()) {
					report.printRow(row, out);
				}
			});
			if (options.json()) {
				out.println(report.json(rows));
			}
			boolean verified = rows.stream().allMatch(BenchRow::verified);
			if (!verified && !options.json()) {
				out.println("bench: the destination did not hold the source's bytes after some runs (marked above)");
			}
			return verified ? Nixl4jCli.EXIT_OK : Nixl4jCli.EXIT_FAILURE;
		}
	}

}
