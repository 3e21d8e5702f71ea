"""The messages of tests/fixtures/raise_sites/own-signatures.toml (issue 38, branch fix-own): a subpackage a release
removed, named where its [[export]] row records the release (and the installed one is past it), and macOS dyld's
missing symbol read by where dyld expected it: a flat-namespace miss of the referencing library's own build is no
version mismatch and is not claimed; each near miss left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("own-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
