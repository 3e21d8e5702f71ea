"""The messages of tests/fixtures/raise_sites/wx-signatures.toml (issue 38, branch fix-wx): Cython's type-size check of
NumPy's types in each direction and phrasing, a removed API of torch itself under one id, a refused manylinux wheel with
the glibc its tag needs, uv's isolated builds that miss torch in every release's words, and a cuDNN sub-library of
another release: each named with its words, and each near miss left unclaimed."""

from __future__ import annotations


from glmcompat.matrix.load import load_facts
from glmcompat.model.signatures import match_signatures
from tests.decide.explaining import each_row, message_id, table

MESSAGES = table("wx-signatures.toml")
# the two rows that read removed APIs: a removed API of torch itself is torch-api-removed, never companion-api-removed
TORCH_ROWS = ("torch-api-removed", "companion-api-removed")
TORCH_MESSAGES = [m for m in MESSAGES + table("torch-family.toml") if m["library"] == "torch"]



def test_no_torch_message_is_read_by_both_removed_api_rows():
    """Every torch message of the raise-site tables (torch's stub module, its linalg removals, its own cannot-import
    lines, the rest of torch's family table) is matched by at most one of the two rows, and never by
    companion-api-removed: the overlap is impossible by the patterns, not settled by order."""
    def check(m):
        rows = [r for r in load_facts().rows("signature") if r.id in TORCH_ROWS]
        assert len(rows) == 2
        ids = {h.id for h in match_signatures(str(m["text"]), rows)}
        assert "companion-api-removed" not in ids, ids

    each_row([(message_id(m), m) for m in TORCH_MESSAGES], check)
