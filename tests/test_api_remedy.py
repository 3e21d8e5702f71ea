"""The remedy of the library's ``check_versions`` over every unsafe case of tests/cases/check: the set recorded in
tests/cases/remedy/check-safe-sets.json, which, applied, passes the check on the same target and machine; and at least
as good as the matrix-only remedy it replaced (issue 40): wherever that one found a set, this one finds one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import glmcompat
from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts

CASES = Path(__file__).parent / "cases"
RECORDED = json.loads((CASES / "remedy" / "check-safe-sets.json").read_text())["cases"]


@pytest.fixture(scope="module")
def facts():
    return load_facts().on("x86_64")


def _unsafe(facts) -> list[str]:
    out = []
    for p in sorted((CASES / "check").glob("*.json")):
        spec = json.loads(p.read_text())
        found = evaluate(spec["packages"], target=spec["target"], model=spec.get("model"), matrix=facts)
        if any(f.severity == "error" for f in found):
            out.append(p.stem)
    return out


def test_every_unsafe_case_has_a_recorded_remedy(facts):
    assert sorted(_unsafe(facts)) == sorted(RECORDED)
    assert len(RECORDED) == 22


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_the_remedy_applied_passes_the_check(case):
    spec = json.loads((CASES / "check" / f"{case}.json").read_text())
    got = glmcompat.check_versions(spec["packages"], spec["target"], model=spec.get("model"))
    assert not got.ok
    assert got.safe_set == RECORDED[case]["safe_set"]
    if RECORDED[case]["old"] is not None:  # at least as good as the remedy it replaced
        assert got.safe_set is not None
    if got.safe_set is None:
        return
    applied = dict(spec["packages"])
    for name, version in got.safe_set.items():
        if version is None:
            applied.pop(name, None)
        else:
            applied[name] = version
    again = glmcompat.check_versions(applied, spec["target"], model=spec.get("model"))
    assert again.ok, [f.message for f in again.findings if f.severity == "error"]

