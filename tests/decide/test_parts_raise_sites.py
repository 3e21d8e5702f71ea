"""A package's compiled (CUDA) part missing, from the raise sites (issue 38, fix-parts): PyTorch Geometric's companions'
loader failing on a spec that is None ("'NoneType' object has no attribute 'origin'") under the package's own frame,
libraries built without CUDA (somoclu, XGBoost, LightGBM, "<name> was compiled without CUDA support"), torch's inductor
without triton under a torch frame (tests/fixtures/raise_sites/parts-signatures.toml): each is named with its package,
and the same words outside those frames (or torch's own message) are not claimed by these readings."""

from __future__ import annotations


from tests.decide.explaining import table

MESSAGES = table("parts-signatures.toml")


def test_the_table_has_both_sides():
    assert sum(bool(m["expect"]) for m in MESSAGES) >= 10
    assert sum(not m["expect"] for m in MESSAGES) >= 5

