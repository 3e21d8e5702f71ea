"""The messages of tests/fixtures/raise_sites/win-signatures.toml (issue 38, branch fix-win): the Windows words of the
library-load failures (CTranslate2's "Library <dll> is not found or cannot be loaded", cuDNN 8's "Could not load
library <dll>. Error code <n>", TensorFlow's DLL names), each named with its library, CUDA major and Windows error code,
and each near miss left unclaimed."""

from __future__ import annotations

import pytest

from glmcompat.matrix.load import load_facts
from tests.decide.explaining import table

MESSAGES = table("win-signatures.toml")



@pytest.mark.parametrize(("dll", "soname", "cuda"), [
    ("cublas64_11.dll", "libcublas.so.11", ("11",)), ("cudart64_110.dll", "libcudart.so.11", ("11",)),
    ("cudnn_ops_infer64_8.dll", "libcudnn_ops_infer.so.8", ("11", "12")), ("cufft64_11.dll", "libcufft.so.11", ("12",)),
    ("nvrtc64_120_0.dll", "libnvrtc.so.12", ("12",)), ("nvJitLink_130_0.dll", "libnvJitLink.so.13", ("13",)),
    ("C:\\env\\Lib\\site-packages\\nvidia\\cublas\\bin\\cublasLt64_12.dll", "libcublasLt.so.12", ("12",)),
])
def test_a_windows_dll_reads_as_its_soname(dll, soname, cuda):
    got = load_facts().nvidia_dll(dll)
    assert got is not None and got[0] == soname and got[1].cuda == cuda


def test_a_dll_no_wheel_ships_is_not_read():
    assert load_facts().nvidia_dll("cudart64_101.dll") is None  # CUDA 10.1's: no nvidia-* wheel, no row
