#!/usr/bin/env python3
"""A peer for nixl4j's connect layer, written against NIXL's own Python API (nixl_cu12).

It speaks Dynamo's nixl_connect RdmaMetadata JSON: descriptors (device/ptr/size),
nixl_metadata = "b64:" + base64(zlib(agent metadata)) (the older hex form is accepted when
reading), notification_key, operation_kind (1 READ, 2 WRITE).

Modes (the protocol is one line per message on stdout; logs go to stderr):

  readable  register a host buffer filled with a deterministic pattern, print its RdmaMetadata
            JSON on one line, wait for the notification whose payload is the key, then print
            "NOTIFIED <agent>" and exit 0 (exit 3 on timeout).
            With --json-only: print the JSON and exit without waiting.
  writable  the same with operation_kind WRITE; on the notification prints
            "NOTIFIED <agent> crc32=<crc of the buffer>".
  read      read RdmaMetadata JSON (argument --metadata, else one stdin line), READ the
            descriptors into a local buffer with the key as notification, print
            "READ size=<n> crc32=<crc> pattern=<seed|none>", then wait for "QUIT" or EOF on stdin
            so that the notification leaves before the agent is destroyed.
  write     the same as read, but WRITEs a local buffer filled with --seed's pattern.

Pattern: byte i of a buffer filled with seed s is (i * 31 + (i >> 8) + s) & 0xff.
"""

import argparse
import base64
import binascii
import json
import logging
import os
import sys
import time
import uuid
import zlib

# UCX's InfiniBand modules crash at exit on hosts without RDMA devices (a second libnl in the
# process); nixl4j sets the same default before it loads NIXL.
if not os.path.exists("/sys/class/infiniband") or not os.listdir("/sys/class/infiniband"):
    os.environ.setdefault("UCX_MODULES", "^ib")

import numpy as np  # noqa: E402
from nixl_cu12._api import nixl_agent, nixl_agent_config  # noqa: E402

# NIXL's Python logger writes to stdout, which carries this peer's protocol: move it to stderr.
for _handler in logging.getLogger("nixl").handlers:
    if isinstance(_handler, logging.StreamHandler):
        _handler.setStream(sys.stderr)

MAX_METADATA_BYTES = 16 << 20
KEYS = {"descriptors", "nixl_metadata", "notification_key", "operation_kind"}
DESCRIPTOR_KEYS = {"device", "ptr", "size"}


def log(message):
    print(f"connect_peer: {message}", file=sys.stderr, flush=True)


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def pattern(size, seed):
    i = np.arange(size, dtype=np.uint64)
    return ((i * np.uint64(31) + (i >> np.uint64(8)) + np.uint64(seed)) & np.uint64(0xFF)).astype(np.uint8)


def matching_seed(buffer, seed):
    return seed is not None and np.array_equal(buffer, pattern(buffer.size, seed))


def encode_metadata(metadata):
    return "b64:" + base64.b64encode(zlib.compress(metadata)).decode("ascii")


def decode_metadata(field, hex_form=False):
    if field.startswith("b64:"):
        compressed = base64.b64decode(field[4:], validate=True)
    else:
        compressed = binascii.unhexlify(field)
    inflater = zlib.decompressobj()
    metadata = inflater.decompress(compressed, MAX_METADATA_BYTES + 1)
    if len(metadata) > MAX_METADATA_BYTES or inflater.unconsumed_tail:
        raise ValueError(f"nixl_metadata decompresses to more than {MAX_METADATA_BYTES} bytes")
    if not inflater.eof:
        raise ValueError("nixl_metadata is a truncated zlib stream")
    return metadata


def parse_rdma_metadata(text):
    value = json.loads(text)
    if not isinstance(value, dict) or set(value) != KEYS:
        raise ValueError(f"RdmaMetadata must have exactly the keys {sorted(KEYS)}")
    descriptors = []
    for entry in value["descriptors"]:
        if set(entry) != DESCRIPTOR_KEYS or entry["device"] != "cpu":
            raise ValueError("this peer reads host (\"cpu\") descriptors with device/ptr/size only")
        if entry["ptr"] == 0 or entry["size"] <= 0:
            raise ValueError("descriptor ptr must not be 0 and size must be positive")
        descriptors.append((int(entry["ptr"]), int(entry["size"]), 0))
    if not descriptors:
        raise ValueError("descriptors must not be empty")
    return descriptors, decode_metadata(value["nixl_metadata"]), value["notification_key"], value["operation_kind"]


def new_agent(name):
    return nixl_agent(name, nixl_agent_config(backends=["UCX"]))


def passive(args, operation_kind):
    agent = new_agent(args.name)
    buffer = pattern(args.size, args.seed) if operation_kind == 1 else np.zeros(args.size, dtype=np.uint8)
    address = buffer.ctypes.data
    piece = args.size // args.descriptors
    regions = []
    for i in range(args.descriptors):
        size = piece if i < args.descriptors - 1 else args.size - piece * (args.descriptors - 1)
        regions.append((address + i * piece, size, 0, ""))
    registered = agent.register_memory(regions, "DRAM")
    key = uuid.uuid4().hex
    metadata = {
        "descriptors": [{"device": "cpu", "ptr": r[0], "size": r[1]} for r in regions],
        "nixl_metadata": encode_metadata(agent.get_agent_metadata()),
        "notification_key": key,
        "operation_kind": operation_kind,
    }
    say(json.dumps(metadata, separators=(",", ":")))
    if args.json_only:
        agent.deregister_memory(registered)
        return 0
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        for sender, messages in agent.get_new_notifs().items():
            for message in messages:
                if message == key.encode():
                    agent.deregister_memory(registered)
                    if operation_kind == 1:
                        say(f"NOTIFIED {sender}")
                    else:
                        say(f"NOTIFIED {sender} crc32={zlib.crc32(buffer.tobytes())}")
                    return 0
                log(f"ignoring a notification of {len(message)} bytes from {sender}")
        time.sleep(0.001)
    agent.deregister_memory(registered)
    say("TIMEOUT")
    return 3


def active(args, op):
    text = args.metadata if args.metadata is not None else sys.stdin.readline()
    descriptors, metadata, key, operation_kind = parse_rdma_metadata(text)
    expected = 1 if op == "READ" else 2
    if operation_kind != expected:
        raise ValueError(f"a {op} pairs only with operation_kind {expected}, got {operation_kind}")
    size = sum(d[1] for d in descriptors)
    buffer = pattern(size, args.seed) if op == "WRITE" else np.zeros(size, dtype=np.uint8)
    address = buffer.ctypes.data
    local, offset = [], 0
    for _, length, _ in descriptors:
        local.append((address + offset, length, 0))
        offset += length
    agent = new_agent(args.name)
    registered = agent.register_memory([(a, n, d, "") for a, n, d in local], "DRAM")
    peer = agent.add_remote_agent(metadata)
    peer = peer.decode() if isinstance(peer, bytes) else peer
    handle = agent.initialize_xfer(op, agent.get_xfer_descs(local, "DRAM"), agent.get_xfer_descs(descriptors, "DRAM"),
                                   peer, key.encode())
    state = agent.transfer(handle)
    deadline = time.monotonic() + args.timeout
    while state == "PROC" and time.monotonic() < deadline:
        time.sleep(0.0005)
        state = agent.check_xfer_state(handle)
    if state != "DONE":
        say(f"FAILED {op} state={state}")
        return 4
    seed = args.expect_seed if op == "READ" else args.seed
    crc = zlib.crc32(buffer.tobytes())
    say(f"{op} size={size} crc32={crc} pattern={seed if matching_seed(buffer, seed) else 'none'}")
    # keep the agent until told: UCX may still be sending the notification
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        line = sys.stdin.readline()
        if not line or line.strip() == "QUIT":
            break
    agent.release_xfer_handle(handle)
    agent.remove_remote_agent(peer)
    agent.deregister_memory(registered)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["readable", "writable", "read", "write"])
    parser.add_argument("--name", default=f"python-peer-{os.getpid()}")
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--descriptors", type=int, default=1)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--expect-seed", type=int, default=None)
    parser.add_argument("--metadata", default=None, help="RdmaMetadata JSON (default: one line of stdin)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--json-only", action="store_true", help="print a readable's JSON and exit")
    args = parser.parse_args()
    if args.mode == "readable":
        return passive(args, 1)
    if args.mode == "writable":
        return passive(args, 2)
    return active(args, args.mode.upper())


if __name__ == "__main__":
    sys.exit(main())
