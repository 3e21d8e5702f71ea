"""``glmcompat explain`` on the exact text each family of set P's misses prints, its other phrasings, and the lines that
share its words but must stay unclaimed. The real logs are cases of tests/fixtures/explain/heldout_p.toml (NVIDIA/apex#955,
state-spaces/mamba#28, jax-ml/jax#22416, MIT-REALM/gcbfplus#1, NVIDIA/TensorRT#2195, NVIDIA/retinanet-examples#314,
vllm-project/vllm#1772, vllm-project/vllm#5635, meta-pytorch/data#315, serge-sans-paille/pythran#2189)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, explain


def test_apex_check_without_nvcc_names_torchs_cuda(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # NVIDIA/apex setup.py check_cuda_torch_binary_vs_bare_metal, the log cut before nvcc -V's release
    out = diagnoses("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the "
                    "version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.2.",
                    "cuda-toolkit-mismatch", ["CUDA 10.2", "apex's setup.py"], tmp_path, capsys)
    assert "CUDA major" not in out, out


@pytest.mark.parametrize("text", [
    "ImportError causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so undefined symbol",
    "ImportError: /x/site-packages/causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
])
def test_bare_undefined_symbol_line_names_the_library(text: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "undefined-symbol", ["causal_conv1d"], tmp_path, capsys)


@pytest.mark.parametrize("text", [
    "ld.lld: error: undefined symbol",  # a linker's line: no ImportError, no library
    "ImportError causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so undefined symbols were checked: none",
])
def test_undefined_symbol_words_elsewhere_stay_unclaimed(text: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    _, out = explain(text, tmp_path, capsys)
    assert "undefined-symbol" not in out, out


def test_jax_cudnn_check_names_both_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # jax/_src/xla_bridge.py _check_cuda_versions._version_check("cuDNN", ...)
    out = diagnoses("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version "
                    "8906, which is newer. The copy of cuDNN that is installed must be at least as new as the version "
                    "against which JAX was built.", "cudnn-version-mismatch", ["JAX", "8906", "8.9.6", "8.6.0"],
                    tmp_path, capsys)
    assert "package: torch" not in out, out


def test_jax_other_library_checks_stay_off_cudnn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same check of cuSOLVER shares the words and is no cuDNN mismatch
    _, out = explain("CUDA backend failed to initialize: Found cuSOLVER version 11405, but JAX was built against version "
                     "11502, which is newer.", tmp_path, capsys)
    assert "cudnn-version-mismatch" not in out, out


@pytest.mark.parametrize("text", [
    "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version (0.54) "
    "and framework PJRT API version 0.51).",
    "Mismatched PJRT plugin PJRT API version (0.54) and framework PJRT API version (0.51)",
])
def test_pjrt_plugin_mismatch_names_both_api_versions(text: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "jax-cuda-plugin-mismatch", ["jax", "0.54", "0.51", "newer"], tmp_path, capsys)


@pytest.mark.parametrize(("text", "words"), [
    ("6: The engine plan file is not compatible with this version of TensorRT, expecting library version 8.0.0 got "
     "8.0.1, please rebuild.", ["TensorRT 8.0.0", "8.0.1"]),
    ("[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::35] Error Code 1: Serialization (Serialization assertion "
     "safeVersionRead == safeSerializationVersion failed.Version tag does not match. Note: Current Version: 0, "
     "Serialized Engine Version: 96)", ["TensorRT", "96"]),
    ("Serialization assertion plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed.Trying to load an engine created with "
     "incompatible serialization version.", ["TensorRT"]),
])
def test_tensorrt_engine_of_another_release(text: str, words: list[str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses(text, "tensorrt-engine-version-mismatch", words, tmp_path, capsys)
    assert "package: cpp" not in out, out


def test_engine_deserialization_alone_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the follow-up line alone names no version: a corrupt file or an out-of-memory fails the same way
    _, out = explain("4: [runtime.cpp::deserializeCudaEngine::74] Error Code 4: Internal Error (Engine deserialization "
                     "failed.)", tmp_path, capsys)
    assert "tensorrt-engine-version-mismatch" not in out, out


def test_driver_too_old_without_its_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses("RuntimeError: The NVIDIA driver on your system is too old", "driver-too-old", ["driver"], tmp_path, capsys)


def test_container_cuda_requirement_names_the_images_cuda(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = diagnoses("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your "
                    "driver to a newer version, or use an earlier cuda container: unknown.", "driver-too-old",
                    ["12.4", "container"], tmp_path, capsys)
    assert "package: torch" not in out, out


def test_conda_cpu_build_of_pytorch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses("pytorch                   1.11.0              py3.8_cpu_0    pytorch", "torch-cpu-only",
              ["pytorch 1.11.0", "py3.8_cpu_0", "cpuonly"], tmp_path, capsys)


@pytest.mark.parametrize("text", [
    "pytorch                   1.11.0          py3.8_cuda11.3_cudnn8.2.0_0    pytorch",
    "pytorch-mutex             1.0                         cpu    pytorch",
])
def test_conda_cuda_build_stays_unclaimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out = explain(text, tmp_path, capsys)
    assert "torch-cpu-only" not in out, out


def test_scipy_numpy_range_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses("UserWarning: A NumPy version >=1.22.4 and <1.29.0 is required for this version of SciPy (detected "
              "version 2.0.0b1)", "version-requirement-unmet", ["SciPy", "2.0.0b1", "numpy>=1.22.4,<1.29.0"],
              tmp_path, capsys)
