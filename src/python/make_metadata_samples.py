#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Produce real NIXL agent metadata blobs as test fixtures for MetadataFramingTest.

Usage: make_metadata_samples.py [LIBNIXL_CAPI] [OUTPUT_DIR]

LIBNIXL_CAPI defaults to ~/.cache/nixl4j/current/lib/libnixl_capi.so (installed by
src/native/fetch-nixl.sh); OUTPUT_DIR defaults to nixl-test-support/src/main/resources/metadata
next to this script's project. Every blob comes from nixl_capi_get_local_md or
nixl_capi_get_local_partial_md of a live agent with the UCX backend, so the fixtures
follow the exact serialization of the library version that is installed. The memory
keys inside belong to this (short-lived) process and are worthless afterwards.
"""

import ctypes as C
import os
import sys
from pathlib import Path

P = C.c_void_p
MIB = 1 << 20
DRAM_SEG = 0


class AgentConfig(C.Structure):
	# nixl_capi_agent_config_t as of NIXL 1.5.1.
	_fields_ = [
		("enable_prog_thread", C.c_bool),
		("enable_listen_thread", C.c_bool),
		("listen_port", C.c_int),
		("thread_sync", C.c_int),
		("num_workers", C.c_uint),
		("pthr_delay_us", C.c_uint64),
		("lthr_delay_us", C.c_uint64),
		("capture_telemetry", C.c_bool),
	]


class Nixl:

	def __init__(self, path):
		self.lib = C.CDLL(path)
		self.buffers = []  # registered memory must outlive the agents that describe it

	def check(self, status, what):
		if status != 0:
			raise RuntimeError(f"{what} failed with status {status}")

	def agent(self, name, backends=("UCX",)):
		agent = P()
		config = AgentConfig(False, False, 0, 1, 1, 0, 0, False)
		self.check(self.lib.nixl_capi_create_configured_agent(name.encode(), C.byref(config), C.byref(agent)),
				f"create agent {name!r}")
		handles = {}
		for backend in backends:
			mems, params, handle = P(), P(), P()
			self.check(self.lib.nixl_capi_get_plugin_params(agent, backend.encode(), C.byref(mems), C.byref(params)),
					f"plugin params {backend}")
			self.check(self.lib.nixl_capi_create_backend(agent, backend.encode(), params, C.byref(handle)),
					f"create backend {backend}")
			handles[backend] = handle
		return agent, handles

	def dram(self, size):
		buffer = C.create_string_buffer(size)
		self.buffers.append(buffer)
		return C.addressof(buffer)

	def reg_dlist(self, regions):
		dlist = P()
		self.check(self.lib.nixl_capi_create_reg_dlist(DRAM_SEG, C.byref(dlist)), "create reg dlist")
		for addr, length, dev_id in regions:
			self.check(self.lib.nixl_capi_reg_dlist_add_desc(dlist, C.c_size_t(addr), C.c_size_t(length),
					C.c_uint64(dev_id), None, C.c_size_t(0)), "add desc")
		return dlist

	def opt_args(self, backends):
		if not backends:
			return None
		opt = P()
		self.check(self.lib.nixl_capi_create_opt_args(C.byref(opt)), "create opt args")
		for handle in backends:
			self.check(self.lib.nixl_capi_opt_args_add_backend(opt, handle), "opt args add backend")
		return opt

	def register(self, agent, regions, backends=()):
		self.check(self.lib.nixl_capi_register_mem(agent, self.reg_dlist(regions), self.opt_args(backends)),
				"register mem")

	def local_md(self, agent):
		data, length = P(), C.c_size_t()
		self.check(self.lib.nixl_capi_get_local_md(agent, C.byref(data), C.byref(length)), "get local md")
		return C.string_at(data, length.value)

	def partial_md(self, agent, regions, backends=()):
		data, length = P(), C.c_size_t()
		self.check(self.lib.nixl_capi_get_local_partial_md(agent, self.reg_dlist(regions), C.byref(data),
				C.byref(length), self.opt_args(backends)), "get local partial md")
		return C.string_at(data, length.value)


def regions(nixl, sizes, dev_id=0):
	return [(nixl.dram(size), size, dev_id) for size in sizes]


def main():
	root = Path(__file__).resolve().parents[2]
	lib = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/nixl4j/current/lib/libnixl_capi.so")
	out = Path(sys.argv[2]) if len(sys.argv) > 2 else root / "nixl-test-support/src/main/resources/metadata"
	out.mkdir(parents=True, exist_ok=True)
	nixl = Nixl(lib)
	samples = {}

	agent, _ = nixl.agent("empty-agent")
	samples["no-registrations"] = nixl.local_md(agent)

	agent, _ = nixl.agent("one-dram")
	nixl.register(agent, regions(nixl, [MIB]))
	samples["one-dram-1mib"] = nixl.local_md(agent)

	agent, _ = nixl.agent("three-dram")
	nixl.register(agent, regions(nixl, [4096, 64 * 1024, 3 * MIB]))
	samples["three-dram"] = nixl.local_md(agent)

	# Two registration calls and a non-zero device id: the section still merges all regions.
	agent, _ = nixl.agent("seventeen-dram")
	nixl.register(agent, regions(nixl, [4096 * (i + 1) for i in range(10)]))
	nixl.register(agent, regions(nixl, [8192 * (i + 1) for i in range(7)], dev_id=3))
	samples["seventeen-dram"] = nixl.local_md(agent)

	agent, handles = nixl.agent("partial")
	registered = regions(nixl, [MIB, 2 * MIB, 4096])
	nixl.register(agent, registered)
	samples["partial-two-of-three"] = nixl.partial_md(agent, registered[:2])
	samples["partial-one-with-backend"] = nixl.partial_md(agent, registered[2:], [handles["UCX"]])
	# An empty dlist is how partial metadata carries connection info alone.
	samples["partial-empty-dlist"] = nixl.partial_md(agent, [])
	samples["partial-empty-dlist-with-backend"] = nixl.partial_md(agent, [], [handles["UCX"]])

	agent, _ = nixl.agent("agent-" + "x" * 1018)
	nixl.register(agent, regions(nixl, [MIB]))
	samples["long-name-1024"] = nixl.local_md(agent)

	agent, _ = nixl.agent("prefill-worker-\u00e9\u00e8-\u4e2d\u6587-7")
	nixl.register(agent, regions(nixl, [MIB]))
	samples["utf8-name"] = nixl.local_md(agent)

	for name, blob in samples.items():
		(out / f"{name}.bin").write_bytes(blob)
		print(f"{name}.bin: {len(blob)} bytes")


if __name__ == "__main__":
	main()
