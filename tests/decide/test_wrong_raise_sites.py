"""The messages of tests/fixtures/raise_sites/wrong-signatures.toml (issue 38, branch fix-wrong): an undefined symbol of
another framework's C++ API (tensorflow::, tsl::, phi::, onnxruntime::, xla::) names that framework by the symbol's
demangled namespace, torch's namespaces still read as torch; a CUDA library that numbers its own releases (cuFFT,
cuRAND, cuSOLVER, cuSPARSE) names the CUDA majors and wheel its soname major belongs to ([[nvidia_soname]] rows)."""

from __future__ import annotations

import pytest

from glmcompat.decide.diagnose import outer_namespace, symbol_framework
from glmcompat.matrix.load import load_facts
from tests.decide.explaining import table

MESSAGES = table("wrong-signatures.toml")



@pytest.mark.parametrize(("symbol", "namespace"), [
    ("_ZN10tensorflow8OpKernelC2EPNS_20OpKernelConstructionE", "tensorflow"),
    ("_ZNK3tsl6Status8ToStringEv", "tsl"),
    ("_ZTVN11onnxruntime8OpKernelE", "onnxruntime"),
    ("_ZN3c104cuda9SetDeviceEi", "c10"),
    ("_ZNK2at10TensorBase8data_ptrIfEEPT_v", "at"),
    ("_ZZN6paddle9framework3fooEvE1x", "paddle"),
    ("_Z16THPVariable_WrapN2at10TensorBaseE", ""),  # a global function: no namespace
    ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE", ""),  # std's St
    ("_ZN99short", ""),  # a length past the name's end
    ("cudaGetDeviceCount", ""),
])
def test_outer_namespace(symbol, namespace):
    assert outer_namespace(symbol) == namespace


def test_torch_and_helper_namespaces_name_no_other_framework():
    facts = load_facts()
    for sym in ("_ZN3c1013MessageLoggerC1EPKcii", "_ZN2at4_ops3add4callERKNS_6TensorES4_RKN3c106ScalarE",
                "_ZN5torch8autograd12VariableInfoC1Ev", "_ZN6caffe28TypeMeta3NewEv", "_ZN4absl5Mutex4LockEv"):
        assert symbol_framework(sym, facts) is None, sym
    assert symbol_framework("_ZN10tensorflow8OpKernelD2Ev", facts) == ("tensorflow", "tensorflow", ())
    assert symbol_framework("_ZN3phi10DenseTensorC1Ev", facts) == ("phi", "paddlepaddle", ())
    ns, package, hosts = symbol_framework("_ZN3xla5ShapeC1Ev", facts) or ("", "", ())
    assert (ns, package) == ("xla", "") and {"tensorflow", "jaxlib"} <= set(hosts)


@pytest.mark.parametrize(("soname", "cuda", "wheel"), [
    ("libcufft.so.10", ("10", "11"), "nvidia-cufft-cu11"),
    ("libcufft.so.11", ("12",), "nvidia-cufft-cu12"),
    ("libcufftw.so.11", ("12",), "nvidia-cufft-cu12"),
    ("libcufft.so.12", ("13",), "nvidia-cufft"),
    ("libcurand.so.10", ("10", "11", "12", "13"), "nvidia-curand-cu12"),
    ("libcusolver.so.11", ("11", "12"), "nvidia-cusolver-cu12"),
    ("libcusparse.so.12", ("12", "13"), "nvidia-cusparse-cu12"),
    ("libcublas.so.12", ("12",), "nvidia-cublas-cu12"),
    ("libcublasLt.so.11", ("11",), "nvidia-cublas-cu11"),
    ("libnvrtc.so.11.2", ("11",), "nvidia-cuda-nvrtc-cu11"),
    ("libnvJitLink.so.13", ("13",), "nvidia-nvjitlink"),
    ("libcudnn_ops_infer.so.8", ("11", "12"), "nvidia-cudnn-cu12"),
    ("libnccl.so.2", ("11", "12", "13"), "nvidia-nccl-cu12"),
    ("libnppc.so.12", ("12",), "nvidia-npp-cu12"),
    ("libnvjpeg.so.13", ("13",), "nvidia-nvjpeg"),
])
def test_soname_majors_read_from_the_wheels(soname, cuda, wheel):
    row = load_facts().nvidia_soname(soname)
    assert row is not None and row.cuda == cuda and wheel in row.wheels


def test_a_soname_no_row_lists_names_no_cuda():
    facts = load_facts()
    assert facts.nvidia_soname("libcufft.so.9") is None
    assert facts.nvidia_soname("libcusparseLt.so.0") is None  # libcusparse's rows are not cuSPARSELt's
    assert facts.nvidia_soname("libcufft.so") is None
