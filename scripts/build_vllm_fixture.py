"""Build the ``vllm`` test fixture: a tiny package with vLLM's layout of compiled torch extensions.

vLLM wheels are hundreds of MB; ``glmcompat verify``'s vLLM probes are tested on this stand-in
instead (``tests/fixtures/vllm/src``): ``vllm/__init__.py``, ``vllm/_C.abi3.so`` (a torch C++/CUDA
extension that registers ``_C::rms_norm`` and ``_C::silu_and_mul`` through ``TORCH_LIBRARY``, with
vLLM's schemas) and ``vllm/_moe_C.abi3.so`` (``_moe_C::topk_softmax``). Each variant is written as a
``pip install --target``-style folder (the package and a ``vllm-0.0.0+fixture.dist-info``), for
``glmcompat verify --path OUT/VARIANT``:

``consistent``   GPU code ``sm_90a`` only, built against the installed torch: everything passes on an
                 sm_90 GPU (H100/H200).
``inconsistent`` GPU code ``sm_120a`` only: imports and registers its operators, then fails on an sm_90
                 GPU at launch with "no kernel image is available for execution on the device".
``abi-broken``   as ``consistent``, plus a reference to ``c10::MessageLogger(char const*, int, int)``,
                 which torch <= 2.9 exported and later releases do not: ``import vllm._C`` fails with
                 ``undefined symbol``.
``cudart12``     as ``consistent``, plus a DT_NEEDED on ``libcudart.so.12`` (a stub used only to link;
                 it is not shipped): on a CUDA 13 torch the import fails with
                 ``libcudart.so.12: cannot open shared object file``.

Compiler flags follow :mod:`torch.utils.cpp_extension` (its include and library paths, CUDA_HOME and the
C++11-ABI flag come from it when torch imports); ``--torch-dir DIR`` builds against an unpacked torch
wheel's ``torch/`` folder instead, without importing torch. Needs nvcc and g++.

    python scripts/build_vllm_fixture.py OUT [--variants consistent,inconsistent] [--torch-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "vllm" / "src"
VERSION = "0.0.0+fixture"
ARCHS = {"sm90a": "arch=compute_90a,code=sm_90a", "sm120a": "arch=compute_120a,code=sm_120a"}
# variant -> (GPU code, extra C++ defines for _C, link a libcudart.so.12 stub)
VARIANTS: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "consistent": ("sm90a", (), False),
    "inconsistent": ("sm120a", (), False),
    "abi-broken": ("sm90a", ("-DGLMFX_OLD_TORCH_SYMBOL",), False),
    "cudart12": ("sm90a", (), True),
}


@dataclass
class Toolchain:
    torch_version: str
    includes: list[str]
    libdirs: list[str]
    cuda_home: str
    cxx11_abi: bool


def toolchain(torch_dir: str | None, cuda_home: str | None) -> Toolchain:
    if torch_dir is None:
        import torch
        from torch.utils import cpp_extension

        ver = torch.__version__.split("+")[0]
        includes = list(cpp_extension.include_paths(device_type="cuda")) if "device_type" in \
            cpp_extension.include_paths.__code__.co_varnames else list(cpp_extension.include_paths(cuda=True))
        libdirs = list(cpp_extension.library_paths(device_type="cuda")) if "device_type" in \
            cpp_extension.library_paths.__code__.co_varnames else list(cpp_extension.library_paths(cuda=True))
        home = cuda_home or cpp_extension.CUDA_HOME
        abi = bool(torch._C._GLIBCXX_USE_CXX11_ABI)
    else:
        root = Path(torch_dir)
        vfile = root / "version.py"
        ver = "unknown"
        if vfile.is_file():
            for line in vfile.read_text().splitlines():
                if line.startswith("__version__"):
                    ver = line.split("=", 1)[1].strip().strip("'\"").split("+")[0]
        home = cuda_home or os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or (
            "/usr/local/cuda" if os.path.isdir("/usr/local/cuda") else
            str(Path(shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc").resolve().parent.parent))
        includes = [str(root / "include"), str(root / "include" / "torch" / "csrc" / "api" / "include"),
                    str(Path(home) / "include")]
        libdirs = [str(root / "lib"), str(Path(home) / "lib64")]
        abi = True
    if not home:
        raise SystemExit("no CUDA toolkit found (set CUDA_HOME)")
    return Toolchain(ver, includes, libdirs, home, abi)


def run(cmd: list[str], log: list[str]) -> None:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    log.append(f"$ {' '.join(cmd)}\n  ({time.perf_counter() - t0:.1f} s, exit {r.returncode})")
    if r.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")


def build(out: Path, variants: list[str], tc: Toolchain, jobs: int) -> list[str]:
    log: list[str] = []
    nvcc = str(Path(tc.cuda_home) / "bin" / "nvcc")
    cxx = os.environ.get("CXX", "g++")
    py_inc = sysconfig.get_paths()["include"]
    cflags = ["-O2", "-fPIC", "-std=c++17", f"-D_GLIBCXX_USE_CXX11_ABI={int(tc.cxx11_abi)}",
              "-DPy_LIMITED_API=0x03090000", "-DTORCH_API_INCLUDE_EXTENSION_H", f"-I{py_inc}",
              *[f"-I{i}" for i in tc.includes]]
    work = Path(tempfile.mkdtemp(prefix="glmcompat-vllm-fixture-"))
    objs: dict[str, Path] = {}
    jobs_list: list[tuple[str, list[str]]] = []
    cpp_needed = {("_C", d) for v in variants for d in [VARIANTS[v][1]]} | {("_moe_C", ())}
    for mod, defines in sorted(cpp_needed):
        key = f"{mod}{''.join(defines)}"
        objs[key] = work / f"{mod}{'-old' if defines else ''}.o"
        jobs_list.append((key, [cxx, *cflags, *defines, f"-DTORCH_EXTENSION_NAME={mod}", "-c",
                                str(SRC / f"{mod}.cpp"), "-o", str(objs[key])]))
    for arch in sorted({VARIANTS[v][0] for v in variants}):
        for cu in ("kernels", "moe_kernels"):
            key = f"{cu}-{arch}"
            objs[key] = work / f"{key}.o"
            jobs_list.append((key, [nvcc, "-O2", "-Xcompiler", "-fPIC", "-gencode", ARCHS[arch], "-c",
                                    str(SRC / f"{cu}.cu"), "-o", str(objs[key])]))
    stub = None
    if any(VARIANTS[v][2] for v in variants):
        stub = work / "stub" / "libcudart.so.12"
        stub.parent.mkdir()
        (work / "stub.c").write_text("void glmcompat_cudart12_stub(void) {}\n")
        jobs_list.append(("stub", ["gcc", "-shared", "-fPIC", "-Wl,-soname,libcudart.so.12", str(work / "stub.c"),
                                   "-o", str(stub)]))
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        list(ex.map(lambda j: run(j[1], log), jobs_list))
    libs = [f"-L{d}" for d in tc.libdirs] + ["-lc10", "-lc10_cuda", "-ltorch", "-ltorch_cpu", "-lcudart"]
    for v in variants:
        arch, defines, cudart12 = VARIANTS[v]
        site = out / v
        if site.exists():
            shutil.rmtree(site)
        pkg = site / "vllm"
        pkg.mkdir(parents=True)
        shutil.copy(SRC / "vllm" / "__init__.py", pkg / "__init__.py")
        extra = ["-Wl,--no-as-needed", str(stub)] if cudart12 and stub else []
        run([cxx, "-shared", str(objs[f"_C{''.join(defines)}"]), str(objs[f"kernels-{arch}"]), *extra, *libs,
             "-o", str(pkg / "_C.abi3.so")], log)
        run([cxx, "-shared", str(objs["_moe_C"]), str(objs[f"moe_kernels-{arch}"]), *libs,
             "-o", str(pkg / "_moe_C.abi3.so")], log)
        info = site / f"vllm-{VERSION}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("\n".join([
            "Metadata-Version: 2.1", "Name: vllm", f"Version: {VERSION}",
            "Summary: glmcompat's vLLM stand-in (scripts/build_vllm_fixture.py, variant " + v + ")",
            f"Requires-Dist: torch=={tc.torch_version}", ""]))
        files = ["vllm/__init__.py", "vllm/_C.abi3.so", "vllm/_moe_C.abi3.so"]
        (info / "RECORD").write_text("\n".join([f"{f},," for f in files] + [f"{info.name}/METADATA,,",
                                                                         f"{info.name}/RECORD,,"]) + "\n")
        (site / "VARIANT").write_text(f"{v}: GPU code {arch}; built against torch {tc.torch_version}"
                                      f"{'; references a symbol torch <= 2.9 exported' if defines else ''}"
                                      f"{'; needs libcudart.so.12' if cudart12 else ''}\n")
    shutil.rmtree(work, ignore_errors=True)
    return log


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    ap.add_argument("--torch-dir", help="an unpacked torch/ folder (include/, lib/) instead of the importable torch")
    ap.add_argument("--cuda-home")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args(argv)
    variants = [v for v in a.variants.split(",") if v]
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        ap.error(f"unknown variant(s) {', '.join(bad)}; known: {', '.join(VARIANTS)}")
    t0 = time.perf_counter()
    tc = toolchain(a.torch_dir, a.cuda_home)
    a.out.mkdir(parents=True, exist_ok=True)
    log = build(a.out, variants, tc, a.jobs)
    print("\n".join(log))
    print(f"built {', '.join(variants)} against torch {tc.torch_version} into {a.out} "
          f"in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
