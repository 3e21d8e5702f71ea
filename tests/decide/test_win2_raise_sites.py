"""The messages of tests/fixtures/raise_sites/win2-signatures.toml (issue 38, branch fix-win2): setuptools' MSVC check
named with the package pip was building (never setuptools, whose frames raise it) and the check's own words; CPython's
"DLL load failed while importing X" with ERROR_PROC_NOT_FOUND's text read as an undefined symbol of X's package, with
ERROR_MOD_NOT_FOUND's (or none) as a DLL load failure; TensorFlow 1.x's Windows import check of the CUDA runtime and
cuDNN DLLs named with the CUDA release; each near miss left to its own reading."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("win2-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
