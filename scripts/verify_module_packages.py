"""Check the `source` of every row of glmcompat/matrix/data/module-packages.toml against the artifacts it cites
(needs the index; run: ``python scripts/verify_module_packages.py [--only KEY]``).

Each row has its checks below (CHECKS, keyed ``table:package`` or ``signature_package:signature``). A check reads one
artifact of the configured package index (pip's/uv's index, or the default): a wheel through HTTP range requests (its
zip directory and the few members named, never the whole wheel: glmcompat.readers.wheelzip.RemoteZip over
glmcompat.edges.ranges.HttpRangeReader), or a small sdist read whole (a .tar.gz cannot be read by ranges). What it
confirms:

* ``top_level``: the name is a line of the wheel's ``*.dist-info/top_level.txt``;
* ``member``: a member's path matches the regex (the wheel's RECORD lists the same paths);
* ``text``: a line of the member holds the text, within the lines ``lines`` (first, last) when given;
* ``cstring``: the member (a shared library) holds the text as a NUL-terminated string (``\\0NS\\0``: the namespace
  ``TORCH_LIBRARY(NS, m)`` stringifies), or, with ``raw``, anywhere in its bytes.

A row passes when all its checks pass and its ``source`` names every artifact checked (its file name, or
``dist-version``), so the data cites what was read. Rows with no artifact check name their upstream evidence
(UPSTREAM, below): the script lists them as not checked here. Exit status 1 when a check fails."""

from __future__ import annotations

import argparse
import io
import re
import sys
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glmcompat.edges.index import IndexClient, IndexFile
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.readers.wheelzip import RemoteZip

DATA = Path(__file__).resolve().parent.parent / "glmcompat" / "matrix" / "data" / "module-packages.toml"
SDIST_CAP = 96 << 20  # an sdist is read whole: only small ones (llama-cpp-python 0.3.8: 67 MB)
SO_CAP = 400 << 20  # a shared library is streamed through, at most this many inflated bytes


@dataclass(frozen=True)
class Check:
    kind: str  # top_level | member | text | cstring
    file: str  # the artifact's file name on the index
    member: str = ""  # member path (text, cstring) or regex (member)
    needle: str = ""
    lines: tuple[int, int] | None = None
    raw: bool = False


def W(file: str, kind: str, member: str = "", needle: str = "", lines: tuple[int, int] | None = None,
      raw: bool = False) -> Check:
    return Check(kind, file, member, needle, lines, raw)


SGL = "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"
FA = "flash_attn-2.8.3.tar.gz"
FA274 = "flash_attn-2.7.4.post1.tar.gz"
TRITON = "triton-3.4.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
CB = "cuda_bindings-12.9.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
FI = "flashinfer_python-0.5.3-py3-none-any.whl"
VLLM11 = "vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl"
VLLM34 = "vllm-0.34.0-cp38-abi3-manylinux_2_28_x86_64.whl"
TORCH = "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
TORCH_MAC = "torch-2.13.0-cp311-cp311-macosx_14_0_arm64.whl"
TORCH29 = "torch-2.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"
TV = "torchvision-0.24.1-cp311-cp311-manylinux_2_28_x86_64.whl"
TA = "torchaudio-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl"
XF = "xformers-0.0.28.post3-cp311-cp311-manylinux_2_28_x86_64.whl"
TAO = "torchao-0.9.0-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.manylinux_2_28_x86_64.whl"

CHECKS: dict[str, list[Check]] = {
    "module:sgl-kernel": [W(SGL, "member", r"^sgl_kernel/__init__\.py$"), W(SGL, "member", r"^sgl_kernel/load_utils\.py$"),
                          W(SGL, "member", r"^sgl_kernel/sm90/common_ops\.abi3\.so$")],
    "module:flash-attn": [W(FA, "text", "flash_attn-2.8.3/setup.py", 'name="flash_attn_2_cuda"', (228, 228)),
                          W(FA, "text", "flash_attn-2.8.3/flash_attn/flash_attn_interface.py",
                            "import flash_attn_2_cuda as flash_attn_gpu", (15, 15)),
                          W(FA274, "text", "flash_attn-2.7.4.post1/hopper/setup.py", 'name="flash_attn_3_cuda"', (516, 516)),
                          W(FA274, "text", "flash_attn-2.7.4.post1/hopper/setup.py",
                            'py_modules=["flash_attn_interface"]', (609, 609)),
                          W(FA, "text", "flash_attn-2.8.3/hopper/setup.py", 'PACKAGE_NAME = "flash_attn_3"', (36, 36))],
    "module:flashinfer-python": [W(FI, "top_level", needle="flashinfer")],
    "module:deep-gemm": [W("deep_gemm-1.0.0.tar.gz", "text", "deep_gemm-1.0.0/setup.py", "name='deep_gemm'", (71, 71)),
                         W("deep_gemm-1.0.0.tar.gz", "text", "deep_gemm-1.0.0/setup.py", "packages=['deep_gemm'", (73, 73)),
                         W(SGL, "member", r"^deep_gemm/deep_gemm_cpp\.abi3\.so$")],
    "module:deep-ep": [W("deep_ep-1.0.0.tar.gz", "text", "deep_ep-1.0.0/setup.py", "name='deep_ep'", (45, 45)),
                       W("deep_ep-1.0.0.tar.gz", "text", "deep_ep-1.0.0/deep_ep.egg-info/top_level.txt", "deep_ep", (1, 1))],
    "module:mamba-ssm": [W("mamba_ssm-2.2.4.tar.gz", "text", "mamba_ssm-2.2.4/setup.py", 'PACKAGE_NAME = "mamba_ssm"', (35, 35)),
                         W("mamba_ssm-2.2.4.tar.gz", "text", "mamba_ssm-2.2.4/setup.py", 'name="selective_scan_cuda"',
                           (238, 238))],
    "module:causal-conv1d": [
        W("causal_conv1d-1.5.2.tar.gz", "text", "causal_conv1d-1.5.2/setup.py", 'PACKAGE_NAME = "causal_conv1d"', (37, 37)),
        W("causal_conv1d-1.5.2.tar.gz", "text", "causal_conv1d-1.5.2/setup.py", 'name="causal_conv1d_cuda"', (238, 238))],
    "module:llama-cpp-python": [
        W("llama_cpp_python-0.3.8.tar.gz", "text", "llama_cpp_python-0.3.8/pyproject.toml", 'wheel.packages = ["llama_cpp"]',
          (64, 64)),
        W("llama_cpp_python-0.3.8.tar.gz", "text", "llama_cpp_python-0.3.8/CMakeLists.txt",
          "LIBRARY DESTINATION ${SKBUILD_PLATLIB_DIR}/llama_cpp/lib", (23, 23)),
        W("llama_cpp_python-0.3.8.tar.gz", "text", "llama_cpp_python-0.3.8/llama_cpp/llama_cpp.py", '/ "lib"', (36, 38))],
    "module:autoawq": [W("autoawq-0.2.7.post3-py3-none-any.whl", "top_level", needle="awq")],
    "module:natten": [W("natten-0.17.5.tar.gz", "text", "natten-0.17.5/setup.py", 'Extension("natten.libnatten", [])', (271, 271))],
    "module:dgl": [W("dgl-2.2.0-cp311-cp311-macosx_11_0_x86_64.whl", "member", r"^dgl/graphbolt/__init__\.py$"),
                   W("dgl-2.2.0-cp311-cp311-macosx_11_0_x86_64.whl", "member",
                     r"^dgl/graphbolt/libgraphbolt_pytorch_[\d.]+\.dylib$")],
    "op_namespace:sgl-kernel": [W(SGL, "text", "sgl_kernel/elementwise.py", "torch.ops.sgl_kernel.rmsnorm", (45, 45))],
    "op_namespace:vllm": [W(VLLM11, "cstring", "vllm/_C.abi3.so", n + "RN5torch7LibraryE", raw=True)
                          for n in ("TORCH_LIBRARY_init__C", "TORCH_LIBRARY_init__C_cache_ops",
                                    "TORCH_LIBRARY_init__C_custom_ar")]
                         + [W(VLLM11, "cstring", "vllm/_moe_C.abi3.so", "TORCH_LIBRARY_init__moe_CRN5torch7LibraryE", raw=True)],
    "op_namespace:torchaudio": [W(TA, "cstring", "torchaudio/lib/libtorchaudio.so", "torchaudio")],
    "signature_package:triton-torch-mismatch": [W(TRITON, "member", r"^triton/compiler/compiler\.py$"),
                                                W(TRITON, "member", r"^triton/backends/compiler\.py$")],
    "signature_package:triton-libcuda-missing": [
        W(TRITON, "text", "triton/backends/nvidia/driver.py", "def libcuda_dirs():", (21, 21)),
        W(TRITON, "text", "triton/backends/nvidia/driver.py", "libcuda.so cannot found!", (33, 33))],
    "signature_package:cuda-bindings-driver": [
        W(CB, "text", "cuda/bindings/runtime.pyx", "cudaErrorInsufficientDriver = ", (482, 482)),
        W(CB, "text", "cuda/bindings/runtime.pyx", "def cudaGetDeviceCount():", (14901, 14901)),
        W(CB, "text", "cuda/bindings/runtime.pyx", "return (_dict_cudaError_t[err], count)", (14923, 14923))],
    "signature_package:cudnn-sublibrary-missing": [
        W("nvidia_cudnn_cu13-9.24.0.43-py3-none-manylinux_2_27_x86_64.whl", "cstring", "nvidia/cudnn/lib/libcudnn.so.9",
          "Invalid handle. Cannot load symbol %s", raw=True)],
    "signature_package:torchaudio-load-failure": [
        W(TA, "text", "torchaudio/_extension/utils.py", "def _load_lib(", (24, 24)),
        W(TA, "text", "torchaudio/_extension/utils.py", "torch.ops.load_library(path)", (58, 58)),
        W("torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl", "text", "torch/_ops.py",
          'raise OSError(f"Could not load this library: {path}")', (1505, 1505))],
    "signature_package:jax-cuda-plugin-mismatch": [
        W("jaxlib-0.7.1-cp311-cp311-manylinux_2_27_x86_64.whl", "cstring", "jaxlib/libjax_common.so",
          "Mismatched PJRT plugin PJRT API version (", raw=True)],
    "module:flashinfer-cubin": [W("flashinfer_cubin-0.5.3-py3-none-any.whl", "top_level", needle="flashinfer_cubin"),
                                W("flashinfer_cubin-0.5.3-py3-none-any.whl", "member", r"^flashinfer_cubin/cubins/")],
    "module:vllm": [W(VLLM11, "member", r"^vllm/vllm_flash_attn/__init__\.py$"),
                    W(VLLM11, "member", r"^vllm/vllm_flash_attn/_vllm_fa2_C\.abi3\.so$")],
    "module:transformer-engine": [W("transformer_engine-2.8.0-py3-none-any.whl", "top_level", needle="transformer_engine")],
    "module:opencv-python": [W("opencv_python-4.11.0.86-cp37-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                               "top_level", needle="cv2")],
    "module:scikit-learn": [W("scikit_learn-1.6.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "member",
                              r"^sklearn/__init__\.py$")],
    "module:pillow": [W("pillow-11.1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "top_level", needle="PIL")],
    "module:nixl": [W("nixl-1.5.2-py3-none-any.whl", "top_level", needle="nixl_ep")],
    "module:auto-gptq": [W("auto_gptq-0.7.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "top_level",
                           needle=n) for n in ("auto_gptq", "autogptq_cuda_64", "autogptq_cuda_256", "exllama_kernels",
                                               "exllamav2_kernels")],
    "module:autoawq-kernels": [W("autoawq_kernels-0.0.9-cp311-cp311-manylinux2014_x86_64.whl", "top_level",
                                 needle="awq_ext")],
    "op_namespace:flashinfer-python": [W(FI, "text", "flashinfer/decode.py", 'register_custom_op(f"flashinfer::', (79, 79)),
                                       W(FI, "text", "flashinfer/utils.py", "def register_custom_op(", (314, 314))],
    "op_namespace:flash-attn": [W(FA, "text", "flash_attn-2.8.3/flash_attn/flash_attn_interface.py",
                                  '@_torch_custom_op_wrapper("flash_attn::_flash_attn_forward"', (76, 76))],
    "op_namespace:torchvision": [W(TV, "cstring", "torchvision/_C.so", "torchvision")],
    "op_namespace:torchao": [W(TAO, "cstring", "torchao/_C.abi3.so", "torchao")],
    "op_namespace:xformers": [W(XF, "cstring", "xformers/_C.so", "xformers")],
    "cxx_namespace:torch": [W(TORCH29, "member", r"^torch/include/c10/"), W(TORCH29, "member", r"^torch/include/ATen/"),
                            W(TORCH29, "member", r"^torch/include/caffe2/"),
                            W(TORCH29, "member", r"^torch/include/torch/csrc/")],
    "signature_package:xformers-built-for-other-torch": [
        W(XF, "text", "xformers/_cpp_lib.py", "def _register_extensions():", (85, 85)),
        W(XF, "text", "xformers/_cpp_lib.py", "xFormers was built for a different version of PyTorch or Python.",
          (71, 71))],
    "signature_package:torchao-cpp-skipped": [
        W(TAO, "text", "torchao/__init__.py", 'logging.debug("Skipping import of cpp extensions")', (43, 44))],
    "signature_package:torch-cpu-only": [
        W(TORCH, "text", "torch/cuda/__init__.py", "Torch not compiled with CUDA enabled", (522, 522)),
        W(TORCH_MAC, "text", "torch/version.py", "cuda: Optional[str] = None", (6, 6))],
    "signature_package:torch-arch-unsupported": [
        W(TORCH, "text", "torch/cuda/__init__.py", "def _check_cubins():", (425, 450)),
        W(TORCH, "text", "torch/cuda/__init__.py", "is not compatible with the current PyTorch installation", (425, 450))],
    "signature_package:torch-without-nccl": [
        W(TORCH, "text", "torch/distributed/distributed_c10d.py", "def _new_process_group_helper(", (1984, 1984)),
        W(TORCH, "text", "torch/distributed/distributed_c10d.py", "Distributed package doesn't have NCCL built in",
          (2181, 2181))],
    "signature_package:cudnn-version-mismatch": [
        W(TORCH, "text", "torch/backends/cudnn/__init__.py", "def _init():", (36, 36)),
        W(TORCH, "text", "torch/backends/cudnn/__init__.py", "cuDNN version incompatibility: ", (61, 61))],
    "signature_package:driver-too-old": [
        W(TORCH, "cstring", "torch/lib/libc10_cuda.so", "The NVIDIA driver on your system is too old", raw=True)],
    "signature_package:flash-attn-gpu-too-old": [
        W(FA, "text", "flash_attn-2.8.3/csrc/flash_attn/flash_api.cpp",
          "FlashAttention only supports Ampere GPUs or newer.", (370, 370)),
        W(FA, "text", "flash_attn-2.8.3/csrc/flash_attn/flash_api.cpp", "mha_fwd(", (351, 351))],
    "signature_package:torchvision-cuda-mismatch": [
        W(TV, "text", "torchvision/extension.py", "def _check_cuda_version():", (57, 84)),
        W(TV, "text", "torchvision/extension.py", "raise RuntimeError(", (57, 84))],
    "signature_package:torchaudio-cuda-mismatch": [
        W(TA, "text", "torchaudio/_extension/utils.py", "def _check_cuda_version():", (118, 133)),
        W(TA, "text", "torchaudio/_extension/utils.py", "raise RuntimeError(", (118, 133))],
    "signature_package:flash-attn-build-cuda-too-old": [
        W("flash_attn-2.5.9.post1.tar.gz", "text", "flash_attn-2.5.9.post1/setup.py",
          "FlashAttention is only supported on CUDA 11.6 and above", (115, 116))],
    "signature_package:flash-attn-arch-unsupported": [
        W(FA, "text", "flash_attn-2.8.3/flash_attn/cute/interface.py", "Unsupported compute capability", (216, 216))],
    "signature_package:xformers-torch-flash-mismatch": [
        W(XF, "text", "xformers/ops/fmha/torch_attention_compat.py", "raise ImportError(", (80, 80))],
    "signature_package:sgl-kernel-load-failed": [
        W(SGL, "text", "sgl_kernel/load_utils.py", "def _load_architecture_specific_ops(", (48, 188))],
    "signature_package:flashinfer-kernels-unavailable": [
        W(VLLM34, "text", "vllm/utils/flashinfer.py", "logger.warning_once(", (151, 151)),
        W(VLLM34, "text", "vllm/utils/flashinfer.py", "FlashInfer's precompiled kernels are missing", (151, 162))],
    "signature_package:deepgemm-nvcc-unusable": [
        W(VLLM34, "text", "vllm/utils/deep_gemm.py", "DeepGEMM kernels are disabled", (160, 176))],
}


class Artifacts:
    """The index's files, read once each: wheels by ranges, sdists whole."""

    def __init__(self, ic: IndexClient) -> None:
        self.ic = ic
        self.zips: dict[str, RemoteZip] = {}
        self.tars: dict[str, dict[str, bytes]] = {}

    def index_file(self, file: str) -> IndexFile:
        dist = re.split(r"-\d", file, maxsplit=1)[0]
        for f in self.ic.project(dist).files:
            if f.filename == file:
                return f
        raise LookupError(f"{file}: not on the index")

    def zip(self, file: str) -> RemoteZip:
        if file not in self.zips:
            f = self.index_file(file)
            self.zips[file] = RemoteZip(HttpRangeReader(self.ic.client, f.url, name=f.filename, size=f.size))
        return self.zips[file]

    def tar(self, file: str) -> dict[str, bytes]:
        if file not in self.tars:
            f = self.index_file(file)
            if f.size is None or f.size > SDIST_CAP:
                raise LookupError(f"{file}: {f.size} bytes, more than this reads whole")
            data = self.ic.get(f.url, file, limit=SDIST_CAP).content
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
                self.tars[file] = {m.name: (t.extractfile(m) or io.BytesIO()).read() for m in t.getmembers()
                                   if m.isfile() and m.size < 4 << 20}
        return self.tars[file]

    def names(self, file: str) -> list[str]:
        return list(self.tar(file)) if file.endswith(".tar.gz") else [m.name for m in self.zip(file).members]

    def read(self, file: str, member: str) -> bytes:
        if file.endswith(".tar.gz"):
            return self.tar(file)[member]
        return self.zip(file).read(member)

    def contains(self, file: str, member: str, needle: bytes) -> bool:
        zf = self.zip(file)
        tail, seen = b"", 0
        for chunk in zf.stream(member):
            buf = tail + chunk
            if needle in buf:
                return True
            tail = buf[-len(needle):]
            seen += len(chunk)
            if seen > SO_CAP:
                raise LookupError(f"{file} {member}: more than {SO_CAP} bytes")
        return False


def run_check(a: Artifacts, c: Check) -> str:
    """'' when the check holds, else what was found."""
    if c.kind == "top_level":
        tl = [n for n in a.names(c.file) if n.endswith(".dist-info/top_level.txt") and n.count("/") == 1]
        if not tl:
            return "no top_level.txt"
        names = a.read(c.file, tl[0]).decode().split()
        return "" if c.needle in names else f"top_level.txt lists {names}"
    if c.kind == "member":
        hits = [n for n in a.names(c.file) if re.search(c.member, n)]
        return "" if hits else f"no member matches {c.member!r}"
    if c.kind == "text":
        try:
            lines = a.read(c.file, c.member).decode("utf-8", "replace").splitlines()
        except Exception as e:  # noqa: BLE001 - reported, not raised
            return f"{c.member}: {e}"
        at = [i for i, line in enumerate(lines, 1) if c.needle in line]
        if not at:
            return f"{c.needle!r} is on no line of {c.member}"
        if c.lines and not any(c.lines[0] <= i <= c.lines[1] for i in at):
            return f"{c.needle!r} is at {c.member}:{at}, not within {c.lines[0]}-{c.lines[1]}"
        return ""
    if c.kind == "cstring":
        needle = c.needle.encode() if c.raw else b"\0" + c.needle.encode() + b"\0"
        return "" if a.contains(c.file, c.member, needle) else f"{needle!r} not in {c.member}"
    raise ValueError(c.kind)


def row_key(table: str, row: dict[str, Any]) -> str:
    return f"{table}:{row.get('signature') or row.get('package') or '(none)'}"


def cited(file: str) -> list[str]:
    """How a source may name the artifact: its file name, or dist-version."""
    m = re.match(r"(.+?)-(\d[^-]*?)(?:\.tar\.gz|-)", file)
    return [file] + ([f"{m.group(1)}-{m.group(2)}"] if m else [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--only", help="check only the row of this key (table:package or signature_package:signature)")
    args = ap.parse_args()
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    rows = [(table, row) for table in ("module", "op_namespace", "cxx_namespace", "signature_package")
            for row in data.get(table, [])]
    keys = [row_key(t, r) for t, r in rows]
    unknown = sorted(set(CHECKS) - set(keys))
    if unknown:
        print(f"checks for rows not in the data: {unknown}")
        return 1
    failed = upstream = seen = 0
    with IndexClient(None) as ic:
        a = Artifacts(ic)
        for (_table, row), key in zip(rows, keys, strict=True):
            if args.only and key != args.only:
                continue
            seen += 1
            checks = CHECKS.get(key)
            if not checks:
                upstream += 1
                print(f"UPSTREAM {key}: {row['source'][:150]}")
                continue
            problems = []
            for c in checks:
                if not any(n in row["source"] for n in cited(c.file)):
                    problems.append(f"source does not name {c.file}")
                try:
                    why = run_check(a, c)
                except Exception as e:  # noqa: BLE001 - one row's failure is reported, the others still run
                    why = f"{type(e).__name__}: {e}"
                if why:
                    problems.append(f"{c.file} {c.kind} {c.member or c.needle}: {why}")
            failed += bool(problems)
            print(f"{'FAIL' if problems else 'OK'} {key}" + "".join(f"\n    {p}" for p in problems))
    print(f"{seen} rows: {seen - upstream} checked against artifacts ({failed} failed), {upstream} upstream")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
