#!/usr/bin/env bash
# Compares `nixl4j bench --processes 2` (WRITE, DRAM to DRAM) with `ucx_perftest -t ucp_put_bw`
# between two processes, in one run and interleaved, so that both see the same machine. Prints
# every sample in GB/s (10^9 bytes per second; ucx_perftest's MB/s are MiB/s and are converted),
# then the medians and nixl4j's ratio to each reference. Network traffic goes to 127.0.0.1 only.
#
#   src/bench/compare-ucx-perftest.sh [ROUNDS]          (default 3)
#
# Environment:
#   SIZES          block sizes in bytes (default "1048576 67108864")
#   PERFTEST       ucx_perftest to use (default: the one on PATH, Debian's ucx-utils)
#   PERFTEST2      optional second ucx_perftest, e.g. UCX 1.22 from the libucx-cu12 wheel;
#   PERFTEST2_LIBS its library directories (LD_LIBRARY_PATH)
#   NIXL4J_TUNED   agent options of the tuned nixl4j run (default below)
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
rounds=${1:-3}
sizes=${SIZES:-"1048576 67108864"}
perftest=${PERFTEST:-ucx_perftest}
tuned=${NIXL4J_TUNED:-"--progress-delay-us 100000"}
command -v "$perftest" >/dev/null || { echo "needs ucx_perftest (apt-get install -y ucx-utils)" >&2; exit 1; }

iterations() { if (( $1 > 1048576 )); then echo 200; else echo 5000; fi; }
warmups() { if (( $1 > 1048576 )); then echo 20; else echo 500; fi; }

# ucx_perftest server and client on loopback; prints the overall bandwidth in GB/s.
put_bw() {
  local binary=$1 libs=$2 size=$3 port=$((20000 + RANDOM % 20000)) line
  local args=(-t ucp_put_bw -s "$size" -n "$(iterations "$size")" -w "$(warmups "$size")" -p "$port")
  LD_LIBRARY_PATH=$libs timeout 600 "$binary" "${args[@]}" >/dev/null 2>&1 &
  local server=$!
  sleep 1
  line=$(LD_LIBRARY_PATH=$libs timeout 600 "$binary" 127.0.0.1 "${args[@]}" 2>&1 | grep '^Final:' || true)
  wait "$server" || true
  [[ -n $line ]] || { echo "nan"; return; }
  awk '{ printf "%.3f", $7 * 1048576 / 1e9 }' <<<"$line"
}

# nixl4j bench with the target in a child JVM; prints the WRITE bandwidth in GB/s.
bench() {
  local size=$1; shift
  "$root/bin/nixl4j" bench --processes 2 --op write --min-block "$size" --max-block "$size" \
    --iterations "$(iterations "$size")" --large-block-factor 1 --warmup "$(warmups "$size")" --json "$@" 2>/dev/null \
    | sed -nE 's/.*"bandwidthGBps":([0-9.]+).*/\1/p'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, $(lscpu | sed -nE 's/^Model name: +//p'), $(free -g | awk '/^Mem:/ { print $2 }') GiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
# ucx_info sits beside ucx_perftest in both Debian's ucx-utils and the libucx wheels.
version() { LD_LIBRARY_PATH=$2 "$(dirname "$(command -v "$1")")/ucx_info" -v 2>/dev/null | head -n 1 || true; }
echo "ucx_perftest: $perftest, $(version "$perftest" "")"
if [[ -n ${PERFTEST2:-} ]]; then echo "ucx_perftest 2: $PERFTEST2, $(version "$PERFTEST2" "${PERFTEST2_LIBS:-}")"; fi
echo "tuned nixl4j options: $tuned"
for size in $sizes; do
  declare -A samples=()
  for ((round = 1; round <= rounds; round++)); do
    samples[perftest]+="$(put_bw "$perftest" "" "$size") "
    samples[default]+="$(bench "$size") "
    if [[ -n ${PERFTEST2:-} ]]; then samples[perftest2]+="$(put_bw "$PERFTEST2" "${PERFTEST2_LIBS:-}" "$size") "; fi
    # shellcheck disable=SC2086
    samples[tuned]+="$(bench "$size" $tuned) "
  done
  echo
  echo "block size $size B, $rounds rounds, GB/s:"
  for key in perftest perftest2 default tuned; do
    [[ -n ${samples[$key]:-} ]] || continue
    printf '  %-10s samples %-40s median %s\n' "$key" "${samples[$key]}" "$(median <<<"${samples[$key]}")"
  done
  reference=$(median <<<"${samples[perftest]}")
  for key in default tuned; do
    printf '  nixl4j %-8s / ucx_perftest: %s\n' "$key" \
      "$(awk -v a="$(median <<<"${samples[$key]}")" -v b="$reference" 'BEGIN { printf "%.0f%%", 100 * a / b }')"
  done
  if [[ -n ${samples[perftest2]:-} ]]; then
    reference2=$(median <<<"${samples[perftest2]}")
    for key in default tuned; do
      printf '  nixl4j %-8s / ucx_perftest 2: %s\n' "$key" \
        "$(awk -v a="$(median <<<"${samples[$key]}")" -v b="$reference2" 'BEGIN { printf "%.0f%%", 100 * a / b }')"
    done
  fi
  unset samples
done
