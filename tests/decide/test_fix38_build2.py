"""Builds and installers, by their general causes (issue 38, fix38-build2): pip's double requirement, nvcc absent or
not knowing an architecture, a host compiler older than torch's headers, poetry's derivation lines. Real outputs:
recorded pip and gcc runs (tests/fixtures/explain/recorded/), and the shell's and Python's own words, produced here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, unclaimed

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "explain" / "recorded"


def test_pip_double_requirement_as_pip_20_2_4_printed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (RECORDED / "pip-20.2.4-double-requirement.txt").read_text(encoding="utf-8")
    out = diagnoses(text, "pip-double-requirement", ["torch>=1.6.0", "20.3"], tmp_path, capsys)
    assert "require torch once" in out


def test_a_dialect_error_of_torch_headers_stays_cxx_standard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # g++ 12 with -std=c++14 on torch 2.13's ATen/ATen.h: the dialect, not the compiler's age
    text = (RECORDED / "gcc-12-cxx14-aten-header.txt").read_text(encoding="utf-8")
    diagnoses(text, "cxx-standard-unsupported", ["C++17"], tmp_path, capsys)


@pytest.mark.parametrize("line, words", [
    # torch 2.x c10/util/C++17.h as gcc prints an #error, and torch 1.x c10/util/TypeIndex.h's older words
    ("/site-packages/torch/include/c10/util/C++17.h:16:2: error: #error \"You're trying to build PyTorch with a too old "
     "version of GCC. We need GCC 9 or later.\"", ["GCC 9"]),
    ("c10/util/C++17.h:21:2: error: #error \"You're trying to build PyTorch with a too old version of Clang. We need "
     "Clang 9 or later.\"", ["Clang 9"]),
    ("Index.h:31:2: error: #error \"You're running a too old version of GCC. We need GCC 5 or later.\"", ["GCC 5"]),
])
def test_host_compiler_too_old(line: str, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(line, "host-compiler-too-old", words, tmp_path, capsys)


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
def test_nvcc_not_found_as_the_shell_says_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = subprocess.run(["sh", "-c", "/usr/local/cuda-0.0/bin/nvcc --version"], capture_output=True, text=True)
    assert run.returncode == 127, run
    diagnoses(run.stderr, "nvcc-missing", ["nvcc", "CUDA toolkit"], tmp_path, capsys)


def test_nvcc_absent_as_python_says_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # CUDA_HOME empty: torch's older cpp_extension joined ":" + "/usr/local/cuda-0.0/bin/nvcc"
    with pytest.raises(FileNotFoundError) as err:
        subprocess.run([":/usr/local/cuda-0.0/bin/nvcc", "-V"], capture_output=True)
    out = diagnoses(f"FileNotFoundError: {err.value}", "nvcc-missing", ["nvcc", "CUDA_HOME is empty"], tmp_path, capsys)
    assert "/usr/local/cuda-0.0/bin/nvcc" in out


@pytest.mark.parametrize("line", [
    "nvcc fatal   : Unsupported gpu architecture 'compute_89'",
    "\"nvcc fatal : Unsupported gpu architechture 'compute_89'\" with docker image",  # as a title spells it
    "Unsupported gpu architecture 'compute_89'",
    "nvcc fatal   : Value 'sm_89' is not defined for option 'gpu-name'",
    "Value 'sm_89' is not defined for option 'gpu-name'",
])
def test_nvcc_arch_in_every_form(line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(line, "nvcc-unsupported-arch", ["_89", "11.8"], tmp_path, capsys)


@pytest.mark.parametrize("line", [
    "Value 'x' is not defined for option 'gpu-name'",  # no architecture
    "sh: 1: ./run_benchmark: not found",  # another program
    "ValueError: Value 'sm_89' is bad",  # not nvcc's option words
])
def test_lookalikes_stay_unclaimed(line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(line, tmp_path, capsys)


def test_poetry_derivation_line_names_packages_and_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ("  SolverProblemError\n\n  Because no versions of torchvision match >0.15.2,<0.16.0\n"
            "   and torchvision (0.15.2) depends on torch (2.0.1), torchvision (>=0.15.2,<0.16.0) requires torch (2.0.1).")
    diagnoses(text, "pip-resolution-impossible", ["poetry", "torchvision (0.15.2)", "torch (2.0.1)"], tmp_path, capsys)
