"""The messages of tests/fixtures/raise_sites/build-signatures.toml (issue 38, sweep-build): building CUDA/C++
extensions against torch, through torch's cpp_extension, its CMake config, CMake's find_package and nvcc; each named
with its words, and each notice of the same tools left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("build-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
