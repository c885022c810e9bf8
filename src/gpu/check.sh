#!/usr/bin/env bash
# The GPU check: packs what a lent GPU machine (no JDK, no network, at most 64 MiB of files per
# run) needs into one folder, and runs src/gpu/GpuCheck.java there, which prints one JSON summary.
#
#   src/gpu/check.sh pack [--out DIR] [--native JAR|DIR] [--core JAR] [--kv JAR] [--runtime DIR]
#       DIR (default .gpucheck/pack, ignored by git) gets runtime/ (a jlinked Java 25),
#       nixl-core.jar (with dev.nixl4j.cuda), nixl-kv.jar (PagedKvCache), nixl-native.jar
#       (NIXL's bundle; a folder is zipped into a jar: either a folder with META-INF/ or the
#       META-INF/nixl4j/native folder itself) and gpucheck.jar. Fails when DIR is over 64 MiB.
#       Defaults: the jars under nixl-core/target, nixl-kv/target and
#       nixl-native-linux-x86_64-cu13/target (NIXL for CUDA 13, the lent machine's; built
#       offline when missing).
#   src/gpu/check.sh run [--pack DIR]
#       Runs the check with the packed runtime and prints its JSON summary (one line) on stdout.
#       nixl-core unpacks the packed bundle into a fresh temporary NIXL4J_CACHE.
#       Logs (the JVM's output, UCX's log with UCX_PROTO_INFO, ucx_info -d) go to
#       $GPUCHECK_LOGS (default: a new temporary folder; its path is printed on stderr).
#       Exit: 0 every check passed, 1 a check failed or the check broke, 2 usage,
#       3 no usable GPU ({"gpu": false, "reason": "..."}).
#   src/gpu/check.sh dry-run [--pack DIR]
#       Runs every step of the check on a host without a GPU: src/gpu/stand-in-cudart.c (built
#       with cc, loaded through -Dnixl.cuda.library) hands out host memory as "device" memory,
#       registered as DRAM; the KV caches are PagedKvCache in host memory. Needs ~3.5 GiB of memory.
#   src/gpu/check.sh ci
#       What CI runs: packs into a temporary folder (checking the size) and runs the check,
#       which must answer with a JSON summary and exit 0 or 3 (3 where there is no GPU); then,
#       where cc exists, the dry run, which must pass (GPUCHECK_DRY_RUN=false skips it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
limit=$((64 * 1024 * 1024))
# temporary folders of this shell, removed when it exits (a function run in $(...) removes its own)
temporary=()
trap 'rm -rf "${temporary[@]}"' EXIT

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

newest_jar() {
  # the module's main jar, not its -sources or -javadoc jar
  ls -t "$1"/target/"$2"-*.jar 2>/dev/null | grep -v -e '-sources.jar$' -e '-javadoc.jar$' | head -1 || true
}

pack() {
  local out="$root/.gpucheck/pack" native="" core="" kv="" runtime=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --out) out=$2; shift 2 ;;
      --native) native=$2; shift 2 ;;
      --core) core=$2; shift 2 ;;
      --kv) kv=$2; shift 2 ;;
      --runtime) runtime=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  source "$root/bin/lib/java-home.sh"
  if [[ -z "$core" || -z "$kv" ]]; then
    local built_core built_kv
    built_core=$(newest_jar "$root/nixl-core" nixl-core)
    built_kv=$(newest_jar "$root/nixl-kv" nixl-kv)
    if [[ ( -z "$core" && -z "$built_core" ) || ( -z "$kv" && -z "$built_kv" ) ]]; then
      # nixl-kv is built in the same reactor as the nixl-core it compiles against
      (cd "$root" && ./mvnw -o -q -B -pl nixl-core,nixl-kv package -Dmaven.test.skip=true -Djacoco.skip=true)
      built_core=$(newest_jar "$root/nixl-core" nixl-core)
      built_kv=$(newest_jar "$root/nixl-kv" nixl-kv)
    fi
    core=${core:-$built_core}
    kv=${kv:-$built_kv}
  fi
  if [[ -z "$native" ]]; then
    # the machine to plan for runs CUDA 13 (driver 580): NIXL's cu13 build
    native=$(newest_jar "$root/nixl-native-linux-x86_64-cu13" nixl-native-linux-x86_64-cu13)
    if [[ -z "$native" ]]; then
      (cd "$root" && ./mvnw -o -q -B -pl nixl-native-linux-x86_64-cu13 package -DskipTests)
      native=$(newest_jar "$root/nixl-native-linux-x86_64-cu13" nixl-native-linux-x86_64-cu13)
    fi
  fi
  [[ -f "$core" ]] || { echo "check.sh: no nixl-core jar ($core)" >&2; exit 1; }
  [[ -f "$kv" ]] || { echo "check.sh: no nixl-kv jar ($kv)" >&2; exit 1; }
  [[ -e "$native" ]] || { echo "check.sh: no native bundle ($native)" >&2; exit 1; }

  rm -rf "$out"
  mkdir -p "$out"
  local work
  work=$(mktemp -d)
  temporary+=("$work")

  if [[ -n "$runtime" ]]; then
    cp -a "$runtime" "$out/runtime"
  else
    # nixl-core requires java.base and java.net.http, nixl-kv jdk.management (a host cache's
    # size is checked against the machine's memory); the JDK's own jdk.unsupported is kept
    # for libraries that look for sun.misc.Unsafe. Debug symbols off libjvm.so save ~5 MB.
    "$JAVA_HOME/bin/jlink" --add-modules java.base,java.net.http,jdk.management,jdk.unsupported \
      --strip-java-debug-attributes --strip-native-debug-symbols=exclude-debuginfo-files \
      --no-header-files --no-man-pages --compress=zip-9 --output "$out/runtime"
    if command -v strip >/dev/null; then
      strip --strip-unneeded "$out/runtime/lib/server/libjvm.so"
    fi
  fi

  cp "$core" "$out/nixl-core.jar"
  cp "$kv" "$out/nixl-kv.jar"
  if [[ -d "$native" ]]; then
    if [[ -d "$native/META-INF" ]]; then
      (cd "$native" && "$JAVA_HOME/bin/jar" --create --file "$out/nixl-native.jar" -C . .)
    else
      mkdir -p "$work/bundle/META-INF/nixl4j"
      cp -a "$native" "$work/bundle/META-INF/nixl4j/native"
      "$JAVA_HOME/bin/jar" --create --file "$out/nixl-native.jar" -C "$work/bundle" .
    fi
  else
    cp "$native" "$out/nixl-native.jar"
  fi

  mkdir -p "$work/classes"
  "$JAVA_HOME/bin/javac" -nowarn --release 25 -cp "$out/nixl-core.jar:$out/nixl-kv.jar" -d "$work/classes" "$root/src/gpu/GpuCheck.java"
  "$JAVA_HOME/bin/jar" --create --file "$out/gpucheck.jar" -C "$work/classes" .
  "$out/runtime/bin/java" -version >/dev/null 2>&1 || { echo "check.sh: the packed runtime does not start" >&2; exit 1; }

  local size
  size=$(du -sb "$out" | cut -f1)
  {
    echo "check.sh: packed $out: $size bytes ($((size / 1024 / 1024)) MiB; limit $limit)"
    du -sb "$out/runtime" "$out"/*.jar | sed 's/^/  /'
  } >&2
  if ((size > limit)); then
    echo "check.sh: the pack is over 64 MiB" >&2
    exit 1
  fi
  # The device tool's 64 MiB hold the checkout's tracked files too.
  local tree
  tree=$(cd "$root" && git ls-files -z 2>/dev/null | xargs -0 cat 2>/dev/null | wc -c || echo 0)
  echo "check.sh: with the tracked files of $root ($tree bytes): $((size + tree)) bytes" >&2
  if ((size + tree > limit)); then
    echo "check.sh: warning: pack and checkout together are over 64 MiB: the device tool would refuse them" >&2
  fi
}

run() {
  local pack="$root/.gpucheck/pack"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --pack) pack=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ -x "$pack/runtime/bin/java" ]] || { echo "check.sh: no pack at $pack (run: check.sh pack)" >&2; exit 2; }
  local logs=${GPUCHECK_LOGS:-$(mktemp -d)}
  mkdir -p "$logs"
  echo "check.sh: logs in $logs" >&2
  local sites=""
  if command -v python3 >/dev/null; then
    sites=$(timeout 30 python3 -c 'import site, sys; print(":".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null || true)
  fi
  # the driver's libcuda and libnvidia-ml (UCX's CUDA modules), and the CUDA runtimes of the
  # Python environment's NVIDIA wheels (UCX's libucm_cuda of a cu12 bundle needs libcudart.so.12)
  local extra="" folder
  for folder in /usr/local/nvidia/lib64 /usr/local/nvidia/lib $(IFS=:; for site in $sites; do ls -d "$site"/nvidia/*/lib 2>/dev/null; done); do
    [[ -d "$folder" ]] && extra="$extra${extra:+:}$folder"
  done
  if [[ -n "$extra" ]]; then
    export LD_LIBRARY_PATH="$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "check.sh: LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >"$logs/environment.txt"
  fi
  if command -v ucx_info >/dev/null; then
    timeout 30 ucx_info -d >"$logs/ucx_info.txt" 2>&1 || true
  fi
  # A fresh cache for nixl-core to unpack the packed bundle into, so that the check runs the
  # bundle it carries, as on the lent machine, never one cached earlier on this host.
  local cache
  cache=$(mktemp -d)
  temporary+=("$cache")
  local status=0
  NIXL4J_CACHE=$cache UCX_PROTO_INFO=${UCX_PROTO_INFO:-y} UCX_LOG_FILE=${UCX_LOG_FILE:-$logs/ucx.%p.log} \
    timeout 290 "$pack/runtime/bin/java" --enable-native-access=ALL-UNNAMED \
    -cp "$pack/gpucheck.jar:$pack/nixl-core.jar:$pack/nixl-kv.jar:$pack/nixl-native.jar" \
    -Dgpucheck.summary="$logs/summary.json" -Dgpucheck.logs="$logs" \
    ${GPUCHECK_JAVA_OPTS:-} GpuCheck >"$logs/java.log" 2>&1 || status=$?
  rm -rf "$cache"
  if [[ -s "$logs/summary.json" ]]; then
    cat "$logs/summary.json"
  else
    # the JVM died or timed out before writing its summary: still one JSON line
    printf '{"gpu":null,"ok":false,"error":"the check ended with exit %d and no summary; see %s"}\n' \
      "$status" "$logs/java.log"
    tail -n 40 "$logs/java.log" >&2 || true
    ((status == 0 || status == 3)) && status=1
  fi
  return "$status"
}

dry_run() {
  local work status=0
  work=$(mktemp -d)
  temporary+=("$work")
  cc -shared -fPIC -O2 -o "$work/libcudart.so" "$root/src/gpu/stand-in-cudart.c"
  GPUCHECK_JAVA_OPTS="-Dnixl.cuda.library=$work/libcudart.so -Dgpucheck.memoryType=DRAM ${GPUCHECK_JAVA_OPTS:-}" \
    run "$@" || status=$?
  rm -rf "$work"
  return "$status"
}

ci() {
  local work
  work=$(mktemp -d)
  temporary+=("$work")
  pack --out "$work/pack"
  local status=0 summary
  summary=$(GPUCHECK_LOGS="$work/logs" run --pack "$work/pack" 2>/dev/null) || status=$?
  echo "check.sh: run gave exit $status: $summary" >&2
  case "$status" in
    3) [[ "$summary" == '{"gpu":false,"reason":"'* ]] || { echo "check.sh: a refusal without its JSON" >&2; return 1; } ;;
    0) [[ "$summary" == '{"gpu":true,'* ]] || { echo "check.sh: no JSON summary" >&2; return 1; } ;;
    *) return 1 ;;
  esac
  if [[ "${GPUCHECK_DRY_RUN:-true}" != false ]] && command -v cc >/dev/null; then
    status=0
    summary=$(GPUCHECK_LOGS="$work/dry-run" dry_run --pack "$work/pack" 2>/dev/null) || status=$?
    echo "check.sh: dry run gave exit $status: ${summary:0:200}..." >&2
    [[ "$status" == 0 && "$summary" == '{"gpu":true,"ok":true,'* ]] || return 1
  else
    echo "check.sh: dry run skipped (GPUCHECK_DRY_RUN=false, or no cc)" >&2
  fi
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  run) shift; run "$@" ;;
  dry-run) shift; dry_run "$@" ;;
  ci) shift; ci ;;
  *) usage ;;
esac
