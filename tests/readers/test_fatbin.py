"""Fatbin reader: synthetic containers (offline, always) and nvcc-built objects cross-checked with cuobjdump."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import kept_dir

from glmcompat.readers.fatbin import (
    FLAG_ARCH_SPECIFIC,
    FLAG_FAMILY,
    FatbinCode,
    FatbinError,
    FatbinStream,
    gpu_code_of_elf,
    gpu_code_of_elf_detail,
    parse_fatbin,
)


def entry(kind: int, arch: int, flags: int = 0, payload: int = 32, hsize: int = 64) -> bytes:
    h = bytearray(hsize)
    struct.pack_into("<HHIQ", h, 0, kind, 0x101, hsize, payload)
    struct.pack_into("<I", h, 28, arch)
    struct.pack_into("<Q", h, 40, flags | 0x11)
    return bytes(h) + b"\xab" * payload


def container(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


SECTION = (
    container(entry(2, 90, FLAG_ARCH_SPECIFIC), entry(2, 100, FLAG_FAMILY), entry(1, 90))
    + container(entry(2, 80), entry(2, 120, FLAG_ARCH_SPECIFIC, payload=1000), entry(1, 120, FLAG_ARCH_SPECIFIC))
)


def test_names_and_flags() -> None:
    code = FatbinCode.of(parse_fatbin(SECTION))
    assert code.sass == ["sm_80", "sm_90a", "sm_100f", "sm_120a"]
    assert code.ptx == ["compute_90", "compute_120a"]
    assert code.entries == 6


@pytest.mark.parametrize("chunk", [1, 7, 64, 100000])
def test_stream_equals_parse(chunk: int) -> None:
    fs = FatbinStream(len(SECTION))
    for i in range(0, len(SECTION), chunk):
        fs.feed(SECTION[i:i + chunk])
    assert fs.finish() == parse_fatbin(SECTION)


def test_padding_between_containers() -> None:
    data = container(entry(2, 90)) + bytes(16) + container(entry(2, 100))
    assert FatbinCode.of(parse_fatbin(data)).sass == ["sm_90", "sm_100"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x01\x02\x03\x04" + bytes(12), "bad fatbin magic"),
        (container(entry(2, 90))[:-10], "runs past the section"),
        (struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 72) + entry(2, 90, payload=100)[:72], "runs past its container"),
        (container(entry(2, 90, hsize=64)[:4] + struct.pack("<I", 8) + entry(2, 90)[8:]), "runs past its container"),
        (container(entry(2, 5)), "implausible arch"),
    ],
    ids=["magic", "container-past-end", "payload-past-container", "tiny-header", "bad-arch"],
)
def test_malformed(data: bytes, message: str) -> None:
    with pytest.raises(FatbinError, match=message):
        parse_fatbin(data, "x.so: .nv_fatbin")


def test_stream_ends_early() -> None:
    fs = FatbinStream(len(SECTION), "x.so")
    fs.feed(SECTION[:100])
    with pytest.raises(FatbinError, match="ends early"):
        fs.finish()


def test_elf_without_fatbin() -> None:
    assert gpu_code_of_elf(sys.executable) == ([], [])


# -- nvcc-built fixtures, cross-checked with cuobjdump ----------------------------------------------

KERNEL = r"""
__global__ void add(float* a, float b) { a[threadIdx.x] += b; }
__global__ void mul(float* a, float b) { a[threadIdx.x] *= b; }
extern "C" void launch(float* a) { add<<<1, 32>>>(a, 1.0f); mul<<<1, 32>>>(a, 2.0f); }
"""

GENCODE = [
    "arch=compute_90a,code=sm_90a",
    "arch=compute_100a,code=sm_100a",
    "arch=compute_120a,code=sm_120a",
    "arch=compute_90,code=compute_90",
    "arch=compute_80,code=sm_80",
]


def _cuobjdump() -> str | None:
    exe = shutil.which("cuobjdump")
    if exe:
        return exe
    try:
        import nvidia  # type: ignore[import-not-found]
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        for cand in sorted(Path(base).glob("cu*/bin/cuobjdump")) + sorted(Path(base).glob("cuda_cuobjdump/bin/cuobjdump")):
            if cand.is_file():
                return str(cand)
    return None


def _built(tmp_path_factory: pytest.TempPathFactory, recipe: object, name: str,
           build: Callable[[Path], Path]) -> Path:
    """``build(directory)``'s library, built once per recipe and nvcc (its path and version) and kept for later
    sessions (:func:`tests.conftest.kept_dir`): nvcc takes seconds a library, and the bytes it writes for the same
    sources, flags and toolkit are the library every run would build."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256(json.dumps([nvcc, version, recipe]).encode()).hexdigest()[:16]
    kept = kept_dir(tmp_path_factory, "glmcompat-nvcc") / key / name
    if kept.is_file():
        return kept
    built = build(tmp_path_factory.mktemp(name))
    kept.parent.mkdir(parents=True, exist_ok=True)
    tmp = kept.with_name(f".{name}.{os.getpid()}.tmp")
    shutil.copyfile(built, tmp)
    os.replace(tmp, kept)  # a second worker building the same recipe replaces it with the same bytes
    return kept


@pytest.fixture(scope="session")
def nvcc_so(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _built(tmp_path_factory, [KERNEL, GENCODE], "libk.so", _nvcc_k)


def _nvcc_k(tmp: Path) -> Path:
    nvcc = shutil.which("nvcc")
    assert nvcc is not None
    src = tmp / "k.cu"
    src.write_text(KERNEL)
    out = tmp / "libk.so"
    cmd = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", str(out), str(src)]
    for g in GENCODE:
        cmd += ["-gencode", g]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"nvcc cannot build the fixture: {r.stderr.strip()[:200]}")
    return out


def test_nvcc_fixture(nvcc_so: Path) -> None:
    sass, ptx = gpu_code_of_elf(nvcc_so)
    assert sass == ["sm_80", "sm_90a", "sm_100a", "sm_120a"]
    assert ptx == ["compute_90"]


def test_agrees_with_cuobjdump(nvcc_so: Path) -> None:
    exe = _cuobjdump()
    if exe is None:
        pytest.skip("cuobjdump not installed (pip install nvidia-cuda-cuobjdump)")
    counts: Counter[str] = Counter()
    for flag, kind in (("--list-elf", "sm"), ("--list-ptx", "compute")):
        r = subprocess.run([exe, flag, str(nvcc_so)], capture_output=True, text=True, check=True)
        for arch in re.findall(r"\.(sm_\d+a?)\.(?:cubin|ptx)", r.stdout):
            counts[arch.replace("sm_", f"{kind}_")] += 1
    ours = gpu_code_of_elf_detail(nvcc_so).counts
    assert ours == dict(counts)


def test_bytes_input(nvcc_so: Path) -> None:
    assert gpu_code_of_elf(nvcc_so.read_bytes()) == gpu_code_of_elf(nvcc_so)


# -- payloads: kernels per code and the toolkit of each cubin ---------------------------------------------

# Three translation units, each with its own gencode, linked into one library (as a real wheel's modules are):
# `scale` and `shift` carry sm_80 SASS and compute_90 PTX; `general` sm_80 and sm_90 SASS, no PTX; `ampere_only`
# sm_80 SASS alone.
UNITS = {
    "a": (r"""
__global__ void scale(float* a, float b) { a[threadIdx.x] *= b; }
__global__ void shift(float* a, float b) { a[threadIdx.x] += b; }
extern "C" void launch_a(float* a) { scale<<<1, 32>>>(a, 2.0f); shift<<<1, 32>>>(a, 1.0f); }
""", ["arch=compute_80,code=sm_80", "arch=compute_90,code=compute_90"]),
    "b": (r"""
__device__ __noinline__ float twice(float x) { return 2.0f * x; }
template <int N> __global__ void general(float* a) { a[threadIdx.x] = twice(a[threadIdx.x]) + N; }
template __global__ void general<3>(float*);
extern "C" void launch_b(float* a) { general<3><<<1, 32>>>(a); }
""", ["arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90"]),
    "c": (r"""
__global__ void ampere_only(float* a) { a[threadIdx.x] -= 1.0f; }
extern "C" void launch_c(float* a) { ampere_only<<<1, 32>>>(a); }
""", ["arch=compute_80,code=sm_80"]),
}
GENERAL = "_Z7generalILi3EEvPf"
# compress: nvcc's fatbin compression; "none": plain payloads, "lz4": -compress-mode=speed -Xfatbin -compress-all
# (every payload an LZ4 block), "default": CUDA 13's default (PTX as a zstd frame, cubins plain)
COMPRESS = {"none": ["-compress-mode=none"], "lz4": ["-compress-mode=speed", "-Xfatbin", "-compress-all"],
            "default": []}


def _nvcc_units(tmp: Path, compress: str) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    objs = []
    for name, (src, gencode) in UNITS.items():
        (tmp / f"{name}.cu").write_text(src)
        cmd = [nvcc, "-c", "-Xcompiler", "-fPIC", "-o", str(tmp / f"{name}.o"), str(tmp / f"{name}.cu"),
               *COMPRESS[compress]]
        for g in gencode:
            cmd += ["-gencode", g]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"nvcc cannot build the fixture: {r.stderr.strip()[:200]}")
        objs.append(str(tmp / f"{name}.o"))
    out = tmp / "libunits.so"
    subprocess.run([nvcc, "-shared", "-o", str(out), *objs], check=True, capture_output=True)
    return out


@pytest.fixture(scope="session", params=sorted(COMPRESS))
def units_so(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    compress = request.param
    return compress, _built(tmp_path_factory, [UNITS, COMPRESS[compress]], f"libunits-{compress}.so",
                            lambda tmp: _nvcc_units(tmp, compress))


def _nvcc_release() -> str:
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"release (\d+\.\d+)", out)
    assert m, out
    return m.group(1)


def _oracle(exe: str, so: Path) -> tuple[dict[str, set[str]], Counter[str]]:
    """cuobjdump's view: kernels per code name (-res-usage for cubins, -ptx's .entry lines) and toolkits (-elf)."""
    by: dict[str, set[str]] = {}
    arch = None
    res = subprocess.run([exe, "-res-usage", str(so)], capture_output=True, text=True, check=True).stdout
    for line in res.splitlines():
        if m := re.match(r"\s*arch = (sm_\d+a?)", line):
            arch = m.group(1)
            by.setdefault(arch, set())
        elif (m := re.match(r"\s*Function (\S+):", line)) and arch:
            by[arch].add(m.group(1))
    ptx = subprocess.run([exe, "-ptx", str(so)], capture_output=True, text=True, check=True).stdout
    for block in ptx.split("Fatbin ptx code:")[1:]:
        m = re.search(r"arch = sm_(\d+a?)", block)
        assert m, block[:200]
        name = f"compute_{m.group(1)}"
        by.setdefault(name, set()).update(re.findall(r"^\s*(?:\.visible\s+)?\.entry\s+([^\s(]+)", block, re.M))
    elf = subprocess.run([exe, "-elf", str(so)], capture_output=True, text=True, check=True).stdout
    return by, Counter(re.findall(r"toolkit=(\d+\.\d+)", elf))


def _zstd_available() -> bool:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        try:
            import zstandard  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
        except ImportError:
            return False
    return True


@pytest.mark.slow
def test_kernels_and_toolkit_agree_with_cuobjdump(units_so: tuple[str, Path]) -> None:
    compress, so = units_so
    exe = _cuobjdump()
    if exe is None:
        pytest.skip("cuobjdump not installed (pip install nvidia-cuda-cuobjdump)")
    code = gpu_code_of_elf_detail(so, payloads=True)
    want, toolkits = _oracle(exe, so)
    release = _nvcc_release()
    assert set(toolkits) == {release} and toolkits[release] >= 4  # a unit's cubins, and the runtime's own
    assert code.toolkits == dict(toolkits)
    assert code.kernels is not None
    assert {k: set(v) for k, v in code.kernels.items() if k.startswith("sm_")} == \
        {k: v for k, v in want.items() if k.startswith("sm_")}
    if compress == "default" and not _zstd_available():
        assert code.unreadable == code.undecoded == 1 and code.kernels["compute_90"] == []  # a zstd frame
    else:
        assert code.unreadable == 0
        assert code.kernels == {k: sorted(v) for k, v in sorted(want.items())}
    assert code.kernels["sm_80"] == ["_Z11ampere_onlyPf", "_Z5scalePff", "_Z5shiftPff", GENERAL]


def test_kernel_coverage_of_nvcc_units(units_so: tuple[str, Path]) -> None:
    """sm_120 runs the compute_90 PTX of scale/shift, but `general` (sm_80 and sm_90 SASS, meant for every
    GPU) has nothing for it; `ampere_only` is one generation's kernel and is not counted."""
    from glmcompat.model.gpu import KernelCode, kernel_groups, uncovered

    compress, so = units_so
    code = gpu_code_of_elf_detail(so, payloads=True)
    if code.unreadable:
        pytest.skip("the PTX is a zstd frame and this Python has no zstd decoder")
    assert code.kernels is not None
    groups = kernel_groups(code.kernels)
    assert groups == [KernelCode(2, ("sm_80", "compute_90"), "_Z5scalePff"),
                      KernelCode(1, ("sm_80",), "_Z11ampere_onlyPf"),
                      KernelCode(1, ("sm_80", "sm_90"), GENERAL)]
    assert uncovered(groups, (12, 0)) == [KernelCode(1, ("sm_80", "sm_90"), GENERAL)]
    assert uncovered(groups, (10, 0)) == [KernelCode(1, ("sm_80", "sm_90"), GENERAL)]
    for cap in ((8, 0), (8, 6), (9, 0)):
        assert uncovered(groups, cap) == [], cap
    # the library as a whole "carries PTX" and passes the old per-library test on sm_120
    assert code.ptx == ["compute_90"]


def test_headers_only_by_default(nvcc_so: Path) -> None:
    code = gpu_code_of_elf_detail(nvcc_so)
    assert code.kernels is None and code.toolkits == {} and code.unreadable == 0


def test_read_cubin_and_errors(tmp_path: Path) -> None:
    from glmcompat.readers.fatbin import read_cubin

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    src = tmp_path / "b.cu"
    src.write_text(UNITS["b"][0])
    cubin = tmp_path / "b.cubin"
    subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-o", str(cubin), str(src)], check=True, capture_output=True)
    c = read_cubin(cubin.read_bytes())
    assert c.kernels == (GENERAL,)  # `twice` is a FUNC symbol too, but no CUDA entry
    assert c.toolkit == _nvcc_release()
    with pytest.raises(FatbinError, match="not a 64-bit"):
        read_cubin(b"\x7fELF" + bytes(60))
    with pytest.raises(FatbinError, match="section headers"):
        read_cubin(cubin.read_bytes()[:200])


def test_cubin_toolkit_of_elf_abi_7() -> None:
    """Before ELF ABI 8, e_version holds the release times ten (sgl-kernel 0.3.3's cubins: 124)."""
    from glmcompat.readers.fatbin import read_cubin

    hdr = bytearray(64)
    hdr[:9] = b"\x7fELF\x02\x01\x01\x41\x07"
    struct.pack_into("<HHI", hdr, 16, 2, 190, 124)
    struct.pack_into("<QHHH", hdr, 40, 64, 0, 0, 0)
    struct.pack_into("<H", hdr, 58, 64)
    assert read_cubin(bytes(hdr)) == read_cubin(bytes(hdr))
    assert read_cubin(bytes(hdr)).toolkit == "12.4"
    struct.pack_into("<I", hdr, 20, 1)
    hdr[8] = 8
    assert read_cubin(bytes(hdr)).toolkit is None  # ABI 8: the note names it, and this one has none


def test_lz4_block() -> None:
    from glmcompat.readers.fatbin import lz4_block

    # literal "ab", then a match of 6 at offset 2 (overlapping: "ababab"), then the last literal "c"
    block = bytes([0x22]) + b"ab" + b"\x02\x00" + bytes([0x10]) + b"c"
    assert lz4_block(block, 9) == b"abababab" + b"c"
    # 20 literals: the length goes on in a second byte
    block = bytes([0xF0, 5]) + b"x" * 20
    assert lz4_block(block, 20) == b"x" * 20
    with pytest.raises(FatbinError, match="inflates to 9 bytes, its header says 10"):
        lz4_block(bytes([0x22]) + b"ab" + b"\x02\x00" + bytes([0x10]) + b"c", 10)
    with pytest.raises(FatbinError, match="before the start"):
        lz4_block(bytes([0x10]) + b"a" + b"\x05\x00", 10)
    with pytest.raises(FatbinError, match="ends inside"):
        lz4_block(bytes([0xF0]), 10)


def test_ptx_entries() -> None:
    from glmcompat.readers.fatbin import ptx_entries

    text = b""".version 8.7
.target sm_90
.visible .entry _Z3addPff(
\t.param .u64 _Z3addPff_param_0
)
.weak .entry _Z4tmplILi3EEvPf(
.func _Z6helperf(
  .entry plain_c_kernel (
"""
    assert ptx_entries(text) == ("_Z3addPff", "_Z4tmplILi3EEvPf", "plain_c_kernel")


def test_malformed_payload_is_unreadable_not_fatal() -> None:
    """A cubin this reader cannot parse leaves its kernels unknown; the arch list stays right."""
    entries = parse_fatbin(SECTION, payloads=True)
    assert [(e.kind, e.kernels) for e in entries] == [("sass", None), ("sass", None), ("ptx", ()),
                                                       ("sass", None), ("sass", None), ("ptx", ())]
    code = FatbinCode.of(entries, payloads=True)
    assert code.unreadable == 4 and code.sass == ["sm_80", "sm_90a", "sm_100f", "sm_120a"]


# -- the probes over a served wheel holding the nvcc-built library -----------------------------------------


def test_probes_of_a_wheel_with_nvcc_units(units_so: tuple[str, Path], tmp_path: Path) -> None:
    """probe_arch judges per kernel, probe_toolkit reads the first cubin only, kernel_cuda_drift audits a row."""
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.matrix.rows import Kernel
    from glmcompat.ops.wheelprobe import kernel_cuda_drift, probe_arch, probe_toolkit
    from tests.abifakes import BASE, Transport, wheel

    compress, so = units_so
    if compress == "default" and not _zstd_available():
        pytest.skip("the PTX is a zstd frame and this Python has no zstd decoder")
    files = {"units-1.0-cp310-abi3-manylinux2014_x86_64.whl":
             wheel({"units/__init__.py": b"", "units/_C.so": so.read_bytes()}, "units", "1.0")}
    release = _nvcc_release()
    cache = Cache(tmp_path)
    with IndexClient(BASE, client=Transport(files).client(), cache=cache) as ic:
        r120 = probe_arch("units", "1.0", index=ic, cache=cache, target="sm120")
        r90 = probe_arch("units", "1.0", index=ic, cache=cache, target="sm90")
        tk = probe_toolkit("units", "1.0", index=ic, cache=None)
        every = probe_toolkit("units", "1.0", index=ic, cache=None, every=True)
        row = Kernel("arch-probe", "test", "units", ("1.0",), "9.0.0", cuda=release)
        assert kernel_cuda_drift(row, index=ic, cache=cache) == []
        wrong = Kernel("arch-probe", "test", "units", ("1.0",), "9.0.0", cuda="12.4")
        assert kernel_cuda_drift(wrong, index=ic, cache=cache) == [("1.0", "12.4", [release])]
    assert r120.ptx == ["compute_90"] and not r120.ok and r120.not_running == ["units/_C.so"]
    assert [(g.kernels, g.code) for g in r120.uncovered] == [(1, ("sm_80", "sm_90"))]
    assert r90.ok and r90.uncovered == [] and r90.cached
    assert r120.toolkits == every.modules["units/_C.so"] and set(r120.toolkits) == {release}
    assert list(tk.modules) == ["units/_C.so"] and tk.toolkits == [release]  # (a small member comes in one chunk)
    assert tk.bytes_fetched <= every.bytes_fetched


@pytest.mark.parametrize(("code", "cap", "counted"), [
    (("sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_100"), (12, 0), True),  # vllm 0.9.1: built before sm_120
    (("sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_100"), (10, 3), False),  # sm_100 SASS runs on 10.3
    (("sm_80", "sm_87", "sm_90", "compute_90"), (12, 0), False),  # its PTX is JIT-compiled there
    (("sm_89", "sm_120"), (9, 0), False),  # vllm 0.18.0's FP8 Marlin: code on both sides, sm_90 skipped on purpose
    (("sm_89", "sm_120"), (10, 0), False),
    (("sm_80", "sm_89"), (9, 0), False),  # one generation's kernels (allspark)
    (("sm_90a",), (12, 0), False),  # arch-specific
    (("sm_80", "sm_90", "sm_100a"), (10, 3), True),  # sm_100a runs only on 10.0
    (("sm_80", "sm_90"), (7, 5), False),  # compiled for newer GPUs only
    (("sm_80", "compute_90a"), (12, 0), False),  # compute_90a is arch-specific: sm_80 alone is one generation
])
def test_uncovered_rule(code: tuple[str, ...], cap: tuple[int, int], counted: bool) -> None:
    from glmcompat.model.gpu import KernelCode, uncovered

    g = KernelCode(5, code, "k")
    assert uncovered([g], cap) == ([g] if counted else [])
