"""How users paste logs into GitHub issues damages them (issue 38), and every signature survives it: the messages of the
raise-site tables (tests/fixtures/raise_sites/) damaged each way a thread damages them, and each still named by the
same signature with the same words.

1. Markdown eats backticks: a message quoted `...' (the loader, GCC, Python 2) or `...` (uv, transformers) pasted
   outside a code block loses its opening backtick (it opens a code span), or both quote marks (a pair makes a span),
   or a chat client curls them (glmcompat/model/signatures.py, :func:`unquoted`).
2. A message split at any word boundary across consecutive lines (a user's re-typing, a page's wrap at its own width):
   joined where the join completes a signature's message (glmcompat/decide/pasted.py).
3. A stored text cut mid-message after the cause's values (the xFormers row's "built for" head then its values)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from glmcompat.decide.pasted import pasted
from glmcompat.matrix.load import load_facts
from glmcompat.model.signatures import QUOTES, Hit, scan_numbered, unquoted
from tests.decide.explaining import RAISE_SITES, diagnoses, explain, message_id

FIXTURES = Path(__file__).parent.parent / "fixtures" / "explain"
SIGNATURES = load_facts().rows("signature")


def _messages() -> list[dict[str, str]]:
    return [m for f in sorted(RAISE_SITES.glob("*.toml"))
            for m in tomllib.loads(f.read_text(encoding="utf-8")).get("message", ())]


MESSAGES = _messages()
NAMED = [m for m in MESSAGES if m["expect"]]


def _hits(text: str) -> dict[str, Hit]:
    lines = [(n, line) for n, line in enumerate(text.split("\n"), 1)]
    return {h.id: h for h in scan_numbered(pasted(lines, SIGNATURES), SIGNATURES).hits}


def _unquote(value: str) -> str:
    return value.translate(str.maketrans({q: None for q in QUOTES}))


def _words(h: Hit) -> tuple[tuple[tuple[str, str], ...], str, str]:
    """What a hit says of the log: its groups (their quotes aside), the package and its version."""
    return tuple(sorted((k, _unquote(v)) for k, v in h.groups.items() if v)), h.package, h.version


# ---- 1. Markdown eats backticks -----------------------------------------------------------------------------------
_BACKTICKED = re.compile(r"`(?P<inner>[^`'\n]{1,300})(?P<close>['`])")
DAMAGES: dict[str, Callable[[re.Match[str]], str]] = {
    "opening backtick lost": lambda m: m["inner"] + m["close"],
    "both quotes lost": lambda m: m["inner"],
    "quotes curled": lambda m: "\u2018" + m["inner"] + "\u2019",
    "double quotes curled": lambda m: "\u201c" + m["inner"] + "\u201d",
}
QUOTED = [m for m in NAMED if _BACKTICKED.search(m["text"])]


def test_the_tables_hold_messages_of_each_backtick_quoting_signature() -> None:
    """The messages below cover the signatures that quote with a backtick in each form their sources print: the
    loader's `...', uv's `...`, the transformers family's."""
    quoting = {s.id for s in SIGNATURES if unquoted(s.pattern) is not None}
    covered = {m["expect"] for m in QUOTED}
    assert {"glibc-too-old", "libstdcxx-too-old", "cuda-toolkit-clash", "wheel-not-supported",
            "no-matching-distribution", "python-version-unsupported", "library-needs-package"} <= covered & quoting
    assert len(QUOTED) >= 15


@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("m", QUOTED, ids=message_id)
def test_a_message_whose_backticks_markdown_ate_keeps_its_signature_and_words(m: dict[str, str], damage: str) -> None:
    text = m["text"]
    damaged = _BACKTICKED.sub(DAMAGES[damage], text)
    assert damaged != text
    want, got = _hits(text), _hits(damaged)
    sid = m["expect"]
    assert sid in want and sid in got, (damaged, sorted(got))
    assert _words(got[sid]) == _words(want[sid]), damaged


def test_the_catena_log_reads_as_the_loader_printed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """w-catena-40: the loader's "version `GLIBCXX_3.4.32' not found" posted without its opening backtick."""
    text = (FIXTURES / "logs" / "w-catena-40-conda-libstdcxx-3432.log").read_text(encoding="utf-8")
    assert "version GLIBCXX_3.4.32' not found" in text
    diagnoses(text, "libstdcxx-too-old", ["GLIBCXX_3.4.32", "libstdc++", "connected_components"], tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # prose that names a version node or a quoted word without the loader's message: no diagnosis
    "the version GLIBCXX_3.4.32 is what conda-forge ships",
    "checked: strings libstdc++.so.6 | grep GLIBCXX_3.4.32 found it",
    "the users' files are in /home",
])
def test_prose_without_the_message_stays_unclaimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain(text, tmp_path, capsys)
    assert code == 0, out
