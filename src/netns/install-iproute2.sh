#!/usr/bin/env bash
# Makes sure iproute2's ip, with which the two-host test (sample-app's TwoHostPrefillDecodeIT, through
# bin/sample-two-hosts up/down) makes network namespaces and veth pairs, is installed. Installs it
# with apt-get when missing and this runs as root.
#
#   src/netns/install-iproute2.sh     # a no-op when ip is already there
set -euo pipefail

if command -v ip >/dev/null 2>&1; then
  exit 0
fi

fail() {
  echo "install-iproute2: $1" >&2
  echo "                  the two-host test needs it: apt-get install iproute2" >&2
  exit 1
}

[[ "$(id -u)" == 0 ]] || fail "ip is missing and installing it needs root"
command -v apt-get >/dev/null 2>&1 || fail "ip is missing and there is no apt-get here"

echo "install-iproute2: installing iproute2 with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || fail "apt-get update failed"
apt-get install -y -qq --no-install-recommends iproute2 >/dev/null || fail "apt-get install iproute2 failed"
command -v ip >/dev/null 2>&1 || fail "iproute2 is installed but ip is not on the PATH"
