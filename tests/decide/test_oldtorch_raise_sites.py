"""The messages of tests/fixtures/raise_sites/oldtorch-signatures.toml (issue 38, branch fix-label): a torch 1.x API
(torch.jit._script_if_tracing, torch.fx, torch.ao.quantization, torch.overrides) that a companion calls and the torch in
use predates, named with the release that added it, also where the log shows no frame and the typed import statement
names the companion; a user's typo and an installed torch that has the name left unclaimed."""

from __future__ import annotations


from glmcompat.matrix.load import load_facts
from tests.decide.explaining import table

MESSAGES = table("oldtorch-signatures.toml")



def test_harvest_reaches_torch_1_0():
    """The torch API rows read every final release from torch 1.0.0 on: a name torch 1.0 has is there or earlier."""
    facts = load_facts()
    jit = facts.export("torch.jit", "_script_if_tracing")
    assert jit is not None and jit.since == "1.6.0"
    annotate = facts.export("torch.jit", "annotate")
    assert annotate is not None and annotate.since == "1.0.0"
