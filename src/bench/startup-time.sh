#!/usr/bin/env bash
# Times a Spring Boot application on nixl4j from `java -jar` to its first /actuator/health answer
# UP, cold (a fresh HOME and XDG_CACHE_HOME: nothing extracted yet) then warm (the same HOME
# again), and prints the engine the health reports. No JVM flag and no NIXL_* variable is passed.
#
#   src/bench/startup-time.sh JAR [ROUNDS] [APPLICATION ARGUMENTS...]
#   e.g. src/bench/startup-time.sh consumer-tests/target/it/spring-boot-app/target/consumer-app.jar 3 \
#          --nixl.metadata.http.token=some-long-random-token
# The application must expose health details (management.endpoint.health.show-details=always).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/bin/lib/java-home.sh"
jar=$1
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

for round in $(seq 1 "$rounds"); do
  home=$(mktemp -d)
  for kind in cold warm; do
    port=$(free_port)
    start=$(date +%s%N)
    env -u NIXL_LIB_DIR -u NIXL_PREFIX -u VIRTUAL_ENV -u CONDA_PREFIX -u NIXL4J_CACHE \
      HOME="$home" XDG_CACHE_HOME="$home/.cache" \
      "$JAVA_HOME/bin/java" -jar "$jar" --server.port="$port" "$@" >"$home/$kind.log" 2>&1 &
    pid=$!
    body=""
    for _ in $(seq 1 1500); do   # at most about 60 s
      body=$(curl -s -m 1 "http://127.0.0.1:$port/actuator/health" 2>/dev/null || true)
      [[ $body == *'"status":"UP"'* ]] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.02
    done
    end=$(date +%s%N)
    engine=$(grep -o '"engine":"[A-Z]*"' <<<"$body" | head -n 1 || true)
    if [[ $body != *'"status":"UP"'* ]]; then
      echo "$kind round $round: no health UP (log: $home/$kind.log)" >&2
      kill "$pid" 2>/dev/null || true
      exit 1
    fi
    awk -v k="$kind" -v r="$round" -v ns=$((end - start)) -v e="$engine" \
      'BEGIN { printf "%s round %d: %.2f s to health UP, %s\n", k, r, ns / 1e9, e }'
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$home"
done
