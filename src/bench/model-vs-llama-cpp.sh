#!/usr/bin/env bash
# Throughput of the Java engine beside llama.cpp (llama-cpp-python) on the same GGUF with the
# same number of threads: prefill tok/s on prompts of several lengths and decode tok/s, in
# interleaved rounds (llama.cpp, Java, llama.cpp, Java, ...), and the ratios Java / llama.cpp
# (best of each side's rounds). Prints the load average first: on a shared machine the figures
# move with it.
#
#   src/bench/model-vs-llama-cpp.sh                 # SmolLM2-135M-Instruct Q4_1, 2 threads
#   THREADS=4 ROUNDS=3 src/bench/model-vs-llama-cpp.sh
#
# llama.cpp's worker threads spin while they wait for one another: on a machine busier than its
# cores its multi-threaded figures collapse (decode fell to 2 tok/s with 2 threads at load 10 on
# 2 cores), so there THREADS=1 is the fairer comparison.
#
# Environment:
#   MODEL     the GGUF (default: src/model/fetch-smollm2.sh's cached SmolLM2)
#   THREADS   threads for both engines (default 2)
#   LENGTHS   comma-separated prompt lengths (default 64,256,1024)
#   DECODE    decode tokens (default 128)
#   ROUNDS    interleaved rounds (default 2)
#   REPEATS   repeats inside a round, each side keeps its best (default 2)
# Needs the llama.cpp venv (src/bench/install-llama-cpp.sh; built on first use) and the engine
# compiled (./mvnw -o -pl sample-model compile; done here when the classes are missing).
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
threads=${THREADS:-2}
lengths=${LENGTHS:-64,256,1024}
decode=${DECODE:-128}
rounds=${ROUNDS:-2}
repeats=${REPEATS:-2}
model=${MODEL:-$("$root/src/model/fetch-smollm2.sh" --cached-only)}
for n in "$threads" "$decode" "$rounds" "$repeats" ${lengths//,/ }; do
  [[ $n =~ ^[0-9]+$ && $n -ge 1 && $n -le 8192 ]] || { echo "not a count in 1..8192: $n" >&2; exit 2; }
done
[[ -f $model ]] || { echo "no model file: $model" >&2; exit 1; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
echo "model: $model; threads $threads; prompts $lengths; decode $decode tokens; $rounds rounds x $repeats repeats"

python=$("$root/src/bench/install-llama-cpp.sh")
# shellcheck source=/dev/null
source "$root/bin/lib/java-home.sh"
classes=$root/sample-model/target/classes
if [[ ! -f $classes/dev/nixl4j/sample/model/ModelBench.class ]]; then
  (cd "$root" && ./mvnw -B -ntp -o -q -pl sample-model compile) >&2
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
  "$python" "$root/src/model/llama_cpp_ref.py" "$model" --bench "$lengths" --decode "$decode" \
    --threads "$threads" --repeats "$repeats" | tee -a "$out/llama" | sed "s/^/round $r: /"
  for n in ${lengths//,/ }; do
    # prefill n tokens; the decode figure is taken from the run with the shortest prompt
    "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector -cp "$classes" \
      dev.nixl4j.sample.model.ModelBench "$model" "$n" "$decode" "$threads" "$repeats" 2>/dev/null |
      grep '^repeat' | tee -a "$out/java-$n" | sed "s/^/round $r: java /"
  done
done

best() { sort -g | tail -1; }
shortest=${lengths%%,*}
printf '\n%-22s %14s %14s %10s\n' "" "llama.cpp tok/s" "Java tok/s" "Java/llama"
row() {
  local name=$1 l=$2 j=$3
  printf '%-22s %14.1f %14.1f %10.2f\n' "$name" "$l" "$j" "$(awk -v a="$j" -v b="$l" 'BEGIN { print (b > 0) ? a / b : 0 }')"
}
for n in ${lengths//,/ }; do
  l=$(sed -n "s/^llama.cpp prefill $n tokens: \([0-9.]*\) tok\/s$/\1/p" "$out/llama" | best)
  j=$(sed -n "s/.*prefill $n tokens \([0-9.]*\) tok\/s.*/\1/p" "$out/java-$n" | best)
  row "prefill $n" "${l:-0}" "${j:-0}"
done
l=$(sed -n "s/^llama.cpp decode $decode tokens: \([0-9.]*\) tok\/s$/\1/p" "$out/llama" | best)
j=$(sed -n "s/.*decode $decode tokens \([0-9.]*\) tok\/s.*/\1/p" "$out/java-$shortest" | best)
row "decode $decode" "${l:-0}" "${j:-0}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
