"""``glmcompat explain`` on the exact text each new signature's library raises (the string quoted from the raise site
its [[signature]] row cites), its other phrasings, and the lines that share its words but are no failure of the stack.
The real logs of these families are cases of tests/fixtures/explain (set I: pytorch/pytorch#1557,
daerduoCarey/PyTorchEMD#11, vllm-project/vllm#20912, Robbyant/lingbot-map#37, deepspeedai/DeepSpeed#5653,
NVIDIA/nccl-tests#6)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, explain, unclaimed


@pytest.mark.parametrize(("text", "sid", "words"), [
    # torch 0.x THCGeneral.c __THCudaCheck: "THCudaCheck FAIL file=%s line=%i error=%i : %s", then _THError's
    # "cuda runtime error (%d) : %s" + " at %s:%d" (pytorch/pytorch@0ba03a75d2aefd9c10e8e92e8231679e43d43f65)
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorCopy.cu line=206 error=98 : invalid device function",
     "torch-arch-unsupported", ["THCTensorCopy.cu", "compute capability"]),
    ("RuntimeError: cuda runtime error (8) : invalid device function at /pytorch/torch/lib/THCUNN/generic/Threshold.cu:34",
     "torch-arch-unsupported", ["Threshold.cu", "TORCH_CUDA_ARCH_LIST"]),
    ("THCudaCheck FAIL file=/home/u/ext/src/nms_kernel.cu line=103 error=98 : invalid device function",
     "cuda-toolkit-mismatch", ["nms_kernel.cu", "CUDA toolkit", "TORCH_CUDA_ARCH_LIST"]),
    # C10_CUDA_CHECK's text for cudaErrorInvalidDeviceFunction (its cudaGetErrorString: "invalid device function")
    ("RuntimeError: CUDA error: invalid device function", "no-kernel-image", []),
])
def test_invalid_device_function_is_read_by_whose_code_failed(text: str, sid: str, words: list[str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and f": {sid}" in out, out
    others = {"torch-arch-unsupported", "cuda-toolkit-mismatch"} - {sid}
    assert not [o for o in others if f": {o}" in out], out
    assert not [w for w in words if w not in out], out


@pytest.mark.parametrize(("text", "words"), [
    # pip 26.2.1 resolvelib/factory.py:753-768: "Could not find a %s that satisfies the requirement %s (from versions:
    # %s)" (%s: "version" or "final version"), then "No matching distribution found for {req}"
    ("ERROR: Could not find a version that satisfies the requirement torch==2.1.0+cu121 (from versions: 2.2.0, 2.3.0)\n"
     "ERROR: No matching distribution found for torch==2.1.0+cu121", ["torch==2.1.0+cu121", "2.2.0, 2.3.0", "cu121"]),
    ("ERROR: Could not find a final version that satisfies the requirement xformers==0.0.30 (from versions: none)",
     ["xformers", "from versions: none"]),
    ("Looking in indexes: https://index.invalid/whl/cu128\n"
     "ERROR: No matching distribution found for flashinfer-python", ["flashinfer-python", "https://index.invalid/whl/cu128"]),
])
def test_no_matching_distribution_of_a_stack_package(text: str, words: list[str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "no-matching-distribution", words, tmp_path, capsys)


@pytest.mark.parametrize("text", [
    "ERROR: No matching distribution found for dassl",  # a package outside the stack: no failure this reads
    "ModuleNotFoundError: No module named 'vllm._C'",  # a compiled part missing, not a release without a module
    "ImportError: cannot import name 'x' from partially initialized module 'sglang' (most likely due to a circular import)",
    "AttributeError: module 'numpy' has no attribute 'astype'",  # numpy is no companion the matrix tracks
    "AttributeError: module 'mypkg.utils' has no attribute 'helper'",
    "fatal error: stdio.h is fine",
])
def test_lines_sharing_the_words_are_not_claimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


@pytest.mark.parametrize(("text", "words"), [
    # CPython Lib/importlib/_bootstrap.py (a submodule the parent package lacks), Python/ceval.c import_from,
    # Objects/moduleobject.c module_getattro
    ("ModuleNotFoundError: No module named 'flashinfer.comm'", ["flashinfer-python", "flashinfer.comm"]),
    ("ImportError: cannot import name 'GlmMoeDsaConfig' from 'transformers' (/x/site-packages/transformers/__init__.py)",
     ["transformers", "GlmMoeDsaConfig"]),
    ("AttributeError: module 'xformers.ops' has no attribute 'fmha'", ["xformers", "xformers.ops.fmha"]),
])
def test_a_companion_without_what_its_consumer_uses(text: str, words: list[str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "companion-too-old", words, tmp_path, capsys)


def test_triton_keeps_its_own_signature(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler'", tmp_path, capsys)
    assert code == 1 and ": triton-torch-mismatch" in out and ": companion-too-old" not in out, out


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_missing_header_from_the_real_compiler(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "ext.cpp"
    src.write_text("#include <cuda_runtime.h>\nint main() { return 0; }\n")
    run = subprocess.run(["gcc", "-c", str(src), "-o", str(tmp_path / "ext.o")], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, check=False)
    assert run.returncode != 0 and "fatal error: cuda_runtime.h: No such file or directory" in run.stderr, run.stderr
    code, out = explain("Building wheel for flash-attn (setup.py) ... error\n" + run.stderr, tmp_path, capsys)
    assert code == 1 and ": build-header-missing" in out and "CUDA_HOME" in out and "flash-attn" in out, out


@pytest.mark.parametrize(("text", "words"), [
    # MSVC fatal error C1083 (learn.microsoft.com/cpp/error-messages/compiler-errors-1/fatal-error-c1083)
    ("csrc\\ext.cpp(3): fatal error C1083: Cannot open include file: 'Python.h': No such file or directory",
     ["Python.h", "development headers"]),
    ("fatal error: torch/extension.h: No such file or directory", ["torch/extension.h", "--no-build-isolation"]),
])
def test_a_missing_header_names_who_ships_it(text: str, words: list[str], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "build-header-missing", words, tmp_path, capsys)


@pytest.mark.parametrize(("text", "words"), [
    # CUDA 13.0 toolkit include/crt/host_config.h:137 and :151
    ("/usr/local/cuda/include/crt/host_config.h:137:2: error: #error -- unsupported GNU version! gcc versions later than "
     "15 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check",
     ["gcc (newer than 15)", "g++-15"]),
    ("host_config.h:151:2: error: #error -- unsupported clang version! clang version must be less than 21 and greater "
     "than 3.2 .", ["clang (21 or newer)"]),
])
def test_a_host_compiler_newer_than_nvcc_accepts(text: str, words: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "host-compiler-unsupported", words, tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # NCCL v2.30.7-1 src/init.cc:3420 (ncclGetErrorString), and the form of NCCL 2.x before it
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled cuda error (run "
    "with NCCL_DEBUG=INFO for details), NCCL version 2.14.3",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
    "Test NCCL failure common.cu:777 'unhandled cuda error'",
])
def test_nccl_unhandled_cuda_error(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": nccl-cuda-mismatch" in out and "NCCL_DEBUG=WARN" in out, out
    if "2.14.3" in text:
        assert "NCCL 2.14.3" in out, out


def test_a_library_version_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # transformers/utils/versions.py:44-46 (_compare_versions)
    code, out = explain("ImportError: tokenizers>=0.11.1,!=0.11.3,<0.14 is required for a normal functioning of this "
                         "module, but found tokenizers==0.14.1.", tmp_path, capsys)
    assert code == 1 and ": version-requirement-unmet" in out, out
    assert "tokenizers 0.14.1" in out and "tokenizers>=0.11.1,!=0.11.3,<0.14" in out, out


@pytest.mark.parametrize(("text", "package"), [
    # CPython Python/dynload_win.c (_PyImport_FindSharedFuncptrWindows): 3.8 and later, and 3.7's older form
    ('  File "C:\\Python311\\Lib\\site-packages\\torch\\__init__.py", line 128, in <module>\n'
     "    raise err\nImportError: DLL load failed while importing _C: The specified module could not be found.", "torch"),
    ("from torch._C import * ImportError: DLL load failed: The specified module could not be found.", "torch"),
    ("ImportError: DLL load failed with error code 3221225501 while importing _C", ""),
])
def test_cpython_dll_load_failed(text: str, package: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": torch-dll-load-failed" in out and ".pyd" in out, out
    assert f"{package}'s compiled module" in out if package else "a compiled module" in out, out


@pytest.mark.parametrize(("text", "claimed"), [
    # CPython 3.11.7 Python/ceval.c initialize_locals: "%U() got an unexpected keyword argument '%S'"; the call's module
    # from the traceback's code line (sherwinbahmani/4dfy#7 is the real log, a case of set I)
    ("    out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None)\n"
     "TypeError: memory_efficient_attention() got an unexpected keyword argument 'attn_bias'", True),
    ("    out = mylib.attention(q, k, v, attn_bias=None)\n"
     "TypeError: attention() got an unexpected keyword argument 'attn_bias'", False),  # no companion's call
    ("TypeError: forward() got an unexpected keyword argument 'attn_bias'", False),
])
def test_a_keyword_argument_the_companion_does_not_take(text: str, claimed: bool, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert (": companion-too-old" in out) is claimed, out
    if claimed:
        assert code == 1 and "xformers.ops.memory_efficient_attention()" in out and "attn_bias" in out, out
    else:
        assert code == 0, out


@pytest.mark.parametrize(("text", "sid", "words"), [
    # DeepSpeed v0.16.4 op_builder/builder.py:111-113 (CUDAMismatchException)
    (">- DeepSpeed Op Builder: Installed CUDA version 12.1 does not match the version torch was compiled with 11.8, "
     "unable to compile cuda/cpp extensions without a matching cuda version.", "cuda-toolkit-mismatch",
     ["DeepSpeed's op builder", "CUDA 12.1 toolkit", "CUDA 11.8"]),
    # apex 25.09 setup.py:85-92, after the nvcc -V it prints
    ("Cuda compilation tools, release 12.4, V12.4.131\nRuntimeError: Cuda extensions are being compiled with a version of "
     "Cuda that does not match the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.1.",
     "cuda-toolkit-mismatch", ["apex's setup.py", "CUDA 12.4 toolkit", "CUDA 12.1"]),
    # DeepSpeed v0.16.4 op_builder/builder.py:51 (MissingCUDAException)
    ("deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
     "nvcc-missing", ["CUDA_HOME"]),
    # the loader's text for the CPU fallback library of bitsandbytes (bitsandbytes-0.45.0 cextension.py:63)
    ("AttributeError: /usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: "
     "cadam32bit_grad_fp32", "bitsandbytes-cuda-setup", ["bitsandbytes"]),
    # pip 26.2.1 resolvelib/factory.py:140
    ("ERROR: torch-2.1.0+cu121-cp311-cp311-linux_x86_64.whl is not a supported wheel on this platform.",
     "wheel-not-supported", ["Python 3.11", "linux_x86_64", "torch==2.1.0+cu121"]),
    # triton driver.c gpuAssert + the driver's CUDA_ERROR_INVALID_SOURCE string (cuda.h:2769-2773)
    ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid", "gpu-image-invalid", ["TRITON_PTXAS_PATH"]),
])
def test_other_libraries_raise_sites(text: str, sid: str, words: list[str], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and f": {sid}" in out and ": undefined-symbol" not in out, out
    assert not [w for w in words if w not in out], out


def test_deepspeed_accepting_a_minor_mismatch_is_no_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # DeepSpeed v0.16.4 op_builder/builder.py:99-101: printed where it accepts the pair
    code, out = explain("Installed CUDA version 11.7 does not match the version torch was compiled with 11.8 but since "
                         "the APIs are compatible, accepting this combination", tmp_path, capsys)
    assert code == 0 and "no known failure signature" in out, out


@pytest.mark.parametrize(("text", "sid", "words"), [
    # sglang-0.5.9 sglang/srt/utils/common.py:1100-1108 (assert_pkg_version)
    ("Exception: sgl-kernel is installed with version 0.3.5, which is less than the minimum required version 0.3.21. "
     "Please reinstall the latest version with `pip install sgl-kernel --force-reinstall`", "companion-too-old",
     ["sgl-kernel>=0.3.21", "sgl-kernel 0.3.5", "sglang"]),
    ("Exception: flashinfer_python with minimum required version 0.6.3 is not installed. Please reinstall",
     "package-not-installed", ["flashinfer-python", "sglang"]),
])
def test_the_engines_own_version_check(text: str, sid: str, words: list[str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, sid, words, tmp_path, capsys)


@pytest.mark.parametrize(("text", "sid", "words"), [
    # torch's cpp_extension _check_cuda_version
    ("RuntimeError: The current installed version of /opt/conda/bin/x86_64-conda-linux-gnu-c++ (14.3.0) is greater than "
     "the maximum required version by CUDA 12.8. Please make sure to use an adequate version of "
     "/opt/conda/bin/x86_64-conda-linux-gnu-c++ (>=6.0.0, <14.0).", "host-compiler-unsupported",
     ["x86_64-conda-linux-gnu-c++ 14.3.0", "CUDA 12.8", "newer"]),
    # transformers-4.57.1 modeling_utils.py:2427-2430
    ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: you need "
     "flash_attn package version to be greater or equal than 2.1.0. Detected version 2.0.4. Please refer to the docs",
     "version-requirement-unmet", ["flash-attn>=2.1.0", "flash-attn 2.0.4", "transformers"]),
    # vllm-0.6.3 vllm/worker/worker.py:470-478
    ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
     "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
     "--dtype=half.", "gpu-dtype-unsupported", ["Tesla T4 (compute capability 7.5)", "--dtype half"]),
    # torch/utils/cpp_extension.py verify_ninja_availability, before and after torch 2 added its hint
    ("RuntimeError: Ninja is required to load C++ extensions", "build-tool-missing", ["pip install ninja"]),
    ("RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)", "build-tool-missing",
     ["PATH"]),
])
def test_build_and_gpu_checks(text: str, sid: str, words: list[str], tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, sid, words, tmp_path, capsys)


@pytest.mark.parametrize(("text", "sid", "words"), [
    # uv 0.12.5 prioritized_distribution.rs:227-237 (the tag check: wheel-not-supported's, issue 38's one vocabulary),
    # report.rs:277, availability.rs:247; fix-s: torch 2.1.0 has no cp313 wheel on any platform (torch-pythons.toml), so
    # the tag check is read as torch-python-unsupported, a case of wheel-not-supported (glmcompat/decide/torchpythons.py)
    ("  ╰─▶ Because torch==2.1.0 has no wheels with a matching Python ABI tag (e.g., `cp313`) and you require "
     "torch==2.1.0, we can conclude that your requirements are unsatisfiable.", "torch-python-unsupported",
     ["torch==2.1.0", "ABI", "uv venv --python"]),
    ("  ╰─▶ Because there is no version of torch==2.5.1+cu121 and you require torch==2.5.1+cu121, we can conclude that "
     "your requirements are unsatisfiable.", "no-matching-distribution", ["torch==2.5.1+cu121", "cuXYZ"]),
    ("  ╰─▶ Because flashinfer-python was not found in the package registry and you require flashinfer-python, we can "
     "conclude that your requirements are unsatisfiable.", "no-matching-distribution", ["flashinfer-python", "--index"]),
])
def test_uv_finding_no_release(text: str, sid: str, words: list[str], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and f": {sid}" in out and "uv" in out, out
    assert not [w for w in words if w not in out], out


def test_uv_finding_no_release_of_a_package_outside_the_stack(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("  ╰─▶ Because iniconfig was not found in the package registry and your project depends on "
                         "iniconfig, we can conclude that your project's requirements are unsatisfiable.", tmp_path, capsys)
    assert code == 0 and "no known failure signature" in out, out


@pytest.mark.parametrize(("text", "sid", "words"), [
    # flashinfer-python-0.6.3 compilation_context.py:61-64 and jit/cpp_ext.py:56-59
    ("RuntimeError: No supported CUDA architectures found for major versions [10].", "flashinfer-arch-unsupported",
     ["10.x", "FLASHINFER_CUDA_ARCH_LIST"]),
    ("RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist", "nvcc-missing",
     ["nvcc"]),
])
def test_flashinfer_jit(text: str, sid: str, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, sid, words, tmp_path, capsys)


@pytest.mark.parametrize(("text", "sid", "words"), [
    # glibc's loader (elf/dl-load.c) for cuDNN's and NCCL's sonames, and for the driver's libcuda.so.1
    ("OSError: libcudnn.so.9: cannot open shared object file: No such file or directory", "cuda-lib-missing",
     ["nvidia-cudnn-cu12", "torch 2.5.1+cu121"]),
    ("ImportError: libnccl.so.2: cannot open shared object file: No such file or directory", "cuda-lib-missing",
     ["nvidia-nccl-cu12"]),
    ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory", "driver-not-found",
     ["libcuda.so.1", "--gpus all"]),
    # apex 25.09 setup.py:228-236: amp_C exists only with --cuda_ext
    ("ModuleNotFoundError: No module named 'amp_C'", "apex-extensions-missing", ["APEX_CUDA_EXT=1"]),
    # transformers-4.57.1 import_utils.py:1756-1757 and tokenization_auto.py:1138
    ("ImportError: AutoModelForCausalLM requires the PyTorch library but it was not found in your environment. Check "
     "out the instructions on the installation page", "package-not-installed", ["AutoModelForCausalLM needs torch"]),
    ("ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported.", "companion-too-old",
     ["Qwen2Tokenizer", "transformers"]),
])
def test_more_raise_sites(text: str, sid: str, words: list[str], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("torch 2.5.1+cu121\n" + text, tmp_path, capsys)
    assert code == 1 and f": {sid}" in out, out
    assert not [w for w in words if w not in out], out


def test_a_quantization_the_gpu_is_too_old_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # vllm-0.6.3 vllm/model_executor/model_loader/loader.py:106-110
    code, out = explain("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum "
                         "capability: 89. Current capability: 86.", tmp_path, capsys)
    assert code == 1 and ": gpu-dtype-unsupported" in out and "8.9" in out and "8.6" in out, out


@pytest.mark.parametrize(("text", "words"), [
    # numpy-2.2.6 numpy/__init__.py:254-262 (__former_attrs__) and :399-404 (__expired_attributes__)
    ("AttributeError: module 'numpy' has no attribute 'float'.\n`np.float` was a deprecated alias for the builtin "
     "`float`. To avoid this error in existing code, use `float` by itself.", ["np.float", "numpy<1.24", "np.float64"]),
    ("AttributeError: module 'numpy' has no attribute 'int'.", ["np.int", "1.24"]),
    ("AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead.",
     ["np.float_", "numpy<2"]),
    ("AttributeError: module 'numpy' has no attribute 'NaN'", ["np.NaN", "NumPy 2.0"]),
])
def test_numpy_newer_than_the_code(text: str, words: list[str], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "numpy-too-new", words, tmp_path, capsys)


def test_torch_missing_inside_pips_isolated_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pip 26.2.1 distributions/sdist.py:127 ("Getting requirements to build wheel") in its isolated build environment
    code, out = explain("Collecting flash-attn\n  Installing build dependencies ... done\n  Getting requirements to build "
                         "wheel ... error\n      ModuleNotFoundError: No module named 'torch'", tmp_path, capsys)
    # the failed step names the cause once, under its own id (build-isolation-no-torch: glmcompat/decide/pythoncauses.py)
    assert code == 1 and ": build-isolation-no-torch" in out and "--no-build-isolation" in out and "flash-attn" in out, out
    assert ": package-not-installed" not in out, out
    code, out = explain("ModuleNotFoundError: No module named 'torch'", tmp_path, capsys)
    assert code == 1 and ": package-not-installed" in out and "--no-build-isolation" not in out, out


@pytest.mark.parametrize("text", [
    # NCCL's CUDACHECK (checks.h:13-21) names the CUDA error: a fault of the program or the GPU is no stack mismatch
    "misc/nccl.cc:12 NCCL WARN Cuda failure 'out of memory'\nRuntimeError: NCCL error: unhandled cuda error",
    "NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\nncclUnhandledCudaError: Call to CUDA "
    "function failed.",
])
def test_nccl_after_a_gpu_fault_is_not_claimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert ": nccl-cuda-mismatch" not in out, out


def test_nccl_names_the_cuda_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'\n"
                         "RuntimeError: NCCL error: unhandled cuda error, NCCL version 2.21.5", tmp_path, capsys)
    assert code == 1 and ": nccl-cuda-mismatch" in out and "CUDA driver version is insufficient" in out, out
    assert ": driver-insufficient" in out, out


def test_a_missing_cccl_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same gcc text for a CCCL header, which has no extension (cuda_fp16.h includes <nv/target>)
    code, out = explain("/usr/local/cuda/include/cuda_fp16.h:4492:10: fatal error: nv/target: No such file or directory",
                         tmp_path, capsys)
    assert code == 1 and ": build-header-missing" in out and "CCCL" in out, out
    code, out = explain("cc1plus: fatal error: main.cpp: No such file or directory", tmp_path, capsys)
    assert code == 0, out  # a source file the command names, not a header


def test_remote_code_importing_what_is_not_installed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # transformers-4.57.1 dynamic_module_utils.py:259-262 (check_imports)
    code, out = explain("ImportError: This modeling file requires the following packages that were not found in your "
                         "environment: flash_attn. Run `pip install flash_attn`", tmp_path, capsys)
    assert code == 1 and ": package-not-installed" in out and "flash-attn" in out and "--no-build-isolation" in out, out


# --- set K's families (issue 38): each read from its library's own raise site, every phrasing it can produce ----------

@pytest.mark.parametrize(("text", "words"), [
    # pip resolvelib/factory.py get_installation_error (pypa/pip@0179718a): "Cannot install {info} because these package
    # versions have conflicting dependencies.", "The conflict is caused by:", "{parent} {version} depends on {req}" /
    # "The user requested {req}"
    ("ERROR: Cannot install torch==2.3.0 and xformers==0.0.28 because these package versions have conflicting "
     "dependencies.\n\nThe conflict is caused by:\n    The user requested torch==2.3.0\n    xformers 0.0.28 depends on "
     "torch==2.4.1\n\nTo fix this you could try to:\nERROR: ResolutionImpossible: for help visit https://x.invalid/",
     ["the user requested torch==2.3.0", "xformers 0.0.28 depends on torch==2.4.1", "no torch release"]),
    ("ERROR: Cannot install vllm==0.6.0 and vllm-flash-attn because these package versions have conflicting "
     "dependencies.\nThe conflict is caused by:\n    vllm 0.6.0 depends on torch==2.4.0\n    vllm-flash-attn 2.6.1 "
     "depends on torch==2.3.1", ["vllm 0.6.0 depends on torch==2.4.0", "vllm-flash-attn 2.6.1"]),
    # uv crates/uv-resolver/src/pubgrub/report.rs: "Because {a} depends on {b} and you require {c}, we can conclude ..."
    ("  × No solution found when resolving dependencies:\n  ╰─▶ Because xformers==0.0.28 depends on torch==2.4.1 and you "
     "require torch==2.3.0, we can conclude that xformers==0.0.28 cannot be used.",
     ["uv found no set of versions", "torch==2.4.1"]),
])
def test_a_resolution_that_cannot_succeed_names_its_causes(text: str, words: list[str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "pip-resolution-impossible", words, tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # the same text, outside the compiled stack: no failure this reads
    "ERROR: Cannot install -r requirements-dev.txt (line 30) and multidict==7.0.0 because these package versions have "
    "conflicting dependencies.\nThe conflict is caused by:\n    The user requested multidict==7.0.0\n    aiohttp 3.14.3 "
    "depends on multidict<7.0 and >=4.5\nERROR: ResolutionImpossible",
    # pip collecting torch at a companion's pin, with no other torch in the log: an ordinary install
    "Collecting torch==2.0.0 (from xformers==0.0.19)",
    # pip uninstalling torch where the command asked for torch: the user's own upgrade
    "pip install -U torch==2.5.1 xformers\nInstalling collected packages: torch, xformers\n  Attempting uninstall: torch\n"
    "    Found existing installation: torch 2.4.1\n    Uninstalling torch-2.4.1:\n      Successfully uninstalled torch-2.4.1",
    # a library's version check of a package the matrix does not track
    "importlib.metadata.PackageNotFoundError: No package metadata was found for The 'sacremoses' distribution was not "
    "found and is required by this application.",
])
def test_pip_and_version_check_lines_outside_the_stack_are_not_claimed(text: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


def test_a_link_of_another_library_than_the_drivers_is_not_tritons(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """GNU ld missing -lcudart: the toolkit's runtime, not the driver's libcuda.so triton links. The installers' sweep
    names it link-library-missing (glmcompat/matrix/data/install-signatures.toml), never triton-libcuda-missing."""
    code, out = explain("/usr/bin/ld: cannot find -lcudart", tmp_path, capsys)
    assert "link-library-missing" in out and "triton" not in out, out


@pytest.mark.parametrize(("text", "words"), [
    # pip operations/prepare.py "Collecting %s" with req_install.py's " (from {comes_from})", over another torch shown
    ("torch                         2.1.2+cu121\nCollecting torch==2.1.0 (from xformers==0.0.22.post7)",
     ["xformers 0.0.22.post7 requires torch==2.1.0", "torch 2.1.2+cu121", "+cu121"]),
    # pip req_uninstall.py "Successfully uninstalled %s" (name-version), the command asking for the companion only
    ("$ pip install -U xformers\nInstalling collected packages: torch, xformers\n  Attempting uninstall: torch\n"
     "    Found existing installation: torch 2.4.1\n    Uninstalling torch-2.4.1:\n      Successfully uninstalled "
     "torch-2.4.1", ["pip uninstalled torch 2.4.1 to install xformers", "xformers=="]),
])
def test_pip_replacing_a_stack_package_for_a_companion(text: str, words: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "pip-requirement-conflict", words, tmp_path, capsys)


def test_pips_own_conflict_warning_wins_over_an_earlier_uninstall_line(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """An uninstall line only sets the scene: pip's warning later in the log is the hit (facebookresearch/xformers#1052)."""
    code, out = explain("      Successfully uninstalled triton-2.3.1\ntorchvision 0.18.1+cu121 requires torch==2.3.1, "
                         "but you have torch 2.3.0 which is incompatible.", tmp_path, capsys)
    assert code == 1 and "torchvision 0.18.1+cu121 requires torch==2.3.1" in out, out


@pytest.mark.parametrize("text", [
    # triton third_party/nvidia/backend/driver.py libcuda_dirs: AssertionError "libcuda.so cannot found!\n..."
    "AssertionError: libcuda.so cannot found!",
    # GNU ld, run by triton's runtime/build.py _build with -lcuda
    "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status",
    "/usr/bin/ld: cannot find -lcuda: No such file or directory",  # binutils >= 2.39 appends strerror
])
def test_triton_linking_libcuda(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": triton-libcuda-missing" in out, out
    assert "libcuda.so" in out and "triton" in out and "TRITON_LIBCUDA_PATH" in out, out


@pytest.mark.parametrize("text", [
    # DeepSpeed op_builder/builder.py assert_no_cuda_mismatch, whole and cut where a title cuts it
    "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.1 does "
    "not match the version torch was compiled with 11.8, unable to compile cuda/cpp extensions without a matching cuda "
    "version.",
    "Installed CUDA version 12.1 does not match the version torch was compiled with 11.8",
])
def test_deepspeed_cuda_check_whole_or_cut(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": cuda-toolkit-mismatch" in out and "deepspeed" in out and "12.1" in out, out


@pytest.mark.parametrize(("text", "lib"), [
    # libnvidia-container src/xfuncs.h xdlopen: error_set_dl(err, "load library failed") + dlerror(); 1.0's driver.c
    # opened SONAME_LIBCUDA, later releases SONAME_LIBNVML
    ("nvidia-container-cli: initialization error: load library failed: libcuda.so.1: cannot open shared object file: no "
     "such file or directory", "libcuda.so.1"),
    ("stderr: Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: load library failed: "
     "libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown", "libnvidia-ml.so.1"),
])
def test_the_container_toolkit_finding_no_driver(text: str, lib: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": driver-not-found" in out and lib in out and "NVIDIA driver" in out, out


@pytest.mark.parametrize(("header", "library"), [
    ("curand_kernel.h", "cuRAND"), ("cublas_v2.h", "cuBLAS"), ("cusparse.h", "cuSPARSE"), ("nvrtc.h", "NVRTC"),
])
def test_a_cuda_header_names_its_library(header: str, library: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(f"csrc/sampling.cu:3:10: fatal error: {header}: No such file or directory", tmp_path, capsys)
    assert code == 1 and ": build-header-missing" in out and library in out, out


def test_a_version_check_of_a_missing_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # transformers utils/versions.py require_version, with LLaMA-Factory's check_version hint
    code, out = explain("importlib.metadata.PackageNotFoundError: No package metadata was found for The 'vllm>=0.4.3,"
                         "<=0.8.2' distribution was not found and is required by this application. \nTo fix: run `pip "
                         "install vllm>=0.4.3,<=0.8.2` or set `DISABLE_VERSION_CHECK=1` to skip this check.", tmp_path, capsys)
    assert code == 1 and ": package-not-installed" in out and "vllm>=0.4.3,<=0.8.2" in out, out


def test_an_undefined_symbol_names_the_library_that_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("UserWarning: Failed to load image Python extension: /x/site-packages/torchvision/image.so: "
                         "undefined symbol: _ZN3c1017RegisterOperatorsD1Ev", tmp_path, capsys)
    assert code == 1 and ": undefined-symbol" in out and "image.so" in out and "torchvision" in out, out


@pytest.mark.parametrize("text", [
    # numpy-2.0.0 numpy/__init__.py __getattr__ (attr == "array_api"), and the import of the removed module by name
    "AttributeError: `numpy.array_api` is not available from numpy 2.0 onwards",
    "ModuleNotFoundError: No module named 'numpy.array_api'",
    "ModuleNotFoundError: No module named 'numpy.array_api._dtypes'",
])
def test_numpy_2_removed_array_api(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and ": numpy-too-new" in out and "numpy.array_api" in out and "numpy<2" in out, out
