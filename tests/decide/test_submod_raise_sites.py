"""The messages of tests/fixtures/raise_sites/submod-signatures.toml (issue 38, branch fix-submod): a package's own
compiled submodule missing (its CUDA part where the module is a *_cuda one), Cython's type-size check in each form with
its sentence break lost in the paste, and llama.cpp's loader meeting a GGUF architecture its build predates; each named
with its words, and each near miss left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("submod-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
