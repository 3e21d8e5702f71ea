"""One vocabulary of causes (issue 38): a message a library prints is read by one signature, the one whose cause states
the branch of the source that raises it.

Every line of every message of the raise-site tables (tests/fixtures/raise_sites/*.toml) is searched with the pattern of
every signature (glmcompat/matrix/data/*signatures*.toml). Where two ids' patterns both match a line, the pair must be a
deliberate refinement listed in :data:`REFINES` (a more specific id where the line shows more than the generic one
reads: the library a loader error names, the removed API an ImportError names), with the place that settles it and the
raise site it rests on; and explain must name one of them only for the message, the table's own where the table names
one of them. An overlap not listed is two ids for one cause: settle it at the raise site (the message goes to the id
whose cause states the branch that raises it), never by listing it here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from tests.decide.explaining import RAISE_SITES, explain

# the settled refinements: {the two ids} -> which one owns the line, and why (where it is settled; the raise site)
REFINES: dict[frozenset[str], str] = {}

NAMED = re.compile(r"^line \d+: ([a-z0-9-]+)", re.MULTILINE)


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    return [(s.id, re.compile(s.pattern)) for s in load_facts().rows("signature")]


def _messages() -> list[tuple[str, dict[str, object]]]:
    return [(f.name, m) for f in sorted(RAISE_SITES.glob("*.toml"))
            for m in tomllib.loads(f.read_text(encoding="utf-8")).get("message", [])]


def _overlaps() -> list[tuple[str, dict[str, object], list[frozenset[str]]]]:
    """Each table message with a line that two ids or more read: (its table, the message, the ids of each such line)."""
    pats, out = _patterns(), []
    for name, m in _messages():
        lines = [frozenset(sid for sid, p in pats if p.search(line)) for line in str(m["text"]).splitlines()]
        if over := [ids for ids in lines if len(ids) > 1]:
            out.append((name, m, over))
    return out


OVERLAPS = _overlaps()


def _pairs(ids: frozenset[str]) -> set[frozenset[str]]:
    return {frozenset({a, b}) for a in ids for b in ids if a < b}


def test_every_overlap_is_a_listed_refinement() -> None:
    seen: dict[frozenset[str], str] = {}
    for name, m, over in OVERLAPS:
        for ids in over:
            for pair in _pairs(ids):
                seen.setdefault(pair, f"{name}: {str(m['text'])[:160]!r}")
    unlisted = {" / ".join(sorted(p)): where for p, where in seen.items() if p not in REFINES}
    assert not unlisted, unlisted


def test_every_listed_refinement_is_met_in_a_table() -> None:
    met = {p for _, _, over in OVERLAPS for ids in over for p in _pairs(ids)}
    assert not [sorted(p) for p in REFINES if p not in met]
    assert all("tests/" in why or "glmcompat/" in why for why in REFINES.values())  # each names where it is settled


@pytest.mark.parametrize("case", OVERLAPS, ids=[f"{n}:{str(m['text'])[:50]}" for n, m, _ in OVERLAPS])
def test_one_id_names_a_message(case, tmp_path, capsys) -> None:
    _, m, over = case
    _, out = explain(str(m["text"]), tmp_path, capsys)
    named = set(NAMED.findall(out))
    for ids in over:
        both = named & ids
        assert len(both) <= 1, (sorted(both), out)
        if m["expect"] in ids:
            assert both == {m["expect"]}, (m["expect"], sorted(both), out)


def test_the_tables_are_read() -> None:
    assert len(_messages()) > 1000 and len(OVERLAPS) > 10
    assert Path(RAISE_SITES).is_dir()
