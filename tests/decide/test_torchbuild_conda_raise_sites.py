"""The messages of tests/fixtures/raise_sites/torchbuild-conda-signatures.toml (issue 38, fix-cmake): torch's own CMake
turning NCCL 2, cuDNN or CUDA off in a source build of torch, and conda's / libmamba's reports of a virtual package
(__cuda, __glibc) the machine lacks or has too old; each named with its words, and each notice of the same tools (a
build's own choice, an optional library, an extension build's find_package(Torch)) left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("torchbuild-conda-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
