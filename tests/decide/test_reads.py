"""glmcompat.decide.reads: the packages the decision code reads by name are declared, and the declaration is
complete -- each package a fixture lock holds that the decision code's string constants spell out is declared or
named by a matrix row (what the start-up path's projection keeps: glmcompat.cli.fastpath.relevant_names)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from glmcompat.cli.fastpath import relevant_names
from glmcompat.decide.reads import NAMED
from glmcompat.matrix.load import load_facts
from glmcompat.readers.uvlockscan import canonical

from tests.conftest import FIXTURES, LOCKS

DECIDE = Path(__file__).resolve().parents[2] / "glmcompat" / "decide"


def _spelled(known: set[str]) -> dict[str, set[str]]:
    """Each package of ``known`` that a string constant of glmcompat/decide/**/*.py spells, with the files."""
    out: dict[str, set[str]] = {}
    for path in sorted(DECIDE.rglob("*.py")):
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
    english = {"build", "kernels", "overrides", "pip", "wheel"}  # words of prose that are also package names
    missing = {n: sorted(files) for n, files in spelled.items() if n not in relevant and n not in english}
    assert not missing, f"add these to glmcompat.decide.reads.NAMED: {missing}"
    assert NAMED <= relevant and all(n == canonical(n) for n in NAMED)
