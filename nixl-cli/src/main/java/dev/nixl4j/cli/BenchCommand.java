package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.List;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.XferOp;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j bench}: bandwidth and latency of DRAM-to-DRAM READ and WRITE between two
 * agents, in nixlbench's columns.
 */
@Command(name = "bench", description = {
		"nixlbench-style bandwidth and latency table, DRAM to DRAM (or VRAM to VRAM), " + "READ and WRITE.", "",
		"Measures transfers between two agents, both in this JVM (--processes 1) or the target in a child JVM "
				+ "started here, metadata exchanged over its pipe (--processes 2). Memory is registered once; per "
				+ "block size the descriptor lists are prepared once, a transfer is made from them and posted "
				+ "repeatedly. After each block size the destination is compared with the source (CRC32C); a "
				+ "failed comparison fails the run.",
		"",
		"--memory vram puts both sides' memory on CUDA device 0 (dev.nixl4j.cuda), filled and checked through "
				+ "a host copy. Where no CUDA driver, runtime or device is found it moves nothing and exits with "
				+ "status 5, naming what was missing; 'nixl4j info' says what was looked for." },
		footer = { "%nColumns, as nixlbench's: B/W = bytes of the timed posts / their wall time (GB = 10^9 bytes); "
				+ "Avg Lat. = that wall time / (iterations x batch); Prep = making a transfer from the prepared lists (up "
				+ "to 100 samples); Post = the time inside post(); Tx = from the return of post() to its completion (0 when "
				+ "NIXL finished inside post()); Med Post-to-Done = median time from calling post() to completion, the "
				+ "latency a caller sees. Below each row: bytes allocated per timed post by the benchmark thread and by "
				+ "the initiator's progress thread." },
		exitCodeList = { "0:every transfer verified", "1:a transfer or its verification failed", "2:usage error",
				"3:NIXL's native library cannot be loaded", "5:--memory vram and no CUDA device or driver was found" })
final class BenchCommand extends Subcommand {

	/** The most one transfer (largest block x batch) may allocate on each side. */
	private static final long MAX_TRANSFER = 1L << 34;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--op", paramLabel = "OP", defaultValue = "both",
			description = "directions: read, write or both (default ${DEFAULT-VALUE}: WRITE then READ)")
	private Direction direction;

	@Option(names = "--min-block", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "4k",
			description = "smallest block (default ${DEFAULT-VALUE}); sizes double up to --max-block")
	private long minBlock;

	@Option(names = "--max-block", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "64m",
			description = "largest block (default ${DEFAULT-VALUE})")
	private long maxBlock;

	@Option(names = "--batch", paramLabel = "N", converter = Counts.AtLeastOne.class, defaultValue = "1",
			description = "blocks per transfer (default ${DEFAULT-VALUE})")
	private int batch;

	@Option(names = "--iterations", paramLabel = "N", converter = Counts.AtLeastOne.class, defaultValue = "1000",
			description = "timed posts per block size (default ${DEFAULT-VALUE}, nixlbench's)")
	private int iterations;

	@Option(names = "--warmup", paramLabel = "N", converter = Counts.AtLeastZero.class, defaultValue = "100",
			description = "untimed posts before them (default ${DEFAULT-VALUE}, nixlbench's)")
	private int warmup;

	@Option(names = "--large-block-factor", paramLabel = "N", converter = Counts.AtLeastOne.class, defaultValue = "16",
			description = "blocks above 1 MiB run iterations/N and warmup/N posts (default ${DEFAULT-VALUE}, nixlbench's "
					+ "large_blk_iter_ftr); with the defaults a full run of both directions takes well under a minute on "
					+ "2 cores")
	private int largeBlockFactor;

	@Option(names = "--processes", paramLabel = "1|2", defaultValue = "1",
			description = "target agent in this JVM (1) or in a child JVM (2) (default ${DEFAULT-VALUE})")
	private int processes;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--completion", paramLabel = "HOW", defaultValue = "future",
			description = "how the benchmark thread waits for each post: future (default: spins up to 50 us on the "
					+ "future post() returned, which the progress loop completes, then blocks on it) or caller "
					+ "(Transfer.await, which polls the transfer on the calling thread for up to 20 us before it "
					+ "blocks)")
	private BenchOptions.Completion completion;

	@Option(names = "--memory", paramLabel = "WHERE", defaultValue = "dram",
			description = "where both sides' memory lies: dram (default) or vram (CUDA device 0)")
	private BenchMemory.Kind memory = BenchMemory.Kind.DRAM;

	@Mixin
	private OutputOptions output = new OutputOptions();

	@Mixin
	private AgentOptions agentOptions = new AgentOptions();

	/**
	 * Returns what to measure, checking the options against each other.
	 * @return the options
	 * @throws picocli.CommandLine.ParameterException when they do not fit together
	 */
	BenchOptions options() {
		if (this.maxBlock < this.minBlock) {
			throw usageError("--max-block must not be smaller than --min-block");
		}
		if (this.maxBlock > MAX_TRANSFER / this.batch) {
			throw usageError("a transfer of --max-block x --batch bytes does not fit in memory here");
		}
		if (this.processes != 1 && this.processes != 2) {
			throw usageError("--processes takes 1 or 2");
		}
		List<XferOp> ops = switch (this.direction) {
			case READ -> List.of(XferOp.READ);
			case WRITE -> List.of(XferOp.WRITE);
			case BOTH -> List.of(XferOp.WRITE, XferOp.READ);
		};
		return new BenchOptions(ops, this.minBlock, this.maxBlock, this.batch, this.iterations, this.warmup,
				this.largeBlockFactor, this.processes, this.output.json(), this.completion, this.memory);
	}

	@Override
	public Integer call() throws Exception {
		BenchOptions options = options();
		PrintStream out = out();
		if (options.memory() == BenchMemory.Kind.VRAM) {
			String missing = BenchMemory.missingCuda();
			if (missing != null) {
				return noCuda(missing);
			}
		}
		String base = "nixl4j-bench-" + ProcessHandle.current().pid();
		AgentConfig config = this.agentOptions.config(base + "-initiator");
		long size = options.maxBlock() * options.batch();
		try (BenchMemory local = BenchMemory.allocate(options.memory(), size, false);
				NixlAgent initiator = NixlAgent.create(config);
				BenchTarget target = (options.processes() == 1)
						? new LocalBenchTarget(config.toBuilder().name(base + "-target").build(), size,
								options.memory())
						: new ChildBenchTarget(base + "-target", size, options.memory(), this.agentOptions.tokens())) {
			local.register(initiator);
			initiator.loadRemoteMetadata(target.metadata());
			BenchReport report = new BenchReport(options, config, initiator.backends(), initiator.engineDescription());
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

	/** The directions {@code --op} selects. */
	enum Direction {

		/** READ only. */
		READ,

		/** WRITE only. */
		WRITE,

		/** WRITE, then READ. */
		BOTH

	}

}
