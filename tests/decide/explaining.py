"""What the explain tests share: run ``glmcompat explain`` in-process on a log's text and read what it says (without
the log lines it echoes), and the one assertion of a diagnosis (exit 1, the signature id, every expected word)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from glmcompat.cli import main
from tests.conftest import toml_file


def said(text: str) -> str:
    """What glmcompat says, without the log lines it echoes."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("matched:"))


def explain(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``glmcompat explain`` on ``text`` written as a log: (its exit code, what it says)."""
    log = tmp_path / "x.log"
    log.write_text(text + "\n", encoding="utf-8")
    code = main(["explain", "--color", "never", str(log)])
    return code, said(capsys.readouterr().out)


def diagnoses(text: str, sid: str, words: Sequence[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """What explain says of ``text``, asserted to be the diagnosis ``sid`` naming every one of ``words``."""
    code, out = explain(text, tmp_path, capsys)
    assert code == 1 and f": {sid}" in out, out
    assert not [w for w in words if w not in out], out
    return out


def unclaimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What explain says of ``text``, asserted to be no diagnosis (exit 0, no known failure signature)."""
    code, out = explain(text, tmp_path, capsys)
    assert code == 0 and "no known failure signature" in out, out


T = TypeVar("T")


def each_row(rows: Iterable[tuple[str, T]], check: Callable[[T], object], undone: Collection[str] = ()) -> None:
    """``check`` on every row of a table (its name, the row), all in one test: the rows whose check fails (an assertion
    or any other error, as the row's own test would fail) must be exactly the ``undone`` ones, by name (each a strict
    expected failure: left undone, with its reason beside its record). One assertion names every row that fails
    unexpectedly (with its error), every undone row that now passes (its record to drop), and every undone name that
    is no row's."""
    names: list[str] = []
    failed: dict[str, str] = {}
    fixed: list[str] = []
    for name, row in rows:
        names.append(name)
        try:
            check(row)
        except Exception as e:  # every row's failure is reported, not only the first
            if name not in undone:
                failed[name if name not in failed else f"{name} (#{names.count(name)})"] = f"{type(e).__name__}: {e}"
        else:
            if name in undone:
                fixed.append(name)
    stale = sorted(set(undone) - set(names))
    assert names, "no rows"
    report = [f"{len(failed)} of {len(names)} rows fail:"] if failed else []
    report += [f"--- {name}\n{error[:3000]}" for name, error in failed.items()]
    report += [f"recorded as left undone but passes now (drop its record): {name}" for name in fixed]
    report += [f"recorded as left undone but no row of the table: {name}" for name in stale]
    assert not report, "\n".join(report)


RAISE_SITES = Path(__file__).resolve().parents[1] / "fixtures" / "raise_sites"


def read_as_tabled(m: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A raise-site table's message (:func:`table`) read as its row says: named with its words where the row expects a
    signature (its ``source`` cited); where it expects none, unclaimed, or, for a near miss another signature may name,
    never one of the ids its ``absent`` lists; never one of its ``not_words``."""
    assert m["source"]
    absent = m.get("absent", [])
    assert isinstance(absent, list)
    if m["expect"]:
        words = m.get("words", [])
        assert isinstance(words, list)
        out = diagnoses(str(m["text"]), str(m["expect"]), [str(w) for w in words], tmp_path, capsys)
    elif absent:
        _, out = explain(str(m["text"]), tmp_path, capsys)
    else:
        unclaimed(str(m["text"]), tmp_path, capsys)
        return
    assert not [sid for sid in absent if f": {sid}" in out], out
    not_words = m.get("not_words", [])  # words the diagnosis must not say (the other direction, an older version)
    assert isinstance(not_words, list)
    assert not [w for w in not_words if w in out], out


def table(*names: str) -> list[dict[str, object]]:
    """The messages of the raise-site tables ``names`` (tests/fixtures/raise_sites/), in order."""
    return [m for name in names for m in toml_file(RAISE_SITES / name)["message"]]


def message_id(m: dict[str, object], width: int = 50) -> str:
    """A table message's test id: its library and the head of its text."""
    return f"{m['library']}:{str(m['text'])[:width]}"


def row_id(m: dict[str, object]) -> str:
    """A table message's name as a row of a folded test where several share a :func:`message_id`: that id and the
    first 8 hex digits of the sha1 of its text."""
    return f"{message_id(m)}#{hashlib.sha1(str(m['text']).encode()).hexdigest()[:8]}"
