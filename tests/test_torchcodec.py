"""torchcodec is tracked like the torch family: it links libtorch and declares no torch requirement, so its
ABI probes (glmcompat/matrix/data/torchcodec.toml, written by ``matrix refresh --package torchcodec`` and
``matrix probe``) decide, and the compatibility table of its METADATA is documentation."""

from __future__ import annotations

import pytest

from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.ops import refresh as rf


def _family(packages: dict[str, str], allow_unknown: bool = False) -> list[tuple[str, str, str]]:
    found = evaluate(packages, target="sm90", allow_unknown=allow_unknown)
    return [(f.severity, f.message, " ".join(k for k, _ in f.evidence)) for f in found
            if any(p.startswith("torchcodec") for p in f.packages)]


def test_refresh_tracks_torchcodec_as_family() -> None:
    facts = load_facts()
    assert "torchcodec" in facts.family_packages()
    assert rf.tracked_packages(load_facts_plain())["torchcodec"] == "family"


def load_facts_plain() -> dict:  # the plain tables refresh reads
    from glmcompat.matrix.schema import load_matrix

    return load_matrix().plain()


@pytest.mark.parametrize("codec,torch", [("0.17.0", "2.14.1"), ("0.17.0", "2.14.0"), ("0.8.0", "2.9.1"),
                                         ("0.15.0", "2.11.0"), ("0.11.1", "2.11.0")])
def test_the_pairs_the_engines_install_load(codec: str, torch: str) -> None:
    """sglang 0.5.23 (torchcodec==0.17.0, torch 2.14.1), vLLM 0.33.0 (torchcodec>=0.14, torch 2.14.0), the
    sglang 0.5.9 stack (0.8.0, torch 2.9.1), and the real-world projects' pairs: probed, 0 missing."""
    assert _family({"torch": torch, "torchcodec": codec}) == []


@pytest.mark.parametrize("codec,torch", [("0.8.0", "2.10.0"), ("0.9.1", "2.10.0"), ("0.11.0", "2.10.0")])
def test_a_torch_outside_the_documented_range_is_reported(codec: str, torch: str) -> None:
    """Probed: torch 2.10.0 misses a symbol each of these needs (0.8.0: c10::MessageLogger::MessageLogger(char
    const*, int, int) in every libtorchcodec_custom_opsN.so). The family rule judges a torch outside a pair's
    range on the pair alone, so the documented pair makes it a warning today (see the report of #22: a
    probe-proven break outside the range as an error turns realworld/02 unsafe)."""
    facts = load_facts()
    verdict = facts.abi_verdict("torchcodec", codec, torch)
    assert verdict is not None and not verdict.compatible and verdict.missing >= 1
    found = _family({"torch": torch, "torchcodec": codec})
    assert len(found) == 1 and found[0][0] == "warning" and f"but torch {torch} is in the set" in found[0][1]


def test_a_pair_without_evidence_fails_closed() -> None:
    """torchcodec 0.17.0 documents no torch and no probe reads it against torch 2.9.1: unknown, an error unless
    --allow-unknown."""
    found = _family({"torch": "2.9.1", "torchcodec": "0.17.0"})
    assert len(found) == 1 and found[0][0] == "error" and "no recorded torch pairing" in found[0][1]
    assert [s for s, _, _ in _family({"torch": "2.9.1", "torchcodec": "0.17.0"}, allow_unknown=True)] == ["warning"]


def test_documentation_alone_is_a_warning() -> None:
    """torchcodec 0.10.0 documents torch 2.10; next to torch 2.12.0 no probe says anything: the table alone
    makes a warning, not an error."""
    found = _family({"torch": "2.12.0", "torchcodec": "0.10.0"})
    assert len(found) == 1 and found[0][0] == "warning" and "documentation" in found[0][2]
