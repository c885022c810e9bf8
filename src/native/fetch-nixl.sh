#!/usr/bin/env bash
# Fetches NIXL's native libraries from a pinned PyPI wheel (src/native/wheels: one line per variant,
# wheel name, platform and SHA-256) into a cache directory outside the repository and prints the
# directory that holds libnixl_capi.so.
#
#   src/native/fetch-nixl.sh [variant]  # install (idempotent; a no-op when already there)
#   NIXL4J_CACHE=/some/dir src/native/fetch-nixl.sh linux-aarch64
#
# The variant defaults to linux-x86_64 (nixl-cu12 for x86-64). Layout of the cache (RPATHs inside
# the wheel are $ORIGIN-relative, so the two folders stay siblings); <dir> is <wheel>-<version>,
# with -aarch64 appended for aarch64 wheels:
#   $NIXL4J_CACHE/<dir>/lib/             libnixl*.so, libnixl_capi.so, plugins/
#   $NIXL4J_CACHE/<dir>/nixl_cuNN.libs/  bundled UCX, gRPC, etcd client, ...
#   $NIXL4J_CACHE/<dir>/WHEEL            "<sha256>  <wheel file name>" it came from
#   $NIXL4J_CACHE/<dir>/licenses/        the license files of the wheel's dist-info
#   $NIXL4J_CACHE/current -> nixl-cu12-<version>  what the Java locator looks at (linux-x86_64 only)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(grep -v '^#' "$here/nixl.version" | tr -d '[:space:]')
variant=${1:-linux-x86_64}
read -r _ _ dist platform _ pinned < <(awk -v v="$variant" '$1 == v && $1 !~ /^#/' "$here/wheels") || {
  echo "fetch-nixl: no variant '$variant' in $here/wheels" >&2; exit 1; }
module=${dist//-/_}
cache=${NIXL4J_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nixl4j}
name="$dist-$version"
[[ $platform == *_x86_64 ]] || name="$name-${platform##*_2_28_}"
dest="$cache/$name"
# Only the default variant is what the Java locator's "nixl4j cache" place points at.
link_current() { if [[ $variant == linux-x86_64 ]]; then ln -sfn "$name" "$cache/current"; fi; }

# A complete cache without WHEEL predates that record: the wheel is downloaded again for its record
# and licenses only, and the libraries, which running processes may have loaded, stay in place.
record_only=false
if [[ -f "$dest/.complete" && -f "$dest/lib/libnixl_capi.so" && -f "$dest/lib/NIXL_VERSION" ]]; then
  if [[ -f "$dest/WHEEL" ]]; then
    recorded=$(cut -d' ' -f1 "$dest/WHEEL")
    if [[ $recorded != "$pinned" ]]; then
      echo "fetch-nixl: $dest came from a wheel with SHA-256 $recorded, not the pinned $pinned;" >&2
      echo "            remove it and run again" >&2
      exit 1
    fi
    link_current
    echo "$dest/lib"
    exit 0
  fi
  record_only=true
fi

python=${PYTHON:-$(command -v python3 || command -v python || true)}
if [[ -z "$python" ]] || ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "fetch-nixl: needs python3 with pip to download the $dist wheel from PyPI" >&2
  echo "            (Debian: apt-get install -y python3-pip)" >&2
  exit 1
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fetch-nixl: downloading $dist==$version ($platform) from PyPI" >&2
# The native libraries inside do not depend on the Python version; pin one so that any
# interpreter can fetch the same file.
"$python" -m pip download --quiet --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp --platform "$platform" \
  -d "$work" "$dist==$version" >&2
wheel=$(ls "$work"/"$module"-*.whl)

"$python" - "$wheel" "$work/out" "$module" "$pinned" <<'PY'
import hashlib, os, sys, zipfile
wheel, out, module, pinned = sys.argv[1:5]
digest = hashlib.sha256()
with open(wheel, "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        digest.update(block)
if digest.hexdigest() != pinned:
    sys.exit(f"fetch-nixl: {os.path.basename(wheel)} has SHA-256 {digest.hexdigest()}, not the pinned {pinned}")
keep = {f".{module}.mesonpy.libs/": "lib/", f"{module}.libs/": f"{module}.libs/"}
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        targets = [target + info.filename[len(prefix):] for prefix, target in keep.items()
                   if info.filename.startswith(prefix)]
        marker = ".dist-info/licenses/"
        if marker in info.filename and info.filename.split("/", 1)[0].endswith(".dist-info"):
            targets.append("licenses/" + info.filename.split(marker, 1)[1])
        for target in targets:
            if info.is_dir() or ".." in target.split("/"):
                continue
            path = os.path.join(out, target)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with z.open(info) as src, open(path, "wb") as dst:
                dst.write(src.read())
            os.chmod(path, 0o644 if target.startswith("licenses/") else 0o755)
with open(os.path.join(out, "WHEEL"), "w") as f:
    f.write(f"{digest.hexdigest()}  {os.path.basename(wheel)}\n")
PY

test -f "$work/out/lib/libnixl_capi.so" || { echo "fetch-nixl: the wheel has no libnixl_capi.so" >&2; exit 1; }
if [[ $record_only == true ]]; then
  if [[ -d "$work/out/licenses" ]]; then
    rm -rf "$dest/licenses"
    mv -T "$work/out/licenses" "$dest/licenses"
  fi
  mv "$work/out/WHEEL" "$dest/WHEEL"
  link_current
  echo "fetch-nixl: recorded the wheel of the NIXL $version native libraries" >&2
  echo "$dest/lib"
  exit 0
fi
echo "$version" > "$work/out/lib/NIXL_VERSION"
touch "$work/out/.complete"
# The old copy moves aside (removed with $work) so that the directory is missing only between two renames.
if [[ -e "$dest" ]]; then mv -T "$dest" "$work/old"; fi
mv -T "$work/out" "$dest"
link_current
echo "fetch-nixl: installed NIXL $version native libraries ($variant, $dist)" >&2
echo "$dest/lib"
