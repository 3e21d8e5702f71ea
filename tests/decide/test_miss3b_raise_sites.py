"""The messages of tests/fixtures/raise_sites/miss3b-signatures.toml (issue 38, branch miss3b): the installer families
the first runs of held-out sets BJ, BK and BL missed, each read from its raise site across releases (pip 25.3's note of
the conflict's packages with no matching distribution, pip's "Could not find a version" naming the requirement and not
the interpreter, a pinned version the index does not list while it lists others, conda's conflict chains without their
UnsatisfiableError head): every message the source can produce is named with its words, and each near miss stays
unclaimed (or, where another signature names it, is not claimed by the family's)."""

from __future__ import annotations

from tests.decide.explaining import each_row, read_as_tabled, row_id, table

MESSAGES = table("miss3b-signatures.toml")


def test_each_message(tmp_path, capsys):
    def check(m):
        read_as_tabled(m, tmp_path, capsys)

    each_row([(row_id(m), m) for m in MESSAGES], check)
