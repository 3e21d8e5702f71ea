"""The messages of tests/fixtures/raise_sites/hf.toml (issue 38, branch sweep-hf): the compatibility and packaging
checks of the Hugging Face and quantization libraries (transformers' torch floor, require_version, FlashAttention and
SDPA checks, its quantizers' companions; accelerate's, peft's, diffusers' and optimum's version checks; bitsandbytes'
native library), each named with its words, and each near miss of the same libraries (an argument, the model's code,
memory) left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("hf.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
