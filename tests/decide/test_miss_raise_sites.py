"""The messages of tests/fixtures/raise_sites/miss-signatures.toml (issue 38, branch miss): the families the first runs
of held-out sets BD-BF missed, each read from its raise site across releases (glibc's loader, torch 1.x's THC,
xFormers' capability checks, the loader's undefined symbol cut before the symbol, the custom C++ ops that never built,
triton's CUDA check, a named package calling its companion with a keyword it no longer takes): every message the
source can produce is named with its words, and each near miss stays unclaimed (or, where another signature names it,
is not claimed by the family's)."""

from __future__ import annotations

from tests.decide.explaining import each_row, read_as_tabled, row_id, table

MESSAGES = table("miss-signatures.toml")


def test_each_message(tmp_path, capsys):
    def check(m):
        read_as_tabled(m, tmp_path, capsys)

    each_row([(row_id(m), m) for m in MESSAGES], check)
