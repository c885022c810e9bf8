#!/usr/bin/env bash
# Loads the aarch64 native bundle (nixl-native-linux-aarch64) in an aarch64 Java 25 under
# qemu-user emulation and runs `nixl4j selftest` (two agents, UCX, DRAM): the aarch64 build of
# NIXL, its UCX and the loader's choice of the aarch64 artifact, on an x86-64 host.
#
#   src/native/aarch64-smoke.sh [<class path> <aarch64 artifact>]
#
# Without arguments it takes nixl-cli's compiled classes and runtime class path (./mvnw -pl
# nixl-cli -am compile) and nixl-native-linux-aarch64/target/classes (./mvnw -pl
# nixl-native-linux-aarch64 process-resources). The class path must not hold another native
# artifact. Installs the emulation first (src/native/install-aarch64-emulation.sh). Bounded by
# NIXL4J_AARCH64_TIMEOUT seconds (default 300); extracts into a fresh cache of its own.
# Exit status: selftest's (0 every check passed), 124 past the bound, 3 when the emulation cannot be had.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
if [[ $# -eq 2 ]]; then
  classpath=$1
  artifact=$2
elif [[ $# -eq 0 ]]; then
  list="$root/nixl-cli/target/runtime-classpath.txt"
  [[ -f $list ]] || { echo "aarch64-smoke: $list is missing: ./mvnw -pl nixl-cli -am compile" >&2; exit 2; }
  classpath="$root/nixl-cli/target/classes:$(tr ':' '\n' < "$list" | grep -v '/nixl-native-linux-' | paste -sd:)"
  artifact="$root/nixl-native-linux-aarch64/target/classes"
else
  echo "usage: aarch64-smoke.sh [<class path> <aarch64 artifact>]" >&2
  exit 2
fi
[[ -e "$artifact/META-INF/nixl4j/native/linux-aarch64/bundle.properties" || -f "$artifact" ]] \
  || { echo "aarch64-smoke: no aarch64 bundle in $artifact" >&2; exit 2; }

java=$("$here/install-aarch64-emulation.sh") || exit 3
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
start=$(date +%s)
status=0
# The host's NIXL places would win over the class path: none of them is passed on.
env -u NIXL_LIB_DIR -u NIXL_PREFIX -u VIRTUAL_ENV -u CONDA_PREFIX -u NIXL_PLUGIN_DIR -u NIXL4J_NATIVE_VARIANT \
  NIXL4J_CACHE="$cache" timeout --kill-after=10 "${NIXL4J_AARCH64_TIMEOUT:-300}" \
  qemu-aarch64-static "$java" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -Xmx256m \
  -cp "$classpath:$artifact" dev.nixl4j.cli.Nixl4jCli selftest || status=$?
echo "aarch64-smoke: selftest under qemu-aarch64-static exited with $status after $(( $(date +%s) - start )) s"
exit "$status"
