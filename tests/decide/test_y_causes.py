"""The causes set Y's first run showed explain did not name in general (issue 38), from their raise sites
(tests/fixtures/raise_sites/y-causes.toml): every message is named with the words its cause holds, every near miss
is left unclaimed."""

from __future__ import annotations

import pytest

from tests.decide.explaining import diagnoses, message_id, table, unclaimed

MESSAGES = table("y-causes.toml")


@pytest.mark.parametrize("m", [m for m in MESSAGES if m["expect"]], ids=message_id)
def test_each_message_is_named_with_its_words(m, tmp_path, capsys):
    diagnoses(str(m["text"]), str(m["expect"]), list(m["words"]), tmp_path, capsys)  # type: ignore[call-overload]


@pytest.mark.parametrize("m", [m for m in MESSAGES if not m["expect"]], ids=message_id)
def test_a_near_miss_is_not_claimed(m, tmp_path, capsys):
    unclaimed(str(m["text"]), tmp_path, capsys)
