#!/usr/bin/env bash
# Installs NIXL's Python API (PyPI wheel nixl-cu12, the version in src/native/nixl.version) and
# numpy into a virtual environment outside the repository, and prints the path of its python.
#
#   src/python/install-python-nixl.sh           # idempotent; a no-op when already installed
#   NIXL4J_CACHE=/some/dir src/python/install-python-nixl.sh
#
# The wheel declares torch as a dependency but its agent API runs without it, so it is installed
# with --no-deps (torch is several GiB). The Java interop tests look for the venv at
# $NIXL4J_CACHE/python-venv (default ~/.cache/nixl4j/python-venv).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(grep -v '^#' "$here/../native/nixl.version" | tr -d '[:space:]')
cache=${NIXL4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nixl4j}
venv="$cache/python-venv"
stamp="$venv/.nixl-cu12-$version"

if [[ -f "$stamp" && -x "$venv/bin/python" ]]; then
  echo "$venv/bin/python"
  exit 0
fi

python=${PYTHON:-$(command -v python3.11 || command -v python3 || true)}
if [[ -z "$python" ]]; then
  echo "install-python-nixl: needs python3 (3.11: the nixl-cu12 wheels are built per interpreter)" >&2
  exit 1
fi

mkdir -p "$cache"
rm -rf "$venv"
"$python" -m venv "$venv" >&2
echo "install-python-nixl: installing nixl-cu12==$version (without torch) and numpy into $venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: numpy >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  "nixl-cu12==$version" >&2
# Importing the bindings loads the native library: fail here, not in the tests, when it cannot.
UCX_MODULES=${UCX_MODULES:-^ib} "$venv/bin/python" -c 'import nixl_cu12._api' >&2
touch "$stamp"
echo "$venv/bin/python"
