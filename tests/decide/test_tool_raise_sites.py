"""fix-tool (issue 38): gcc's and clang's driver unable to run a program of its own (build-tool-missing, naming the
program and its package, in any of the message catalogs' languages), XLA's comparison of the driver with the pip CUDA
toolchain (driver-too-old with both versions), and cuda-bindings refusing the driver's CUDA version
(cuda-bindings-driver-unsupported): each message of tests/fixtures/raise_sites/tool-signatures.toml is read as its row
says; the near misses stay unclaimed. A real gcc run without a language's compiler proper is read too."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, each_row, read_as_tabled, row_id, table

MESSAGES = table("tool-signatures.toml")


def test_the_table_covers_each_family_with_near_misses() -> None:
    ids = {m["expect"] for m in MESSAGES}
    assert {"build-tool-missing", "driver-too-old", "cuda-bindings-driver-unsupported"} <= ids
    assert sum(not m["expect"] for m in MESSAGES) >= 5


def test_each_message_is_read_as_its_row_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    each_row([(row_id(m), m) for m in MESSAGES], lambda m: read_as_tabled(m, tmp_path, capsys))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_a_real_gcc_without_a_languages_compiler_proper(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # gcc's driver asked for a language whose compiler proper (f951: gfortran, gnat1: gnat, go1: gccgo) is absent here
    src = tmp_path / "t.f"
    src.write_text("end\n", encoding="utf-8")
    for lang, prog, pkg in (("f95", "f951", "gfortran"), ("ada", "gnat1", "gnat"), ("go", "go1", "gccgo")):
        run = subprocess.run(["gcc", "-x", lang, "-c", str(src), "-o", os.devnull], capture_output=True, text=True,
                             env={**os.environ, "LC_ALL": "C"})
        if run.returncode == 0 or prog not in run.stderr:
            continue  # that compiler is installed here
        diagnoses(run.stderr, "build-tool-missing", [prog, pkg], tmp_path, capsys)
        return
    pytest.skip("every language's compiler proper is installed")
