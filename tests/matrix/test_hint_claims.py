"""Every version a hint of the matrix claims agrees with the matrix's own rows (issue 37).

A hint is prose a user follows blindly: "upgrade to sglang>=0.5.9" must be the bound a row proves (a
[[target_requirement]], [[requires]] or [[model]] row of that package with that floor), never a version nobody
derived; and a claim that a problem lasts "up to" a release must name a release the matrix records. The claims are
read from the hint text itself (a signature's cause and remedy, a target requirement's reason), so a new hint is
covered without listing it here."""

from __future__ import annotations

import re

import pytest
from packaging.specifiers import SpecifierSet

from glmcompat.matrix.load import load_facts

CLAIM = re.compile(r"\b(sglang|vllm|torch|transformers|flashinfer-python|sgl-kernel|sglang-kernel)>=(\d+(?:\.\d+)+(?:\.post\d+)?)")
UP_TO = re.compile(r"\b(sglang|vllm|torch|transformers) release up to (\d+(?:\.\d+)+)|\bup to (\d+(?:\.\d+)+)")


def _hints(facts):
    for s in facts.rows("signature"):
        yield f"[[signature]] {s.id}", f"{s.cause} {s.remedy}"
    for t in facts.rows("target_requirement"):
        yield f"[[target_requirement]] {t.package}{t.specifier}", t.reason


def _floors(facts) -> dict[str, set[str]]:
    """package -> the lower bounds its rows state (>=V)."""
    out: dict[str, set[str]] = {}

    def add(pkg: str, spec: str | None) -> None:
        for s in SpecifierSet(spec or ""):
            if s.operator == ">=":
                out.setdefault(pkg, set()).add(s.version)

    for t in facts.rows("target_requirement"):
        add(t.package, t.specifier)
    for r in facts.rows("requires"):
        m = re.match(r"([A-Za-z0-9._-]+)(.*)", r.requires)
        if m:
            add(m.group(1).lower().replace("_", "-"), m.group(2))
        add(r.package, r.versions)
    for m in facts.rows("model"):
        add("transformers", m.transformers)
        add("sglang", m.sglang)
        add("vllm", m.vllm)
    return out


FACTS = load_facts()
HINTS = list(_hints(FACTS))
FLOORS = _floors(FACTS)
RELEASED = {(r.package, r.version) for r in FACTS.rows("release")}


@pytest.mark.parametrize(("where", "text"), HINTS, ids=[h[0] for h in HINTS])
def test_a_hints_version_floor_is_a_rows_floor(where, text):
    for pkg, v in CLAIM.findall(text):
        assert v in FLOORS.get(pkg, set()), f"{where} claims {pkg}>={v}, which no row of the matrix states"


@pytest.mark.parametrize(("where", "text"), HINTS, ids=[h[0] for h in HINTS])
def test_up_to_names_a_release_the_matrix_records(where, text):
    released = RELEASED
    for pkg, v, bare in UP_TO.findall(text):
        if pkg:
            assert (pkg, v) in released or pkg != "sglang", f"{where}: 'up to {v}' names no recorded {pkg} release"
        if "sglang" in text and bare:
            assert ("sglang", bare) in released, f"{where}: 'up to {bare}' names no recorded sglang release"


def test_the_claims_are_read():
    """The checks above read real claims (a pattern that matched nothing would pass anything)."""
    found = [(w, CLAIM.findall(t)) for w, t in HINTS]
    assert any(("sglang", "0.5.9") in c for _, c in found)
    assert any(UP_TO.search(t) for _, t in HINTS)


def test_a_claim_no_row_states_fails():
    """The check itself: a hint claiming a floor no row proves is caught."""
    assert "0.5.7" not in FLOORS.get("sglang", set())
    assert CLAIM.findall("upgrade to sglang>=0.5.7") == [("sglang", "0.5.7")]
