"""The messages of tests/fixtures/raise_sites/oldcode-signatures.toml (issue 38, branch sweep-old): old research code
meeting a newer torch, CUDA toolkit, NumPy, SciPy, Python or setuptools that removed what the code uses; each named
with the removing project, the release and the remedy, and each near miss (a typo, a user's own name, a warning) left
unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("oldcode-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
