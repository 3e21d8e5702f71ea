"""The messages of tests/fixtures/raise_sites/deps-signatures.toml (issue 38, branch fix-deps): a dependency missing at
import time, raised in an installed package's own frame (site-packages, a Cython module's init, IPython's frame, a
source checkout), named as package-not-installed with the importing package and the missing one; the user's own
script, notebook cell or REPL, a project-local or typo'd module and a removed module of another id left to others."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("deps-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)
