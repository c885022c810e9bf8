#!/usr/bin/env bash
# The KV pull against the raw READ of the same bytes, over interleaved rounds: each round runs
# `nixl4j bench --processes 2 --op read` of one 256 MiB descriptor and `nixl4j kv-bench` (by
# default the default request: 128 scattered blocks, 8,192 descriptors of 32 KiB, 256 MiB),
# in an order that alternates from round to round, and prints both bandwidths and their ratio;
# then the median, min and max of the ratio. With BASE, another checkout's kv-bench joins every
# round, against the same raw READ.
#
#   src/bench/kv-vs-raw.sh [ROUNDS]          (default 5)
#
# Environment:
#   KV_ARGS   more kv-bench options for this checkout (e.g. "--run 128")
#   BASE      another nixl4j checkout (e.g. a `git worktree` of an older commit, its CLI built
#             with ./mvnw -pl nixl-cli -am compile): its kv-bench runs as "base" in every round
#   NIXL4J_JAVA_OPTS  passed on to bin/nixl4j
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
rounds=${1:-5}
read -r -a kv_args <<<"${KV_ARGS:-}"

field() { sed -nE "s/.*\"$1\":([0-9.]+).*/\1/p" | head -n 1; }

raw_run() {
  local json
  json=$("$root/bin/nixl4j" bench --processes 2 --op read --min-block 256m --max-block 256m --json 2>/dev/null) ||
    { echo nan; return; }
  grep -q '"verified":false' <<<"$json" && { echo nan; return; }
  field bandwidthGBps <<<"$json"
}

kv_run() {
  local json
  json=$("$1/bin/nixl4j" kv-bench "${@:2}" --json 2>/dev/null) || { echo nan; return; }
  grep -q '"ok":true' <<<"$json" || { echo nan; return; }
  field bandwidthGBps <<<"$json"
}

stats() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END {
  m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "median %.2f [min %.2f - max %.2f]", m, v[1], v[NR] }'; }

echo "machine: $(nproc) cores, $(lscpu | sed -nE 's/^Model name: +//p'), $(free -g | awk '/^Mem:/ { print $2 }') GiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kv-bench ${kv_args[*]:-(defaults)} against bench --processes 2 --op read 256m; $rounds rounds; GB/s"
raws=() kvs=() ratios=() bases=() base_ratios=()
for ((round = 1; round <= rounds; round++)); do
  order=(raw kv); [[ -n ${BASE:-} ]] && order+=(base)
  (( round % 2 == 0 )) && order=($(printf '%s\n' "${order[@]}" | tac))
  for run in "${order[@]}"; do
    case $run in
      raw) raw=$(raw_run) ;;
      kv) kv=$(kv_run "$root" "${kv_args[@]}") ;;
      base) base=$(kv_run "$BASE") ;;
    esac
  done
  ratio=$(awk -v k="$kv" -v r="$raw" 'BEGIN { print (r > 0 && k > 0) ? sprintf("%.3f", k / r) : "nan" }')
  line="round $round: raw READ $raw, kv $kv, kv/raw $ratio"
  raws+=("$raw") kvs+=("$kv") ratios+=("$ratio")
  if [[ -n ${BASE:-} ]]; then
    base_ratio=$(awk -v k="$base" -v r="$raw" 'BEGIN { print (r > 0 && k > 0) ? sprintf("%.3f", k / r) : "nan" }')
    line+="; base kv $base, base/raw $base_ratio"
    bases+=("$base") base_ratios+=("$base_ratio")
  fi
  echo "$line"
done
echo "raw READ GB/s: $(stats <<<"${raws[*]}")"
echo "kv GB/s:       $(stats <<<"${kvs[*]}")"
echo "kv/raw:        $(stats <<<"${ratios[*]}")"
if [[ -n ${BASE:-} ]]; then
  echo "base kv GB/s:  $(stats <<<"${bases[*]}")"
  echo "base/raw:      $(stats <<<"${base_ratios[*]}")"
fi
[[ " ${ratios[*]} ${base_ratios[*]} " != *nan* ]]
