"""The output records of :mod:`glmcompat.model.outputs`: what a record prints (``to_json``) and the fields a
document leaves out; the schemas generated from them are tested in
tests/cli/test_schemas.py."""

from __future__ import annotations

import json
import re
import typing
from dataclasses import FrozenInstanceError

import pytest

from glmcompat.cli import jsonerrors
from glmcompat.decide import rules
from glmcompat.matrix import schema
from glmcompat.model import outputs
from glmcompat.model.outputs.check import CheckOutput
from glmcompat.ops import checkfile
from pathlib import Path

from glmcompat.decide.explain import Skip
from glmcompat.model.findings import CHECK_RULES, EVIDENCE_KINDS, Cause, CauseDoc, Finding
from glmcompat.model.signatures import Hit
from glmcompat.model.outputs.check import CheckedFindingDoc
from glmcompat.model.findings import FindingDoc
from glmcompat.model.outputs.explain import SignatureHit
from glmcompat.model.outputs.upgrade import SkipDoc, SkipNote, UpgradeOutput
from glmcompat.model.outputs.probe import ExplainedDoc, ProbeDoc
from glmcompat.model.outputs.verify import CountsDoc, VerifyOutput
from glmcompat.model.outputs.wheels import ArchOutput

FINDING = Finding(rule="abi", severity="error", packages=(("sgl-kernel", "0.3.21"), ("torch", "")),
                  message="m", evidence=(("abi-probe", "glmcompat abi sgl-kernel==0.3.21 --torch 2.9.1"),),
                  remedy="r", environments=("Python 3.12",), probe="glmcompat abi x")


FINDING_DOC = {"rule": "abi", "severity": "error", "packages": ["sgl-kernel==0.3.21", "torch"], "message": "m",
               "evidence": [{"kind": "abi-probe", "source": "glmcompat abi sgl-kernel==0.3.21 --torch 2.9.1"}],
               "remedy": "r", "environments": ["Python 3.12"], "probe": "glmcompat abi x"}


def test_a_finding_prints_through_its_record_and_reads_back() -> None:
    """Finding.to_json is its record's document (one declaration: FindingDoc), and Finding.from_json reads it."""
    doc = FindingDoc.of(FINDING)
    assert doc.to_json() == FINDING.to_json() == FINDING_DOC
    assert Finding.from_json(FINDING.to_json()) == FINDING
    assert json.loads(json.dumps(doc.to_json())) == FINDING_DOC
    at = CheckedFindingDoc.at(FINDING, "uv.lock", "sm120").to_json()
    assert at == {**FINDING.to_json(), "path": "uv.lock", "target": "sm120"}


def test_records_are_frozen() -> None:
    doc = FindingDoc.of(FINDING)
    with pytest.raises(FrozenInstanceError):
        doc.rule = "cuda"  # type: ignore[misc]


def test_an_empty_evidence_is_left_out_of_a_cause_and_kept_otherwise() -> None:
    bare = Cause("conflict", "torch", ("a", "b"), "c", "fix it")
    assert CauseDoc.of(bare).to_json() == bare.as_json() == {
        "kind": "conflict", "subject": "torch", "because": ["a", "b"], "conclusion": "c", "remedy": "fix it",
        "reason": "Because a, and b, we can conclude that c."}
    assert "evidence" not in CauseDoc.of(bare).to_json()
    cited = Cause("abi", "sgl-kernel", ("a",), "c", "fix", (("abi-probe", "src"),))
    assert CauseDoc.of(cited).to_json()["evidence"] == [{"kind": "abi-probe", "source": "src"}]


def test_a_field_named_by_a_keyword_prints_under_its_key() -> None:
    doc = UpgradeOutput(stack="s", engine="sglang", target="sm120", model=None, platform="x86_64",
                        exclude_newer=None, with_=("sglang==0.5.9",), pins={}, stack_pins={}, not_required={},
                        overrides={}, skipped={"torch": {"2.10.0": SkipNote(note="yanked")}})
    out = doc.to_json()
    assert out["with"] == ["sglang==0.5.9"] and "with_" not in out
    assert out["version"] == 2 and out["skipped"] == {"torch": {"2.10.0": {"note": "yanked"}}}


def test_a_probe_prints_only_what_it_reported() -> None:
    """Absent fields stay absent; an empty list reported stays an empty list."""
    rec = {"id": "import:torch", "status": "skipped", "summary": "torch is not installed", "seconds": 0.0,
           "absent": "torch", "warnings": []}
    assert ProbeDoc(id="import:torch", status="skipped", summary="torch is not installed", seconds=0.0,
                    absent="torch", warnings=()).to_json() == rec
    assert ProbeDoc(id="x", status="passed").to_json() == {"id": "x", "status": "passed"}


def test_a_verify_report_prints_its_document() -> None:
    report = {"version": 1, "ok": False, "target": None, "device": None,
              "counts": {"passed": 0, "warning": 0, "failed": 1, "skipped": 0},
              "probes": [{"id": "import:torch", "status": "failed", "error": "E", "seconds": 0.1, "summary": "s",
                          "explained": [{"id": "sig", "cause": "c", "remedy": "r", "match": "E", "package": None,
                                         "version": None, "rule": None, "family": None}]}],
              "findings": [FINDING.to_json()], "agreement": [], "elapsed_s": 0.5, "rank": 0}
    doc = VerifyOutput(ok=False, target=None, device=None, counts=CountsDoc(passed=0, warning=0, failed=1, skipped=0),
                       probes=(ProbeDoc(id="import:torch", status="failed", error="E", seconds=0.1, summary="s",
                                        explained=(ExplainedDoc(id="sig", cause="c", remedy="r", match="E",
                                                                package=None, version=None),)),),
                       findings=(FindingDoc.of(FINDING),), agreement=(), elapsed_s=0.5, rank=0)
    assert doc.to_json() == report


def test_optional_fields_of_arch_are_absent_until_set() -> None:
    base = {"version": 1, "kind": "arch", "package": "p", "package_version": "1", "platform": "x86_64", "wheel": "w",
            "target": None, "ok": True, "modules": [], "primary": [], "sass": [], "ptx": [], "all_sass": [],
            "all_ptx": [], "missing": [], "bytes_fetched": 0, "bytes_total": 0, "seconds": 0.0, "cached": False,
            "toolkits": {}, "kernels": 0, "uncovered_kernels": 0}
    doc = ArchOutput(**base)
    assert doc.to_json() == base


@pytest.mark.parametrize(("hit", "doc"), [
    (Hit("torch-abi", "cause", "remedy", "undefined symbol: _ZN3c10", line=7, count=2, groups={"sym": "_ZN3c10"},
         source="https://example.invalid/issue", package="sgl-kernel", version="0.3.21"),
     {"id": "torch-abi", "line": 7, "count": 2, "match": "undefined symbol: _ZN3c10", "groups": {"sym": "_ZN3c10"},
      "cause": "cause", "remedy": "remedy", "source": "https://example.invalid/issue", "package": "sgl-kernel",
      "version": "0.3.21", "rule": None, "family": None}),
    (Hit("oom", "c", "r", "CUDA out of memory", line=1),  # no package, no version: null in the document
     {"id": "oom", "line": 1, "count": 1, "match": "CUDA out of memory", "groups": {}, "cause": "c", "remedy": "r",
      "source": "", "package": None, "version": None, "rule": None, "family": None}),
])
def test_a_signature_hit_prints_through_its_record(hit: Hit, doc: dict[str, object]) -> None:
    assert Hit is SignatureHit and hit.to_json() == doc


def test_a_skip_prints_as_skip_as_json() -> None:
    """``upgrade --json``'s skipped releases: the record of a :class:`glmcompat.decide.explain.Skip` is its
    ``as_json``, the reason included."""
    for ev in ((), (("abi-probe", "glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0"),)):
        s = Skip("abi", "sgl-kernel", ("sgl-kernel 0.3.21 needs torch 2.9", "you require torch 2.10"),
                 "sgl-kernel 0.3.21 is not in the set", "pin torch==2.9.1", ev)
        assert SkipDoc.of(s).to_json() == s.as_json()
        assert s.as_json()["reason"] == ("Because sgl-kernel 0.3.21 needs torch 2.9, and you require torch 2.10, we can "
                                         "conclude that sgl-kernel 0.3.21 is not in the set.")
        assert ("evidence" in s.as_json()) == bool(ev)


def test_the_check_rules_are_the_rules_the_check_produces() -> None:
    """``check --json``'s ``rule`` enum (CHECK_RULES) is every rule name glmcompat.decide.rules and check's own
    (glmcompat.ops.checkfile) build a finding with, and nothing else."""
    produced: set[str] = set()
    from glmcompat.decide import cudadriver  # the driver rule's check, shared with the resolver (issue 35)

    files = [*Path(rules.__file__ or "").parent.glob("*.py"), Path(checkfile.__file__ or ""),
             Path(cudadriver.__file__ or "")]
    for f in files:
        produced |= set(re.findall(r'\brule="([a-z-]+)"', f.read_text(encoding="utf-8")))
    assert produced == set(CHECK_RULES)
    # the registry names every rule id it reports, and each is one of them
    assert {i for r in rules.RULES for i in r.reports} <= set(CHECK_RULES)
    hint = typing.get_type_hints(CheckedFindingDoc, include_extras=True)["rule"]
    assert hint.__metadata__[0].keywords == {"enum": list(CHECK_RULES)}


def test_the_evidence_kinds_are_the_matrix_s() -> None:
    assert typing.get_args(schema.Evidence) == EVIDENCE_KINDS


def test_a_document_s_version_is_its_record_s() -> None:
    assert outputs.version("check") == CheckOutput.version == 1 and outputs.version("upgrade") == 2
    assert jsonerrors.json_version("arch") == ArchOutput.version
    assert jsonerrors.json_version("matrix-show") == schema.SCHEMA_VERSION


def test_every_json_command_has_one_record() -> None:
    """Each command that prints JSON (glmcompat.cli.jsonerrors.JSON_OUTPUTS) has its record in DOCUMENTS (matrix show
    prints the matrix's own models), in the module DOCUMENTS names, with a version const equal to its default."""
    assert set(jsonerrors.JSON_OUTPUTS.values()) == {*outputs.DOCUMENTS, "matrix-show"}
    for name, ref in outputs.DOCUMENTS.items():
        module, _, cls = ref.rpartition(".")
        rec = outputs.record(name)
        assert rec.__name__ == cls and rec.__module__ == f"glmcompat.model.outputs.{module}"
        assert typing.get_args(typing.get_type_hints(rec)["version"]) == (rec.version,)
