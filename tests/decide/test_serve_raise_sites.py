"""The messages of tests/fixtures/raise_sites/serve-signatures.toml (issue 38, branch sweep-serve): the serving and
inference engines' own compatibility and packaging messages (vLLM, SGLang, TGI, TensorRT-LLM, lmdeploy, CTranslate2,
llama-cpp-python, exllamav2), each named with its words, and each near miss (a user's choice, OOM, a notice) unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("serve-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
