"""The messages of tests/fixtures/raise_sites/ak-signatures.toml (issue 38, branch fix-ak): the causes held-out set AK
showed unnamed (pip's "Could not find a version that satisfies the requirement X (from versions: ...)" of any
distribution, bitsandbytes' binary named by a Windows path, torch's own "no kernel image" with nothing else in the log);
each named with its words, and each near miss left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("ak-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
