#!/usr/bin/env python3
"""Assembles the native bundle of a nixl-native-* module from its pinned wheel.

    src/native/bundle-nixl.py <output dir> [variant]

The variant (default linux-x86_64) is a line of src/native/wheels, which names the module, the
PyPI wheel (nixl-cu12 or nixl-cu13), its platform, the CUDA major version it was built for and
its SHA-256. Runs fetch-nixl.sh for it (a no-op when the wheel is already unpacked in the cache),
then writes <output dir>/<variant>/ and <output dir>/licenses/nixl/ (the license files of the
wheel). The first holds what nixl-core's loader extracts: lib/ and nixl_cuNN.libs/ as siblings,
exactly as in the cache (the wheel's RPATHs are $ORIGIN-relative); files.sha256 ("<sha256>
<relative path>" per file, sorted by path); bundle.properties (nixl.version, variant, arch,
cuda.major, wheel, wheel.sha256 and bundle.id, the SHA-256 of files.sha256).

Only what NIXL loads for the plugins nixl4j supports goes in: libnixl_capi.so, the UCX and POSIX
plugins, UCX's transport modules (libucs dlopens them from the ucx/ directory beside it), and
the transitive closure of their DT_NEEDED entries. The closure is resolved the way ld.so does
it for these files (RPATH/RUNPATH with $ORIGIN), reading the ELF dynamic sections here rather
than trusting readelf or ldd to be installed. A dependency that resolves neither inside the
wheel nor to a library every supported host has fails the build, and so does an ELF file built
for another machine than the variant's (x86-64 or AArch64).
"""
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile

# What NIXL loads by name or by directory scan. The plugins are found in lib/plugins/ (beside
# libnixl.so); nixl_cu12.libs/nixl/ holds a second copy of every plugin for the wheel's Python
# module, which this bundle does not carry.
ROOTS = ["lib/libnixl_capi.so", "lib/plugins/libplugin_UCX.so", "lib/plugins/libplugin_POSIX.so"]
DATA = ["lib/NIXL_VERSION"]

# libucs loads lib<framework>_<name>.so.* from ucx/ beside itself. The transport modules stay:
# without them a host with RDMA (ib, ib_mlx5, efa) or GPUs (cuda) would fall back to TCP, and
# shared memory would lose cma. Left out: the perftest modules (only the ucx_perftest tool,
# which is not bundled, loads them) and ib_mlx5_gda/gdp (GPU-initiated transfers of UCX's device
# API, which nothing nixl4j calls reaches; they also need NVML).
UCX_MODULE_DIR = "nixl_cu12.libs/ucx/"  # set for the variant's wheel in main()
UCX_MODULE_SKIPPED = ("libucx_perftest_", "libuct_ib_mlx5_gda.", "libuct_ib_mlx5_gdp.")

# Libraries the host provides: glibc, the C++ runtime, zlib and OpenSSL 3 (gRPC and the etcd
# client of libnixl.so link them; the wheel does not carry them).
SYSTEM = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libstdc++.so.6", "libgcc_s.so.1",
    "libz.so.1", "libssl.so.3", "libcrypto.so.3",
}
# Hardware-specific libraries a UCX transport module needs (the NVIDIA driver and CUDA runtime,
# AWS EFA's provider); where the host lacks them, libucs skips that module and the other
# transports work.
HOST_OPTIONAL_FOR_UCX_MODULES = {"libcuda.so.1", "libcudart.so.12", "libcudart.so.13", "libnvidia-ml.so.1",
                                 "libefa.so.1"}

# ELF e_machine of each platform the wheels are built for.
MACHINES = {"x86_64": 62, "aarch64": 183}
MACHINE = None  # set for the variant in main()

DT_NEEDED, DT_STRTAB, DT_RPATH, DT_RUNPATH = 1, 5, 15, 29


def fail(message):
    print(f"bundle-nixl: {message}", file=sys.stderr)
    sys.exit(1)


def elf_dynamic(path):
    """Returns (needed, search path) of a 64-bit little-endian ELF file, or None if not ELF."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        return None
    if data[4] != 2 or data[5] != 1:
        fail(f"{path}: not a 64-bit little-endian ELF file")
    machine, = struct.unpack_from("<H", data, 0x12)
    if MACHINE is not None and machine != MACHINE:
        fail(f"{path}: ELF machine {machine}, not {MACHINE} as the variant's platform needs")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return [], []
    entries = []
    for off in range(dynamic[0], dynamic[0] + dynamic[1], 16):
        tag, value = struct.unpack_from("<qQ", data, off)
        if tag == 0:
            break
        entries.append((tag, value))

    def file_offset(vaddr):
        for start, offset, size in loads:
            if start <= vaddr < start + size:
                return vaddr - start + offset
        fail(f"{path}: DT_STRTAB outside the loaded segments")

    strtab = file_offset(next(v for t, v in entries if t == DT_STRTAB))

    def string(offset):
        start = strtab + offset
        return data[start:data.index(b"\0", start)].decode()

    needed = [string(v) for t, v in entries if t == DT_NEEDED]
    search = [p for t, v in entries if t in (DT_RPATH, DT_RUNPATH) for p in string(v).split(":") if p]
    return needed, search


def closure(root):
    """Relative paths of ROOTS, the UCX modules, and every library they need inside root."""
    ucx_modules = sorted(
        UCX_MODULE_DIR + name for name in os.listdir(os.path.join(root, UCX_MODULE_DIR))
        if name.startswith(("libuct_", "libucm_")) and ".so" in name and not name.endswith(".la")
        and not name.startswith(UCX_MODULE_SKIPPED))
    pending = ROOTS + ucx_modules
    seen = set()
    while pending:
        rel = pending.pop()
        if rel in seen:
            continue
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            fail(f"{rel} is not in the wheel")
        seen.add(rel)
        parsed = elf_dynamic(path)
        if parsed is None:
            fail(f"{rel} is not an ELF file")
        needed, search = parsed
        origin = os.path.dirname(path)
        dirs = [os.path.normpath(p.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)) for p in search]
        for name in needed:
            found = next((os.path.join(d, name) for d in dirs
                          if d.startswith(root + os.sep) and os.path.isfile(os.path.join(d, name))), None)
            if found is not None:
                pending.append(os.path.relpath(found, root))
            elif name in SYSTEM:
                continue
            elif rel.startswith(UCX_MODULE_DIR) and name in HOST_OPTIONAL_FOR_UCX_MODULES:
                continue
            else:
                fail(f"{rel} needs {name}, which is neither in the wheel (search path {search}) "
                     f"nor a library every host has")
    return seen


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def variant_line(here, variant):
    """Returns (module, wheel, platform, cuda major, sha256) of the variant in src/native/wheels."""
    with open(os.path.join(here, "wheels")) as f:
        for line in f:
            fields = line.split()
            if not line.startswith("#") and len(fields) == 6 and fields[0] == variant:
                return fields[1], fields[2], fields[3], int(fields[4]), fields[5]
    fail(f"no variant {variant} in src/native/wheels")


def main():
    global UCX_MODULE_DIR, MACHINE
    if len(sys.argv) not in (2, 3):
        fail("usage: bundle-nixl.py <output dir> [variant]")
    out = os.path.abspath(sys.argv[1])
    variant = sys.argv[2] if len(sys.argv) == 3 else "linux-x86_64"
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "nixl.version")) as f:
        version = "".join(line.strip() for line in f if not line.startswith("#"))
    _, dist, platform, cuda_major, pinned = variant_line(here, variant)
    arch = "aarch64" if platform.endswith("_aarch64") else "x86_64"
    MACHINE = MACHINES[arch]
    UCX_MODULE_DIR = dist.replace("-", "_") + ".libs/ucx/"

    fetched = subprocess.run(["bash", os.path.join(here, "fetch-nixl.sh"), variant], stdout=subprocess.PIPE,
                             text=True)
    if fetched.returncode != 0:
        fail(f"src/native/fetch-nixl.sh failed with exit status {fetched.returncode}")
    root = os.path.dirname(os.path.realpath(fetched.stdout.strip().splitlines()[-1]))
    with open(os.path.join(root, "lib", "NIXL_VERSION")) as f:
        fetched_version = f.read().strip()
    if fetched_version != version:
        fail(f"{root} holds NIXL {fetched_version}, not the pinned {version}")
    with open(os.path.join(root, "WHEEL")) as f:
        wheel_sha256, wheel = f.read().split()
    if wheel_sha256 != pinned:
        fail(f"{root} came from a wheel with SHA-256 {wheel_sha256}, not the pinned {pinned}")

    files = sorted(closure(root) | set(DATA))
    for rel in files:
        if rel.startswith("/") or ".." in rel.split("/"):
            fail(f"unsafe path {rel}")

    os.makedirs(out, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{variant}.", dir=out)
    lines = []
    for rel in files:
        target = os.path.join(staging, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(root, rel), target)
        os.chmod(target, 0o644 if rel in DATA else 0o755)
        lines.append(f"{sha256(target)}  {rel}\n")
    manifest = "".join(lines).encode()
    with open(os.path.join(staging, "files.sha256"), "wb") as f:
        f.write(manifest)
    with open(os.path.join(staging, "bundle.properties"), "w") as f:
        f.write(f"# NIXL's native libraries for {variant}, from the {dist} wheel named below\n"
                f"nixl.version={version}\n"
                f"variant={variant}\n"
                f"arch={arch}\n"
                f"cuda.major={cuda_major}\n"
                f"wheel={wheel}\n"
                f"wheel.sha256={wheel_sha256}\n"
                f"bundle.id={hashlib.sha256(manifest).hexdigest()}\n")

    final = os.path.join(out, variant)
    if os.path.exists(final):
        shutil.rmtree(final)
    os.rename(staging, final)

    licenses = os.path.join(out, "licenses", "nixl")
    if os.path.exists(licenses):
        shutil.rmtree(licenses)
    shutil.copytree(os.path.join(root, "licenses"), licenses)

    size = sum(os.path.getsize(os.path.join(final, rel)) for rel in files)
    print(f"bundle-nixl: {len(files)} files, {size} bytes of NIXL {version} in {final}")


if __name__ == "__main__":
    main()
