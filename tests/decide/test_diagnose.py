"""``glmcompat explain``: which package a log blames, and remedies built from the versions it shows.

Each excerpt is built from the text's source (the file and line that prints it, cited in the signature's
``source``) or from a run that reproduces it here (the NCCL case: the real dynamic loader on gcc-built
libraries), never copied from a user's log.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from glmcompat.decide.diagnose import Env, diagnose
from glmcompat.matrix.load import load_facts
from glmcompat.model.signatures import _CUDA, _MENTIONS, _VERSIONS, Hit, linear_time_problem, scan_log

from tests.conftest import run_cli


def explain(log: str) -> list[Hit]:
    facts = load_facts()
    scan = scan_log(log.splitlines(), facts.rows("signature"))
    return diagnose(scan.hits, Env.from_log(scan.context), facts)


def one(log: str, sid: str) -> Hit:
    hits = [h for h in explain(log) if h.id == sid]
    assert len(hits) == 1, explain(log)
    return hits[0]


# glibc's loader: "<path>: undefined symbol: <name>" (elf/dl-lookup.c); the paths are a wheel's layout.
SITE = "/srv/venv/lib/python3.10/site-packages"


def test_vllm_module_is_blamed_not_sgl_kernel() -> None:
    h = one(f"ImportError: {SITE}/vllm/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
            "[pip3] torch==2.7.1\n[pip3] vllm==0.9.1\n", "vllm-undefined-symbol")
    # fix-i: vLLM's refinement reads every file name of its modules (.cpython-310-...so too), family undefined-symbol
    assert (h.package, h.version, h.family) == ("vllm", "0.9.1", "undefined-symbol")
    # vllm 0.9.1 pins torch 2.7.0 (its METADATA); 0.10.x pin 2.7.1
    assert "built against torch 2.7.0" in h.cause and "torch 2.7.1 does not export" in h.cause
    assert h.remedy.startswith("install torch==2.7.0") and "vllm==0.10.1.1 (built for torch 2.7.1)" in h.remedy
    assert "sgl" not in h.cause + h.remedy


def test_flash_attn_extension_is_blamed() -> None:
    h = one(f"ImportError: {SITE}/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
            "_ZN3c105ErrorC2ENS_14SourceLocationESs\nflash_attn 2.7.4.post1+cu12torch2.6cxx11abiFALSE\n"
            "torch 2.7.1\n", "undefined-symbol")
    assert h.package == "flash-attn" and h.version == "2.7.4.post1+cu12torch2.6cxx11abiFALSE"
    assert "its label names torch 2.6" in h.cause and "torch 2.7.1" in h.cause
    assert "torch2.7" in h.remedy and "--no-build-isolation" in h.remedy


def test_flashinfer_aot_module_is_blamed() -> None:
    h = one(f"OSError: {SITE}/flashinfer/data/aot/norm/norm.so: undefined symbol: _ZN2at4_ops5empty4callEv",
            "undefined-symbol")
    assert h.package == "flashinfer-python"


def test_old_sgl_kernel_with_newer_torch() -> None:
    h = one("sgl-kernel 0.1.2, torch 2.7.1\n"
            f"ImportError: {SITE}/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c106detail23torchInternalAssertFailEv",
            "undefined-symbol")
    assert (h.package, h.version) == ("sgl-kernel", "0.1.2")
    assert "built against torch 2.6.0" in h.cause and "torch 2.7.1 does not export" in h.cause
    assert "install torch==2.6.0" in h.remedy and "0.3.21" not in h.remedy


# A traceback through sgl_kernel's Python wrapper (sgl_kernel/elementwise.py calls torch.ops.sgl_kernel.rmsnorm)
# into torch's dispatcher (torch/_ops.py): the innermost frame is torch's, the failure is sgl-kernel's.
NO_KERNEL = f"""\
Traceback (most recent call last):
  File "{SITE}/sglang/srt/layers/layernorm.py", line 75, in forward_cuda
    out = rmsnorm(x, self.weight.data, self.variance_epsilon)
  File "{SITE}/sgl_kernel/elementwise.py", line 46, in rmsnorm
    torch.ops.sgl_kernel.rmsnorm.default(out, input, weight, eps, enable_pdl)
  File "{SITE}/torch/_ops.py", line 829, in __call__
    return self._op(*args, **kwargs)
torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device
"""


def test_no_kernel_image_through_torch_ops_is_the_kernels() -> None:
    h = one(NO_KERNEL + "sgl_kernel 0.3.21\n", "no-kernel-image")
    assert (h.package, h.version) == ("sgl-kernel", "0.3.21")
    assert "sm_90a" in h.cause and "sm_120a" in h.cause  # the matrix's record of its SASS
    assert "sgl-kernel build with SASS" in h.remedy and "vLLM" not in h.remedy


def test_ptx_toolchain_driver_older_than_toolkit() -> None:
    # nvidia-smi's banner prints "Driver Version: ... CUDA Version: ..."; the error text is cudaGetErrorString's
    # for cudaErrorUnsupportedPtxVersion (CUDA 13.0 include/driver_types.h:673-677)
    log = ("| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |\n"
           "[pip3] torch==2.10.0+cu128\n"
           "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n")
    h = one(log, "ptx-unsupported-toolchain")
    assert "driver 550.54.15 supports CUDA up to 12.4" in h.cause and "CUDA 12.8" in h.cause
    assert "driver to one for CUDA 12.8" in h.remedy and "CUDA 12.4 or older" in h.remedy


def test_ptx_toolchain_without_versions_keeps_the_row() -> None:
    h = one("CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n", "ptx-unsupported-toolchain")
    row = next(s for s in load_facts().rows("signature") if s.id == h.id)
    assert h.remedy == row.remedy


# transformers/models/auto/configuration_auto.py:1433-1436 (5.2.0 wheel): the ValueError it raises from the KeyError
MODEL_VALUE = ("ValueError: The checkpoint you are trying to load has model type `{mt}` but Transformers does not "
               "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
               "version of Transformers is out of date.")


def test_model_type_from_the_value_error() -> None:
    h = one("transformers==4.57.1\n" + MODEL_VALUE.format(mt="glm_moe_dsa"), "model-type-unknown")
    assert h.groups["model_type"] == "glm_moe_dsa"
    assert "transformers 4.57.1 does not know model type glm_moe_dsa" in h.cause
    assert "install transformers>=5.2.0" in h.remedy


def test_model_type_the_matrix_does_not_know() -> None:
    """A type no [[model]] row lists is named with the first release the [[model_types]] harvest records (smollm3:
    4.53.0); a type no release up to the newest harvested knows is no version failure and is not claimed."""
    h = one(MODEL_VALUE.format(mt="smollm3"), "model-type-unknown")
    assert "smollm3" in h.cause and "4.53.0" in h.cause and "transformers>=4.53.0" in h.remedy
    assert explain(MODEL_VALUE.format(mt="brand_new_moe")) == []


def test_out_of_date_line_alone() -> None:
    """The message wrapped over two lines: the second one alone still names the cause."""
    h = one("issue with the checkpoint, or because your version of Transformers is out of date.", "model-type-unknown")
    assert "does not know the checkpoint's model type" in h.cause


def test_installed_transformers_that_knows_the_model() -> None:
    h = one("transformers 5.2.0\n" + MODEL_VALUE.format(mt="glm_moe_dsa"), "model-type-unknown")
    assert "transformers 5.2.0 knows glm_moe_dsa" in h.cause and "install transformers" not in h.remedy


def test_bare_key_error_needs_transformers_or_a_known_model() -> None:
    assert explain("KeyError: 'max_tokens'\n") == []
    assert [h.id for h in explain("KeyError: 'glm_moe_dsa'\n")] == ["model-type-unknown"]
    tb = (f'  File "{SITE}/transformers/models/auto/configuration_auto.py", line 1048, in __getitem__\n'
          "    raise KeyError(key)\nKeyError: 'olmo_hybrid'\n")
    h = one(tb, "model-type-unknown")
    assert h.package == "transformers" and "olmo_hybrid" in h.cause and "5.3.0" in h.cause
    assert explain(tb.replace("olmo_hybrid", "qwen9_moe")) == []  # a key no release knows as a model type


# flashinfer-0.6.3 flashinfer/jit/core.py:127 asks nvcc for -gencode=arch=compute_90a,code=sm_90a; nvcc prints
# "nvcc fatal   : Unsupported gpu architecture '<arch>'" for one it does not know (reproduced with CUDA 13.0's nvcc)
def test_nvcc_older_than_the_architecture() -> None:
    log = (f'  File "{SITE}/flashinfer/jit/cpp_ext.py", line 289, in run_ninja\n'
           "Cuda compilation tools, release 11.8, V11.8.89\n"
           "nvcc fatal   : Unsupported gpu architecture 'compute_90a'\n")
    h = one(log, "nvcc-unsupported-arch")
    assert h.package == "flashinfer-python" and h.groups["arch"] == "compute_90a"
    assert "nvcc 11.8" in h.cause and "12.0" in h.cause
    assert "FLASHINFER_NVCC" in h.remedy and "flashinfer-jit-cache" in h.remedy


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the loader fixture")
def test_nccl_mismatch_from_the_real_loader(tmp_path: Path) -> None:
    """torch's libtorch_cuda.so needs an NCCL function; an older libnccl.so.2 is loaded: glibc's own message."""
    def cc(src: str, out: Path, *args: str) -> None:
        c = out.with_suffix(".c")
        c.write_text(textwrap.dedent(src))
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c), *args], check=True, capture_output=True)

    nccl = tmp_path / "nvidia" / "nccl" / "lib"
    nccl.mkdir(parents=True)
    cc("int ncclCommInitRank(void) { return 0; }\n", nccl / "libnccl.so.2", "-Wl,-soname,libnccl.so.2")
    lib = tmp_path / "torch" / "lib"
    lib.mkdir(parents=True)
    cc("extern int ncclCommWindowRegister(void);\nint use(void) { return ncclCommWindowRegister(); }\n",
       lib / "libtorch_cuda.so", "-L", str(nccl), "-l:libnccl.so.2", f"-Wl,-rpath,{nccl}")
    r = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(lib / 'libtorch_cuda.so')!r})"],
                       capture_output=True, text=True)
    assert "undefined symbol: ncclCommWindowRegister" in r.stderr
    log = r.stderr + "[pip3] nvidia-nccl-cu12==2.27.3\n[pip3] nvidia-nccl-cu13==2.28.9\n[pip3] torch==2.9.1\n"
    hits = explain(log)
    assert [h.id for h in hits] == ["nccl-undefined-symbol"]  # the generic undefined-symbol lies inside it
    h = hits[0]
    # the message's own groups; the traceback's last frame (ctypes' CDLL) is context the scanner adds to every hit
    assert {k: v for k, v in h.groups.items() if k not in ("frame_file", "frame_func")} == {
        "library": "libtorch_cuda.so", "symbol": "ncclCommWindowRegister"}
    assert h.groups.get("frame_func") in (None, "__init__")
    # torch 2.9.1's default wheel is CUDA 12.8: the cu13 NCCL is the other one
    assert "nvidia-nccl-cu12 2.27.3 and nvidia-nccl-cu13 2.28.9" in h.cause
    assert h.remedy.startswith("pip uninstall nvidia-nccl-cu13")


def test_torchvision_built_for_a_cuda_torch_next_to_cpu_torch() -> None:
    h = one("[pip3] torch==2.13.0+cpu\n[pip3] torchvision==0.28.0\n"
            "RuntimeError: operator torchvision::nms does not exist\n", "torchvision-nms-missing")
    assert "torchvision 0.28.0 is the release for torch 2.13.0" in h.cause and "CPU-only" in h.cause
    assert "install torchvision==0.28.0+cpu" in h.remedy and "a CUDA build of torch" in h.remedy


def test_torchvision_for_another_torch() -> None:
    h = one("torch 2.11.0\ntorchvision 0.24.1\nRuntimeError: operator torchvision::nms does not exist\n",
            "torchvision-nms-missing")
    assert h.remedy == "install torchvision==0.26.0 (built for torch 2.11.0), or torch==2.9.1"


def test_no_remedy_installs_what_is_installed() -> None:
    """Over every case above: a remedy never names the very version the log says is installed (unlabelled)."""
    logs = ["[pip3] torch==2.13.0+cpu\n[pip3] torchvision==0.28.0\nRuntimeError: operator torchvision::nms does not exist",
            "torch 2.9.1\nsgl-kernel 0.3.21\n" + NO_KERNEL,
            f"torch==2.9.1\nsgl-kernel==0.3.21\nImportError: {SITE}/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZN3c10x",
            "transformers 4.57.1\n" + MODEL_VALUE.format(mt="glm_moe_dsa")]
    for log in logs:
        facts = load_facts()
        scan = scan_log(log.splitlines(), facts.rows("signature"))
        for h in diagnose(scan.hits, Env.from_log(scan.context), facts):
            for name, ver in scan.context.versions.items():
                assert not re.search(rf"install {re.escape(name)}=={re.escape(ver)}(?![+\w.])", h.remedy), (h, name)


def test_context_patterns_are_linear() -> None:
    # Code's own context patterns: no nested or unbounded repeat (super-linear in the line's length). The cap on the
    # product of bounded gaps is the matrix's policy for signatures people add; these version patterns exceed it on
    # paper, but every gap ends at a literal its class cannot match, so each start costs a bounded amount.
    for pat in [p for _, p in _MENTIONS] + _VERSIONS + [p for _, p in _CUDA]:
        problem = linear_time_problem(pat.pattern)
        assert problem is None or problem.startswith("bounded gaps"), (pat.pattern, problem)


def test_new_signatures_cite_their_source() -> None:
    rows = {s.id: s for s in load_facts().rows("signature")}
    for sid in ("ptx-unsupported-toolchain", "nvcc-unsupported-arch", "nccl-undefined-symbol", "model-type-unknown"):
        # the file and line that print it, or the run here that reproduces it
        assert re.search(r"\.(h|py|c):\d+|tests/(\w+/)*test_\w+\.py::test_\w+", rows[sid].source), sid
        assert "FACTS.md" not in rows[sid].source


def test_cli_shows_package_and_json(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(NO_KERNEL + "sgl_kernel 0.3.21\n")
    r = run_cli("explain", str(log), "--json")
    assert r.returncode == 1, r.stderr
    import json

    sig = json.loads(r.stdout)["signatures"][0]
    assert (sig["id"], sig["package"], sig["version"]) == ("no-kernel-image", "sgl-kernel", "0.3.21")
    assert "package: sgl-kernel 0.3.21" in run_cli("explain", str(log)).stdout


# c10/cuda/CUDAFunctions.cpp:45-53 (pytorch/pytorch@01a6a16d): the driver API version torch reads, 1000 x major + 10 x minor
DRIVER_TOO_OLD = ("RuntimeError: The NVIDIA driver on your system is too old (found version {found}). Please update your "
                  "GPU driver by downloading and installing a new version from the URL: "
                  "http://www.nvidia.com/Download/index.aspx")


def test_driver_too_old_decodes_the_found_version_against_torchs_cuda() -> None:
    from glmcompat.decide.cudacauses import driver_cuda

    assert [driver_cuda(v) for v in ("12040", "11080", "13000", "9020")] == ["12.4", "11.8", "13.0", "9.2"]
    h = one("[pip3] torch==2.9.1+cu128\n" + DRIVER_TOO_OLD.format(found="12040"), "driver-too-old")
    assert "CUDA 12.4 (12040)" in h.cause and "CUDA runtime of torch 2.9.1+cu128 (CUDA 12.8)" in h.cause and ">= 570.26" in h.cause
    assert h.remedy.startswith("install torch==2.9.1+cu124 from PyTorch's cu124 index") and ">= 570.26" in h.remedy


def test_a_missing_cuda_13_runtime_is_not_read_as_cuda_12() -> None:
    """The loader's "libcudart.so.13: cannot open shared object file" is an extension built for CUDA 13 in an
    environment without that runtime (issue 38: the row used to explain it as a CUDA 12 extension); beside a torch built
    for CUDA 12 it is an extension built for another CUDA than torch (extension-cuda-mismatch, fix-d)."""
    h = one(f"[pip3] torch==2.9.1+cu128\nImportError: libcudart.so.13: cannot open shared object file: No such file or "
            f"directory\n  File \"{SITE}/sgl_kernel/__init__.py\", line 5", "extension-cuda-mismatch")
    assert "built for CUDA 13 (its compiled module links libcudart.so.13)" in h.cause
    assert "torch 2.9.1+cu128 is built for CUDA 12.8" in h.cause
    assert "build for CUDA 12" in h.remedy and "CUDA 12 extension" not in h.cause
    assert not [o for o in explain(f"[pip3] torch==2.9.1+cu128\nImportError: libcudart.so.13: cannot open shared object "
                                   f"file\n  File \"{SITE}/sgl_kernel/__init__.py\", line 5") if o.id == "cudart-missing"]
