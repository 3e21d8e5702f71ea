"""Fatbin reader: synthetic containers (offline, always) and nvcc-built objects cross-checked with cuobjdump."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

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


@pytest.fixture(scope="session")
def nvcc_so(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    tmp = tmp_path_factory.mktemp("nvcc")
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
