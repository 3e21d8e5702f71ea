"""Table-driven rule tests: one case file per scenario under tests/cases/check/, saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.model.errors import InputError
from glmcompat.model.gpu import parse_code, runs_on

CASES = sorted((Path(__file__).parent / "cases" / "check").glob("*.json"))


@pytest.fixture(scope="module")
def facts():
    return load_facts()


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_case(case, facts):
    spec = json.loads(case.read_text())
    found = evaluate(spec["packages"], target=spec["target"], model=spec.get("model"), matrix=facts,
                     allow_unknown=spec.get("allow_unknown", False))
    got = sorted([f.rule, f.severity, list(f.packages)] for f in found)
    assert got == sorted(spec["expect"]), spec["#"]
    for f in found:
        assert f.message and f.remedy, f
        if f.rule != "unknown":
            assert f.evidence and all(src for _, src in f.evidence)


def test_abi_finding_names_evidence_and_nearest_safe_set(facts):
    (abi, fam) = evaluate({"torch": "2.10.0", "torchvision": "0.24.1", "sgl-kernel": "0.3.21"}, target="sm120", matrix=facts)
    assert abi.rule == "abi" and "2 undefined symbol(s)" in abi.message and "_ZN3c1013MessageLoggerC1EPKcii" in abi.message
    assert ("abi-probe", abi.evidence[0][1]) == abi.evidence[0] and abi.evidence[0][1].startswith("glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0")
    assert abi.remedy == "pin torch==2.9.1 and torchvision==0.24.1"
    assert fam.remedy == "pin torchvision==0.25.0" and "torchvision::nms" in fam.message


def test_deterministic_order(facts):
    pk = {"torch": "2.15.0", "torchvision": "0.24.1", "sgl-kernel": "0.3.21", "torchao": "0.9.0", "sglang": "0.5.8.post1"}
    a = evaluate(pk, target="sm120", matrix=facts)
    b = evaluate(dict(reversed(list(pk.items()))), target="sm120", matrix=facts)
    assert a == b
    assert [f.severity for f in a] == sorted((f.severity for f in a), key=("error", "warning").index)


def test_unknown_target_and_model(facts):
    with pytest.raises(InputError, match="unknown target 'sm999'"):
        evaluate({}, target="sm999", matrix=facts)
    with pytest.raises(InputError, match="unknown model type 'llama9'"):
        evaluate({}, target="sm90", model="llama9", matrix=facts)


def test_every_stack_passes_on_its_targets(facts):
    """A stack's declared targets are exactly checked by the rules (no finding above a warning)."""
    for stack in facts.rows("stack"):
        for t in stack.targets:
            for model in stack.models or [None]:
                errors = [f for f in evaluate(stack.pins, target=t, model=model, matrix=facts) if f.severity == "error"]
                assert not errors, (stack.name, t, errors)


@pytest.mark.parametrize("code,cc,runs", [
    ("sm_80", (8, 0), True), ("sm_80", (8, 6), True), ("sm_80", (8, 9), True), ("sm_80", (9, 0), False),
    ("sm_86", (8, 0), False), ("sm_90", (9, 0), True), ("sm_90a", (9, 0), True), ("sm_90a", (10, 0), False),
    ("sm_100a", (10, 0), True), ("sm_100a", (10, 3), False), ("sm_100", (10, 3), True), ("sm_100f", (10, 3), True),
    ("sm_103a", (10, 3), True), ("sm_120a", (12, 0), True), ("sm_120a", (12, 1), False), ("sm_120", (12, 1), True),
    ("sm_120f", (12, 1), True), ("sm_100f", (12, 0), False),
    ("compute_90", (12, 0), True), ("compute_90", (8, 9), False), ("compute_90a", (9, 0), True),
    ("compute_90a", (10, 0), False), ("compute_100f", (10, 3), True), ("compute_100f", (12, 0), False),
])
def test_gpu_code_rule(code, cc, runs):
    assert runs_on(code, cc) is runs


@pytest.mark.parametrize("bad", ["sm90", "sm_", "compute_9x", "sm_90b", ""])
def test_bad_gpu_code(bad):
    with pytest.raises(ValueError, match=repr(bad)):
        parse_code(bad)


def test_probe_proven_break_beats_metadata_range(facts):
    """A METADATA range that admits the torch does not outweigh an [[abi_probe]] row that proves the load fails;
    the remedy names a release that is not itself proven broken."""
    (f,) = evaluate({"torch": "2.11.0", "torchaudio": "2.11.1"}, target="sm90", matrix=facts)
    assert f.rule == "family" and f.severity == "error"
    assert "torch>=2.11" in f.message and "3 undefined symbol(s)" in f.message
    assert f.evidence[0][0] == "abi-probe" and "glmcompat abi torchaudio==2.11.1 --torch 2.11.0" in f.evidence[0][1]
    assert f.remedy == "pin torchaudio==2.11.0"
    assert facts.family_for_torch("torchaudio", "2.11.0") == "2.11.0"
    assert facts.family_for_torch("torchvision", "2.11.0") == "0.26.0"  # 0.29.2 admits >=2.14 only, and is probed broken


def test_family_cuda_runtime_recorded_for_every_release(facts):
    """Each torchvision / torchaudio release the matrix pairs has the CUDA runtime its index wheel links
    (recorded by scripts/record_family_cudart.py); a label overrides it."""
    for row in facts.rows("family"):
        if row.package in ("torchvision", "torchaudio"):  # torchcodec's is not recorded (torchcodec.toml says why)
            assert set(row.cudart) == set(row.pairs), row.package
    assert facts.family_cuda("torchaudio", "2.10.0")[0] == "12" and facts.family_cuda("torchaudio", "2.11.0")[0] == "13"
    assert facts.family_cuda("torchvision", "0.26.0+cu128")[0] == "12"
    assert facts.family_cuda("torchvision", "0.26.0+cpu")[0] == ""


def test_unrecorded_torch_variant_is_bounded_by_its_neighbours(facts):
    """An unrecorded +cuXYZ build takes the SASS its release's nearest recorded builds below and above its CUDA
    both carry; with no build on one side, every recorded build of the release bounds it."""
    common, row = facts.torch_common_code("2.9.1+cu129")
    assert "sm_120" in common and row.evidence == "inferred"
    common, _ = facts.torch_common_code("2.9.1+cu124")
    assert "sm_120" not in common and "sm_90" in common


@pytest.mark.parametrize("label, torch", [("cu129torch2100", "2.10.0"), ("cu128torch2.11", "2.11"), ("torch280", "2.8.0"),
                                          ("cu12torch2.6cxx11abiFALSE", "2.6"), ("cu118torch28", "2.8"), ("cu130", None)])
def test_build_label_names_its_torch(label, torch):
    from glmcompat.decide.rules import label_torch

    assert label_torch(label) == torch


def test_untracked_builds_are_warnings_that_say_what_their_label_names(facts):
    """flash-attn-3 +cu129torch2100 is a build for torch 2.10.0 and CUDA 12.9 (not "torch 210.0"); next to another
    torch it is an unproven pairing: a warning (the matrix tracks nothing about it), never an error."""
    (f,) = evaluate({"torch": "2.10.0", "flash-attn-3": "3.0.0+cu129torch2100"}, target="sm90", matrix=facts)
    assert f.severity == "warning" and "torch 2.10.0 and CUDA 12.9" in f.message and "unproven" not in f.message
    (f,) = evaluate({"torch": "2.11.0", "flash-attn": "2.8.1+cu12torch2.10"}, target="sm90", matrix=facts)
    assert f.severity == "warning" and f.packages == ("flash-attn==2.8.1+cu12torch2.10", "torch==2.11.0")
    assert "unproven pairing" in f.message and "CUDA 12 is not torch's CUDA 13" in f.message


def test_documentation_alone_makes_no_error(facts):
    """flashinfer's GPU-support table lists sm120 from 0.6.1, but its maintainers said sm120 kernels follow the sm80
    templates (flashinfer-ai/flashinfer#1147): a documented requirement is a warning, not a proven break."""
    (f,) = evaluate({"flashinfer-python": "0.6.0"}, target="sm120", matrix=facts)
    assert f.rule == "target-fix" and f.severity == "warning" and "documented, not proven" in f.message
    assert f.evidence[0][0] == "documentation" and "flashinfer/issues/1147" in f.evidence[0][1]
    (g,) = evaluate({"sglang": "0.5.8.post1"}, target="sm120", matrix=facts)  # an upstream fix is proof
    assert g.rule == "target-fix" and g.severity == "error"


def test_an_engine_with_its_own_config_class_needs_no_transformers_that_knows_the_model():
    """deepseek_v32: sglang ships its own config class from 0.5.12 (models.toml sglang_config), so sglang 0.5.12's
    transformers 5.6.0 pin serves it; sglang 0.5.2 neither knows the model nor carries the config."""
    from glmcompat.decide.rules import evaluate

    ok = evaluate({"sglang": "0.5.12", "transformers": "5.6.0"}, target="sm90", model="deepseek_v32")
    assert not [f for f in ok if f.rule == "model"]
    bad = evaluate({"sglang": "0.5.2", "transformers": "4.56.0"}, target="sm90", model="deepseek_v32")
    assert {f.packages for f in bad if f.rule == "model"} == {("sglang==0.5.2",), ("transformers==4.56.0",)}
