#!/usr/bin/env bash
# Measures bandwidth against block size for six series and plots them:
#   nixl4j native    bin/nixl4j bench --engine native --processes 2 --op write (NIXL, UCX)
#   nixl4j embedded  bin/nixl4j bench --engine embedded --processes 2 --op write (TCP loopback)
#   KV path native   bin/nixl4j kv-bench --engine native, requests of 1 to 128 consecutive KV blocks
#                    (2 MiB to 256 MiB) pulled under leases, plotted at the request's size
#   KV path embedded the same on the embedded engine
#   ucx_perftest     ucx_perftest -t ucp_put_bw, server and client on 127.0.0.1, one run per size
#   memcpy           bin/nixl4j memcpy (one thread, MemorySegment.copy)
# Each series is written to docs/bench/bandwidth-<series>.json (the tool's own JSON, or for
# ucx_perftest a small document of its figures, inside an envelope with the machine, the date and
# the load average), then src/bench/PlotBandwidth.java renders docs/bench/bandwidth.png from them
# with XChart (reading them with nixl-core's JSON reader; XChart comes from Maven Central
# through the local repository, as src/bench/plot-kv-load.sh gets it).
# GB/s are 10^9 bytes per second throughout; ucx_perftest's "MB/s" are MiB/s and are converted.
# Network traffic goes to 127.0.0.1 only. About 3 minutes on 2 cores.
#
#   src/bench/plot-bandwidth.sh              measure all six series, then plot
#   src/bench/plot-bandwidth.sh --plot-only  plot the JSON already in docs/bench
#
# Environment:
#   MIN_BLOCK, MAX_BLOCK  block sizes, doubling from MIN_BLOCK (default 4096 to 67108864 bytes)
#   PERFTEST              ucx_perftest to use (default: the one on PATH, Debian's ucx-utils)
#   OUT_DIR               where the JSON and the PNG go (default docs/bench)
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
# shellcheck source=../../bin/lib/java-home.sh
source "$root/bin/lib/java-home.sh"
out_dir=${OUT_DIR:-$root/docs/bench}
min_block=${MIN_BLOCK:-4096}
max_block=${MAX_BLOCK:-67108864}
perftest=${PERFTEST:-ucx_perftest}
xchart=org.knowm.xchart:xchart:3.8.8
lib="$root/target/bench-lib"

plot() {
  local inputs=("$out_dir"/bandwidth-*.json)
  [[ -e ${inputs[0]} ]] || { echo "no $out_dir/bandwidth-*.json to plot; run without --plot-only first" >&2; exit 1; }
  (cd "$root" && ./mvnw -q -B -pl nixl-core -am compile) >&2 || { echo "compiling nixl-core failed (./mvnw -pl nixl-core -am compile)" >&2; exit 1; }
  # XChart from Maven Central, through the local repository (offline when it is already there); the
  # jar alone: its dependencies serve the vector and GIF formats, a PNG needs none of them
  if [[ ! -f $lib/xchart-3.8.8.jar ]]; then
    local copy=(-q -B -N dependency:copy "-Dartifact=$xchart" "-DoutputDirectory=$lib")
    (cd "$root" && { ./mvnw -o "${copy[@]}" || ./mvnw "${copy[@]}"; }) >&2 \
      || { echo "cannot resolve $xchart (./mvnw dependency:copy -Dartifact=$xchart)" >&2; exit 1; }
  fi
  "$JAVA_HOME/bin/java" -Djava.awt.headless=true -cp "$root/nixl-core/target/classes:$lib/xchart-3.8.8.jar" \
    "$root/src/bench/PlotBandwidth.java" "${inputs[@]}" "$out_dir/bandwidth.png"
}

case ${1:-} in
  --plot-only) plot; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--plot-only]" >&2; exit 2 ;;
esac

command -v "$perftest" >/dev/null || { echo "needs ucx_perftest (apt-get install -y ucx-utils)" >&2; exit 1; }
mkdir -p "$out_dir"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The same number of timed and warm-up operations for every series that posts: 5000 and 500 up to
# 1 MiB, 200 and 20 above (bench: 5000 / 25 with --large-block-factor 25).
iterations() { if (( $1 > 1048576 )); then echo 200; else echo 5000; fi; }
warmups() { if (( $1 > 1048576 )); then echo 20; else echo 500; fi; }
bench_counts=(--iterations 5000 --warmup 500 --large-block-factor 25)

quote() { printf '"%s"' "$(sed 's/\\/\\\\/g; s/"/\\"/g' <<<"$1")"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

cpus=$(nproc)
cpu_model=$(sed -nE 's/^model name\s*:\s*//p' /proc/cpuinfo | head -n 1)
memory_gib=$(free -g | awk '/^Mem:/ { print $2 }')
machine="{\"cpus\":$cpus,\"cpuModel\":$(quote "$cpu_model"),\"memoryGiB\":$memory_gib,\"kernel\":$(quote "$(uname -r)")}"

# Writes one series: envelope around the tool's JSON document ($5).
write_series() {
  local file=$1 series=$2 command=$3 before=$4 data=$5
  printf '{"series":%s,"command":%s,"date":%s,"machine":%s,"loadBefore":%s,"loadAfter":%s,"data":%s}\n' \
    "$(quote "$series")" "$(quote "$command")" "$(quote "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$machine" \
    "$(quote "$before")" "$(quote "$(load)")" "$data" >"$out_dir/bandwidth-$file.json"
  echo "  wrote $out_dir/bandwidth-$file.json (load before $before, after $(load))"
}

# Waits until something listens on a TCP port of this host, for at most 10 s.
await_listener() {
  local port=$1 deadline=$((SECONDS + 10))
  while ! ss -Hltn "sport = :$port" | grep -q .; do
    (( SECONDS < deadline )) || return 1
    sleep 0.05
  done
}

# One ucx_perftest ucp_put_bw run on loopback; prints its JSON result object.
put_bw() {
  local size=$1 port line
  port=$((20000 + RANDOM % 20000))
  local args=(-t ucp_put_bw -s "$size" -n "$(iterations "$size")" -w "$(warmups "$size")" -p "$port")
  timeout 120 "$perftest" "${args[@]}" >>"$log" 2>&1 &
  local server=$!
  await_listener "$port" || { echo "ucx_perftest server did not listen on port $port" >&2; kill "$server"; exit 1; }
  line=$(timeout 120 "$perftest" 127.0.0.1 "${args[@]}" 2>&1 | tee -a "$log" | grep '^Final:' || true)
  wait "$server" || true
  [[ -n $line ]] || { echo "ucx_perftest gave no result at $size B; its output:" >&2; tail -n 20 "$log" >&2; exit 1; }
  # Final: iterations, latency 50 %/average/overall (us), bandwidth average/overall (MiB/s), ...
  awk -v size="$size" -v warmup="$(warmups "$size")" '{
    printf "{\"blockSize\":%d,\"iterations\":%d,\"warmup\":%d,\"overallLatencyUs\":%.3f,\"overallMiBps\":%.2f,\"bandwidthGBps\":%.3f}",
      size, $2, warmup, $5, $7, $7 * 1048576 / 1e9 }' <<<"$line"
}

echo "machine: $cpus cores, $cpu_model, $memory_gib GiB; load $(load)"
echo "block sizes $min_block to $max_block bytes, doubling"

for engine in native embedded; do
  echo "nixl4j bench, $engine engine, two processes, WRITE"
  before=$(load)
  args=(bench --engine "$engine" --processes 2 --op write --min-block "$min_block" --max-block "$max_block"
    "${bench_counts[@]}" --json)
  data=$("$root/bin/nixl4j" "${args[@]}" 2>>"$log") || { echo "bin/nixl4j ${args[*]} failed:" >&2; tail -n 20 "$log" >&2; exit 1; }
  write_series "nixl4j-$engine" "nixl4j $engine engine (2 processes, WRITE)" "bin/nixl4j ${args[*]}" "$before" "$data"
done

# The KV path: one kv-bench run per request size, each request one contiguous run of blocks (the
# producer's blocks in consecutive ids), so the plot shows the lease protocol's cost against the
# raw WRITE of the same bytes. Each point is the request's bytes and the run's GB/s.
for engine in native embedded; do
  echo "nixl4j kv-bench, $engine engine, requests of 1 to 128 consecutive blocks"
  before=$(load)
  results=""
  first=""
  for ((blocks = 1; blocks <= 128; blocks *= 2)); do
    requests=$(( blocks <= 16 ? 50 : 20 ))
    args=(kv-bench --engine "$engine" --blocks "$blocks" --run "$blocks" --requests "$requests" --warmup 5 --json)
    first=${first:-"bin/nixl4j ${args[*]}"}
    row=$("$root/bin/nixl4j" "${args[@]}" 2>>"$log") || { echo "bin/nixl4j ${args[*]} failed:" >&2; tail -n 20 "$log" >&2; exit 1; }
    # kv-bench's document, with the request's bytes as the point's size
    size=$(sed -nE 's/.*"bytesPerRequest":([0-9]+).*/\1/p' <<<"$row")
    results+="${results:+,}{\"blockSize\":$size,\"kvBench\":$row,$(sed -nE 's/.*("bandwidthGBps":[0-9.]+).*/\1/p' <<<"$row")}"
  done
  write_series "kv-$engine" "nixl4j KV pull, $engine engine (x: request bytes)" \
    "${first/--blocks 1 --run 1/--blocks B --run B} for B = 1, 2, 4, ... 128 (50 requests up to 16 blocks, 20 above)" \
    "$before" "{\"tool\":\"nixl4j kv-bench\",\"results\":[$results]}"
done

echo "ucx_perftest ucp_put_bw, loopback, one run per size"
before=$(load)
version=$("$(dirname "$(command -v "$perftest")")/ucx_info" -v 2>/dev/null | head -n 1 | sed "s/^# //" || true)
results=""
for ((size = min_block; size <= max_block; size *= 2)); do
  results+="${results:+,}$(put_bw "$size")"
done
data="{\"tool\":\"ucx_perftest\",\"binary\":$(quote "$(command -v "$perftest")"),\"version\":$(quote "$version"),"
data+="\"test\":\"ucp_put_bw\",\"host\":\"127.0.0.1\",\"conversion\":\"bandwidthGBps = overallMiBps x 1048576 / 10^9 (ucx_perftest prints MiB/s as MB/s)\","
data+="\"results\":[$results]}"
write_series ucx-perftest "ucx_perftest ucp_put_bw (2 processes, loopback)" \
  "$perftest -t ucp_put_bw -s SIZE -n N -w W -p PORT (server) and $perftest 127.0.0.1 ... (client); N, W = 5000, 500 up to 1 MiB, 200, 20 above" \
  "$before" "$data"

echo "memcpy, one thread"
before=$(load)
args=(memcpy --min "$min_block" --max "$max_block" --json)
data=$("$root/bin/nixl4j" "${args[@]}" 2>>"$log") || { echo "bin/nixl4j ${args[*]} failed:" >&2; tail -n 20 "$log" >&2; exit 1; }
write_series memcpy "memcpy (1 thread, MemorySegment.copy)" "bin/nixl4j ${args[*]}" "$before" "$data"

plot
echo "load at the end: $(load)"
