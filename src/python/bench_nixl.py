#!/usr/bin/env python3
"""NIXL's own Python API measured the way `bin/nixl4j bench --processes 1` measures nixl4j.

Two agents in this process, the UCX backend, DRAM to DRAM, WRITE then READ, block sizes from
--min-block doubling up to --max-block. Memory is registered once; per block size the
descriptor lists are prepared once (prep_xfer_dlist), a transfer is made from them
(make_prepped_xfer, timed as "Prep") and posted again and again (transfer(), timed as "Post";
the rest until check_xfer_state() returns DONE, busy-polling, as "Tx"). "Med Post-to-Done" is
the median from calling transfer() to DONE, the latency a caller sees. After each block size
the destination is compared with the source (CRC32); a failed comparison fails the run.

The columns, their meaning and the options are those of nixl4j's bench, so that the two tables
can be read side by side. The agents use nixl_agent_config's defaults (progress thread on,
NIXL's Python default), as an application of the `nixl` package would.

Usage (the venv is made by src/python/install-python-nixl.sh):

  ~/.cache/nixl4j/python-venv/bin/python src/python/bench_nixl.py \
      --min-block 4k --max-block 4k --iterations 20000 --warmup 1000

  beside
  bin/nixl4j bench --engine native --processes 1 --min-block 4k --max-block 4k \
      --iterations 20000 --warmup 1000

Exit codes: 0 every transfer verified, 1 a transfer or its verification failed, 2 usage error.
"""

import argparse
import os
import statistics
import sys
import time
import zlib

# UCX's InfiniBand modules crash at exit on hosts without RDMA devices (a second libnl in the
# process); nixl4j sets the same default before it loads NIXL.
if not os.path.exists("/sys/class/infiniband") or not os.listdir("/sys/class/infiniband"):
    os.environ.setdefault("UCX_MODULES", "^ib")

import numpy as np  # noqa: E402
from nixl_cu12._api import nixl_agent, nixl_agent_config  # noqa: E402

COLUMNS = ["Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "Avg Prep (us)",
           "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)",
           "Med Post-to-Done (us)"]
WIDTHS = [20, 15, 15, 15, 15, 15, 15, 15, 15, 15, 22]
LARGE_BLOCK = 1 << 20
PREP_SAMPLES = 100
MAX_TRANSFER = 1 << 34
DEADLINE_NS = 60 * 1_000_000_000
# check_xfer_state calls between two looks at the clock while waiting for a transfer
POLLS_PER_CLOCK = 1024
UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def byte_size(text):
    value = text.strip().lower()
    if value.endswith("ib"):
        value = value[:-2]
    unit = value[-1:] if value[-1:] in UNITS and not value[-1:].isdigit() else ""
    number = value[: len(value) - len(unit)]
    if not number.isdigit() or int(number) <= 0:
        raise argparse.ArgumentTypeError(f"not a positive size: {text!r} (examples: 4096, 4k, 64m)")
    return int(number) * UNITS[unit]


def count(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: {text!r}")
        return value
    return parse


def pattern(size, seed):
    i = np.arange(size, dtype=np.uint64)
    return ((i * np.uint64(31) + (i >> np.uint64(8)) + np.uint64(seed)) & np.uint64(0xFF)).astype(np.uint8)


def percentile_us(samples, fraction):
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, int(np.ceil(fraction * len(ordered))) - 1))
    return ordered[index] / 1000.0


def mean_us(samples):
    return sum(samples) / len(samples) / 1000.0


def wait(agent, handle, state):
    polls = 0
    deadline = None
    while state == "PROC":
        state = agent.check_xfer_state(handle)
        polls += 1
        if polls % POLLS_PER_CLOCK == 0:
            now = time.perf_counter_ns()
            deadline = deadline or now + DEADLINE_NS
            if now > deadline:
                raise RuntimeError(f"a transfer did not complete within {DEADLINE_NS // 1_000_000_000} s")
    if state != "DONE":
        raise RuntimeError(f"a transfer failed: state {state}")


def descriptors(base, block, batch):
    return [(base + i * block, block, 0) for i in range(batch)]


def measure(args, op, block, initiator, target_name, local, remote):
    batch = args.batch
    size = block * batch
    seed = block * 4 + (1 if op == "READ" else 0) + 1
    # a fresh pattern at the source makes the check below fail unless this run moved the data
    source = local if op == "WRITE" else remote
    source[:size] = pattern(size, seed)
    large = block > LARGE_BLOCK
    iterations = max(1, args.iterations // args.large_block_factor) if large else args.iterations
    warmup = args.warmup // args.large_block_factor if large else args.warmup
    local_list = initiator.prep_xfer_dlist("NIXL_INIT_AGENT", descriptors(local.ctypes.data, block, batch), "DRAM")
    remote_list = initiator.prep_xfer_dlist(target_name, descriptors(remote.ctypes.data, block, batch), "DRAM")
    indices = list(range(batch))
    prep = []
    handle = None
    try:
        for _ in range(min(PREP_SAMPLES, iterations)):
            if handle is not None:
                initiator.release_xfer_handle(handle)
            start = time.perf_counter_ns()
            handle = initiator.make_prepped_xfer(op, local_list, indices, remote_list, indices)
            prep.append(time.perf_counter_ns() - start)
        for _ in range(warmup):
            wait(initiator, handle, initiator.transfer(handle))
        post, tx, post_to_done = [0] * iterations, [0] * iterations, [0] * iterations
        clock = time.perf_counter_ns
        transfer = initiator.transfer
        begin = clock()
        for i in range(iterations):
            start = clock()
            state = transfer(handle)
            posted = clock()
            wait(initiator, handle, state)
            done = clock()
            post[i] = posted - start
            tx[i] = done - posted
            post_to_done[i] = done - start
        wall = clock() - begin
    finally:
        if handle is not None:
            initiator.release_xfer_handle(handle)
        initiator.release_dlist_handle(local_list)
        initiator.release_dlist_handle(remote_list)
    verified = zlib.crc32(local[:size].tobytes()) == zlib.crc32(remote[:size].tobytes())
    return [block, batch, size * iterations / wall, wall / 1000.0 / (iterations * batch), mean_us(prep),
            percentile_us(prep, 0.99), mean_us(post), percentile_us(post, 0.99), mean_us(tx),
            percentile_us(tx, 0.99), statistics.median(post_to_done) / 1000.0], verified


def row_text(cells):
    formats = ["{}", "{}", "{:.3f}"] + ["{:.2f}"] * 8
    line = "".join(f.format(c).ljust(w) if len(f.format(c)) < w else f.format(c) + " "
                   for f, c, w in zip(formats, cells, WIDTHS))
    return line.rstrip()


def block_sizes(args):
    size = args.min_block
    while size <= args.max_block:
        yield size
        size *= 2


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", choices=["read", "write", "both"], default="both",
                        help="directions (default both: WRITE then READ)")
    parser.add_argument("--min-block", type=byte_size, default=byte_size("4k"),
                        help="smallest block (default 4k); sizes double up to --max-block")
    parser.add_argument("--max-block", type=byte_size, default=byte_size("64m"), help="largest block (default 64m)")
    parser.add_argument("--batch", type=count(1), default=1, help="blocks per transfer (default 1)")
    parser.add_argument("--iterations", type=count(1), default=1000, help="timed posts per block size (default 1000)")
    parser.add_argument("--warmup", type=count(0), default=100, help="untimed posts before them (default 100)")
    parser.add_argument("--large-block-factor", type=count(1), default=16,
                        help="blocks above 1 MiB run iterations/N and warmup/N posts (default 16)")
    args = parser.parse_args()
    if args.max_block < args.min_block:
        parser.error("--max-block must not be smaller than --min-block")
    if args.max_block > MAX_TRANSFER // args.batch:
        parser.error("a transfer of --max-block x --batch bytes does not fit in memory here")
    ops = {"read": ["READ"], "write": ["WRITE"], "both": ["WRITE", "READ"]}[args.op]

    base = f"nixl-python-bench-{os.getpid()}"
    size = args.max_block * args.batch
    initiator = nixl_agent(base + "-initiator", nixl_agent_config(backends=["UCX"]))
    target = nixl_agent(base + "-target", nixl_agent_config(backends=["UCX"]))
    local = np.zeros(size, dtype=np.uint8)
    remote = np.zeros(size, dtype=np.uint8)
    local_reg = initiator.register_memory([(local.ctypes.data, size, 0, "")], "DRAM")
    remote_reg = target.register_memory([(remote.ctypes.data, size, 0, "")], "DRAM")
    target_name = initiator.add_remote_agent(target.get_agent_metadata())
    target_name = target_name.decode() if isinstance(target_name, bytes) else target_name
    all_verified = True
    try:
        for op in ops:
            print()
            print(f"{op}, DRAM -> DRAM, 1 process(es), NIXL Python API (nixl_cu12), "
                  f"Python {sys.version.split()[0]}")
            print(f"backends [UCX], progress thread on (nixl_agent_config defaults), "
                  f"UCX_MODULES={os.environ.get('UCX_MODULES', '')}")
            print(f"{args.iterations} iterations ({max(1, args.iterations // args.large_block_factor)} above 1 MiB), "
                  f"{args.warmup} warm-up ({args.warmup // args.large_block_factor} above 1 MiB)")
            header = "".join(c.ljust(w) for c, w in zip(COLUMNS, WIDTHS)).rstrip()
            print(header)
            print("-" * len(header))
            for block in block_sizes(args):
                cells, verified = measure(args, op, block, initiator, target_name, local, remote)
                all_verified &= verified
                print(row_text(cells) + ("" if verified else "  VERIFICATION FAILED"), flush=True)
    finally:
        initiator.remove_remote_agent(target_name)
        initiator.deregister_memory(local_reg)
        target.deregister_memory(remote_reg)
    if not all_verified:
        print("bench_nixl: the destination did not hold the source's bytes after some runs (marked above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
