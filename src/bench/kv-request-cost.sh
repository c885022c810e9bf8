#!/usr/bin/env bash
# The fixed and the per-byte cost of a KV request: runs bin/nixl4j kv-bench with 1, 16, 128 and
# 1,024 blocks per request (2 MiB to 2 GiB; blocks at random places, one consumer, one request in
# flight), then prints a table of p50/p99 latency and GB/s per size, the fixed cost (p50 at 1 block,
# and the intercept of a least-squares fit of p50 against the request's bytes), the per-byte cost
# (the fit's slope, in ns/MiB and as GB/s) and how the per-byte cost grows from one size to the next.
# The fit is printed twice: unweighted, and weighted by 1/p50^2 (relative errors), since over 2 MiB
# to 2 GiB the unweighted one is decided by the largest sizes.
# The kv-bench documents and the fit go to docs/bench/kv-request-cost-<engine>.json, in an envelope
# with the machine, the date and the load average (as src/bench/plot-bandwidth.sh writes).
#
# 1,024 blocks need 2 GiB of cache in this process and 4 GiB in the producer's (kv-bench's cap,
# MAX_BLOCKS, is 1,024); a size is left out, with a note, when its caches and 2 GiB to spare exceed the memory
# available. Requests per size are scaled so that each run takes a few seconds: about 1 minute per
# engine on 2 cores (the producer fills 4 GiB with patterns at 1,024 blocks).
#
#   src/bench/kv-request-cost.sh            native engine (NIXL, UCX)
#   src/bench/kv-request-cost.sh --quick    1 and 16 blocks, a few requests: checks the script
#
# Environment:
#   ENGINE    native (default) or embedded
#   BLOCKS    the sizes, in blocks per request (default "1 16 128 1024")
#   OUT_DIR   where the JSON goes (default docs/bench)
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
out_dir=${OUT_DIR:-$root/docs/bench}
engine=${ENGINE:-native}
sizes=${BLOCKS:-1 16 128 1024}
quick=false
case ${1:-} in
  --quick) quick=true; sizes=${BLOCKS:-1 16} ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

# timed and warm-up requests per size: a few seconds each
requests() {
  if $quick; then echo 5; return; fi
  if (( $1 <= 1 )); then echo 200; elif (( $1 <= 16 )); then echo 60; elif (( $1 <= 128 )); then echo 16; else echo 4; fi
}
warmups() { if $quick || (( $1 > 128 )); then echo 1; else echo 3; fi; }

quote() { printf '"%s"' "$(sed 's/\\/\\\\/g; s/"/\\"/g' <<<"$1")"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
field() { sed -nE "s/.*\"$1\":([-0-9.eE]+).*/\\1/p" <<<"$2"; }

cpus=$(nproc)
cpu_model=$(sed -nE 's/^model name\s*:\s*//p' /proc/cpuinfo | head -n 1)
memory_gib=$(free -g | awk '/^Mem:/ { print $2 }')
available_mib=$(free -m | awk '/^Mem:/ { print $7 }')
machine="{\"cpus\":$cpus,\"cpuModel\":$(quote "$cpu_model"),\"memoryGiB\":$memory_gib,\"kernel\":$(quote "$(uname -r)")}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "machine: $cpus cores, $cpu_model, $memory_gib GiB ($available_mib MiB available); load $(load)"
echo "nixl4j kv-bench, $engine engine, blocks per request: $sizes"
before=$(load)
rows=""
points=""
for blocks in $sizes; do
  # 2 MiB per block: the request's blocks here, twice as many in the producer's cache, 2 GiB to spare
  if (( blocks * 6 + 2048 > available_mib )); then
    echo "  $blocks blocks left out: needs $((blocks * 6)) MiB of cache and 2 GiB to spare, $available_mib MiB available" >&2
    continue
  fi
  args=(kv-bench --engine "$engine" --blocks "$blocks" --requests "$(requests "$blocks")" --warmup "$(warmups "$blocks")" --json)
  echo "  bin/nixl4j ${args[*]}"
  row=$("$root/bin/nixl4j" "${args[@]}" 2>>"$log") || { echo "bin/nixl4j ${args[*]} failed:" >&2; tail -n 20 "$log" >&2; exit 1; }
  rows+="${rows:+,}$row"
  points+="$blocks $(field bytesPerRequest "$row") $(field requests "$row") $(field p50LatencyUs "$row") $(field p99LatencyUs "$row") $(field bandwidthGBps "$row")"$'\n'
done
[[ -n $points ]] || { echo "no size could run" >&2; exit 1; }

# The table and the fit; prints the fit as JSON on its last line.
report=$(awk '
  NF == 6 { n++; b[n] = $1; mib[n] = $2 / 1048576; req[n] = $3; p50[n] = $4; p99[n] = $5; gbps[n] = $6 }
  END {
    printf "| Blocks | MiB/request | Requests | p50 (us) | p99 (us) | GB/s | marginal ns/MiB | marginal GB/s |\n"
    printf "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    for (i = 1; i <= n; i++) {
      if (i == 1) { marginal = "-"; mgbps = "-" }
      else {
        slope = (p50[i] - p50[i - 1]) / (mib[i] - mib[i - 1])
        marginal = sprintf("%.0f", slope * 1000)
        mgbps = (slope > 0) ? sprintf("%.3f", 1048.576 / slope) : "-"
      }
      printf "| %d | %d | %d | %.1f | %.1f | %.3f | %s | %s |\n", b[i], mib[i], req[i], p50[i], p99[i], gbps[i], marginal, mgbps
    }
    # unweighted, and weighted by 1/p50^2 (relative errors), which keeps the largest size from
    # deciding the intercept alone over three orders of magnitude
    fit(0); slope0 = slope; intercept0 = intercept
    fit(1); slope1 = slope; intercept1 = intercept
    printf "\nfixed cost: p50 at %d block(s) %.1f us; least-squares intercept %.1f us (relative: %.1f us)\n", b[1], p50[1], intercept0, intercept1
    printf "per-byte cost, the slope of p50 against bytes over %d sizes: %.0f ns/MiB = %s GB/s (relative: %.0f ns/MiB = %s GB/s)\n", n, slope0 * 1000, gb(slope0), slope1 * 1000, gb(slope1)
    printf "{\"fixedCostUs\":%.3f,\"fitInterceptUs\":%.3f,\"fitSlopeNsPerMiB\":%.3f,\"relativeFitInterceptUs\":%.3f,\"relativeFitSlopeNsPerMiB\":%.3f}\n", p50[1], intercept0, slope0 * 1000, intercept1, slope1 * 1000
  }
  function gb(s) { return (s > 0) ? sprintf("%.3f", 1048.576 / s) : "-" }
  function fit(relative,    i, w, sw, sx, sy, sxx, sxy, d) {
    sw = 0; sx = 0; sy = 0; sxx = 0; sxy = 0
    for (i = 1; i <= n; i++) {
      w = relative ? 1 / (p50[i] * p50[i]) : 1
      sw += w; sx += w * mib[i]; sy += w * p50[i]; sxx += w * mib[i] * mib[i]; sxy += w * mib[i] * p50[i]
    }
    d = sw * sxx - sx * sx
    slope = (n > 1 && d != 0) ? (sw * sxy - sx * sy) / d : 0
    intercept = (sy - slope * sx) / sw
  }' <<<"$points")
echo
sed '$d' <<<"$report"
fit=$(tail -n 1 <<<"$report")

if ! $quick; then
  mkdir -p "$out_dir"
  file="$out_dir/kv-request-cost-$engine.json"
  printf '{"series":%s,"command":%s,"date":%s,"machine":%s,"loadBefore":%s,"loadAfter":%s,"fit":%s,"data":{"tool":"nixl4j kv-bench","results":[%s]}}\n' \
    "$(quote "nixl4j KV request cost, $engine engine")" \
    "$(quote "bin/nixl4j kv-bench --engine $engine --blocks B --requests N --warmup W --json for B in $sizes")" \
    "$(quote "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$machine" "$(quote "$before")" "$(quote "$(load)")" "$fit" "$rows" >"$file"
  echo "wrote $file (load before $before, after $(load))"
fi
