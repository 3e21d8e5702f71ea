"""The messages of tests/fixtures/raise_sites/label-signatures.toml (issue 38, branch fix-label): "no kernel image" from a
labelled build's kernel (sgl-kernel 0.3.21+cu130) never named with the arch list the matrix records for another build
of the release (the index's 0.3.21 wheel); the log's own cuobjdump listing read as that build's arch list; each near
miss (the unlabelled wheel, another package's listing, bare arch names with no listing command) read as such."""

from __future__ import annotations


from glmcompat.matrix.load import load_facts
from tests.decide.explaining import table

MESSAGES = table("label-signatures.toml")



def test_labelled_build_code_is_its_own():
    """The matrix's arch lookup keys on the exact build: the release row answers for the unlabelled wheel only."""
    facts = load_facts()
    assert facts.gpu_code("sgl-kernel", "0.3.21") is not None
    assert facts.gpu_code("sgl-kernel", "0.3.21+cu130") is None
    assert facts.other_build_code("sgl-kernel", "0.3.21+cu130") == "0.3.21"
    assert facts.other_build_code("sgl-kernel", "0.3.21") == ""
