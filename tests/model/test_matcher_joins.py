"""The matcher's two shortcuts give the answers of the plain reading they replace (glmcompat.model.signatures):

* the gate, written as a trie of the signatures' literals, lets through exactly the lines the alternation of those
  literals lets through;
* the note words a log line is read for (``_NOTE_WORDS``, a trie of them) let through the lines their alternation does;
* ``found_joined`` (pieces of a pasted message joined at a space: what :mod:`glmcompat.decide.pasted` tries for a
  message broken at word boundaries) finds what ``found`` finds in the joined line.

Both are checked on the raise-site messages the suite holds (every phrasing of each signature's source, and the
near misses), each split at its first, middle and last word boundary and in three, the messages with their quotes dropped or changed
and upper-cased (forms the gate folds), and each message joined with the next."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from glmcompat.model import signatures as S
from tests.conftest import toml_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _lines() -> list[str]:
    out: list[str] = []
    for f in sorted((FIXTURES / "raise_sites").glob("*.toml")):
        for row in toml_file(f).get("message", []):
            out += [line.strip() for line in str(row.get("text", "")).splitlines() if line.strip()]
    return out


@pytest.fixture(scope="module")
def matcher() -> S._Matcher:
    return S._matcher(load_facts().rows("signature"))


def _key(found: list[tuple[re.Match[str], S.SignatureRow]]) -> list[tuple[str, tuple[int, int], tuple[str, ...]]]:
    return sorted((sig.id, m.span(), tuple(f"{k}={v}" for k, v in sorted(m.groupdict().items()) if v))
                  for m, sig in found)


def test_the_trie_gate_lets_through_what_the_alternation_does(matcher: S._Matcher) -> None:
    words = sorted({w for _, _, need in matcher.keyed for w in need}, key=len, reverse=True)
    plain = re.compile("|".join(map(S._gate_word, words)), re.IGNORECASE)
    assert matcher.gate is not None
    lines = _lines()
    forms = [*lines, *(x.upper().replace("'", "`") for x in lines[::2]), *(x.replace("'", "") for x in lines[1::2])]
    differ = [x for x in forms if (plain.search(x) is None) != (matcher.gate.search(x) is None)]
    assert not differ, differ[:3]
    assert sum(matcher.gate.search(x) is not None for x in lines) > len(lines) // 10  # it lets messages through


def test_the_note_words_trie_lets_through_what_their_alternation_does() -> None:
    """Every raise-site line, every other one also upper-cased and the rest swapped in case, and every fourth line of
    the fixture logs."""
    plain = re.compile("(?i)" + "|".join([*map(re.escape, S._NOTE_WORD_LIST), r"^\s{0,16}module named", r"^\s{0,4}python 3",
                                         r"^\s{0,8}[`'\"\u2018\u201c]?_z"]))
    lines = _lines()
    forms = [*lines, *(x.upper() for x in lines[::2]), *(x.swapcase() for x in lines[1::2])]
    for log in sorted((FIXTURES / "explain").rglob("*.log")):
        forms += log.read_text(encoding="utf-8", errors="replace").splitlines()[::4]
    differ = [x for x in forms if (plain.search(x) is None) != (S._NOTE_WORDS.search(x) is None)]
    assert not differ, differ[:3]
    assert 0 < sum(S._NOTE_WORDS.search(x) is not None for x in lines) < len(lines)  # it reads some lines, not all


def test_found_joined_is_found_of_the_join(matcher: S._Matcher) -> None:
    lines = _lines()
    compared, differ = 0, []
    wholes: dict[str, list[tuple[str, tuple[int, int], tuple[str, ...]]]] = {}  # found of each joined line, read once
    for k, line in enumerate(lines):
        words = line.split(" ")
        cuts = sorted({1, len(words) // 2, len(words) - 1} - {0, len(words)})
        splits = [[" ".join(words[:c]), " ".join(words[c:])] for c in cuts]
        splits += [lines[k:k + 2]] if k + 2 <= len(lines) else []
        if len(words) > 3:
            splits.append([" ".join(words[:1]), " ".join(words[1:-1]), " ".join(words[-1:])])
        for pieces in splits:
            matcher._recent.clear()
            joined = _key(matcher.found_joined(pieces))
            # every split of one line joins back to that line: its plain reading is the same for each, found once
            whole = wholes.get(" ".join(pieces))
            if whole is None:
                matcher._recent.clear()
                whole = wholes[" ".join(pieces)] = _key(matcher._found(" ".join(pieces)))
            compared += 1
            if joined != whole:
                differ.append((pieces, joined, whole))
    assert not differ, differ[:2]
    assert compared > 4_000


def test_the_literal_index_finds_what_asking_every_literal_does(matcher: S._Matcher) -> None:
    """_near's and _cut's near signatures come from the literals' index (:class:`S._LiteralIndex`): the same set as
    asking every signature's literals ``w in text``, on every raise-site line folded and stripped as the matcher reads
    it, and on lines long enough to take the index's other path (each head searched for)."""
    lines = _lines()
    texts = [S._fold(x) for x in lines] + [S._fold(" ".join(lines[k:k + 12])) for k in range(0, len(lines), 12)]
    for index, needs, form in ((matcher.holding, matcher.folded, texts),
                               (matcher.holding_bare, matcher.stripped, [S._strip(x) for x in lines])):
        differ = [t for t in form if index.of(t) != {i for i, need in enumerate(needs) if any(w in t for w in need)}]
        assert not differ, differ[:3]
    assert sum(bool(matcher.holding.of(t)) for t in texts) > len(texts) // 10  # it finds signatures at all
