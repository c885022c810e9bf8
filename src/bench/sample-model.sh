#!/usr/bin/env bash
# Figures of the sample on SmolLM2-135M-Instruct (bin/sample, two worker processes, native NIXL
# when it loads): time to first token disaggregated (prefill worker + transfer + first decode
# step) against the same model in one process, for prompts of 64, 256 and 1,024 tokens; then
# requests/s and latency percentiles of the chat load at concurrency 1, 4 and 8, with the
# latency plots. Every answer of every run is compared with a one-process run, token for token.
#
#   src/bench/sample-model.sh [OUT_DIR]     (default: a new temporary directory for the plots)
#
# Prints the load average first: figures from a busy machine are not comparable.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/nixl4j-sample-model.XXXXXX")}
mkdir -p "$out"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) processors; plots in $out"

for tokens in 64 256 1024; do
  echo "== time to first token, prompts of $tokens token ids, 6 requests one at a time after 8 warm-up ones"
  SAMPLE_LOGS="$out/ttft-$tokens" "$root/bin/sample" --token-prompts --prompt-tokens "$tokens" --requests 6 \
    --concurrency 1 --warmup 8 --max-tokens 8 --no-plot \
    | grep -E '^(engine|tokens equal|time to first token|one process|decode:|OK|FAILED)'
done

for concurrency in 1 4 8; do
  echo "== chat prompts, 24 requests of up to 32 tokens, concurrency $concurrency"
  SAMPLE_LOGS="$out/load-c$concurrency" "$root/bin/sample" --requests 24 --concurrency "$concurrency" \
    --plot "$out/load-c$concurrency.png" \
    | grep -E '^(tokens equal|throughput|request latency|time to first token|decode:|latency plot|OK|FAILED)'
done
