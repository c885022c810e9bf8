#!/usr/bin/env bash
# Fetch latency of the HTTP registry and of etcd with 10, 100 and 1,000 registered agents, from 1
# and 4 threads fetching at once: one `bin/nixl4j registry-bench` run over the whole matrix, which
# prints one row per (exchange, operation, agents, threads) with p50, p99 and mean in µs and
# fetches/s. Every fetched value is checked against the bytes its agent published (exit 1
# otherwise). The HTTP registry runs in a child JVM; etcd (Debian's etcd-server, see
# src/etcd/install-etcd.sh) is started on loopback with a temporary data directory.
#
#   src/bench/registry-latency.sh            # the full matrix, about 2-3 minutes
#   src/bench/registry-latency.sh --quick    # 10 and 100 agents, fewer fetches: about 30 s
#   src/bench/registry-latency.sh [--quick] MORE OPTIONS   # passed on, e.g. --json or
#                                            # --exchange http or --etcd-endpoint http://host:2379
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

agents=10,100,1000
fetches=10000
warmup=1000
warmup_time=1s
prime_time=10s
if [[ ${1:-} == --quick ]]; then
  shift
  agents=10,100
  fetches=500
  warmup=200
  warmup_time=300ms
  prime_time=3s
fi

exec "$root/bin/nixl4j" registry-bench --exchange http,etcd --agents "$agents" --threads 1,4 \
  --operations fetch,document --fetches "$fetches" --warmup "$warmup" --warmup-time "$warmup_time" \
  --prime-time "$prime_time" "$@"
