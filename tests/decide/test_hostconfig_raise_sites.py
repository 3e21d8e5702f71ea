"""The messages of tests/fixtures/raise_sites/hostconfig-signatures.toml (issue 38, branch fix-z): every #error of the
CUDA toolkit's crt/host_config.h across releases (MSVC, GNU, clang and its vendor builds, Intel, PGI, xlC, the
"-allow-unsupported-compiler" tail), as gcc, clang and MSVC print it, is host-compiler-unsupported with the toolkit's
release from the path, the range the message states and a remedy that works; the header's other words stay unclaimed;
and the failed nvcc step after the compiler's error is left to that error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decide.explaining import each_row, diagnoses, explain, message_id, read_as_tabled, table

MESSAGES = table("hostconfig-signatures.toml")


def test_each_message(tmp_path, capsys):
    def check(m):
        read_as_tabled(m, tmp_path, capsys)

    each_row([(message_id(m, 70), m) for m in MESSAGES], check)


@pytest.mark.parametrize("step", [
    "error: command 'C:\\\\Program Files\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v11.8\\\\bin\\\\nvcc' failed with exit code 2",
    "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1",
])
def test_the_refused_compiler_not_the_failed_step_is_the_cause(step: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = MESSAGES[3]["text"] + "\n      ms_deform_attn_cuda.cu\n" + step
    code, out = explain(str(text), tmp_path, capsys)
    assert code == 1 and ": host-compiler-unsupported" in out and ": source-build-failed" not in out, out


def test_the_failed_step_alone_stays_source_build_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses("error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1", "source-build-failed", [],
              tmp_path, capsys)


def test_the_release_comes_from_nvcc_where_the_path_has_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses("Cuda compilation tools, release 12.4, V12.4.131\n/usr/local/cuda/include/crt/host_config.h:143:2: error: "
              "#error -- unsupported GNU version! gcc versions later than 13 are not supported!",
              "host-compiler-unsupported", ["CUDA 12.4's nvcc", "gcc (newer than 13)"], tmp_path, capsys)
