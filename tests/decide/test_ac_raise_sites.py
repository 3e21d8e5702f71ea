"""The messages of tests/fixtures/raise_sites/ac-signatures.toml (issue 38, branch fix-ac): the causes held-out set AC
showed unnamed (NumPy 2's message cut anywhere in it, pip's broken-requirement record wrapped across blank lines, a
start-up check that looks a renamed distribution up by its old name, torch's tail on a CUDA error); each named with its
words, and each near miss left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("ac-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
