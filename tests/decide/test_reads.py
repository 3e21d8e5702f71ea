"""glmcompat.decide.reads: the packages the decision code reads by name are declared, and the declaration is
complete -- each package a fixture lock holds that the decision code's string constants spell out is declared or
named by a matrix row (what the start-up path's projection keeps: glmcompat.cli.fastpath.relevant_names)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from glmcompat.cli.fastpath import relevant_names
from glmcompat.decide.reads import NAMED, SHARED
from glmcompat.decide.rules.registry import RULES
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.view import Facts
from glmcompat.readers.uvlockscan import canonical

from tests.conftest import FIXTURES, LOCKS

DECIDE = Path(__file__).resolve().parents[2] / "glmcompat" / "decide"


def _spelled(known: set[str] | frozenset[str], paths: list[Path] | None = None) -> dict[str, set[str]]:
    """Each package of ``known`` that a string constant of ``paths`` (glmcompat/decide/**/*.py) spells, with the
    files."""
    out: dict[str, set[str]] = {}
    for path in sorted(DECIDE.rglob("*.py")) if paths is None else paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*", node.value):
                    if canonical(word) in known:
                        out.setdefault(canonical(word), set()).add(path.name)
    return out


def test_every_package_the_decisions_spell_out_is_read():
    known = {canonical(m) for lock in [*FIXTURES.rglob("uv.lock"), *LOCKS.rglob("uv.lock")]
             for m in re.findall(r'^name = "([^"]+)"', lock.read_text(encoding="utf-8"), re.M)}
    assert {"torch", "sgl-kernel", "transformers"} <= known  # the fixtures were read
    spelled = _spelled(known)
    relevant = relevant_names(load_facts())
    english = {"build", "distance", "kernels", "overrides", "pip", "wheel"}  # words of prose that are also package names
    missing = {n: sorted(files) for n, files in spelled.items() if n not in relevant and n not in english}
    assert not missing, f"add these to the names of the rule that reads them (or glmcompat.decide.reads.SHARED): {missing}"
    assert NAMED <= relevant and all(n == canonical(n) for n in NAMED)


def test_each_rule_declares_the_packages_it_spells_out():
    """A rule's module names no package its RULE.names leaves out (what the shared code reads aside): adding a rule
    is its module and its registry line, never an edit of glmcompat.decide.reads."""
    every = NAMED | {"torch", "sglang", "vllm", "transformers"}
    for rule in RULES:
        module = DECIDE / "rules" / (rule.check.__module__.rsplit(".", 1)[1] + ".py")
        spelled = set(_spelled(every, [module]))
        assert spelled <= set(rule.names), f"{module.name}: RULE.names lacks {sorted(spelled - set(rule.names))}"
        assert all(n == canonical(n) for n in rule.names)
    assert NAMED == SHARED.union(*(r.names for r in RULES))


def test_the_shared_declaration_holds_only_what_the_shared_code_spells_out():
    """SHARED is no second home of the rules' names: each of its packages is spelled out by decision code outside
    the rules' modules."""
    modules = {DECIDE / "rules" / (r.check.__module__.rsplit(".", 1)[1] + ".py") for r in RULES}
    shared = [p for p in sorted(DECIDE.rglob("*.py")) if p not in modules and p.name != "reads.py"]
    assert set(_spelled(SHARED, shared)) == SHARED


def test_the_names_are_walked_once_per_matrix_and_code():
    """relevant_names walks the matrix's rows once per process for a key (the matrix files' content and glmcompat's
    code), as each full run of a process that checks many locks records them; facts without a key are walked each time,
    and facts of other rows under another key get their own names."""
    facts = load_facts()
    first = relevant_names(facts)
    assert relevant_names(Facts(facts.data, facts.key)) is first
    unkeyed = relevant_names(Facts(facts.data))
    assert unkeyed == first and unkeyed is not first
    fewer = {t: rows for t, rows in facts.data.items() if t not in ("stack", "model")}
    other = relevant_names(Facts(fewer, facts.key + "-other"))
    assert other < first and relevant_names(Facts(fewer)) == other


def test_the_names_kept_are_bounded():
    """relevant_names keeps the names of at most its memo's bound of keys: the oldest key is walked again."""
    from glmcompat.cli import fastpath

    bound = fastpath._RELEVANT.bound
    first = relevant_names(Facts({}, "bounded-0"))
    for i in range(1, bound + 2):
        relevant_names(Facts({}, f"bounded-{i}"))
        assert len(fastpath._RELEVANT) <= bound
    again = relevant_names(Facts({}, "bounded-0"))
    assert again == first and again is not first
