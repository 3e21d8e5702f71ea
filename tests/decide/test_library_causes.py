"""``glmcompat explain`` on the text each library raises, quoted from the raise site its [[signature]] row cites, in
other phrasings than the real logs of set J (tests/fixtures/explain/heldout_j.toml) show, and the lines that share its
words but are no such failure: the causes read in general, not one log's wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decide.explaining import explain, unclaimed


@pytest.mark.parametrize(("text", "sid", "words", "absent"), [
    # numpy's import_array (generate_numpy_api.py): "module compiled against API version 0x%x but this version of numpy
    # is 0x%x"; the releases of each C-API version from numpy/_core/code_generators/cversions.txt
    ("RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe", "numpy-too-old",
     ["C-API 0x10 (NumPy 1.23-1.24)", "C-API 0xe (NumPy 1.20-1.21)", "numpy>=1.23"], []),
    ("RuntimeError: module compiled against API version 0x12 but this version of numpy is 0x11", "numpy-too-old",
     ["NumPy 2.0", "NumPy 1.25-1.26"], []),
    # glibc's loader (elf/dl-load.c): "<soname>: cannot open shared object file"; the soname's number is the library's
    # own major; a program without torch in the log gets that library's install, not torch's wheel
    ("./build/tools/caffe: error while loading shared libraries: libcudnn.so.7: cannot open shared object file: No such "
     "file or directory", "cuda-lib-missing", ["cuDNN 7", "libcudnn.so.7"], ["torch"]),
    ("ImportError: libcufft.so.11: cannot open shared object file: No such file or directory", "cuda-lib-missing",
     ["cuFFT 11"], ["torch pins"]),
    ("ImportError: libnccl.so.2: cannot open shared object file: No such file or directory", "cuda-lib-missing",
     ["NCCL 2", "nvidia-nccl-cu12"], []),
    # with torch in the log, torch's bundled wheel
    ("torch 2.5.1+cu121\nOSError: libcudnn.so.9: cannot open shared object file: No such file or directory",
     "cuda-lib-missing", ["cuDNN 9", "nvidia-cudnn-cu12", "torch 2.5.1+cu121"], []),
    # cuBLAS's CUBLAS_STATUS_NOT_INITIALIZED from cublasCreate, in caffe's, TensorFlow's and CTranslate2's words
    ("F0110 12:00:00.000000  1234 common.cpp:152] Check failed: status == CUBLAS_STATUS_SUCCESS (1 vs. 0)  "
     "CUBLAS_STATUS_NOT_INITIALIZED", "cuda-toolkit-clash", ["cuBLAS", "CUDA toolkit"], []),
    ("E tensorflow/stream_executor/cuda/cuda_blas.cc:366] failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED\n"
     "Cuda compilation tools, release 10.1, V10.1.243", "cuda-toolkit-clash", ["cuBLAS", "CUDA 10.1"], []),
    # torch's version and collect_env's facts of a CPU build, next to an NVIDIA GPU
    ("PyTorch version: 2.3.0+cpu\nCUDA used to build PyTorch: None\n| NVIDIA-SMI 550.54.14  Driver Version: 550.54.14  "
     "CUDA Version: 12.4 |", "torch-cpu-only", ["CPU-only", "2.3.0+cpu", "driver 550.54.14"], []),
    ("torch==2.6.0+cpu\nAssertionError: Torch not compiled with CUDA enabled", "torch-cpu-only", ["2.6.0+cpu"], []),
    # CPython's type_getattro on one of triton's classes that torch's inductor reads
    ("AttributeError: type object 'JITFunction' has no attribute 'cache_hook'\ntorch 2.6.0", "triton-torch-mismatch",
     ["triton's JITFunction", "torch 2.6.0", "triton 3.2.0"], []),
    # CPython's "%U() got an unexpected keyword argument '%S'" on flashinfer's trtllm_* API
    ("TypeError: trtllm_batch_decode_with_kv_cache_mla() got an unexpected keyword argument 'sinks'\nvllm 0.11.0",
     "companion-too-old", ["flashinfer", "vllm 0.11.0", "sinks"], []),
    # bitsandbytes 0.35-0.41 cuda_setup/main.py
    ("CUDA SETUP: Required library version not found: libbitsandbytes_cuda118.so. Maybe you need to compile it from "
     "source?", "bitsandbytes-cuda-setup", ["CUDA 11.8", "libbitsandbytes_cuda118.so"], []),
    # torch's C10D_NCCL_CHECK (DistBackendError) for ncclUnhandledCudaError, and cut before NCCL's error
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
     "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5", "nccl-cuda-mismatch",
     ["NCCL 2.20.5"], []),
    ("torch.distributed.DistBackendError: NCCL error", "nccl-cuda-mismatch", ["NCCL", "torch", "NCCL_DEBUG=WARN"], []),
    # torch/distributed/distributed_c10d.py _new_process_group_helper
    ("RuntimeError: Distributed package doesn't have NCCL built in", "torch-without-nccl", ["gloo", "NCCL"], []),
    # an extension's own global function (taking at::Tensor), not torch's
    ("ImportError: /opt/ext/_ext.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
     "_Z25roi_align_forward_cuda_v2N2at6TensorES0_fiii", "undefined-symbol",
     ["roi_align_forward_cuda_v2", "own sources"], ["another torch"]),
])
def test_library_raise_sites(text: str, sid: str, words: list[str], absent: list[str], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and f": {sid}" in out, out
    assert [w for w in words if w not in out] == [], out
    assert [a for a in absent if a in out] == [], out


@pytest.mark.parametrize("text", [
    # a CPU build's version without a GPU in the log: a CPU machine's report, no failure of the stack
    "PyTorch version: 2.3.0+cpu\nCUDA used to build PyTorch: None",
    # NCCL's other errors through torch's DistBackendError: the network, the system, a usage error
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "remote process exited or there was a network error, NCCL version 2.20.5",
    # cublasCreate failing where the log shows the program ran out of memory
    "RuntimeError: CUDA error: out of memory\nRuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
    "`cublasCreate(handle)`",
    # a type object of another library
    "AttributeError: type object 'Config' has no attribute 'from_dict'",
])
def test_lines_that_share_the_words_but_are_no_such_failure(text: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


def test_torch_own_global_function_stays_a_torch_abi_break(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # torch/csrc/autograd/python_variable.h: THPVariable_Wrap is torch's, in the global namespace
    code, out = explain("ImportError: /opt/ext/_C.so: undefined symbol: _Z16THPVariable_WrapN2at6TensorE", tmp_path,
                         capsys)
    assert code == 1 and "another torch" in out and "own sources" not in out, out
