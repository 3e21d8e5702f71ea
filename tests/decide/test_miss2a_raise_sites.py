"""The messages of tests/fixtures/raise_sites/miss2a-signatures.toml (issue 38, branch miss2a): the Python-level API
drift between companions the first runs of held-out sets BF-BI missed (a name NumPy removed from its namespace, read
against the harvested namespace of the real wheels; a checkpoint whose keys a transformers release stopped or started
saving; a package's override called by a newer companion with a keyword it does not take): every message the source can
produce is named with its words, and each near miss stays unclaimed (or, where another signature names it, is not
claimed by the family's)."""

from __future__ import annotations

from tests.decide.explaining import each_row, read_as_tabled, row_id, table

MESSAGES = table("miss2a-signatures.toml")


def test_each_message(tmp_path, capsys):
    def check(m):
        read_as_tabled(m, tmp_path, capsys)

    each_row([(row_id(m), m) for m in MESSAGES], check)
