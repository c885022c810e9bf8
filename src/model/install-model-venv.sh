#!/usr/bin/env bash
# Installs the independent references that the model's tests compare the Java engine with into a
# virtual environment outside the repository, and prints the path of its python: Hugging Face's
# `tokenizers` (the tokenizer check), jinja2 (the chat template check), and numpy with the `gguf` package (the float32 logit
# reference reads and dequantizes the same GGUF file). Versions are pinned in
# src/model/requirements.txt.
#
#   src/model/install-model-venv.sh           # idempotent; a no-op when already installed
#   NIXL4J_CACHE=/some/dir src/model/install-model-venv.sh
#
# The tests look for the venv at $NIXL4J_CACHE/model-venv (default ~/.cache/nixl4j/model-venv).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${NIXL4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nixl4j}
venv="$cache/model-venv"
digest=$(sha256sum "$here/requirements.txt" | cut -c1-16)
stamp="$venv/.requirements-$digest"

if [[ -f "$stamp" && -x "$venv/bin/python" ]]; then
  echo "$venv/bin/python"
  exit 0
fi

python=${PYTHON:-$(command -v python3 || true)}
if [[ -z "$python" ]]; then
  echo "install-model-venv: needs python3" >&2
  exit 1
fi

mkdir -p "$cache"
rm -rf "$venv"
"$python" -m venv "$venv" >&2
echo "install-model-venv: installing $(grep -v '^#' "$here/requirements.txt" | tr '\n' ' ')into $venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
  -r "$here/requirements.txt" >&2
"$venv/bin/python" -c 'import tokenizers, gguf, numpy, jinja2' >&2
touch "$stamp"
echo "$venv/bin/python"
