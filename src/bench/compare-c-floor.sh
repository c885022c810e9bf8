#!/usr/bin/env bash
# Compares nixl4j's per-transfer cost with the C floor: `nixl4j bench --processes 1` and
# nixl_floor.c (the same libnixl_capi.so, agent configuration and shape, driven from C with
# one post and busy polls of nixl_capi_get_xfer_status) post one prepared 4 KiB request again
# and again, DRAM to DRAM between two agents in one process. Runs interleaved rounds, the order
# rotated each round so that no run always follows another, of: C WRITE, C READ, nixl4j with
# `--completion caller` and with `--completion future` (both directions in one JVM). Prints
# every sample of "Med Post-to-Done" (us), then the medians and nixl4j's ratio to C per path
# and direction.
#
#   src/bench/compare-c-floor.sh [ROUNDS]          (default 9)
#
# Environment:
#   BLOCK       block size (default 4k)
#   ITERATIONS  timed posts per run (default 20000)
#   WARMUP      untimed posts before them (default 1000)
#   CC          C compiler (default cc; on Debian without one, gcc is installed with apt-get)
#   POOL_OFF    1: also runs both tools with UCX's thread pool off (--backend-param
#               num_threads=0, NIXL's own default), as c-off-write, c-off-read, future-off
#   BASE        another nixl4j checkout (e.g. an older commit from `git archive`): its
#               bench's caller and future paths join the rounds as base-caller, base-future
#   NIXL4J_JAVA_OPTS  passed on to bin/nixl4j (e.g. a JFR recording)
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
rounds=${1:-9}
block=${BLOCK:-4k}
iterations=${ITERATIONS:-20000}
warmup=${WARMUP:-1000}
cc=${CC:-cc}
build=$root/target/nixl-floor

# The library nixl4j loads, as `nixl4j info` reports it (this also extracts the bundled one).
library=$("$root/bin/nixl4j" info 2>/dev/null | sed -nE 's/^library: +//p' | head -n 1)
[[ -n $library && -f $library ]] || { echo "nixl4j info named no NIXL library; run bin/nixl4j doctor" >&2; exit 1; }
libdir=$(dirname "$library")

if ! command -v "$cc" >/dev/null; then
  if [[ $cc == cc ]] && command -v apt-get >/dev/null; then
    echo "no C compiler: installing Debian's gcc" >&2
    sudo=(); (( EUID == 0 )) || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq >/dev/null && "${sudo[@]}" apt-get install -y -qq gcc >/dev/null
  fi
  command -v "$cc" >/dev/null || { echo "needs a C compiler: apt-get install -y gcc" >&2; exit 1; }
fi
mkdir -p "$build"
floor=$build/nixl_floor
if [[ ! -x $floor || $floor -ot $root/src/bench/nixl_floor.c || $(cat "$build/library" 2>/dev/null) != "$library" ]]; then
  "$cc" -std=c11 -O2 -Wall -Wextra -o "$floor" "$root/src/bench/nixl_floor.c" \
    -L"$libdir" -l:libnixl_capi.so -Wl,-rpath,"$libdir"
  echo "$library" >"$build/library"
fi

# The median post-to-done of one direction from a JSON document of either tool.
median_of() { grep -o "\"op\":\"$1\"[^}]*" | sed -nE 's/.*"medianPostToCompletionUs":([0-9.]+).*/\1/p'; }
verified() { ! grep -q '"verified":false'; }

c_run() {
  local op=$1 json
  json=$("$floor" --op "$op" --min-block "$block" --max-block "$block" --iterations "$iterations" \
    --warmup "$warmup" "${@:2}" --json 2>/dev/null) || { echo nan; return; }
  verified <<<"$json" || { echo nan; return; }
  median_of "${op^^}" <<<"$json"
}

# Prints the WRITE and READ medians of one nixl4j run: java_run CHECKOUT caller|future.
java_run() {
  local json
  json=$("$1/bin/nixl4j" bench --processes 1 --op both --min-block "$block" --max-block "$block" \
    --iterations "$iterations" --warmup "$warmup" --completion "$2" "${@:3}" --json 2>/dev/null) || { echo "nan nan"; return; }
  verified <<<"$json" || { echo "nan nan"; return; }
  echo "$(median_of WRITE <<<"$json") $(median_of READ <<<"$json")"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, $(lscpu | sed -nE 's/^Model name: +//p'), $(free -g | awk '/^Mem:/ { print $2 }') GiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "library: $library; C floor: $floor ($("$cc" --version | head -n 1))"
echo "block $block, $iterations iterations, $warmup warm-up, $rounds rounds; Med Post-to-Done in us"
declare -A samples=()
runs=(c-write c-read caller future)
keys=(c-write c-read caller-write caller-read future-write future-read)
if [[ ${POOL_OFF:-} == 1 ]]; then
  runs+=(c-off-write c-off-read future-off)
  keys+=(c-off-write c-off-read future-off-write future-off-read)
fi
if [[ -n ${BASE:-} ]]; then
  runs+=(base-caller base-future)
  keys+=(base-caller-write base-caller-read base-future-write base-future-read)
  echo "base: $BASE"
fi
for ((round = 0; round < rounds; round++)); do
  for ((i = 0; i < ${#runs[@]}; i++)); do
    run=${runs[(i + round) % ${#runs[@]}]}
    case $run in
      c-write) samples[c-write]+="$(c_run write) " ;;
      c-read) samples[c-read]+="$(c_run read) " ;;
      c-off-write) samples[c-off-write]+="$(c_run write --backend-param num_threads=0) " ;;
      c-off-read) samples[c-off-read]+="$(c_run read --backend-param num_threads=0) " ;;
      future-off)
        read -r write read <<<"$(java_run "$root" future --backend-param num_threads=0)"
        samples[future-off-write]+="$write "
        samples[future-off-read]+="$read "
        ;;
      base-*)
        read -r write read <<<"$(java_run "$BASE" "${run#base-}")"
        samples[$run-write]+="$write "
        samples[$run-read]+="$read "
        ;;
      *)
        read -r write read <<<"$(java_run "$root" "$run")"
        samples[$run-write]+="$write "
        samples[$run-read]+="$read "
        ;;
    esac
  done
  echo "round $((round + 1)) done; load $(cut -d' ' -f1 /proc/loadavg)" >&2
done
echo
for key in "${keys[@]}"; do
  printf '  %-17s samples %-75s median %s\n' "$key" "${samples[$key]}" "$(median <<<"${samples[$key]}")"
done
for op in write read; do
  reference=$(median <<<"${samples[c-$op]}")
  paths=(caller future)
  [[ -z ${BASE:-} ]] || paths+=(base-caller base-future)
  [[ ${POOL_OFF:-} != 1 ]] || paths+=(future-off)
  for path in "${paths[@]}"; do
    printf '  nixl4j %-11s %-5s / C: %s x\n' "$path" "${op^^}" \
      "$(awk -v a="$(median <<<"${samples[$path-$op]}")" -v b="$reference" 'BEGIN { printf "%.2f", a / b }')"
  done
  if [[ ${POOL_OFF:-} == 1 ]]; then
    off=$(median <<<"${samples[c-off-$op]}")
    for path in caller future future-off; do
      printf '  nixl4j %-11s %-5s / C without the pool: %s x\n' "$path" "${op^^}" \
        "$(awk -v a="$(median <<<"${samples[$path-$op]}")" -v b="$off" 'BEGIN { printf "%.2f", a / b }')"
    done
  fi
done
