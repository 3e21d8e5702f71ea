"""The messages of tests/fixtures/raise_sites/miss2b-signatures.toml (issue 38, branch miss2b): the families the first
runs of held-out sets BE, BH and BI missed, each read from its raise site across releases (Cython's C-API import check,
triton's libcuda search through ldconfig, torch's capability warning with its head cut, uv's derivation wrapped over
lines and cut before its conclusion, gcc's missing header retyped, torch 1.x's THC runtime errors): every message the
source can produce is named with its words, and each near miss stays unclaimed (or, where another signature names it,
is not claimed by the family's)."""

from __future__ import annotations

from tests.decide.explaining import each_row, read_as_tabled, row_id, table

MESSAGES = table("miss2b-signatures.toml")


def test_each_message(tmp_path, capsys):
    def check(m):
        read_as_tabled(m, tmp_path, capsys)

    each_row([(row_id(m), m) for m in MESSAGES], check)
