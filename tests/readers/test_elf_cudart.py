"""The one CUDA-runtime detector (:func:`glmcompat.readers.elf.cuda_runtime_sonames`) on real ELF objects
built by gcc: plain sonames and the hashed ones a wheel bundles (auditwheel's ``libcudart-d0da41ae.so.12``,
torch 1.x's ``libcudart-e409450e.so.11.0``), read by the ELF reader and by ``glmcompat verify``'s static
ABI probe."""

from __future__ import annotations

import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from glmcompat.ops.verify.static import probe_abi
from glmcompat.readers.elf import cuda_majors, cuda_runtime_sonames, read_elf

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

LOGGER = "_ZN3c1013MessageLoggerC1EPKcii"  # a torch symbol: the extension needs it, the fake torch defines it


def _cc(src: str, out: Path, *args: str) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    c = out.parent / (out.name.split(".")[0] + "_src.c")
    c.write_text(src)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c), *args], check=True, capture_output=True)
    c.unlink()
    return out


def _cudart(where: Path, soname: str) -> Path:
    """A stand-in CUDA runtime whose file name and soname are ``soname``."""
    return _cc("void glmcompat_cudart_stub(void) {}\n", where / soname, f"-Wl,-soname,{soname}")


def _linking(out: Path, *libs: Path, src: str = "void glmcompat_user(void) {}\n", extra: tuple[str, ...] = ()) -> Path:
    """A shared object whose DT_NEEDED names ``libs`` (kept although no symbol of them is used)."""
    return _cc(src, out, *extra, "-Wl,--no-as-needed", *map(str, libs))


@pytest.mark.parametrize("soname,major", [
    ("libcudart.so.12", 12), ("libcudart-d0da41ae.so.12", 12), ("libcudart.e8e8b82a.so.12", 12),
    ("libcudart-e409450e.so.11.0", 11), ("libcudart.so.13", 13),
])
def test_a_real_dt_needed_is_found(tmp_path: Path, soname: str, major: int) -> None:
    user = _linking(tmp_path / "libuser.so", _cudart(tmp_path / "rt", soname), _cudart(tmp_path / "rt", "libcublas.so.12"))
    needed = read_elf(user).needed
    assert soname in needed and "libcublas.so.12" in needed
    assert cuda_runtime_sonames(needed) == [soname]
    assert cuda_majors(needed) == [major]


def test_names_that_are_not_the_runtime() -> None:
    names = ["libcudart_static.a", "libcudart.so.12.bak", "libcudart-XYZ.so.12", "libcudart-d0da41ae0.so.12",
             "libcudadevrt.so.12", "libcublas.so.12", "xlibcudart.so.12", "libcudart.so"]
    assert cuda_runtime_sonames(names) == ["libcudart.so"]  # the unversioned development name still is one ...
    assert cuda_majors(names) == []  # ... that names no major


def _dist(site: Path, name: str, version: str, files: list[str]) -> metadata.Distribution:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    return metadata.PathDistribution(info)


def test_verify_static_probe_records_hashed_runtimes(tmp_path: Path) -> None:
    """torch's libc10.so links a bundled hashed CUDA 11 runtime and vllm's _C one of CUDA 12: the ABI probe
    records both, as linked (``startswith("libcudart.so")`` saw neither)."""
    site = tmp_path / "site"
    lib = site / "torch" / "lib"
    torch_rt = _cudart(lib, "libcudart-e409450e.so.11.0")
    _linking(lib / "libc10.so", torch_rt, src=f'void logger(void) __asm__("{LOGGER}");\nvoid logger(void) {{}}\n',
             extra=("-Wl,-soname,libc10.so",))
    ext_rt = _cudart(site / "vllm.libs", "libcudart-d0da41ae.so.12")
    _linking(site / "vllm" / "_C.so", ext_rt, lib / "libc10.so",
             src=f'extern void need(void) __asm__("{LOGGER}");\nvoid use(void) {{ need(); }}\n')
    dists = {"torch": _dist(site, "torch", "1.13.1", ["torch/lib/libc10.so", "torch/lib/libcudart-e409450e.so.11.0"]),
             "vllm": _dist(site, "vllm", "0.0.1", ["vllm/_C.so"])}
    rec = next(r for r in probe_abi(dists, {}) if r.id == "abi:vllm")
    assert rec.status == "passed", rec
    data = rec.data or {}
    assert data["torch_cudart"] == ["libcudart-e409450e.so.11.0"]
    assert [(f["file"], f["cudart"]) for f in data["files"]] == [("vllm/_C.so", ["libcudart-d0da41ae.so.12"])]


@pytest.mark.parametrize("needed,torch_needed,foreign", [
    (["libcudart.so.12"], ["libcudart.so.13"], ["libcudart.so.12"]),  # the loader needs a CUDA 12 runtime torch lacks
    (["libcudart.so.13"], ["libcudart.so.13"], []),
    (["libcudart-d0da41ae.so.12"], ["libcudart.so.13"], []),  # bundled inside the wheel: the loader finds it there
    (["libcudart.so"], ["libcudart.so.13"], []),  # unversioned: names no major
    (["libcudart.so.12.8"], ["libcudart.so.12"], []),
    (["libc.so.6", "libcudart.so.11.0"], [], ["libcudart.so.11.0"]),
])
def test_foreign_cuda_runtimes(needed, torch_needed, foreign):
    from glmcompat.readers.elf import foreign_cuda_runtimes

    assert foreign_cuda_runtimes(needed, torch_needed) == foreign
