"""``glmcompat explain`` on the exact text each family of set L raises (quoted from the raise site its [[signature]] row
cites), its other phrasings, and the lines that share its words but must stay unclaimed. The real logs are cases of
tests/fixtures/explain/heldout_l.toml (conda/conda#6743, Tencent-Hunyuan/HunyuanVideo#211, NVIDIA/apex#280,
huggingface/kernels-community#1082, flashinfer-ai/flashinfer#1002, ROCm/triton#489, AlexeyAB/darknet#8938)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, explain


@pytest.mark.parametrize(("text", "words"), [
    # conda/exceptions.py UnsatisfiableError, the python class: "The following specifications were found\nto be
    # incompatible with the existing python installation in your environment:\n\nSpecifications:\n{specs}\n\nYour
    # python: {ref}", each spec a chain "<spec> -> python[version='...']"
    ("UnsatisfiableError: The following specifications were found\nto be incompatible with the existing python "
     "installation in your environment:\n\nSpecifications:\n\n  - torchvision==0.5.0 -> python[version='>=2.7,<2.8.0a0|"
     ">=3.8,<3.9.0a0']\n\nYour python: python=3.9\n", ["torchvision==0.5.0", "python 3.9", "conda create"]),
    # conda 4.4's form: "The following specifications were found to be in conflict:\n  - <spec>"
    ("UnsatisfiableError: The following specifications were found to be in conflict:\n  - pytorch-cuda=12.4 -> "
     "cuda-cudart\nUse \"conda info <package>\" to see the dependencies for each package.", ["pytorch-cuda=12.4"]),
    # conda-libmamba-solver's subclass
    ("LibMambaUnsatisfiableError: Encountered problems while solving:\n  - nothing provides cuda-version 12.9.* "
     "needed by pytorch-2.8.0\n\nYour python: python=3.12", []),
])
def test_conda_unsatisfiable(text: str, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "conda-unsatisfiable", words, tmp_path, capsys)


def test_conda_words_without_its_error_stay_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # conda's progress lines before a solve that succeeds, and a spec chain outside the error
    code, out = explain("Solving environment: unsuccessful initial attempt using frozen solve. Retrying with flexible "
                         "solve.\nSolving environment: done\n  - torchaudio==2.4.0 -> python[version='>=3.8']",
                         tmp_path, capsys)
    assert code == 0 and "conda-unsatisfiable" not in out, out


@pytest.mark.parametrize(("text", "words"), [
    # apex's setup.py of 2019: print("\nWarning:  Cuda extensions are being compiled with a version of Cuda that does "
    # "not match the version used to compile Pytorch binaries.\n"), then "Pytorch binaries were compiled with Cuda {}\n"
    ("Cuda compilation tools, release 10.1, V10.1.105\n\nWarning:  Cuda extensions are being compiled with a version of "
     "Cuda that does not match the version used to compile Pytorch binaries.\n\nPytorch binaries were compiled with "
     "Cuda 10.0.130\n", ["apex", "10.1", "10.0", "warns"]),
    # apex 25.09 setup.py:77-92: RuntimeError, one line
    ("Cuda compilation tools, release 12.4, V12.4.131\nRuntimeError: Cuda extensions are being compiled with a version "
     "of Cuda that does not match the version used to compile Pytorch binaries.  Pytorch binaries were compiled with "
     "Cuda 11.8.", ["apex", "12.4", "11.8", "refuses"]),
])
def test_apex_cuda_check_both_forms(text: str, words: list[str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(text, "cuda-toolkit-mismatch", words, tmp_path, capsys)


def test_the_apex_banner_alone_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # what the same setup.py prints when the versions match
    code, out = explain("Compiling cuda extensions with\nCuda compilation tools, release 10.0, V10.0.130\n"
                         "Pytorch binaries were compiled with Cuda 10.0.130", tmp_path, capsys)
    assert code == 0 and "cuda-toolkit-mismatch" not in out, out


def test_a_kernels_hub_repository_without_a_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # huggingface/kernels utils.py install_kernel: FileNotFoundError("Cannot find a build variant for this system in
    # {repo_id} (revision: {revision}):\n\n{variants_trace_str(trace)}"), variants.py VariantRejected reasons
    code, out = explain("FileNotFoundError: Cannot find a build variant for this system in kernels-community/activation "
                         "(revision: v3):\n\ntorch25-cxx11-cu118-x86_64-linux: Torch version (2.5) does not match "
                         "environment Torch version (2.13)", tmp_path, capsys)
    assert code == 1 and ": kernel-build-variant-missing" in out, out
    assert "activation" in out and "torch 2.5" in out and "torch 2.13" in out, out


def test_a_kernels_hub_miss_without_its_reasons_reads_the_row(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("FileNotFoundError: Cannot find a build variant for this system in kernels-community/flash-attn3",
                         tmp_path, capsys)
    assert code == 1 and ": kernel-build-variant-missing" in out and "stable-ABI" in out, out


def test_candidates_built_for_one_torch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pip's resolvelib factory.py get_installation_error: "Cannot install {info} because these package versions have
    # conflicting dependencies."; the candidates' local label names the torch of the index
    code, out = explain("ERROR: Cannot install flashinfer-python==0.2.2+cu121torch2.4 and flashinfer-python==0.2.3+"
                         "cu121torch2.4 because these package versions have conflicting dependencies.", tmp_path, capsys)
    assert code == 1 and ": pip-resolution-impossible" in out, out
    assert "flashinfer-python" in out and "torch 2.4" in out and "cu121torch2.4" in out, out


def test_candidates_without_a_torch_label_stay_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the same message for packages outside the stack, with no cause list: nothing to name
    code, out = explain("ERROR: Cannot install requests==2.31.0 and urllib3==1.26.0 because these package versions have "
                         "conflicting dependencies.", tmp_path, capsys)
    assert code == 0 and "pip-resolution-impossible" not in out, out


def test_unknown_location_is_what_cpython_says_for_a_directory_without_init(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # the real interpreter: a triton/ directory with no __init__.py (a namespace package) on sys.path
    (tmp_path / "site" / "triton").mkdir(parents=True)
    (tmp_path / "site" / "triton" / "language.py").write_text("", encoding="utf-8")
    err = subprocess.run([sys.executable, "-c", "from triton import cdiv"], cwd=tmp_path / "site", capture_output=True,
                         text=True, check=False).stderr.strip().splitlines()[-1]
    assert err == "ImportError: cannot import name 'cdiv' from 'triton' (unknown location)", err
    code, out = explain(err, tmp_path, capsys)
    assert code == 1 and ": triton-install-broken" in out and "__init__.py" in out, out
    assert "triton-torch-mismatch" not in out, out


def test_a_name_a_whole_triton_lacks_is_still_the_version_mismatch(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # the same import from a triton installed whole names its __init__.py (CPython's "(%S)" form)
    code, out = explain("ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
                         "(/venv/lib/python3.11/site-packages/triton/compiler/compiler.py)", tmp_path, capsys)
    assert code == 1 and ": triton-torch-mismatch" in out and "triton-install-broken" not in out, out


@pytest.mark.parametrize(("arch", "first"), [("compute_89", "11.8"), ("sm_120", "12.8"), ("compute_90a", "12.0")])
def test_nvcc_names_the_first_toolkit_of_the_arch(arch: str, first: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # reproduced with CUDA 13.0's nvcc: "nvcc fatal   : Unsupported gpu architecture 'compute_20'"
    code, out = explain(f"nvcc fatal   : Unsupported gpu architecture '{arch}'", tmp_path, capsys)
    assert code == 1 and ": nvcc-unsupported-arch" in out and f"CUDA {first} or newer" in out and arch in out, out
