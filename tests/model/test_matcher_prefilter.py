"""The matcher's prefilter (glmcompat.model.signatures): of the signatures whose literal a line holds, only those whose
whole literal condition (:func:`S.literal_sets`: every text a match holds, per alternative) the line meets are searched.
It must find exactly what the matcher without it finds. The reading differs from the plain one only where
:meth:`S._Matcher._possible` leaves a signature out, so:

* on every line of every fixture log and every raise-site message (as they are, the messages also lower-cased and with
  their quotes retyped: the forms the tolerant reading folds), no signature it leaves out is found there by its own
  form or its tolerant one;
* on the raise-site messages (each phrasing of each signature's source, and the near misses), the same on every path
  of the reading (the lost sentence breaks put back, a cut literal completed), so that the reading is the one without
  it step for step; and every tenth message read both ways gives the same answer."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from glmcompat.matrix.load import load_facts
from glmcompat.model import signatures as S
from tests.conftest import toml_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class _Checked(S._Matcher):
    """The matcher, each signature its prefilter leaves out searched anyway: where one is found, it is recorded."""

    def __init__(self, signatures: Sequence[S.SignatureRow]) -> None:
        super().__init__(signatures)
        self.wrong: list[tuple[str, str]] = []  # (signature, line) where a left-out signature matches
        self.left_out = 0

    def _possible(self, near: Iterable[int], line: str) -> list[int]:
        near = list(near)
        kept = super()._possible(near, line)
        for i in set(near) - set(kept):
            self.left_out += 1
            if self.keyed[i][0].search(line) is not None or self.loose[i][0].search(line) is not None:
                self.wrong.append((self.keyed[i][1].id, line[:300]))
        return kept


def _messages(forms: bool = True) -> list[str]:
    """Each raise-site message's lines, and the message as one line; with ``forms``, each also lower-cased and with
    its quotes retyped."""
    out: dict[str, None] = {}
    for table in sorted((FIXTURES / "raise_sites").glob("*.toml")):
        for row in toml_file(table).get("message", []):
            out.update((line, None) for line in str(row.get("text", "")).splitlines() if line.strip())
            out[" ".join(str(row.get("text", "")).split())] = None  # a message of several lines, as one
    if not forms:
        return list(out)
    return [*out, *(t.lower() for t in out), *(t.replace("'", "\u2018") for t in out if "'" in t)]


def _log_lines() -> list[str]:
    out: dict[str, None] = {}
    for log in sorted((FIXTURES / "explain").rglob("*.log")):
        with log.open("rb") as f:
            out.update((line[:S.MAX_LINE], None) for _, line in S.numbered_lines(f))
    return list(out)


def _key(found: list[tuple[re.Match[str], S.SignatureRow]]) -> list[tuple[str, tuple[int, int], tuple[str, ...]]]:
    return [(sig.id, m.span(), tuple(f"{k}={v}" for k, v in sorted(m.groupdict().items()) if v)) for m, sig in found]


def test_no_signature_the_prefilter_leaves_out_is_found_on_a_fixture_line() -> None:
    checked = _Checked(load_facts().rows("signature"))
    lines = dict.fromkeys([*_log_lines(), *_messages()])
    for line in lines:
        gated, near = checked._near(line, keep=False)
        if gated:
            checked._possible(sorted(near), line)
    assert not checked.wrong, checked.wrong[:3]
    assert len(lines) > 10_000 and checked.left_out > 30_000  # it reads the fixtures, and it does leave out


def test_the_prefilter_reads_each_message_as_the_matcher_without_it() -> None:
    """Every path of a reading (the line, its lost sentence breaks put back, a cut literal completed) leaves out only
    signatures that find nothing there, on every message; and every tenth message reads the same with and without it."""
    sigs = load_facts().rows("signature")
    fast, slow = _Checked(sigs), S._Matcher(sigs, prefilter=False)
    assert not any(slow.sets)  # no condition read: every signature whose literal a line holds is searched
    differ, found = [], 0
    for k, text in enumerate(_messages(forms=False)):
        got = _key(fast._found(text))
        found += bool(got)
        if k % 10 == 0 and got != (want := _key(slow._found(text))):
            differ.append((text[:300], got, want))
    assert not differ and not fast.wrong, (differ[:3], fast.wrong[:3])
    assert found > 1_000 and fast.left_out > 5_000 and slow.ruled_out == 0


def test_literal_sets_are_what_every_match_holds() -> None:
    assert S.literal_sets(r"foo (?:bar|baz)qux \d+ done") == ((" done", "foo ba", "qux "),)  # (re's parser: foo ba[rz])
    assert S.literal_sets(r"(?:abc|de)xyz") == (("xyz",),)  # an alternative under 3 characters asks nothing of its own
    assert S.literal_sets(r"(?P<a>alpha) one|beta(?= two)") == ((" one", "alpha"), (" two", "beta"))
    assert S.literal_sets(r"(?:optional)?text") == (("text",),)  # a repeat that may pass zero times asks nothing
    assert S.literal_sets(r"(?i)anything") is None and S.literal_sets(r"(?i:case) ignored") == ((" ignored",),)
    assert S.literal_sets(r"\d+") is None

    def branch(n: int) -> str:  # n alternatives, each its own head then the same words (no head shared by all)
        return "|".join(f"{chr(65 + k % 26)}{chr(97 + k // 26)}x{k:03d}\\d+ then the same words" for k in range(n))

    words = " then the same words"
    assert S.literal_sets(branch(S.MAX_SETS)) == tuple(sorted((words, f"{chr(65 + k % 26)}{chr(97 + k // 26)}x{k:03d}")
                                                              for k in range(S.MAX_SETS)))
    # more alternatives than MAX_SETS: each asks its longest text alone (a weaker condition), not nothing
    assert S.literal_sets(branch(S.MAX_SETS + 1)) == ((words,),)
    assert S.literal_sets("|".join(f"{chr(65 + k % 26)}{chr(97 + k // 26)}x{k:03d}" for k in range(S.MAX_SETS + 1))) is None


def test_the_literal_index_reports_each_literal_the_text_holds() -> None:
    """:class:`S._LiteralIndex` finds each literal where its head stands (several of one head, overlapping ones, short
    ones)."""
    index = S._LiteralIndex([("abc", "abcdef"), ("bcd",), ("xyz",)], also=("ab", "cde", "abcx"))
    assert index.present("zabcdefg") == {"ab", "abc", "abcdef", "bcd", "cde"}
    assert index.of("zabcdefg") == {0, 1} and index.of("abxyz") == {2} and index.of("") == set()
    assert index.present("abcxabc") == {"ab", "abc", "abcx"}
