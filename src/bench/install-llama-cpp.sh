#!/usr/bin/env bash
# Installs llama.cpp's Python binding (PyPI's llama-cpp-python, which compiles llama.cpp from source
# with cmake) into a virtual environment outside the repository and prints the path of its python.
# The model benchmark (src/bench/model-vs-llama-cpp.sh) and src/model/llama_cpp_ref.py run with it.
#
#   src/bench/install-llama-cpp.sh            # idempotent; a no-op when already installed
#   NIXL4J_CACHE=/some/dir src/bench/install-llama-cpp.sh
#   CMAKE_BUILD_PARALLEL_LEVEL=2 src/bench/install-llama-cpp.sh   # fewer compile jobs on a busy machine
#
# The venv lives at $NIXL4J_CACHE/llama-cpp-venv (default ~/.cache/nixl4j/llama-cpp-venv). On
# Debian without a C/C++ compiler, cmake or make, they are installed with apt-get.
set -euo pipefail

version=0.3.36
cache=${NIXL4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nixl4j}
venv="$cache/llama-cpp-venv"
stamp="$venv/.llama-cpp-python-$version"

if [[ -f "$stamp" && -x "$venv/bin/python" ]]; then
  echo "$venv/bin/python"
  exit 0
fi

python=${PYTHON:-$(command -v python3 || true)}
if [[ -z "$python" ]]; then
  echo "install-llama-cpp: needs python3" >&2
  exit 1
fi

missing=()
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
command -v cmake >/dev/null || missing+=(cmake)
command -v make >/dev/null || missing+=(make)
if (( ${#missing[@]} )); then
  if command -v apt-get >/dev/null; then
    echo "install-llama-cpp: installing Debian's ${missing[*]}" >&2
    sudo=(); (( EUID == 0 )) || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq >/dev/null
    "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "install-llama-cpp: needs ${missing[*]}" >&2
    exit 1
  fi
fi

mkdir -p "$cache"
rm -rf "$venv"
"$python" -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
echo "install-llama-cpp: building llama-cpp-python $version (llama.cpp from source; several minutes)" >&2
# A CPU-only build for this machine; CMAKE_BUILD_PARALLEL_LEVEL (if set) bounds the compile jobs.
CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_BLAS=OFF"} \
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
  "llama-cpp-python==$version" >&2
"$venv/bin/python" -c 'import llama_cpp; print("install-llama-cpp: llama_cpp", llama_cpp.__version__)' >&2
touch "$stamp"
echo "$venv/bin/python"
