"""The messages of tests/fixtures/raise_sites/miss3a-signatures.toml (issue 38, branch miss3a): the families the first
runs of held-out sets BJ and BL missed, each read from its raise site across releases (torch's NumPy bridge, NCCL's
communicator config check rejecting a newer NCCL's undefined attribute, the loader's undefined symbol in torch's own
library): every message the source can produce is named with its words, and each near miss stays unclaimed (or, where
another signature names it, is not claimed by the family's)."""

from __future__ import annotations

from tests.decide.explaining import each_row, read_as_tabled, row_id, table

MESSAGES = table("miss3a-signatures.toml")


def test_each_message(tmp_path, capsys):
    def check(m):
        read_as_tabled(m, tmp_path, capsys)

    each_row([(row_id(m), m) for m in MESSAGES], check)
