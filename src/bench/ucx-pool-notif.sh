#!/usr/bin/env bash
# Builds src/bench/ucx-pool-notif.c against the bundled libnixl_capi.so and runs it: a consumer
# process READs from a producer process with a notification attached and waits for the producer's
# answer, round after round, and both count what never arrived. Runs NIXL's UCX thread pool
# (num_threads=2, split_batch_size=32, nixl4j's defaults on 2 cores) and, interleaved, no pool.
#
#   src/bench/ucx-pool-notif.sh [ROUNDS] [DESCS]      (defaults 2000 and 1024 descriptors of 32 KiB)
#
# Environment: DEADLINE_MS (default 2000), THREADS (default "2 0"), SPLIT (default 32),
# LOAD=1 runs two busy loops beside it (bounded by the run). Exit status 1 when anything was lost.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
rounds=${1:-2000}
descs=${2:-1024}
deadline=${DEADLINE_MS:-2000}
lib=$(ls -d "${NIXL4J_CACHE:-$HOME/.cache/nixl4j}"/native/*/lib 2>/dev/null | head -1 || true)
[[ -n $lib && -f $lib/libnixl_capi.so ]] || { echo "no bundled libnixl_capi.so (run bin/nixl4j info once)" >&2; exit 1; }
binary=$(mktemp -d)/ucx-pool-notif
load=()
trap 'rm -rf "$(dirname "$binary")"; for pid in "${load[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
cc -O2 -Wall -o "$binary" "$root/src/bench/ucx-pool-notif.c" -L"$lib" -lnixl_capi -Wl,-rpath,"$lib"

if [[ ${LOAD:-0} == 1 ]]; then
  for _ in 1 2; do
    timeout 3600 sh -c 'while :; do :; done' &
    load+=($!)
  done
fi
status=0
for threads in ${THREADS:-2 0}; do
  NIXL_PLUGIN_DIR=$lib/plugins "$binary" "$rounds" "$descs" 32768 "$threads" "${SPLIT:-32}" "$deadline" 2>&1 \
    | grep -E '^(consumer|producer):' || status=1
done
exit $status
