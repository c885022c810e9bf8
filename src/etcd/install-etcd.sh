#!/usr/bin/env bash
# Makes sure the etcd server binary that the metadata-exchange tests start is installed
# (Debian's etcd-server, /usr/bin/etcd or $ETCD_BINARY). Installs it with apt-get when missing and
# this runs as root; it never starts an etcd service: each test starts and stops its own server.
#
#   src/etcd/install-etcd.sh     # a no-op when etcd is already there
set -euo pipefail

etcd=${ETCD_BINARY:-/usr/bin/etcd}
if [[ -x "$etcd" ]]; then
  exit 0
fi

fail() {
  echo "install-etcd: $1" >&2
  echo "              the etcd tests need it: install Debian's etcd-server (apt-get install etcd-server)" >&2
  echo "              or point ETCD_BINARY at an etcd binary" >&2
  exit 1
}

[[ "$(id -u)" == 0 ]] || fail "$etcd is missing and installing it needs root"
command -v apt-get >/dev/null 2>&1 || fail "$etcd is missing and there is no apt-get here"

echo "install-etcd: installing etcd-server with apt-get" >&2
# Debian's package starts its service unless a policy says no; the tests want no shared server.
policy=/usr/sbin/policy-rc.d
added_policy=
if [[ ! -e "$policy" ]]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  added_policy=yes
fi
trap '[[ -n "$added_policy" ]] && rm -f "$policy"' EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || fail "apt-get update failed"
apt-get install -y -qq --no-install-recommends etcd-server >/dev/null || fail "apt-get install etcd-server failed"
[[ -x "$etcd" ]] || fail "etcd-server is installed but $etcd is not there"
echo "install-etcd: $("$etcd" --version | head -n 1)" >&2
