#!/usr/bin/env bash
# KV pull latency against load: runs bin/nixl4j kv-bench for 1, 2 and 4 consumer processes pulling
# from one producer with 1, 4 and 16 requests in flight each, 16 blocks (32 MiB) per request
# (4 x 16 in flight is 2 GiB of consumer caches), every request checked block by block against the
# producer's CRC32C and its lease confirmed. Each run is written to docs/bench/kv-load-c<N>-k<K>.json
# (kv-bench's JSON inside an envelope with the machine, the date and the load average, as
# src/bench/plot-bandwidth.sh writes), then src/bench/PlotKvLoad.java (XChart) renders
# docs/bench/kv-load.png, p50 and p99 latency against aggregate GB/s, one colour per consumer count,
# and prints the figures as a markdown table. About 2 minutes on 2 cores, 5 at most.
#
#   src/bench/plot-kv-load.sh              measure the 9 runs, then plot
#   src/bench/plot-kv-load.sh --quick      1 and 2 consumers x 1 and 4 in flight, 2 blocks, a few
#                                          requests, into a temporary folder: checks the script (~1 min)
#   src/bench/plot-kv-load.sh --plot-only  plot the JSON already in docs/bench
#
# Environment:
#   ENGINE    native (default) or embedded
#   BLOCKS    blocks per request (default 16)
#   OUT_DIR   where the JSON and the PNG go (default docs/bench; with --quick a temporary folder)
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
# shellcheck source=../../bin/lib/java-home.sh
source "$root/bin/lib/java-home.sh"
engine=${ENGINE:-native}
blocks=${BLOCKS:-16}
consumer_counts=(1 2 4)
in_flight_counts=(1 4 16)
quick=false
plot_only=false
case ${1:-} in
  --quick) quick=true; blocks=${BLOCKS:-2}; consumer_counts=(1 2); in_flight_counts=(1 4) ;;
  --plot-only) plot_only=true ;;
  "") ;;
  *) echo "usage: $0 [--quick | --plot-only]" >&2; exit 2 ;;
esac
if $quick; then out_dir=${OUT_DIR:-$(mktemp -d)}; else out_dir=${OUT_DIR:-$root/docs/bench}; fi
xchart=org.knowm.xchart:xchart:3.8.8
lib="$root/target/bench-lib"

# timed requests per consumer: at least 32, and 4 rounds of its requests in flight
requests() { if $quick; then echo 8; elif (( $1 * 4 > 32 )); then echo $(($1 * 4)); else echo 32; fi; }

plot() {
  local inputs=("$out_dir"/kv-load-c*-k*.json)
  [[ -e ${inputs[0]} ]] || { echo "no $out_dir/kv-load-c*-k*.json to plot; run without --plot-only first" >&2; exit 1; }
  (cd "$root" && ./mvnw -q -B -pl nixl-core -am compile) >&2 || { echo "compiling nixl-core failed (./mvnw -pl nixl-core -am compile)" >&2; exit 1; }
  # XChart from Maven Central, through the local repository (offline when it is already there); the
  # jar alone: its dependencies serve the vector and GIF formats, a PNG needs none of them
  if [[ ! -f $lib/xchart-3.8.8.jar ]]; then
    local copy=(-q -B -N dependency:copy "-Dartifact=$xchart" "-DoutputDirectory=$lib")
    (cd "$root" && { ./mvnw -o "${copy[@]}" || ./mvnw "${copy[@]}"; }) >&2 \
      || { echo "cannot resolve $xchart (./mvnw dependency:copy -Dartifact=$xchart)" >&2; exit 1; }
  fi
  "$JAVA_HOME/bin/java" -Djava.awt.headless=true -cp "$root/nixl-core/target/classes:$lib/xchart-3.8.8.jar" \
    "$root/src/bench/PlotKvLoad.java" "${inputs[@]}" "$out_dir/kv-load.png"
}

if $plot_only; then plot; exit 0; fi

quote() { printf '"%s"' "$(sed 's/\\/\\\\/g; s/"/\\"/g' <<<"$1")"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

cpus=$(nproc)
cpu_model=$(sed -nE 's/^model name\s*:\s*//p' /proc/cpuinfo | head -n 1)
memory_gib=$(free -g | awk '/^Mem:/ { print $2 }')
machine="{\"cpus\":$cpus,\"cpuModel\":$(quote "$cpu_model"),\"memoryGiB\":$memory_gib,\"kernel\":$(quote "$(uname -r)")}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

mkdir -p "$out_dir"
rm -f "$out_dir"/kv-load-c*-k*.json
echo "machine: $cpus cores, $cpu_model, $memory_gib GiB; load $(load)"
echo "nixl4j kv-bench, $engine engine, $blocks blocks per request; consumers ${consumer_counts[*]} x in flight ${in_flight_counts[*]}"
for consumers in "${consumer_counts[@]}"; do
  for in_flight in "${in_flight_counts[@]}"; do
    before=$(load)
    args=(kv-bench --engine "$engine" --blocks "$blocks" --consumers "$consumers" --in-flight "$in_flight"
      --requests "$(requests "$in_flight")" --warmup "$in_flight" --json)
    echo "  bin/nixl4j ${args[*]}"
    data=$("$root/bin/nixl4j" "${args[@]}" 2>>"$log") || { echo "bin/nixl4j ${args[*]} failed:" >&2; tail -n 20 "$log" >&2; exit 1; }
    printf '{"series":%s,"command":%s,"date":%s,"machine":%s,"loadBefore":%s,"loadAfter":%s,"data":%s}\n' \
      "$(quote "nixl4j KV pull, $engine engine, $consumers consumers x $in_flight in flight")" \
      "$(quote "bin/nixl4j ${args[*]}")" "$(quote "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$machine" \
      "$(quote "$before")" "$(quote "$(load)")" "$data" >"$out_dir/kv-load-c$consumers-k$in_flight.json"
  done
done

plot
echo "load at the end: $(load)"
