"""``glmcompat explain`` on the exact text each family of set O's misses raises (quoted from the raise site its
[[signature]] row cites), its other phrasings, and the lines that share its words but must stay unclaimed. The real logs
are cases of tests/fixtures/explain/heldout_o.toml (NVIDIA/cuvs#1794, numpy/numpy#11871, geocine/sd-easy-mode#18)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, explain, unclaimed


@pytest.mark.parametrize("text", [
    # numpy-1.26.4 wheel numpy/core/include/numpy/__ufunc_api.h:243-248 (_import_umath of NumPy 1.16+ headers)
    "ImportError: numpy.core._multiarray_umath failed to import",
    "  File \"/x/site-packages/cv2/__init__.py\", line 3, in <module>\nImportError: numpy.core._multiarray_umath failed to import",
])
def test_multiarray_umath_import_is_a_numpy_older_than_1_16(text: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses(text, "numpy-too-old", ["1.16", "numpy"], tmp_path, capsys)
    assert "numpy<2" not in out, out


def test_numpy_2_banner_stays_numpy_abi(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # numpy-1.26.4 __multiarray_api.h:1558, the NumPy-1.x-built module under NumPy 2: the other direction
    out = diagnoses("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.2 as it may crash.\n"
                    "ImportError: numpy.core.multiarray failed to import", "numpy-abi", ["numpy"], tmp_path, capsys)
    assert "numpy-too-old" not in out, out


def test_multiarray_umath_module_missing_stays_unclaimed_by_numpy_too_old(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # a pickle of NumPy 2 loaded under NumPy 1.x shares the module's name but is no import_umath failure
    _, out = explain("ModuleNotFoundError: No module named 'numpy._core._multiarray_umath'", tmp_path, capsys)
    assert "numpy-too-old" not in out, out


@pytest.mark.parametrize("text", [
    # torchvision's own message (torchvision-0.24.1 wheel torchvision/extension.py:57-84) wrapped at three of its spaces
    "RuntimeError: Detected that PyTorch and torchvision were compiled with different\nCUDA versions. PyTorch has CUDA "
    "Version=11.7 and torchvision has CUDA \nVersion=11.8. Please reinstall the torchvision that matches your PyTorch \n"
    "install.",
    "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has\n"
    "CUDA Version=11.7 and torchvision has\nCUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch",
    "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA\n"
    "Version=11.7 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch",
])
def test_wrapped_torchvision_cuda_message_names_both_releases(text: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses(text, "torchvision-cuda-mismatch", ["CUDA 11.8", "CUDA 11.7", "cu117"], tmp_path, capsys)
    assert "CUDA 11.7 and torch for CUDA 11.8" not in out, out


def test_cuda_version_line_alone_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a build log's "CUDA Version=12.1." shares the words and is no torchvision failure
    unclaimed("-- Found CUDA: /usr/local/cuda (found version \"12.1\")\nCUDA Version=12.1. OK", tmp_path, capsys)


@pytest.mark.parametrize(("text", "need"), [
    # the symbol as quoted without the loader's ", version libnvJitLink.so.12" tail (NVIDIA/cuvs#1794), one leading
    # underscore lost to markdown
    ("undefined symbol: _nvJitLinkGetErrorLogSize_12_9", "12.9"),
    ("libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4", "12.4"),
    # glibc elf/dl-lookup.c's whole line, as before
    ("libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12", "12.1"),
])
def test_nvjitlink_symbol_names_the_release_it_needs(text: str, need: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "nvjitlink-mismatch", [f"nvJitLink {need}", "nvidia-nvjitlink-cu12"], tmp_path, capsys)


def test_unsuffixed_nvjitlink_symbol_stays_undefined_symbol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # an extension's own undefined reference to the unversioned API name carries no CUDA release
    _, out = explain("ext.so: undefined symbol: nvJitLinkCreate", tmp_path, capsys)
    assert "nvjitlink-mismatch" not in out, out


def test_ldd_not_found_lines_name_each_missing_library(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # glibc elf/rtld.c, ldd's trace: "\t%s => not found\n" for each soname no searched directory holds
    text = ("\tlinux-vdso.so.1 =>  (0x00007ffdeb39b000)\n\tlibcudart.so.9.0 => not found\n"
            "\tlibc10.so => /x/site-packages/torch/lib/libc10.so (0x00007f5494000000)\n\tlibnccl.so.1 => not found")
    diagnoses(text, "cuda-lib-missing", ["libnccl.so.1", "NCCL 1", "libcudart.so.9.0"], tmp_path, capsys)


def test_ldd_found_lines_stay_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same listing where every soname resolves, and a non-CUDA library that is missing
    code, out = explain("\tlibnccl.so.2 => /usr/lib/x86_64-linux-gnu/libnccl.so.2 (0x00007f5494000000)\n"
                        "\tlibfoo.so.3 => not found", tmp_path, capsys)
    assert "cuda-lib-missing" not in out, out


@pytest.mark.parametrize("text", [
    # torch-1.0.0 torch/utils/ffi/__init__.py:1, the whole stub module
    "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.",
    "  File \"build.py\", line 4, in <module>\n    from torch.utils.ffi import create_extension\n"
    "  File \"/x/site-packages/torch/utils/ffi/__init__.py\", line 1, in <module>\n"
    "    raise ImportError(\"torch.utils.ffi is deprecated. Please use cpp extensions instead.\")\n"
    "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.",
])
def test_torch_ffi_stub_names_the_last_release_with_it(text: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # a removed API of torch itself is torch-api-removed (fix-wx: the precedence rule, tests/decide/test_wx_raise_sites.py)
    diagnoses(text, "torch-api-removed", ["torch.utils.ffi", "0.4.1", "torch 1.0"], tmp_path, capsys)


def test_torch_ffi_import_line_alone_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("    from torch.utils.ffi import create_extension\nffi = create_extension('_ext.roi', headers=[])",
                        tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(("text", "moved"), [
    # cuda-bindings 13.0.0 release notes: the trampoline modules cuda.{cuda,cudart,nvrtc} removed; `cuda` a namespace
    ("ImportError: cannot import name 'cudart' from 'cuda' (unknown location)", "cuda.bindings.runtime"),
    ("ImportError: cannot import name 'cuda' from 'cuda' (unknown location)", "cuda.bindings.driver"),
    ("ModuleNotFoundError: No module named 'cuda.nvrtc'", "cuda.bindings.nvrtc"),
])
def test_cuda_python_13_trampolines(text: str, moved: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "companion-api-removed", ["cuda-python", "13", moved], tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # another name of the namespace, and a module of cuda-python 13 that exists: no removed trampoline
    "ImportError: cannot import name 'core' from 'cuda' (unknown location)",
    "ModuleNotFoundError: No module named 'cuda.bindings'",
])
def test_other_cuda_namespace_failures_stay_unclaimed_as_removed(text: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _, out = explain(text, tmp_path, capsys)
    assert "cuda-python 13" not in out, out


def test_jax_cusparse_not_found_names_nvjitlink(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # jax_cuda12_plugin-0.8.1 _versions.so's own string, as jaxlib/cuda/versions_helpers.cc reports it
    diagnoses("RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cusparseGetProperty(MAJOR_VERSION, &major) "
              "failed: The cuSPARSE library was not found.", "cuda-lib-missing", ["cuSPARSE", "nvJitLink", "LD_LIBRARY_PATH"],
              tmp_path, capsys)


def test_cusparse_status_text_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # cuSPARSE's own status of a program's fault shares the words
    code, out = explain("RuntimeError: cusparseSpMM failed: CUSPARSE_STATUS_INVALID_VALUE (the cuSPARSE library)",
                        tmp_path, capsys)
    assert "cuda-lib-missing" not in out, out
