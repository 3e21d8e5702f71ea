"""The messages of tests/fixtures/raise_sites/misc3-signatures.toml (issue 38, branch fix-misc3): xFormers' warning
read with its Python line (a wheel built for another Python, named alone or with the torch), torch 0.1.x-0.4's
driver-too-old as quoted without "The" (its found version decoded), and bitsandbytes 0.37-0.41's line naming the CPU
library it loaded, read over its generic warning; near misses left unclaimed or to their own signature."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("misc3-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
