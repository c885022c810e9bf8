#!/usr/bin/env bash
# What KV tracing costs per request: runs KvTracingCostBench (test sources of
# nixl-spring-boot-autoconfigure, so that Spring, Micrometer Tracing and OpenTelemetry stay out of
# nixl-core and nixl-cli) once per engine. In one process, each request is a lease on a producer
# agent and a pull (one READ, then the producer's confirmation) on a consumer agent, in three
# modes measured in the same run, in rounds whose order alternates:
#   (a) no observer (KvObserver.NONE: an application that does not trace),
#   (b) ObservationKvObserver over Micrometer Observation and the OpenTelemetry bridge, an SDK
#       tracer sampling every trace, spans batched to an in-memory exporter cleared each round,
#   (c) the same with the sampler off (context carried, no span recorded).
# Prints, per round and mode, requests/s, mean, p50 and p99 per request, bytes allocated per
# request (all threads, com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes, and the
# requesting thread alone) and process CPU per request; then the medians and (b)-(a), (c)-(a)
# per request with their spread over the rounds. No timed assertion; a failed check (a lease not
# completed, blocks not arrived, spans missing or misnested) fails the run.
#
# Compiles the module's test classes offline (./mvnw -o ... test-compile) and runs the class on
# the test class path. About 20-50 s per engine with the defaults on 2 cores (6 rounds x 3 modes
# x 2,000 requests of 2 MiB).
#
#   src/bench/kv-tracing-cost.sh                         both engines, 1 block (2 MiB) per request
#   src/bench/kv-tracing-cost.sh --quick                 a few requests: checks the script (~1 min)
#   src/bench/kv-tracing-cost.sh --blocks 128 --rounds 4 --requests 100 --warmup 20
#                                                        kv-bench's default request (256 MiB), ~3 min
#   src/bench/kv-tracing-cost.sh --rounds 10 --requests 5000
#
# Options after --quick go to the class: --blocks N, --rounds N (default 6), --requests N (per
# mode and round, default 2000), --warmup N (per mode, default 1000).
# Environment:
#   ENGINES          the engines, in order (default "embedded native")
#   NIXL4J_JAVA_OPTS extra JVM options (default -Xmx2g)
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
# shellcheck source=../../bin/lib/java-home.sh
source "$root/bin/lib/java-home.sh"
module="$root/nixl-spring-boot-autoconfigure"
engines=${ENGINES:-embedded native}
args=()
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
if [[ ${1:-} == --quick ]]; then
  shift
  args=(--rounds 2 --requests 200 --warmup 100)
fi
args+=("$@")

echo "compiling the test classes of nixl-spring-boot-autoconfigure (offline)" >&2
(cd "$root" && ./mvnw -o -q -B -pl nixl-spring-boot-autoconfigure -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt) >&2 \
  || { echo "compiling failed (./mvnw -o -pl nixl-spring-boot-autoconfigure -am test-compile)" >&2; exit 1; }
classpath="$module/target/test-classes:$module/target/classes:$(cat "$module/target/test-classpath.txt")"

echo "machine: $(nproc) cores, $(sed -nE 's/^model name\s*:\s*//p' /proc/cpuinfo | head -n 1); load $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for engine in $engines; do
  echo
  # shellcheck disable=SC2086 # NIXL4J_JAVA_OPTS holds several options
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED ${NIXL4J_JAVA_OPTS:--Xmx2g} -cp "$classpath" \
    dev.nixl4j.autoconfigure.tracing.KvTracingCostBench --engine "$engine" "${args[@]}" || status=$?
done
exit $status
