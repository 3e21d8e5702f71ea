"""torchcodec is tracked like the torch family: it links libtorch and declares no torch requirement, so its
ABI probes (glmcompat/matrix/data/torchcodec.toml, written by ``matrix refresh --package torchcodec`` and
``matrix probe``) decide, and the compatibility table of its METADATA is documentation."""

from __future__ import annotations

import pytest

from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import Matrix
from glmcompat.ops import refresh as rf


def _family(packages: dict[str, str], allow_unknown: bool = False) -> list[tuple[str, str, str]]:
    found = evaluate(packages, target="sm90", allow_unknown=allow_unknown, matrix=load_facts())
    return [(f.severity, f.message, " ".join(k for k, _ in f.evidence)) for f in found
            if any(n.startswith("torchcodec") for n in f.names)]


def test_refresh_tracks_torchcodec_as_family() -> None:
    facts = load_facts()
    assert "torchcodec" in facts.family_packages()
    assert rf.tracked_packages(load_matrix_rows())["torchcodec"] == "family"


def load_matrix_rows() -> Matrix:  # the rows refresh reads
    from glmcompat.matrix.schema import load_matrix

    return load_matrix()


@pytest.mark.parametrize("codec,torch", [("0.17.0", "2.14.1"), ("0.17.0", "2.14.0"), ("0.8.0", "2.9.1"),
                                         ("0.15.0", "2.11.0"), ("0.11.1", "2.11.0")])
def test_the_pairs_the_engines_install_load(codec: str, torch: str) -> None:
    """sglang 0.5.23 (torchcodec==0.17.0, torch 2.14.1), vLLM 0.33.0 (torchcodec>=0.14, torch 2.14.0), the
    sglang 0.5.9 stack (0.8.0, torch 2.9.1), and the real-world projects' pairs: probed, 0 missing."""
    assert _family({"torch": torch, "torchcodec": codec}) == []


@pytest.mark.parametrize("codec,torch", [("0.8.0", "2.10.0"), ("0.9.1", "2.10.0"), ("0.11.0", "2.10.0")])
def test_a_probe_proven_break_is_said_with_its_consequence(codec: str, torch: str) -> None:
    """Probed: torch 2.10.0 misses a symbol each of these needs (0.8.0: c10::MessageLogger::MessageLogger(char
    const*, int, int) in every libtorchcodec_custom_opsN.so). The probe, not the documentation table, is the
    evidence; a failed load only breaks video and audio decoding (torchcodec's [[family]] rows: on_mismatch
    "warning" and the consequence), so it is a warning that says so, never "not proven"."""
    facts = load_facts()
    verdict = facts.abi_verdict("torchcodec", codec, torch)
    assert verdict is not None and not verdict.compatible and verdict.missing >= 1
    found = _family({"torch": torch, "torchcodec": codec})
    assert len(found) == 1
    severity, message, kinds = found[0]
    assert severity == "warning" and kinds.split()[0] == "abi-probe"
    assert f"torch {torch} breaks torchcodec {codec}" in message and "import torchcodec" in message
    assert "not proven" not in message


def test_a_proven_break_of_a_package_whose_load_is_fatal_stays_an_error() -> None:
    """The same shape for torchaudio (its [[family]] rows keep on_mismatch "error"): torchaudio 2.11.1 next to
    torch 2.11.0 is probe-proven broken and an error."""
    found = [f for f in evaluate({"torch": "2.11.0", "torchaudio": "2.11.1"}, target="sm90", matrix=load_facts())
             if any(n.startswith("torchaudio") for n in f.names)]
    assert [f.severity for f in found] == ["error"]


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
