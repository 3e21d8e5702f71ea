"""Table-driven rule tests: one case file per scenario under tests/cases/check/, saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.model.environments import Environment
from glmcompat.model.errors import InputError
from glmcompat.model.gpu import parse_code, runs_on

CASES = sorted((Path(__file__).parents[1] / "cases" / "check").glob("*.json"))


@pytest.fixture(scope="module")
def facts():
    return load_facts()


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_case(case, facts):
    spec = json.loads(case.read_text())
    found = evaluate(spec["packages"], target=spec["target"], model=spec.get("model"), matrix=facts,
                     allow_unknown=spec.get("allow_unknown", False))
    got = sorted([f.rule, f.severity, list(f.pins)] for f in found)
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
    """An unrecorded +cuXYZ build (2.11.0 +cu129: neither the release's table nor a release matrix names it) takes
    the SASS its release's nearest recorded builds below and above its CUDA both carry; with no build on one side,
    every recorded build of the release bounds it."""
    assert facts.torch_build("2.11.0+cu129") is None
    common, row = facts.torch_common_code("2.11.0+cu129")
    assert "sm_120" in common and row.evidence == "inferred"
    common, _ = facts.torch_common_code("2.9.1+cu124")
    assert "sm_120" not in common and "sm_90" in common


VARIANT_TABLES = json.loads((Path(__file__).parents[1] / "fixtures" / "torch" / "variant_tables.json").read_text())


def _plain_sass(codes) -> set[int]:
    """sm_120 / sm_120a / sm_103f -> 120 / 120 / 103: the capability a TORCH_CUDA_ARCH_LIST entry names."""
    return {int(c[3:].rstrip("af")) for c in codes}


@pytest.mark.parametrize("release", sorted(VARIANT_TABLES))
def test_every_cuda_variant_a_release_builds_has_a_row(facts, release):
    """Every CUDA version a tracked release's own source names (torch/cuda/__init__.py at the tag, read from its
    wheel by scripts/record_torch_variant_tables.py) has a row for that build: the default wheel's (its own
    +cuXYZ) or a variant row. From 2.13 the table gives each build's x86_64 TORCH_CUDA_ARCH_LIST, which a variant
    row records exactly (a default row may list the few per-kernel extras its probe found); 2.8 .. 2.10 give
    bounds, which each row's SASS spans."""
    rec = VARIANT_TABLES[release]
    default = facts.torch_build(release)
    assert default is not None and rec["label"] == "cu" + (default.cuda or "").replace(".", "")
    bounds = rec["CUDA_ARCHES_SUPPORTED"] or {}
    lists = rec["PYTORCH_RELEASES_CODE_CC"] or {}
    for cuda in sorted(set(bounds) | set(lists)):
        row = facts.torch_build(f"{release}+cu{cuda.replace('.', '')}")
        assert row is not None and row.cuda == cuda, (release, cuda)
        have = _plain_sass(row.sass)
        if cuda in bounds:
            assert min(have) == bounds[cuda]["min"] and max(have) == bounds[cuda]["max"], (release, cuda, have)
        if isinstance(lists.get(cuda), dict):  # per host arch (2.13 on)
            want = set(lists[cuda]["x86_64"])
            assert (have >= want) if row.variant is None else (have == want), (release, cuda, have, want)


def test_a_recorded_variant_is_judged_by_its_row_and_its_label_names_its_cuda(facts):
    """torch 2.9.1+cu129 (the 2.9 cycle's build script: 12.9 = 7.0 .. 12.0) next to sgl-kernel 0.3.21 on sm120 is
    safe by its own row, not by the builds beside it; torch 2.11.0+cu128 is CUDA 12.8 by its label, so torchaudio
    2.11.0 from the default index (libcudart.so.13) breaks next to it."""
    row = facts.torch_build("2.9.1+cu129")
    assert row is not None and row.variant == "cu129" and "sm_120" in row.sass and "799d09f21574" in row.source
    assert facts.gpu_code("torch", "2.9.1+cu129")[2] is row
    assert evaluate({"torch": "2.9.1+cu129", "sgl-kernel": "0.3.21"}, target="sm120", matrix=facts) == []
    (f,) = evaluate({"torch": "2.11.0+cu128", "torchaudio": "2.11.0"}, target="sm120", matrix=facts)
    assert (f.rule, f.severity, f.pins) == ("cuda", "error", ("torchaudio==2.11.0", "torch==2.11.0+cu128"))
    assert "libcudart.so.13" in f.message and "CUDA 12.8" in f.message
    assert f.remedy == "install torchaudio==2.11.0+cu128 (the build for torch's CUDA, from the same index as torch)"
    for label, cuda in (("cu118", "11.8"), ("cu126", "12.6"), ("cu129", "12.9"), ("cu130", "13.0"), ("cpu", "")):
        assert facts.torch_cuda(f"2.9.1+{label}") == cuda


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
    assert f.severity == "warning" and f.pins == ("flash-attn==2.8.1+cu12torch2.10", "torch==2.11.0")
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

    ok = evaluate({"sglang": "0.5.12", "transformers": "5.6.0"}, target="sm90", model="deepseek_v32", matrix=load_facts())
    assert not [f for f in ok if f.rule == "model"]
    bad = evaluate({"sglang": "0.5.2", "transformers": "4.56.0"}, target="sm90", model="deepseek_v32", matrix=load_facts())
    assert {f.pins for f in bad if f.rule == "model"} == {("sglang==0.5.2",), ("transformers==4.56.0",)}


# Issue #21's causes, each on a real requirements file judged by the real `glmcompat check` (exit 1: unsafe; 0: safe,
# warnings allowed), with the rule that decides it. Causes 4 and 5 (wildcard pins, implied torch) are in
# tests/decide/test_rules_implied.py, the hook through includes in tests/cli/commands/test_precommit.py and tests/cli/commands/test_check.py.
CAUSES = [
    # 1: a probe-proven break wins over a METADATA range that admits the torch (torchaudio 2.11.1: torch>=2.11)
    ("torch==2.11.0\ntorchaudio==2.11.1\n", "sm90", 1, ("family", "error")),
    # 2: a +cu128 label is CUDA 12.8; torchaudio 2.11.0 from the default index links libcudart.so.13
    ("torch==2.11.0+cu128\ntorchaudio==2.11.0\n", "sm120", 1, ("cuda", "error")),
    # 2: a recorded variant row (2.9.1 +cu129 carries sm_120) next to sgl-kernel 0.3.21 (built for 2.9.1)
    ("torch==2.9.1+cu129\nsgl-kernel==0.3.21\n", "sm120", 0, None),
    # 6: an untracked package's label names its torch and CUDA; an unproven pairing is a warning, never an error
    ("torch==2.11.0\nflash-attn-3==3.0.0+cu129torch2100\n", "sm90", 0, ("untracked", "warning")),
    # 7: a documentation table alone makes a warning (flashinfer's GPU table vs its maintainers' word)
    ("flashinfer-python==0.6.0\n", "sm120", 0, ("target-fix", "warning")),
]


@pytest.mark.parametrize("text, target, code, decided", CAUSES)
def test_issue21_causes_on_real_files(tmp_path, text, target, code, decided):
    from tests.conftest import run_cli

    (tmp_path / "requirements.txt").write_text(text)
    p = run_cli("check", "requirements.txt", "--target", target, "--json", cwd=tmp_path)
    assert p.returncode == code, p.stdout + p.stderr
    found = {(f["rule"], f["severity"]) for f in json.loads(p.stdout)["findings"]}
    if decided is None:
        assert not any(sev == "error" for _, sev in found), found
    else:
        assert decided in found, found


def test_unpinned_remedy_names_a_real_pin_that_follows_the_sets_torch(facts):
    """No `torch==X` template: the pin an unpinned coupled package should take follows the set's torch, else the
    torch its compiled extension was built against; else the newest known release the specifier admits."""
    env = Environment(unpinned={"torch": ">=2.5", "torchvision": ""})
    found = {f.pins: f for f in evaluate({"sgl-kernel": "0.3.21"}, target="sm120", matrix=facts, env=env)
             if f.rule == "unpinned"}
    assert found[("torch",)].remedy.startswith("pin torch==2.9.1 (the torch sgl-kernel 0.3.21 was built against)")
    assert found[("torchvision",)].remedy.startswith("pin torchvision==0.24.1 (the release built for torch 2.9.1")
    (f,) = evaluate({}, target="sm120", matrix=facts, env=Environment(unpinned={"torch": "<2.6"}))
    assert f.remedy.startswith("pin torch==2.5.1 (the newest release the matrix knows that torch<2.6 admits)")
    (f,) = evaluate({}, target="sm120", matrix=facts, env=Environment(unpinned={"torch": "<2"}))
    assert "==X" not in f.remedy and "the matrix knows none that torch<2 admits" in f.remedy


def test_labelled_kernel_build_code_is_not_the_release_wheels(facts):
    """check keys a kernel's GPU code on the exact build: the index's sgl-kernel 0.3.21 wheel carries no sm_75 code, but
    the +cu130 build (sglang's own index) is another build whose code is not recorded: unknown, never that wheel's list."""
    plain = [f for f in evaluate({"torch": "2.9.1", "sgl-kernel": "0.3.21"}, target="sm75", matrix=facts)
             if f.rule == "gpu-code"]
    assert plain and "sm_80, sm_89" in plain[0].message
    found = evaluate({"torch": "2.9.1+cu130", "sgl-kernel": "0.3.21+cu130"}, target="sm75", matrix=facts)
    assert not [f for f in found if f.rule == "gpu-code" and "sgl-kernel==0.3.21+cu130" in f.pins]
    (unknown,) = [f for f in found if f.rule == "unknown" and "GPU code of sgl-kernel 0.3.21+cu130 is not recorded" in f.message]
    # what was not read is a warning naming the check that reads it (a curated release, another build of it), not a
    # fail-closed error: the release's index wheel is recorded, this build's code is not
    assert unknown.severity == "warning" and "glmcompat verify" in unknown.remedy
