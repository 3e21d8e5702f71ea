"""The messages of tests/fixtures/raise_sites/fw-signatures.toml (issue 38, branch sweep-fw): the other GPU frameworks'
packaging and compatibility messages a torch user meets beside torch (numba's CUDA target, triton's fp8 check,
onnxruntime-gpu, PaddlePaddle, tensorflow-addons), each named with its words; their notices, user errors and machines
without a GPU left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("fw-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
