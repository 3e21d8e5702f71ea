"""Known failure signatures: error text -> cause -> remedy (the matrix's ``[[signature]]`` rows).

Used by ``glmcompat verify`` on each failed probe's error, and by ``glmcompat explain LOGFILE|-``
on a server's log. Matching is line by line (a signature is a one-line regular expression), so a
log of any size streams through; each signature is reported once, with the first line it matched
and how many lines matched it.

The most specific signature wins a line: when two match the same line and the text one matched lies
inside the other's (``undefined symbol: X`` inside ``vllm/_C.abi3.so: undefined symbol: X``), only
the wider match counts for that line, so a vLLM log gets vLLM's cause and remedy, not the generic one.
The signatures come from every matrix file (``glmcompat/matrix/data/signatures.toml``,
``glmcompat/matrix/data/vllm-signatures.toml``, ``glmcompat/matrix/data/python-signatures.toml``, ...).

Time is linear in the log: the matrix validator admits only signatures whose matching cost per line is
linear in the line (:func:`linear_time_problem`: no nested quantifiers, no backreferences, an unbounded
repeat only where nothing but the empty string may follow it; gaps are written ``.{0,200}``), and a log
is read in bounded chunks (:func:`log_lines`), each line cut at :data:`MAX_LINE` characters without
being held whole. UTF-16 and UTF-32 logs (a byte-order mark, or UTF-16 text without one) are decoded as
such; anything else as UTF-8 with undecodable bytes replaced.
"""

from __future__ import annotations

import codecs
import functools
import importlib
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from glmcompat.model.causes import cause_name
from glmcompat.model.errors import InputError
from glmcompat.model.names import canonicalize
from glmcompat.model.outputs.explain import OtherCauseHit, SignatureHit
from glmcompat.model.tomltext import loads

MAX_LINE = 8192  # longer lines are matched on their first MAX_LINE characters
CHUNK = 1 << 20  # bytes read from a log at a time
MAX_BOUND = 1000  # the largest {m,n} bound a signature may use
BLANKS = ("", " ", "\t", "\r", " \t\r\x0b\x0c" * 2, " " * MAX_LINE, "\t" * MAX_LINE)  # what a blank line may be
MAX_GAPS = 4 * MAX_BOUND  # the largest product of the spans of bounded gaps one search may backtrack through
MATCHERS = 256  # the matchers (and their gates and scans) a process keeps, one per set of signature rows it reads with


Hit = SignatureHit  # one signature found: the record explain prints (glmcompat.model.outputs.explain)


class SignatureRow(Protocol):
    """What is read here of a [[signature]] row (:class:`glmcompat.matrix.rows.Signature`)."""

    @property
    def id(self) -> str: ...

    @property
    def pattern(self) -> str: ...

    @property
    def cause(self) -> str: ...

    @property
    def remedy(self) -> str: ...

    @property
    def source(self) -> str: ...


# What a matcher derives from a pattern, kept per pattern text for the process: a log read in-process again (the API,
# the tests) builds its matcher from these instead of parsing every signature anew (hundreds of patterns, more than
# re's own cache holds). Pure functions of the text, so the memo cannot change an answer.
_compile = functools.lru_cache(maxsize=4096)(re.compile)


@functools.lru_cache(maxsize=4096)
def _loose(pattern: str) -> re.Pattern[str]:
    return re.compile(tolerant(pattern, closed=True), re.IGNORECASE)


_PARSED: list[tuple[str, Any]] = []  # the last pattern parsed, and its tree


def _parsed(pattern: str) -> Any:
    """``pattern`` as the standard library's regex parser reads it (a private module without type stubs): the last one
    kept, as :func:`required_literals` and :func:`literal_sets` read the same tree one after the other (each memoizes its
    answer; the trees of hundreds of patterns kept alive cost every later garbage collection)."""
    if not _PARSED or _PARSED[0][0] != pattern:
        _PARSED[:] = [(pattern, importlib.import_module("re._parser").parse(pattern))]
    return _PARSED[0][1]


@functools.lru_cache(maxsize=4096)
def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Texts of which every match of ``pattern`` contains at least one (its longest run of literal characters, a
    lookbehind's text starting a run: "(?<=requires )SM", or one per alternative of a group every match passes through); None when this reader finds none of at least 3
    characters (or the pattern ignores case). A line that contains none of them cannot match: it is not searched."""
    c: Any = importlib.import_module("re._constants")
    tree = _parsed(pattern)
    if tree.state.flags & re.IGNORECASE:
        return None

    def behind(av: Any) -> str:
        """A lookbehind's text where it is all literals (it is then the text just before, a run's start), else ""."""
        direction, sub = av
        items = list(sub)
        return "".join(chr(v) for _, v in items) if direction < 0 and all(o == c.LITERAL for o, _ in items) else ""

    def lits(seq: Any) -> tuple[str, ...] | None:
        items = list(seq)
        best, run = "", ""
        for op, av in items:
            run = run + chr(av) if op == c.LITERAL else behind(av) if op == c.ASSERT else ""
            best = max(best, run, key=len)
        if len(best) >= 3:
            return (best,)
        for op, av in items:  # a group every match passes through
            if op == c.SUBPATTERN:
                got = lits(av[3])
                if got:
                    return got
            elif op == c.BRANCH:
                alts = [lits(b) for b in av[1]]
                if all(alts):
                    return tuple(x for a in alts for x in a or ())
        return None

    return lits(tree)


MAX_SETS = 64  # the most alternatives :func:`literal_sets` keeps (a product of groups' alternatives past it is not multiplied;
#              a branch's alternatives past it are each weakened to their longest text)


@functools.lru_cache(maxsize=4096)
def literal_sets(pattern: str) -> tuple[tuple[str, ...], ...] | None:
    """What every match of ``pattern`` holds, as alternatives: each a tuple of texts (runs of literal characters of at
    least 3) that a match's line holds all of, one alternative at least (a condition in disjunctive normal form: the runs
    of a sequence, of the groups and repeats of at least one pass every match goes through, and of its positive
    lookarounds, all of them; a branch, one of its alternatives'). None where it finds no such text (or the pattern, or a
    group, ignores case: there it asks nothing). :func:`required_literals` is the gate's one text an alternative; this is
    the whole condition, which a line :class:`_Matcher`'s gate lets through must meet too before a signature is
    searched on it (most lines that hold a signature's longest text lack another it needs)."""
    c: Any = importlib.import_module("re._constants")
    tree = _parsed(pattern)
    if tree.state.flags & re.IGNORECASE:
        return None
    true: frozenset[frozenset[str]] = frozenset([frozenset()])  # one alternative that asks nothing
    repeats = (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT)

    def both(a: frozenset[frozenset[str]], b: frozenset[frozenset[str]]) -> frozenset[frozenset[str]]:
        if a == true or b == true:
            return b if a == true else a
        out = frozenset(x | y for x in a for y in b)
        return out if len(out) <= MAX_SETS else a if len(a) <= len(b) else b  # too many: one factor's (a weaker condition)

    def either(alts: list[frozenset[frozenset[str]]]) -> frozenset[frozenset[str]]:
        out: set[frozenset[str]] = set()
        for a in alts:
            if frozenset() in a:
                return true
            out |= a
        if len(out) <= MAX_SETS:
            return frozenset(out)
        # too many: each alternative asks only its longest text (a weaker condition, which a line meeting the alternative
        # meets), rather than nothing: the long alternations of a message's phrasings (driver-insufficient's, 40-odd)
        # asked nothing, and were searched on every line holding "CUDA" or "version"
        weak = frozenset(frozenset([max(a, key=lambda w: (len(w), w))]) for a in out)
        return weak if len(weak) <= MAX_SETS else true

    def sets(items: Any) -> frozenset[frozenset[str]]:
        got, run = true, ""
        for op, av in list(items) + [(None, None)]:
            if op == c.LITERAL:
                run += chr(av)
                continue
            if len(run) >= 3:
                got = both(got, frozenset([frozenset([run])]))
            run = ""
            if op == c.SUBPATTERN and not av[1] & re.IGNORECASE:
                got = both(got, sets(av[3]))
            elif op == c.ATOMIC_GROUP:
                got = both(got, sets(av))
            elif op == c.BRANCH:
                got = both(got, either([sets(b) for b in av[1]]))
            elif op in repeats and av[0] >= 1:
                got = both(got, sets(av[2]))
            elif op == c.ASSERT:
                got = both(got, sets(av[1]))
        return got

    found = sets(tree)
    return None if found == true else tuple(sorted(tuple(sorted(a)) for a in found))


# What users paste is often re-typed: an issue title capitalises Python's "cannot import name", a chat client curls
# its quotes, a Markdown title swaps '...' for `...`. The characters read as one quote, each way.
QUOTES = "'\"`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u2032\u00b4"
_QUOTE_CLASS = "[" + QUOTES.replace("\"", "\\\"") + "]"


def tolerant(pattern: str, closed: bool = False) -> str:
    """``pattern`` with each literal quote (outside a character class) read as any quote of :data:`QUOTES`: the form
    matched (``closed``), case ignored, on a line the signature's own text does not match (:class:`_Matcher`). A quote
    inside a class is left as written; ``closed``: each negated class that excludes a quote (a quoted text's) excludes
    them all (:func:`_quoted_text`), so that the text a quote of any kind closes ends there. The shape of the pattern
    (its repeats and gaps) is kept, so its cost stays linear in the line (:func:`linear_time_problem`)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if closed and ch == "[" and not in_class and pattern[i + 1:i + 2] == "^":  # a quoted text's class
            j = _class_end(pattern, i)
            out.append(_quoted_text(pattern[i:j + 1]))
            i = j + 1
            continue
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(_QUOTE_CLASS if nxt in QUOTES and not in_class else ch + nxt)
            i += 2
            continue
        if in_class:
            in_class = ch != "]" or out[-1] == "[" or out[-1] == "[^"
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                out.append("[^")
                i += 2
                continue
        elif ch in QUOTES:
            out.append(_QUOTE_CLASS)
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


# A sentence break a paste lost: the ". " between two sentences of one message dropped (a copy from a rendered page,
# a chat client or a log viewer that joins a message's sentences, Cython's "... binary incompatibilityExpected 96 from C
# header"), or only its space ("incompatibility.Expected"): a word that starts lower case and holds no capital, then a
# capitalised word. Identifiers (RuntimeError, getDeviceCount) start upper case or continue in one, so no break is read
# inside them.
_LOST_BREAK = re.compile(r"(?<![A-Za-z0-9_])(?P<word>[a-z][a-z0-9]{1,60})\.?(?=[A-Z][a-z]{1,60}(?![A-Za-z0-9_]))")


def rebroken(line: str) -> tuple[str, tuple[int, ...], tuple[int, ...]] | None:
    """``line`` with each lost sentence break (:data:`_LOST_BREAK`) put back as ". ": the result, where each restored
    break stands in it, and where each stood in ``line``; None where the line has none."""
    out, spots, joins, last, size = [], [], [], 0, 0  # size: the length of what ``out`` holds
    for m in _LOST_BREAK.finditer(line):
        out.append(line[last:m.end("word")])
        size += len(out[-1])
        spots.append(size)
        joins.append(m.end("word"))
        out.append(". ")
        size += 2
        last = m.end()
    if not spots:
        return None
    out.append(line[last:])
    return "".join(out), tuple(spots), tuple(joins)


def _scene(m: re.Match[str]) -> bool:
    """Whether a match reads a line by one of :data:`SCENE_GROUPS`' alternatives (a message's scene or its later sentence
    alone), not by the message's own failure form."""
    return any(m.group(k) is not None for k in SCENE_GROUPS & m.re.groupindex.keys())


def _reads_more(restored: re.Match[str], kept: re.Match[str], joins: tuple[int, ...]) -> bool:
    """Whether a signature's match of a line with its lost sentence breaks put back (``restored``) reads the line better
    than its match of the line as it stands (``kept``): it reads the message's own form where ``kept`` reads only a scene
    or a later sentence alone (:data:`SCENE_GROUPS`: the rule :func:`scan_numbered` applies across lines, a reading of
    the whole message beats a tail-only one: "... libnattenDid you build" read by the tail "Please make sure you built
    NATTEN correctly"), or, both alike, it fills more of the signature's groups, or one of ``kept``'s groups runs across
    a lost break (two sentences read as one value: "0.3.16.post5Please")."""
    if _scene(restored) != _scene(kept):
        return _scene(kept)
    filled = sum(v is not None for v in restored.groups()) - sum(v is not None for v in kept.groups())
    if filled:
        return filled > 0
    return any(kept.start(k) < at < kept.end(k) for k in range(1, len(kept.groups()) + 1) if kept.start(k) >= 0
               for at in joins)


def _class_end(pattern: str, i: int) -> int:
    """The index of the ``]`` that closes the character class opening at ``pattern[i]``."""
    j = i + 1 + (pattern[i + 1:i + 2] == "^")
    j += pattern[j:j + 1] == "]"
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j


def _quoted_text(cls: str) -> str:
    """A negated class ``cls`` (``[^`\\n]``) read where any quote closes the text it reads: a class that excludes a quote
    excludes every quote of :data:`QUOTES`, so that a value a curled or swapped quote closes ends at that quote (or at
    the line's end), not at the last quote of the line (a line joined from several by
    :func:`glmcompat.decide.pasted.pasted`); a class that excludes no quote as it is."""
    body = cls[2:-1]
    if not any(q in body for q in QUOTES):
        return cls
    return cls[:-1] + "".join(q for q in QUOTES if q not in body) + "]"


# Markdown eats backticks: a message quoted `...' (the loader's "version `GLIBC_2.34' not found", GCC's and Python 2's
# quoting) or `...` (uv's, transformers') pasted into an issue outside a code block loses the opening backtick (it opens a
# code span the text never closes), or both quote marks (a pair of backticks makes the span), or has them curled.
_QUANTIFIERS = ("?", "*", "+", "{")


def unquoted(pattern: str, strict: bool = False) -> str | None:
    """``pattern``'s :func:`tolerant` form with each quote a backtick opens made optional: the backtick (a literal one,
    or a class of quotes that holds one) and the quote that closes it (the next literal ``'`` or backtick); None where the
    pattern quotes nothing with a backtick. ``strict``: each class that excludes a backtick (a quoted text's) also
    excludes blanks and a clause's punctuation, so that a quoted name without its quotes ends where the name does
    ("package `torch`:" pasted as "package torch:"); a text that holds them (uv's "torch==2.4.1 @ registry+https://...")
    is read by the form that is not strict. The form is matched, case ignored, on a line that neither the signature's own
    text nor its tolerant form matches (:class:`_Matcher`); its shape is the pattern's, each such quote one optional
    character, so its cost stays linear in the line (:func:`linear_time_problem`)."""
    out: list[str] = []
    quotes: list[tuple[int, str, int]] = []  # (index in out, the quote: "`", "'" or "|" for a branch's end, its depth)
    i = depth = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "[":  # a class: kept as it is, unless it is a class of quotes that holds a backtick
            negated = pattern[i + 1:i + 2] == "^"
            j = i + 1 + negated
            j += pattern[j:j + 1] == "]"
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            body = pattern[i + 1:j].replace("\\", "")
            if not negated and "`" in body and set(body) <= set(QUOTES):
                quotes.append((len(out), "`", depth))
                out.append(_QUOTE_CLASS)
            elif strict and negated and "`" in body:
                out.append(_quoted_text(pattern[i:j + 1])[:-1] + r"\s,;:" + "]")
            elif negated:
                out.append(_quoted_text(pattern[i:j + 1]))
            else:
                out.append(pattern[i:j + 1])
            i = j + 1
            continue
        lit, step = (pattern[i + 1], 2) if ch == "\\" and i + 1 < len(pattern) else (ch, 1)
        if lit in QUOTES:
            if lit in "`'":
                quotes.append((len(out), lit, depth))
            out.append(_QUOTE_CLASS)
        else:
            if step == 1 and ch in "(|)":
                depth += (ch == "(") - (ch == ")")
                if ch == "|":
                    quotes.append((len(out), "|", depth))
            out.append(pattern[i:i + step])
        i += step
    # a backtick and the quote that closes it in the same branch: both optional (a backtick no quote closes in the
    # pattern, uv's "Failed to build `X", stays: without it the words are no quotation)
    pairs: list[int] = []
    opened: tuple[int, int] | None = None  # the backtick open: where, at what depth
    def optional(at: int) -> bool:
        return next((t for t in out[at + 1:at + 2]), "")[:1] in _QUANTIFIERS

    def closed_later(k: int, depth: int) -> bool:
        """Whether a quote after ``quotes[k]`` closes in the branch of ``depth``."""
        for _, q, d in quotes[k + 1:]:
            if q == "|" and d <= depth:
                return False
            if q != "|":
                return True
        return False

    for k, (at, q, d) in enumerate(quotes):
        if q == "|":
            if opened is not None and d <= opened[1]:  # the branch the backtick is in ends (not a group's inside it)
                opened = None
        elif opened is None:
            opened = (at, d) if q == "`" else None
        elif q == "'" and optional(at) and not optional(opened[0]) and closed_later(k, opened[1]):
            continue  # a quote the message may hold inside the quotation ("`pip install 'accelerate>=X'`"): no close
        else:
            pairs += [opened[0], at]
            opened = None
    for at in pairs:
        if not optional(at):
            out[at] = _QUOTE_CLASS + "?"
    return "".join(out) if pairs else None


@functools.lru_cache(maxsize=4096)
def _bare(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """:func:`unquoted`'s forms of ``pattern``, the strict one first (None: it quotes nothing with a backtick)."""
    strict, form = unquoted(pattern, strict=True), unquoted(pattern)
    return None if strict is None or form is None else (re.compile(strict, re.IGNORECASE), re.compile(form, re.IGNORECASE))


@functools.lru_cache(maxsize=4096)
def _backticked(pattern: str) -> bool:
    """Whether :func:`_bare` has forms for ``pattern`` (both of :func:`unquoted`'s forms exist), without compiling them."""
    return unquoted(pattern, strict=True) is not None and unquoted(pattern) is not None


class _Lazy:
    """A pattern compiled (by ``make``, memoized per pattern text) at its first search: a matcher holds hundreds of
    signatures, and a log's lines hold the literals of a few, so most are never searched (compiling them all took most
    of a short log's ``explain``)."""

    __slots__ = ("_make", "_pattern", "_compiled")

    def __init__(self, make: Callable[[str], re.Pattern[str]], pattern: str) -> None:
        self._make, self._pattern = make, pattern
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        got = self._compiled
        if got is None:
            got = self._compiled = self._make(self._pattern)
        return got.search(text)


class _LazyPair:
    """:func:`_bare`'s two forms of a pattern that has them (:func:`_backticked`), compiled at their first search."""

    __slots__ = ("strict", "form")

    def __init__(self, pattern: str) -> None:
        self.strict = _Lazy(lambda p: _bare_forms(p)[0], pattern)
        self.form = _Lazy(lambda p: _bare_forms(p)[1], pattern)


def _bare_forms(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    forms = _bare(pattern)
    if forms is None:  # pragma: no cover - a _LazyPair is made only for a pattern _backticked says has them
        raise ValueError(pattern)
    return forms


class _LiteralIndex:
    """Which of a list of literal tuples ``text`` holds one literal of: one scan of the text finds each position where a
    literal's head (its first :data:`HEAD` characters) stands (a pattern of the heads, in a lookahead: :func:`_scanner`),
    and only there are the literals with that head compared; where asking every tuple's ``w in text`` cost a search per
    literal per line (hundreds of signatures). The same answer as ``{i for i, need in enumerate(needs) if any(w in text
    for w in need)}``. ``also``: more literals the scan reports (:meth:`present`) that no tuple holds."""

    __slots__ = ("_words", "_scan", "_holders", "_last")

    def __init__(self, needs: Sequence[tuple[str, ...]], also: Iterable[str] = ()) -> None:
        self._words = frozenset({w for need in needs for w in need if w} | {w for w in also if w})
        self._scan: tuple[re.Pattern[str] | None, dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]] | None = None
        self._holders: dict[str, list[int]] = {}
        for i, need in enumerate(needs):
            for w in dict.fromkeys(need):
                self._holders.setdefault(w, []).append(i)
        self._last: tuple[str, frozenset[str]] = ("", frozenset())  # the last text scanned, and its literals

    def present(self, text: str) -> frozenset[str]:
        """The literals (of the tuples and ``also``) ``text`` holds."""
        if self._last[0] == text and text:
            return self._last[1]
        if self._scan is None:  # made at the first scan (a matcher's bare forms' index seldom is)
            self._scan = _scanner(self._words)
        find, heads, by_head = self._scan
        out: set[str] = set()
        if find is not None:
            startswith = text.startswith
            for m in find.finditer(text):
                p = m.start()
                for head in heads[m.group(1)]:
                    for w in by_head[head]:
                        if w not in out and startswith(w, p):
                            out.add(w)
        got = frozenset(out)
        self._last = (text, got)
        return got

    def of(self, text: str) -> set[int]:
        out: set[int] = set()
        holders = self._holders
        for w in self.present(text):
            if (got := holders.get(w)) is not None:
                out.update(got)
        return out


HEAD = 6  # the characters of a literal :class:`_LiteralIndex`'s scan finds it by (its head)


@functools.lru_cache(maxsize=MATCHERS)
def _scanner(words: frozenset[str]) -> tuple[re.Pattern[str] | None, dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """:class:`_LiteralIndex`'s scan for ``words``: a pattern that finds, at each position, the longest head (first
    :data:`HEAD` characters, or the whole of a shorter word) that starts there, written as a trie in a lookahead (one
    character leads on from a node, so one path is followed, each node's longer heads tried before the one that ends at
    it); for each head, the heads that are its prefixes (they start there too, itself included); the words by head.
    Once a process per set of words."""
    by_head: dict[str, list[str]] = {}
    for w in sorted(words):
        by_head.setdefault(w[:HEAD], []).append(w)
    trie = _trie(by_head)

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in node.items() if ch] + ([""] if "" in node else [])
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    find = re.compile(f"(?=({emit(trie)}))") if by_head else None
    heads = {h: tuple(h[:k] for k in range(1, len(h) + 1) if h[:k] in by_head) for h in by_head}
    return find, heads, {h: tuple(ws) for h, ws in by_head.items()}


@functools.lru_cache(maxsize=MATCHERS)
def _gate(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern that finds any of ``words`` (:func:`_gate_word`'s forms), written as a trie: the words that start
    alike share their start, so a position is tried against each first character once rather than against every word
    (the alternation of 500-odd words took most of a long log's time)."""
    return re.compile(_shortest_trie(_gate_atoms(word) for word in words), re.IGNORECASE)


def _gate_atoms(word: str) -> list[str]:
    """:func:`_gate_word`'s pattern, one atom a character (a letter as its lower case: the gate ignores case)."""
    return [_QUOTE_CLASS + "?" if ch in QUOTES else re.escape(ch.lower() if len(ch.lower()) == 1 else ch) for ch in word]


def _literal_trie(words: Sequence[str]) -> str:
    """A pattern that finds any of the literal ``words`` where their alternation finds one: the words written as a trie
    (the words that start alike share their start, so a position is tried against each first character once rather than
    against every word; a word's longer continuations are left out, as finding it already answers)."""
    return _shortest_trie([re.escape(ch) for ch in word] for word in words)


def _trie(words: Iterable[Sequence[str]]) -> dict[str, Any]:
    """``words`` (each a sequence of atoms) as a nested dict, atom by atom; ``""`` marks where a word ends."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for atom in word:
            node = node.setdefault(atom, {})
        node[""] = {}
    return trie


def _shortest_trie(words: Iterable[Sequence[str]]) -> str:
    """The alternation of ``words`` (each a sequence of pattern atoms) written as a trie that stops where a word ends
    (a longer one through it finds nothing the shorter does not)."""

    def emit(node: dict[str, Any]) -> str:
        if "" in node:
            return ""
        alts = [atom + emit(child) for atom, child in node.items()]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(_trie(words))


def _gate_word(word: str) -> str:
    return "".join(_QUOTE_CLASS + "?" if ch in QUOTES else re.escape(ch) for ch in word)


_CAPITALS = re.compile(r"\[(?:[^\]\\]|\\.){0,40}A-Z(?:[^\]\\]|\\.){0,40}\]")  # a character class with A-Z


class _Matcher:
    """The signatures, searched only on the lines that contain a required literal of one of them
    (:func:`required_literals`): one search of all the literals at once rules out most lines of a log (measured: a
    line of text costs a fifth of searching every signature); the rare line it lets through is searched by all.

    The gate ignores case and reads any quote as any other (:data:`QUOTES`), or as none: a line it lets through that no
    signature's own text matches is searched again with each signature's :func:`tolerant` form, case ignored, and where
    that matches nothing either, with the :func:`unquoted` form of the signatures that quote with a backtick (a line
    whose backticks Markdown ate). The library's exact text wins; the tolerant forms read a line that differs from it in
    case or quoting, and on a line the own texts read, only read it more fully (:meth:`_recased`)."""

    def __init__(self, signatures: Sequence[SignatureRow], *, prefilter: bool = True) -> None:
        self.always: list[tuple[re.Pattern[str], SignatureRow]] = []
        self.keyed: list[tuple[_Lazy, SignatureRow, tuple[str, ...]]] = []
        self.loose: list[tuple[_Lazy, SignatureRow]] = []
        self._bare: dict[int, _LazyPair | None] = {}  # keyed signatures' unquoted forms, as asked (:meth:`bare`)
        for sig in signatures:
            need = required_literals(sig.pattern)
            if need is None:
                self.always.append((_compile(sig.pattern), sig))
            else:  # searched only on a line that holds one of its literals: compiled then, not for every log
                self.keyed.append((_Lazy(_compile, sig.pattern), sig, need))
                self.loose.append((_Lazy(_loose, sig.pattern), sig))
        # the keyed signatures that tell their message by a capital, a class of capitals alone (the driver API's
        # "cu[A-Z]": cuGreenCtxStreamCreate, not cudnnGetLastErrorString): a line without capitals tells them nothing
        self.cased = frozenset(i for i, (_, sig, _) in enumerate(self.keyed)
                               if any("a-z" not in c for c in _CAPITALS.findall(sig.pattern)))
        words = sorted({w for _, _, need in self.keyed for w in need}, key=len, reverse=True)
        self.gate = _gate(tuple(words)) if words else None
        # each keyed signature's literals as the gate reads them (case and quotes folded): a line that holds none of a
        # signature's is searched by neither of its forms, so a line the gate lets through costs the few it names
        self.folded = [tuple(_fold(w) for w in need) for _, _, need in self.keyed]
        self.stripped = [tuple(_strip(w) for w in need) for _, _, need in self.keyed]  # and without their quotes
        # each keyed signature's whole condition (:func:`literal_sets`), folded as the gate reads, made at the first line
        # that holds one of its literals (a short log's few): of the signatures whose literal a line holds, those whose
        # other texts it lacks are searched by neither form (``prefilter``: False for the tests that compare the two,
        # every line read alike)
        self.sets: list[tuple[tuple[str, ...], ...] | None | bool] = [prefilter and _UNREAD] * len(self.keyed)
        self.holding = _LiteralIndex(self.folded)
        self.ruled_out = 0  # how many searches the whole conditions saved (the tests compare only where it saved one)
        self.holding_bare = _LiteralIndex(self.stripped)
        # a line the paste cut inside a signature's literal (a post or a stored thread that stops mid-message: "ImportError:
        # libcudnn.so.8: cannot open shared object " and the line ends): each word-boundary head of a literal of three
        # words or more, two words at least, by its last word (folded) -> (that head, the literal's rest)
        self.ids = frozenset(sig.id for _, sig, _ in self.keyed)
        # the last lines' answers (at most RECENT lines, RECENT_CHARS characters: then it starts again), and their gate
        # answers and near signatures; the characters each holds
        self._recent: dict[str, list[tuple[re.Match[str], SignatureRow]]] = {}
        self._nears: dict[str, tuple[bool, frozenset[int]]] = {}
        self._sizes = {"recent": 0, "nears": 0}
        # the most characters one literal spans, as written (a gate match across a join lies within this many
        # characters either side of the join's space)
        self.span = max((len(w) for _, _, need in self.keyed for w in need), default=0)
        # each space inside a literal (folded), by the characters either side of it ("" at the literal's edge): a
        # literal a join holds across its space has that space there -> (signature, literal, the space's place in it)
        self.across: dict[tuple[str, str], list[tuple[int, str, int]]] = {}
        for i, need in enumerate(self.folded):
            for w in need:
                for j, ch in enumerate(w):
                    if ch == " ":
                        self.across.setdefault((w[j - 1:j], w[j + 1:j + 2]), []).append((i, w, j))
        self.cuts: dict[str, list[tuple[str, str, int]]] = {}  # ... and the signature whose literal it is
        for i, need in enumerate(self.folded):
            for w in need:
                ends = [m.end() for m in _WORD.finditer(w)]
                for k in range(2, len(ends)):
                    head = w[:ends[k - 1]]
                    self.cuts.setdefault(_WORD.findall(head)[-1], []).append((head, w[ends[k - 1]:], i))

    def found(self, line: str) -> list[tuple[re.Match[str], SignatureRow]]:
        """The (match, signature) pairs of ``line``; the last lines' answers are kept (a log's lines are read again
        when :mod:`glmcompat.decide.pasted` tries them joined with the next ones)."""
        hit = self._recent.get(line)
        if hit is None:
            hit = self._found(line)
            self._keep("recent", self._recent, line, hit)
        return list(hit)

    def found_joined(self, pieces: Sequence[str]) -> list[tuple[re.Match[str], SignatureRow]]:
        """:meth:`found` of ``pieces`` joined at a space (consecutive lines a paste may have broken a message across),
        the same answer found with less work: a literal the join holds lies in one piece (whose answer is kept) or
        holds a join's space (:attr:`across`, by the characters either side of it), and the gate reads only the
        :attr:`span` characters either side of each join."""
        line = " ".join(pieces)
        hit = self._recent.get(line)
        if hit is None:
            gated, near = False, set[int]()
            for piece in pieces:
                g, n = self._near(piece)
                gated, near = gated or g, near | n
            folded, at, cut = _fold(line), 0, 0
            for piece in pieces[:-1]:
                at += len(piece)
                cut += len(_fold(piece))
                if self.gate is not None and not gated:
                    gated = self.gate.search(line[max(0, at - self.span):at + 1 + self.span]) is not None
                before, after = folded[cut - 1:cut], folded[cut + 1:cut + 2]
                for key in {(before, after), ("", after), (before, "")}:
                    near.update(i for i, w, j in self.across.get(key, ()) if folded.startswith(w, cut - j))
                at += 1
                cut += 1
            hit = self._found(line, (gated, near))
            self._keep("recent", self._recent, line, hit)
        return list(hit)

    def _keep(self, name: str, memo: dict[str, Any], line: str, answer: Any) -> None:
        """``answer`` kept in ``memo`` (:attr:`_recent` or :attr:`_nears`, by ``name``) for ``line``, the memo emptied first
        where it holds RECENT lines or RECENT_CHARS characters."""
        if len(memo) >= RECENT or self._sizes[name] + len(line) > RECENT_CHARS:
            memo.clear()
            self._sizes[name] = 0
        memo[line] = answer
        self._sizes[name] += len(line)

    def bare(self, i: int) -> _LazyPair | None:
        """The ``i``-th keyed signature's unquoted forms (:func:`_bare`; None: it quotes no backtick), made at the first
        line that asks (a line whose backticks Markdown ate, holding one of its literals)."""
        if i not in self._bare:
            pattern = self.keyed[i][1].pattern
            self._bare[i] = _LazyPair(pattern) if _backticked(pattern) else None
        return self._bare[i]

    def _near(self, line: str, keep: bool = True) -> tuple[bool, frozenset[int]]:
        """Whether the gate lets ``line`` through, and the signatures with a literal in it (folded); kept for the last
        lines with ``keep``."""
        got = self._nears.get(line)
        if got is None:
            if self.gate is None or self.gate.search(line) is None:
                got = (False, frozenset())
            else:
                text = _fold(line)
                got = (True, frozenset(self.holding.of(text)))
            if keep:
                self._keep("nears", self._nears, line, got)
        return got

    def _possible(self, near: Iterable[int], line: str) -> list[int]:
        """Of the signatures ``near`` (in order), those whose whole condition (:attr:`sets`) ``line`` meets, folded: the
        others match it by no form (each of their alternatives lacks a text every match holds)."""
        sets, text = self.sets, _fold(line)
        out, ruled = [], 0
        for i in near:
            alts = sets[i]
            if alts is _UNREAD:
                got = literal_sets(self.keyed[i][1].pattern)
                alts = sets[i] = None if got is None else tuple(tuple(_fold(w) for w in alt) for alt in got)
            if not alts:
                out.append(i)
                continue
            for alt in alts:  # type: ignore[union-attr]  # any(all(w in text for w in alt) ...), without a generator a text
                for w in alt:
                    if w not in text:
                        break
                else:
                    out.append(i)
                    break
            else:
                ruled += 1
        self.ruled_out += ruled
        return out

    def _found(self, line: str, gated_near: tuple[bool, frozenset[int] | set[int]] | None = None
               ) -> list[tuple[re.Match[str], SignatureRow]]:
        out = [(m, sig) for pat, sig in self.always if (m := pat.search(line)) is not None]
        gated, near_set = gated_near if gated_near is not None else self._near(line, keep=False)
        if gated:
            every = sorted(near_set)
            near = self._possible(every, line)
            keyed = [(m, self.keyed[i][1]) for i in near if (m := self.keyed[i][0].search(line)) is not None]
            if keyed:
                keyed = self._recased(line, every, keyed, near)
            keyed = keyed or [(m, self.loose[i][1]) for i in near if (m := self.loose[i][0].search(line)) is not None]
            if not keyed:  # a line whose backticks Markdown ate: the signatures that quote with one, their quotes optional
                bare = _strip(line)
                keyed = [(m, self.keyed[i][1]) for i in sorted(self.holding_bare.of(bare))
                         if (forms := self.bare(i)) is not None
                         and (m := forms.strict.search(line) or forms.form.search(line)) is not None]
            out += keyed
        fixed = rebroken(line)
        for m, sig in self._rebroken(line, fixed):  # a signature that reads the line with its lost breaks put back
            at = next((k for k, (o, s2) in enumerate(out) if s2.id == sig.id), None)
            if at is None:
                out.append((m, sig))
            elif fixed is not None and _reads_more(m, out[at][0], fixed[2]):
                out[at] = (m, sig)
        if not any(sig.id in self.ids for _, sig in out) and (cut := self._cut(line)) is not None:
            out += cut
        return out

    def _recased(self, line: str, near: list[int], keyed: list[tuple[re.Match[str], SignatureRow]],
                 possible: list[int]) -> list[tuple[re.Match[str], SignatureRow]]:
        """``keyed`` (the signatures' own readings of ``line``) with the readings a message lower-cased or retyped
        calls for, by the near signatures' tolerant forms (case ignored): a signature's own reading is replaced by its
        tolerant one where that starts earlier or spans it and more (where the signature reads the line as the source
        printed it: a lower-cased "could not load dynamic library 'X'; dlerror: X: cannot open shared object file" is
        read from its start, not by the shorter alternative of the words printed in lower case anyway), and another
        signature's tolerant reading is added where it spans a reading of the line (as wide or wider) and the line
        holds a literal of that signature only in another case (the wider reading then wins the line, :func:`_inside`),
        or the line holds no capital at all and the signature, no reading of it, tells its message by no class of
        capitals (:attr:`cased`): a lower-cased message whose literals read as written and whose value does not
        ("cannot import name 'iterable' from 'collections'", which another signature reads as any import). On a line as the library printed it a tolerant reading that starts earlier than the own one is rare (an
        alternative's words in another case before the ones read), and no line is claimed here that was not already.
        ``possible``: those of ``near`` whose whole condition the line meets (:meth:`_possible`), the only ones searched."""
        text, out = _fold(line), list(keyed)
        recased = {i for i in near if any(f in text and w not in line for w, f in zip(self.keyed[i][2], self.folded[i], strict=True))}
        own = {sig.id: k for k, (_, sig) in enumerate(keyed)}
        if line == line.lower():  # a line without a capital: a near signature's message lower-cased may differ from its
            # own text in a group's case alone ("cannot import name 'iterable' from 'collections'"), its literals as written
            recased |= {i for i in near if self.keyed[i][1].id not in own and i not in self.cased}
        if not recased:  # each near literal the line holds as written: the line as printed, read as it stands
            return keyed
        for i in possible:
            sig = self.keyed[i][1]
            at = own.get(sig.id)
            if (at is None and i not in recased) or (lm := self.loose[i][0].search(line)) is None:
                continue
            if at is not None:
                if lm.start() < out[at][0].start() or _wider(lm, out[at][0]) or _more_values(lm, out[at][0]):
                    out[at] = (lm, sig)
            elif any(lm.start() <= m.start() and m.end() <= lm.end() for m, _ in keyed):
                out.append((lm, sig))
        return out

    def _rebroken(self, line: str, fixed: tuple[str, tuple[int, ...], tuple[int, ...]] | None
                  ) -> list[tuple[re.Match[str], SignatureRow]]:
        """The signatures a line reads with the sentence breaks a paste lost put back (:func:`rebroken`): a match counts
        only where it spans or ends at a restored break (the signature's own text has the break there) or where the line as it
        stands does not match (a lookahead of the signature reads the break: numpy-abi's "numpy.dtype size changed" where
        a "... Expected 96 from C header, got 88" follows), each signature's own form
        first, then its tolerant one. Empty where the line has no such join or no signature reads it. A signature that
        reads the line as it stands too is kept as it reads it, unless the restored break lets it read more (a message's
        optional second sentence: "Numba needs NumPy 2.0 or lessGot NumPy 2.1.")."""
        if fixed is None:
            return []
        text, spots, _ = fixed

        def counted(pat: re.Pattern[str] | _Lazy) -> re.Match[str] | None:
            m = pat.search(text)
            if m is None or not (any(m.start() <= at <= m.end() for at in spots) or pat.search(line) is None):
                return None
            return m

        got = [(m, sig) for pat, sig in self.always if (m := counted(pat)) is not None]
        gated, near_set = self._near(text, keep=False)
        if not gated:
            return got
        near = self._possible(sorted(near_set), text)
        for forms in ([p for p, _, _ in self.keyed], [p for p, _ in self.loose]):
            keyed = [(m, self.keyed[i][1]) for i in near if (m := counted(forms[i])) is not None]
            if keyed:
                return got + keyed
        return got

    def _cut(self, line: str) -> list[tuple[re.Match[str], SignatureRow]] | None:
        """The signatures a line cut inside one of their literals reads, the literal completed: where the line ends
        (blanks aside) at a word-boundary head of a literal (:attr:`cuts`), the line with the literal's rest is searched
        as a whole line is (each signature with a literal in it, its own form, then its tolerant one), and a match counts
        only where it starts before the head (the line holds the message's own words, the library a loader names, before
        the cut: a line that ends in a literal's first words alone is no message), and before the head of any literal of
        its own that the line is cut inside too. None where none does."""
        text = line.rstrip()
        tail = _WORD.findall(_fold(text[-80:]))
        if not tail or not (heads := self.cuts.get(tail[-1])):
            return None
        folded = _fold(text)
        cut = [(head, rest, i) for head, rest, i in heads if folded.endswith(head)]
        # a signature the line is cut inside a literal of its own is judged by that literal's head: its words before
        # the cut must stand before the earliest such head ("CUDA error : invalid device", a head of its own "CUDA error :
        # invalid device function", is not read as that message through another row's " : invalid device function":
        # the words kept also head "invalid device ordinal")
        own: dict[int, int] = {}
        for head, _, i in cut:
            own[i] = min(own.get(i, len(text)), len(text) - len(head))
        completing: dict[tuple[str, int], set[int]] = {}  # each completed line -> the signatures whose literal completed it
        for head, rest, i in cut:
            completing.setdefault((text + rest, len(text) - len(head)), set()).add(i)
        for (whole, at), mine in completing.items():
            # a completion counts only where a signature whose own literal the line is cut inside reads it (the text is
            # then its message, which a sharper row may read too: cuDNN's sub-library row on the loader's "cannot open
            # shared object"): another row's literal completing the line ("CUDA driver" + cuda-bindings' "version ")
            # makes a text no message printed, which a third row's reading of it ("CUDA error: CUDA driver version ...")
            # would claim
            if not any((m := form.search(whole)) is not None and m.start() < min(at, own.get(i, at))
                       for i in mine for form in (self.keyed[i][0], self.loose[i][0])):
                continue
            near = self._possible(sorted(self.holding.of(_fold(whole))), whole)
            for forms in ([p for p, _, _ in self.keyed], [p for p, _ in self.loose]):
                got = [(m, self.keyed[i][1]) for i in near if (m := forms[i].search(whole)) is not None
                       and m.start() < min(at, own.get(i, at))]
                if got:
                    return got
        return None


_UNREAD = True  # a signature's condition not read yet (:attr:`_Matcher.sets`; False: no prefilter, None: no condition)
RECENT = 4096  # the lines whose answers a matcher keeps (a log's lines read again joined, the same lines in another log)
RECENT_CHARS = 1 << 20  # and the most characters they hold


# the matchers built in this process, by their signature rows (a process that explains again, the API or a test, builds
# none anew for rows equal in every field); bounded
_MATCHERS: dict[tuple[SignatureRow, ...], _Matcher] = {}


_LAST: list[tuple[tuple[SignatureRow, ...], _Matcher]] = []  # the last tuple of rows asked for, held: its matcher


def _matcher(signatures: Sequence[SignatureRow]) -> _Matcher:
    last = _LAST[0] if _LAST else None
    if last is not None and last[0] is signatures:  # the same tuple again (a log's lines): no hashing of its rows
        return last[1]
    got = _keyed_matcher(signatures)
    if isinstance(signatures, tuple):
        _LAST[:] = [(signatures, got)]
    return got


def _keyed_matcher(signatures: Sequence[SignatureRow]) -> _Matcher:
    try:
        key = tuple(signatures)  # the rows themselves (frozen: equal rows, equal in every field)
        got = _MATCHERS.get(key)
    except TypeError:  # rows that cannot be hashed: no memo
        return _Matcher(signatures)
    if got is None:
        got = _Matcher(signatures)
        if len(_MATCHERS) >= MATCHERS:
            _MATCHERS.pop(next(iter(_MATCHERS)))
        _MATCHERS[key] = got
    return got


_WORD = re.compile(r"[a-z0-9]+")  # a word of a folded text
_QUOTE_FOLD = str.maketrans({q: "'" for q in QUOTES})


def _fold(text: str) -> str:
    """``text`` with case and quotes folded, as the gate and the tolerant forms read it (any quote as any other)."""
    return text.casefold().translate(_QUOTE_FOLD)


_QUOTE_DROP = str.maketrans({q: None for q in QUOTES})


def _strip(text: str) -> str:
    """``text`` folded as :func:`_fold` folds it, without its quotes (how the gate reads a line Markdown took them from)."""
    return text.casefold().translate(_QUOTE_DROP)


# --- what a log says besides its signatures: which package, which versions ------------------------------

# Which distribution a name in a log belongs to: top-level modules (a path component under site-packages, a module
# name), torch.ops namespaces (``torch.ops.NS.op``, ``operator NS::op``) and C++ namespaces -> the distribution that
# ships them. Data with its evidence: the matrix file NAMES_FILE ([[module]], [[op_namespace]], [[cxx_namespace]] rows,
# validated with the rest of the matrix: glmcompat.matrix.rows), read here from the shipped file (this layer reads no
# matrix loader), once, when a log first asks. A name not listed maps to itself, with `_` read as `-`.
NAMES_FILE = Path(__file__).resolve().parents[1] / "matrix" / "data" / "module-packages.toml"


@dataclass(frozen=True)
class NameTables:
    """The tables of :data:`NAMES_FILE`, each in file order: module -> distribution, torch.ops namespace ->
    distribution, C++ namespace -> distribution (None: a language's, a header library's or a helper's, std:: or
    detail::, which names no package)."""

    modules: dict[str, str]
    ops: dict[str, str]
    cxx: dict[str, str | None]


@functools.cache
def name_tables() -> NameTables:
    """The tables of :data:`NAMES_FILE` (read once per process)."""
    doc = loads(NAMES_FILE.read_text(encoding="utf-8"), InputError, str(NAMES_FILE))

    def table(name: str, key: str) -> dict[str, Any]:
        return {n: row.get("package") for row in doc.get(name, ()) for n in row[key]}

    return NameTables(table("module", "modules"), table("op_namespace", "namespaces"), table("cxx_namespace", "namespaces"))


# Distributions whose frames say little about who failed: the interpreter's glue, torch's dispatcher and
# the engines that call into the kernels. A failure is attributed to them only when nothing else is named.
GLUE = frozenset({"torch", "importlib", "sglang", "vllm-engine", "uvicorn", "ray", "multiprocessing", "asyncio",
                  "concurrent", "threading", "runpy", "fastapi", "starlette", "typing-extensions"})
ENGINES = frozenset({"sglang", "vllm"})
# Signatures whose text is a generic prefix of others' (torch's "CUDA initialization: ... error" wraps the driver's
# errors; the loader's "undefined symbol: X" is read by the signatures of the libraries whose symbols they name, NCCL's,
# nvJitLink's, the driver's, vLLM's): on a line another signature explains, they yield it, however wide their match.
YIELDS = frozenset({"lxc-cuda-init-hmm", "undefined-symbol"})
# The groups of a signature's alternatives that read a line setting the scene of the failure (pip collecting a stack
# package at a companion's pin, or uninstalling one) rather than the failure itself: a later line of the signature's own
# failure form (pip's conflict warning) replaces such a first match as the signature's hit. fx_: a framework's summary
# line; x_scene: a warning's header line whose specifics (the distributions it lists) come on a later line (CuPy's
# duplicate-installation warning); rn_lookup: importlib.metadata's PackageNotFoundError, whose check's own message (the
# program's "X with minimum required version V is not installed") follows it and names the checker. cut_head: a message's
# later sentence read alone (a log that starts mid-message, tests/decide/test_paste_damage.py section 4), whose head,
# where a later line prints the whole message, names what the tail cannot (the model type). rv_ray, rv_py, rv_pa: a
# "Ray: X" / "Python: X" / "Pyarrow: X" line of Ray's version check (ray-version-mismatch), whose head names the check;
# cr_plain: a docker (podman) run command, whose container engine's own refusal of a GPU request may follow it.
# scene groups that yield to any other reading of their signature later in the log (pip's candidate wheel lines: what
# a later "Collecting ... (from ...)" of the same install says is read first; pip's failed PEP 517 step or the build
# backend's frame, whose output below says in the package's own words that its setup found no torch: read that)
YIELDING_GROUPS = frozenset({"recand", "iso_step", "meta_step", "iso_frame"})
# fix-o: cpp_extension's raise line of its CUDA check, a traceback frame's source line, which the message below it (its
# versions) reads more sharply where the log keeps it
YIELDING_GROUPS = YIELDING_GROUPS | {"cme_raise"}
# fix-t: torchvision's own import frame of _meta_registrations, read only where the log stops there: the message below it
# ("operator torchvision::nms does not exist", a partially initialized module) reads the failure where the log keeps it
YIELDING_GROUPS = YIELDING_GROUPS | {"tv_meta_frame"}
# groups whose match reads a line over an earlier one of the same signature without them (fix-n): pip's conflict report
# lists its lines in the order of the installed distributions, no order of importance, and a requirement that pins one
# release exactly (req_pin: "torchvision 0.15.1 requires torch==2.0.0", a build's tie to that release) names the break
# over a range before it (the data's source: pip-requirement-conflict)
PREFERRED_GROUPS = frozenset({"req_pin"})
# x_bnb_nogpu: bitsandbytes' "compiled without GPU support" warning, whose library a later CUDA SETUP line of 0.37-0.41 names
SCENE_GROUPS = frozenset({"pin_dep", "gone", "recand", "fx_scene", "fx_scene_tf", "fx_scene_trt", "x_scene", "x_bnb_nogpu", "rn_lookup",
                          "cut_head", "rv_ray", "rv_py", "rv_pa", "cr_plain"})
# fix-r: pip's conflict report of a package outside the stack (or of one not installed), a side note a stack line of the
# same report reads over; poetry's -vvv "Duplicate dependencies for X" notice, which its IncompatibleConstraintsError or
# the solver's failure below reads over
SCENE_GROUPS = SCENE_GROUPS | {"pc_pkg", "pm_pkg", "pd_dup"}
# a traceback's code line that is an import statement (CPython prints the failing line's source under its frame): the
# module being imported when an ImportError follows it within IMPORT_GAP lines (3.11+ adds a "^^^^" marker line)
_IMPORT_LINE = re.compile(r"^\s{2,12}(?:from (?P<from>[A-Za-z_][\w.]{0,200}) import |import (?P<imp>[A-Za-z_][\w.]{0,200}))")
IMPORT_GAP = 3
# an import statement typed at the top level (a REPL's ">>> ", IPython's "In [N]: ", a script's or notebook cell's line
# shown at column 0) and the error right after it with no traceback frame between: the statement's module is the one
# whose import raised (a companion importing torch's names at its own import: "from torchvision import models")
_TOP_IMPORT = re.compile(r"^(?:>>> |In \[\d{1,5}\]: )?(?:from (?P<from>[A-Za-z_][\w.]{0,200}) import |import (?P<imp>[A-Za-z_][\w.]{0,200})\s{0,4}$)")
# groups each match of a signature adds to rather than the first one alone: glibc's loader prints one "version `X' not
# found" line per symbol version a library needs and its provider lacks (glibc elf/dl-version.c, match_symbol), in the
# order of the library's version-needed entries, not by age; the values the later matches name that the first does not
# are kept, in the hit's ``also`` (by group), so a cause can name the newest (the one a remedy must satisfy)
# (nvcc_version, nvcc_include: torch's CMake config prints the compiler's release on the line after its "Found two
# conflicting CUDA versions", torch/share/cmake/Caffe2/public/cuda.cmake:64-68); rv_ray, rv_py, rv_pa: Ray's version
# check prints the cluster's block then this process's (ray/_private/utils.py check_version_info), each a line a value
# the groups of a failed build step (ninja's "FAILED: <output>", a compiler command's exit, ld's exit, torch's
# cpp_extension "Error building extension"): the traceback after it is the build driver's (torch/utils/cpp_extension.py
# runs ninja for another package's extension), so a glue package its frames name (torch) is not the package being
# built; a non-glue package's frames (the package's own setup or op builder) still name it
BUILD_STEP_GROUPS = frozenset({"ninja_out", "ninja_stop", "cmd", "ld_fail", "torch_ext", "ext_name"})
COLLECTED_GROUPS = frozenset({"need", "glibc", "nvcc_version", "nvcc_include", "pyl_built", "pyl_have", "rv_ray", "rv_py",
                              "rv_pa", "rv_where",
                              # fix-p: torch's unsupported-GPU warning without its head, its arch list and GPU a line each
                              "cubin_list", "cubin_gpu", "too_old"})
# fix-w: the installers' reports that no traceback of theirs follows (pip's resolver failure: logger.critical of
# "Cannot install ..." and the cause list, then base_command's "ERROR: ResolutionImpossible: ..." line for the
# DistributionNotFound it catches, pypa/pip tag 23.2.1 src/pip/_internal/resolution/resolvelib/factory.py
# get_installation_error and src/pip/_internal/cli/base_command.py _main): the frames after one are another run's, and
# name no package of it
UNFRAMED = frozenset({"pip-resolution-impossible"})
WINDOW = 40  # lines before a match searched for the package it belongs to (a traceback's frames)
# a traceback's frame line, whatever file it names (an installed package's, a user's script, a notebook cell): CPython's
# traceback.py ('  File "<path>", line N, in <func>'; a Cython module's init frame 'File "pkg/mod.pyx", line N, in init
# pkg.mod'), IPython 8's "File <path>:N, in <func>" and IPython 7's "<path> in <func>", and a notebook cell's or REPL's
# own ("Cell In[3], line 1", "<ipython-input-3-...> in <module>", "Input In [3], in <cell line: 1>"), and Colab's copy of
# IPython 7's frame, the file a Markdown link ("[/usr/.../mod.py](https://localhost:8080/#) in func(...)"): the last one before
# an error is where the failing statement ran (frame_file / frame_func), read by the decisions that need the importing
# code, not only an installed package's (the "frame" group)
_FRAME_LINE = re.compile(r'^\s{0,12}(?:File "(?P<file>[^"\n]{1,400})", line \d{1,7}(?:, in (?P<func>[^\n]{1,200}))?'
                         r'|File (?P<ifile>[^\s"]{1,400}?):\d{1,7}(?:, in (?P<ifunc>[^\n]{1,200}))?'
                         r'|(?P<ofile>[~/][^\s"]{1,400}\.pyx?) in (?P<ofunc>\S[^\n]{0,200})'
                         r'|\[(?P<lfile>[~/][^\s"\]]{1,400}\.pyx?)\]\([^\s)]{0,200}\) in (?P<lfunc>\S[^\n]{0,200})'
                         r'|(?P<cell>Cell In ?\[\d{1,6}\]|Input In ?\[\d{1,6}\]|<ipython-input-[^>\n]{1,80}>))')
# lines an IPython frame shows after its head (its numbered context lines, "---> N" at the failing one) before the error
FRAME_CONTEXT = 12

_VERSION = r"v?(?P<ver>\d{1,4}\.\d{1,4}(?:\.\d{1,6})?(?:(?:\.?post|\.?dev|rc|a|b)\d{1,6})?(?:\+[A-Za-z0-9.]{1,40})?)"
_DISTS = (r"(?P<name>torch(?:vision|audio|ao)?|pytorch|sgl[-_]kernel|sglang[-_]kernel|sglang|vllm|"
          r"flashinfer(?:[-_]python|[-_]cubin|[-_]jit[-_]cache)?|transformers|xformers|flash[-_]attn|triton|"
          r"nvidia[-_]nccl[-_]cu\d{2}|deep[-_]gemm|apache[-_]tvm[-_]ffi|numpy|numexpr|huggingface[-_]hub)")
_MENTIONS = [
    # a path under site-packages / dist-packages: the first component names the package
    ("path", re.compile(r"(?:site|dist)-packages[\\/](?P<mod>[A-Za-z_][A-Za-z0-9_]{0,80})")),
    # a wheel's dist-info directory, with its version
    ("dist", re.compile(r"(?P<mod>[A-Za-z_][A-Za-z0-9_]{0,80})-" + _VERSION + r"\.dist-info")),
    # a traceback frame of a package's __init__ by a relative path (a frozen app's: File "cv2\__init__.py")
    ("path", re.compile(r"File \"(?![A-Za-z]:|[\\/])(?:[^\"]{0,300}[\\/])?(?P<mod>[A-Za-z_][A-Za-z0-9_]{0,80})[\\/]__init__\.py\"")),
    # ollama's runner libraries (/usr/local/lib/ollama/cuda_v12/libggml-cuda.so, ...\Ollama\lib\ollama\): the ggml it
    # bundles is ollama's
    ("path", re.compile(r"[\\/]lib[\\/](?P<mod>ollama)[\\/]")),
    ("ops", re.compile(r"torch\.ops\.(?P<mod>\w{1,80})\.\w")),
    ("ops", re.compile(r"(?:operator|op) (?P<mod>\w{1,80})::\w")),
    ("ops", re.compile(r"'_(?i:opnamespace)' '(?P<mod>\w{1,80})'")),  # torch's class name, lower-cased in a paste too
    # onnxruntime's execution-provider libraries, which its provider bridge names when one does not load
    # ("Failed to load library libonnxruntime_providers_cuda.so with error: ...": onnxruntime provider_bridge_ort.cc)
    ("ortlib", re.compile(r"(?<![\w.-])(?P<mod>libonnxruntime_providers_\w{1,40})\.so\b")),
    # torch's C++ source tree, which its checks name where they raise (old TH/THC errors end " at <file>:<line>",
    # THCudaCheck prints "file=/pytorch/aten/src/THC/...", TORCH_WARN "Triggered internally at ../c10/cuda/...")
    ("torchsrc", re.compile(r"(?<![\w-])(?P<mod>torch/csrc|aten/src|c10/(?:core|cuda|util))/[\w/-]{1,200}\.(?:cpp|cu|h|c)\b")),
    # the tail torch's CUDA check puts after every CUDA error it raises (C10_CUDA_CHECK and C10_CUDA_KERNEL_LAUNCH_CHECK,
    # c10/cuda/CUDAException.cpp c10_cuda_check_implementation: "CUDA error: <cudaGetErrorString>", then the
    # asynchronous-error suffix "CUDA kernel errors might be asynchronously reported at some other API call, so the
    # stacktrace below might be incorrect." / "For debugging consider passing CUDA_LAUNCH_BLOCKING=1" (torch-2.14.1 wheel
    # torch/lib/libc10_cuda.so; "API call,so" before torch 2.0), then c10_retrieve_device_side_assertion_info's "Compile
    # with `TORCH_USE_CUDA_DSA` to enable device-side assertions." (pytorch/pytorch@7e2ec4256d68a7e9ed7b7c23c8214dd02abeaed0
    # c10/cuda/CUDADeviceAssertionHost.cpp, its #else branch) or "Device-side assertions were explicitly omitted for this
    # error check; ..." (c10_cuda_check_implementation); a ROCm build prints HIP and TORCH_USE_HIP_DSA): the error is
    # raised by torch, which a failure is attributed to where nothing else is named (torch is glue: an extension's
    # kernel checked by the same macro is named by its own frames)
    ("torchtail", re.compile(r"(?P<mod>(?:CUDA|HIP) kernel errors might be asynchronously reported at some other API call|"
                             r"Compile with `?TORCH_USE_(?:CUDA|HIP)_DSA`? to enable device-side assertions|"
                             r"Device-side assertions were explicitly omitted for this error check)", re.IGNORECASE)),  # retyped in lower case too
    # torch's own shared libraries (torch/lib), named by soname where a loader error gives no path
    ("torchlib", re.compile(r"(?<![\w.-])(?P<mod>lib(?:torch(?:_cpu|_cuda(?:_cu|_cpp|_linalg)?|_hip|_python|_global_deps)?|"
                            r"c10(?:_cuda|_hip)?))\.so\b")),
    ("module", re.compile(r"\b(?P<mod>flash_attn_2_cuda|flash_attn_3_cuda|flash_attn_gpu|selective_scan_cuda|causal_conv1d_cuda|"
                          r"sgl_kernel|flashinfer|vllm\._[Cc]|deep_gemm)\b")),  # vllm._c: its message lower-cased
    # a C++ qualified name a native library prints in its own errors (``onnxruntime::CudaCall``, ``vllm::``): the
    # outermost namespace names the library, where it is one (:func:`name_tables`)
    ("namespace", re.compile(r"(?<![\w:])(?P<mod>[a-z_][a-z0-9_]{1,80})::(?=[A-Za-z_~])")),
]
_VERSIONS = [
    # pip's "Requirement already satisfied: <requirement> in <directory> (from <parent>) (<installed version>)"
    # (pip/_internal/resolution/legacy/resolver.py and resolvelib/factory.py, "Requirement already satisfied: %s"
    # with the requirement's specifier and the installed version in parentheses last): the version installed, not the
    # requirement's bound (``huggingface-hub>=0.19 in ... (0.25.2)`` is 0.25.2). First: a line's first version read wins
    re.compile(r"Requirement already satisfied: " + _DISTS + r"(?:\[[\w,\s-]{1,80}\])?(?:\s{0,4}[<>=!~][^ ]{0,120})? in "
               r"\S{1,400}(?: \(from [^()]{0,400}(?:\([^()]{0,80}\)[^()]{0,200}){0,2}\))? \(" + _VERSION + r"\)\s*$", re.I),
    # (a bare space between name and version is read only before a release a tool prints, X.Y.Z or with a tag: prose's
    # "I installed torch 2.4 yesterday" names a series, not the installed version; a banner's list, "Built with pytorch
    # 1.7, cuda 10.2", is read); a Markdown list's bold key, "- **PyTorch:** 2.9.1+cu130", as a
    # program's system report prints it, is read as "PyTorch: 2.9.1+cu130"
    # (fix-v: never a requirement pip's conflict report says a package depends on, "opencv-python 4.6.0.66 depends on
    # numpy>=1.14.5": pypa/pip tag 26.2.1 src/pip/_internal/resolution/resolvelib/factory.py get_installation_error)
    re.compile(r"(?<![\w-])(?<!depends on )" + _DISTS + r"(?:\([^()]{1,40}\))?(?:\s{0,4}(?:==|===|>=|@)\s{0,4}|"
               r"\s{1,40}(?:version\s{0,40}:?\s{0,4}|(?=v?\d{1,4}\.\d{1,4}(?:\.\d|\+|\.?post|\.?dev|rc|a\d|b\d|,)))|"
               r"\s{0,4}version\s{0,4}[:=]?\s{0,4}|\s{0,4}[:=]\s{0,4}|:\*{1,2}\s{1,4}|-)" + _VERSION + r"(?!\w|\.\d)", re.I),
    re.compile(r"(?P<name>PyTorch) version:\s{0,4}" + _VERSION),  # torch.utils.collect_env
    # a Nix store path of a Python package: nixpkgs' buildPythonPackage names it <hash>-python3.X-<pname>-<version>
    # (/nix/store/9kyf...-python3.13-torch-2.7.1/lib/python3.13/site-packages/torch/..., NixOS/nixpkgs#432046)
    re.compile(r"/nix/store/[0-9a-z]{32}-python\d\.\d{1,2}-" + _DISTS + "-" + _VERSION + r"/", re.I),
]
# an environment listing's row, in the layouts the tools that print one use (any distribution's name: the row's layout,
# not the name, says it is a version installed). A version is X.Y at least, with PEP 440's tags and a local label.
_ROW_NAME = r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]{0,80})"
_ROW_VERSION = r"v?(?P<ver>\d{1,4}(?:\.\d{1,8}){1,4}(?:(?:\.?post|\.?dev|rc|a|b)\d{1,6})?(?:\+[A-Za-z0-9.]{1,40})?)"
_ROWS = [re.compile(pattern) for pattern in (
    # pip freeze ("torch==2.4.1+cu124": pip-23.2.1 src/pip/_internal/operations/freeze.py FrozenRequirement.__str__,
    # "{req}=={version}"), collect_env's "[pip3] torch==2.4.1" (torch/utils/collect_env.py get_pip_packages, the lines
    # `pip list --format=freeze` prints, prefixed "[{pip_version}] "), conda env export's "- pytorch=2.4.1=py3.10_..."
    # (conda/env/env.py from_environment: "name=version=build") and its pip section's "- torch==2.4.1"
    r"^\s{0,12}(?:\[(?:pip3?|conda)\]\s{1,8})?(?:-\s{1,4})?" + _ROW_NAME + r"(?:\[[\w,.-]{1,80}\])?\s{0,4}(?:===?|=)\s{0,4}"
    + _ROW_VERSION + r"(?:=[\w.+-]{1,80})?\s{0,4}$",
    # columns padded to the widest name: pip list ("Package Version" then "torch 2.4.1+cu124", an editable's location
    # after: pip-23.2.1 src/pip/_internal/commands/list.py format_for_columns / tabulate), uv pip list (the same
    # layout: uv crates/uv/src/commands/pip/list.rs), conda list ("pytorch 2.4.1 py3.10_cuda12.4_cudnn9.1.0_0 pytorch":
    # name, version, build, channel; conda/cli/main_list.py print_packages), collect_env's "[conda] pytorch 2.4.1 ..."
    # (get_conda_packages: conda list's lines, prefixed "[conda] "), poetry show ("name version description":
    # poetry src/poetry/console/commands/show.py, "(!)" marking one not installed): two spaces or more of padding, or a
    # row that ends at the version or at conda's build string (with its channel)
    r"^\s{0,12}(?:\[conda\]\s{1,8})?" + _ROW_NAME + r"(?:\s{1,4}\(!\))?(?P<gap>\s{1,60})" + _ROW_VERSION
    + r"(?P<tail>\s.{0,400})?$",
    # "name: version" (YAML, sglang's check_env "PyTorch: 2.4.0+cu121" / "flashinfer: 0.1.6": sglang python/sglang/
    # check_env.py check_env, print(f"{k}: {v}")), "name version: version" (transformers env's "- `transformers` version:
    # 4.46.3", "- PyTorch version (GPU?): 2.4.1+cu124 (True)": transformers src/transformers/commands/env.py format_dict,
    # f"- {prop}: {val}"; vLLM's collect_env "vLLM Version: 0.6.3.post1", torch's "PyTorch version: 2.4.1")
    r"^\s{0,12}(?:[-*]\s{1,4})?`?" + _ROW_NAME + r"`?(?:\s{1,4}[Vv]ersion(?:\s{1,4}\([^()]{0,40}\))?)?\s{0,4}:\s{0,4}"
    + _ROW_VERSION + r"(?:[\s,@(].{0,400})?$",
    # an issue form's markdown list of distributions, name and version each in backticks ("- `torch_npu`: `2.8.0.post2`"),
    # as a page may damage them (an opening backtick eaten, the quotes curled): the name quoted at one end at least, so a
    # report's "- PyTorch: `2.11.0+cpu`" (a program's words, not a listing of distributions) is not read here
    r"^\s{0,12}[-*]\s{1,4}[`\u2018\u201c]" + _ROW_NAME + r"[`\u2019\u201d]?\s{0,4}:\s{0,4}[`\u2018\u201c]?" + _ROW_VERSION
    + r"[`\u2019\u201d]?\s{0,4}$",
    r"^\s{0,12}[-*]\s{1,4}" + _ROW_NAME + r"[`\u2019\u201d]\s{0,4}:\s{0,4}[`\u2018\u201c]?" + _ROW_VERSION
    + r"[`\u2019\u201d]?\s{0,4}$",
    # a markdown table's row ("| torch | 2.4.1+cu124 |")
    r"^\s{0,8}\|\s{0,8}`?" + _ROW_NAME + r"`?\s{0,40}\|\s{0,8}`?" + _ROW_VERSION + r"`?\s{0,40}\|",
)]
# a JSON object of name -> version, any number on a line ("torch": "2.4.1+cu124": InvokeAI's About dialog,
# invokeai/app/api/routers/app_info.py AppDependencyVersions; ComfyUI's /system_stats "pytorch_version": "2.4.1+cu124",
# server.py system_stats), and `pip list --format=json`'s {"name": "torch", "version": "2.4.1"} (pip-23.2.1
# src/pip/_internal/commands/list.py format_for_json)
_JSON_PAIR = re.compile(r'"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]{0,80})"\s{0,4}:\s{0,4}"' + _ROW_VERSION + r'["\s]')
_JSON_NAMED = re.compile(r'"name"\s{0,4}:\s{0,4}"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]{0,80})"\s{0,4},\s{0,4}"version"\s{0,4}:'
                         r'\s{0,4}"' + _ROW_VERSION + '"')
# the words of a listing's rows that name no distribution (the interpreter, the CUDA toolkit or driver, the system,
# a field of a JSON dict): what a report lists beside the packages
_NOT_DISTS = frozenset({"python", "cuda", "driver", "nvcc", "cudnn", "os", "gpu", "rocm", "hip", "gcc", "clang", "cmake",
                        "libc", "nccl", "version", "name", "system", "platform", "kernel", "ram", "vram", "cpu", "ulimit",
                        "cann", "pip", "conda", "build"})
# the rest of a column row whose name and version one space parts (no padding): nothing, or conda's build string
# (an underscore in it: py3.10_cuda12.4_cudnn9.1.0_0, pypi_0) and its channel
_CONDA_TAIL = re.compile(r"\s{0,40}(?:[\w.+-]{0,80}_[\w.+-]{0,80}(?:\s{1,40}[\w./:-]{1,80})?)?\s{0,4}")
# conda's build string of the pytorch channel's CUDA build: the CUDA torch was built with (py3.10_cuda12.4_cudnn9.1.0_0)
_CONDA_TORCH_CUDA = re.compile(r"^\s{0,12}(?:\[conda\]\s{1,8})?pytorch\s{1,60}\S{1,40}\s{1,40}\S{0,40}_cuda(?P<v>\d{1,2}\.\d)_")
_WRAPPED_VERSION = re.compile(r"\s{0,8}version (?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})\b")
_MAJOR_MINOR = r"(?P<v>\d{1,3}\.\d{1,3})"  # a CUDA release as tools print it (12.8)
_DRIVER = r"(?P<v>\d{2,4}\.\d{1,4}(?:\.\d{1,4})?)"  # a driver version (570.86.15)
_COLON = r"\s{0,4}:\s{0,4}"
_CUDA = [(what, re.compile(pattern)) for what, pattern in (  # the driver's CUDA (nvidia-smi), the toolkit (nvcc), torch's build
    ("driver_cuda", r"CUDA Version" + _COLON + _MAJOR_MINOR),
    ("driver", r"Driver Version" + _COLON + _DRIVER),
    ("driver", r"Nvidia driver version" + _COLON + _DRIVER),
    ("nvcc", r"Cuda compilation tools, release " + _MAJOR_MINOR),
    ("nvcc", r"CUDA runtime version" + _COLON + _MAJOR_MINOR),
    # CMake's FindCUDA through find_package_handle_standard_args (Kitware/CMake tag v3.12.0
    # Modules/FindPackageHandleStandardArgs.cmake:321-369: "Found CUDA: <path> (found version \"10.0\")", "found suitable
    # [exact] version" where a version was asked): the toolkit the build uses
    ("nvcc", r"Found CUDA: \S{1,300} \(found (?:suitable )?(?:exact )?version \"" + _MAJOR_MINOR + r"\""),
    ("torch_cuda", r"CUDA used to build PyTorch" + _COLON + _MAJOR_MINOR),
    ("nccl", r"NCCL version (?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})"),
    # the CUDA the loaded NCCL was built with, its version line's suffix (NVIDIA/nccl tag v2.19.3-1 src/init.cc:477,
    # VERSION_STRING "NCCL version <x.y.z>+cuda<major>.<minor>")
    ("nccl_cuda", r"NCCL version \d{1,3}\.\d{1,3}\.\d{1,3}\+cuda" + _MAJOR_MINOR),
    # the second line of torch's cpp_extension message (CUDA_MISMATCH_MESSAGE before torch 2.13 spans two lines)
    ("torch_cuda", r"PyTorch \(" + _MAJOR_MINOR + r"\)\. Please make sure to use the same CUDA versions"),
    # the second line of apex's setup.py warning before it became an error (torch.version.cuda in full: 10.0.130)
    ("torch_cuda", r"Pytorch binaries were compiled with Cuda " + _MAJOR_MINOR),
    ("driver", r"NVIDIA UNIX \w{1,10} Kernel Module\s{1,4}" + _DRIVER),
    # nvidia-smi's line after "Failed to initialize NVML: Driver/library version mismatch": the user-space NVML's release
    # (nvmlSystemGetNVMLVersion works without the kernel module), not the kernel module's
    ("nvml", r"NVML library version" + _COLON + _DRIVER),
    # tensorflow's and XLA's CUDA diagnostics (tensorflow/tensorflow@v2.4.0 tensorflow/stream_executor/cuda/
    # cuda_diagnostics.cc LogDiagnosticInformation and WarnOnDsoKernelMismatch): the release of the libcuda.so.1 the process
    # loaded ("libcuda reported version is: ", the DSO) and of the loaded kernel module ("kernel reported version is: ",
    # /proc/driver/nvidia/version), each also in "kernel version <module> does not match DSO version <libcuda>"; the
    # kernel's own log of the same mismatch: "NVRM: this kernel module has the version <module>" (kernel-open/nvidia/nv.c)
    ("libcuda", r"libcuda reported version is" + _COLON + _DRIVER),
    ("libcuda", r"does not match DSO version " + _DRIVER),
    ("kernel_module", r"kernel reported version is" + _COLON + _DRIVER),
    ("kernel_module", r"kernel version " + _DRIVER + r" does not match DSO"),
    ("kernel_module", r"this kernel module has the version " + _DRIVER),
    ("driver_cuda", r"CUDA Driver Version / Runtime Version\s{1,40}" + _MAJOR_MINOR),
    ("platform", r"(?P<v>aarch64|arm64|sbsa)"),
)]
# cheap tests a line passes before the patterns above are tried on it (most log lines pass none)
_DIGIT = re.compile(r"\d")
_PIP_SHOW = re.compile(r"\d{1,4}(?:\.[\w+!-]{1,40}){0,6}")  # the version `pip show` prints
_NAMES = re.compile(r"torch|sgl|vllm|flash|transformers|xformers|triton|nccl|deep|tvm|num|huggingface")  # on the lowered line
_CUDA_WORDS = re.compile(r"[Vv]ersion|used to build|Cuda compilation|compiled with Cuda|Kernel Module|aarch64|arm64|sbsa")
# what ldd prints for each library it resolves ("libnvJitLink.so.12 => /usr/local/cuda-12.1/lib64/libnvJitLink.so.12"), and
# the value of LD_LIBRARY_PATH where a log echoes it: where the loader took a clashing library from
_LDD_MISSING = re.compile(r"(?P<so>lib[\w+-]{1,60}\.so(?:\.\d{1,4}){0,3}) => not found")
# the source file and line NCCL's WARN and its INFO trace of each failed check name (NVIDIA/nccl tag v2.25.1-1
# src/include/debug.h: the "%s:%d" of __FILE__ and __LINE__ before "NCCL WARN"; src/include/checks.h NCCLCHECK:
# INFO(NCCL_ALL,"%s:%d -> %d", __FILE__, __LINE__, res)), each kept in order in the notes' "nccl_at"
_NCCL_AT = re.compile(r"(?<![\w/.-])(?P<at>[a-z_]{1,40}\.cc:\d{1,5})(?= NCCL WARN | -> \d)")
_LDD = re.compile(r"(?P<so>lib[\w+-]{1,60}\.so(?:\.\d{1,4}){0,3}) => (?P<path>/[^\s()]{1,300})")
_LD_PATH = re.compile(r"LD_LIBRARY_PATH\W{1,6}(?P<v>/[^\s'\"]{1,800})")
# what a log shows of how it installed or built: the package index pip read (its -i / --index-url argument, or "Looking in
# indexes:"), the package being built (pip's "Building wheel for X", conda-build's build_artifacts/<name>_<epoch>/ work
# directory), and the engine whose processes print it (vLLM's "(VllmWorker ...)" / "(EngineCore ...)" prefixes, a path)
_NOTES = [(what, re.compile(pattern)) for what, pattern in (
    ("index", r"(?:Looking in indexes:|--index-url[= ]|--extra-index-url[= ]|(?<!\S)-i ?)\s{0,4}(?P<v>https?://[^\s,'\"]{1,300})"),
    # the package whose build failed, in every form pip and uv print it: pip's logger.error "Failed building wheel for %s"
    # / "Failed building editable for %s" (pip-25.3 wheel pip/_internal/operations/build/wheel.py:35, wheel_legacy.py,
    # wheel_editable.py:44), its summary "Failed to build %s" (wheel_builder.py) and "Failed to build installable wheels
    # for some pyproject.toml based projects (%s)" (exceptions.py:891), pip 23's "Could not build wheels for %s, which is
    # required ..." (commands/install.py:430), "Running setup.py clean for %s" (printed after a failed build,
    # wheel_builder.py:283), the failed step of subprocess-exited-with-error ("Building wheel for %s (pyproject.toml) did
    # not run successfully", "Running setup.py install for %s ... error"); uv's "Failed to build `%s==%s`" and "Failed to
    # download and build `%s==%s`" (the uv-0.9.16 binary's strings); pip 25's "Failed to build '%s' when getting
    # requirements to build wheel" (pip-25.3 wheel pip/_internal/exceptions.py:204) and "Building wheel for %s failed: %s"
    # (wheel_builder.py:197)
    ("build_failed", r"(?:Failed building (?:wheel|editable) for|Failed to build (?!installable |one or more )|"
                     r"Building wheel for (?=[A-Za-z][\w.-]{0,80} failed: )|"
                     r"Failed to build installable wheels for some pyproject\.toml based projects \(|"
                     r"Could not build wheels for|Running setup\.py clean for|Failed to (?:download and )?build `|"
                     r"Building (?=(?:wheel|editable) for [A-Za-z][\w.-]{0,80} \([\w.]{1,40}\) (?:did not run|\.{3} error))(?:wheel|editable) for|"
                     r"Running setup\.py (?=install for [A-Za-z][\w.-]{0,80} \.{3} error)install for) "
                     r"?[`']?(?P<v>[A-Za-z][\w.-]{0,80}(?:==[\w.+!-]{1,60})?)"),
    ("building", r"(?:Building wheel for |Building editable for |Running setup\.py (?:install|develop) for |"
                 r"Failed to build (?!installable |one or more )[`']?|^\s{0,8}Building (?=[A-Za-z][\w.-]{0,80}==))"
                 r"(?P<v>[A-Za-z][\w.-]{0,80})"),
    # pip's build directory of a requirement from an index: <tmp>/pip-install-<random>/<canonical name>_<uuid hex>/
    # (pip-23.2.1 wheel pip/_internal/req/req_install.py ensure_build_location), in the paths a compile prints
    ("building", r"pip-install-\w{4,16}[/\\](?P<v>[A-Za-z][\w.-]{0,80}?)_[0-9a-f]{32}[/\\]"),
    # ... and pip's before 20.2 (and without parallel builds since): <tmp>/pip-install-<random>/<canonical name>/
    # (pypa/pip@127acd8c9eed66f1c0e2d251639b6d378f66b488, tag 20.2, src/pip/_internal/req/req_install.py:366-368:
    # dir_name = canonicalize_name(self.name), the uuid added only "if parallel_builds")
    ("building", r"pip-install-\w{4,16}[/\\](?P<v>[A-Za-z][\w.-]{0,80})(?<!_[0-9a-f]{32})[/\\]"),
    ("building", r"build_artifacts/(?P<v>[A-Za-z][\w.-]{0,80}?)_\d{10,13}/"),
    # a build's own link of the driver's library: a compiler or linker command line with -lcuda and its -o output, in
    # either order (a shell line, or the Python list torch's cpp_extension and setuptools print), and ninja's failed
    # step (ninja src/build.cc: "FAILED: <outputs>"); triton's name anywhere (its launcher's link is triton's own
    # -lcuda, triton/runtime/build.py)
    ("lcuda_link", r"(?<![\w-])-o['\",\s]{1,6}(?P<v>[^\s'\",]{1,300})[^\n]{0,3000}?(?<![\w-])-lcuda(?![\w.+-])"),
    ("lcuda_link", r"(?<![\w-])-lcuda(?![\w.+-])[^\n]{0,3000}?(?<![\w-])-o['\",\s]{1,6}(?P<v>[^\s'\",]{1,300})"),
    ("ninja_failed", r"^\s{0,8}FAILED: (?P<v>\S{1,400})"),
    ("triton", r"(?i)(?<![\w-])(?P<v>triton)(?![\w-])"),
    # torch's inductor, whose generated kernels triton compiles (torch._dynamo's "BackendCompilerFailed: backend='inductor'
    # raised:", a torch/_inductor frame, the older torchinductor package): what it runs is triton's
    ("inductor", r"(?P<v>backend='inductor'|torch[/\\.]_inductor[/\\.]|(?<![\w-])torchinductor(?![\w-]))"),
    ("engine", r"(?i)(?<![a-z])(?P<v>vllm|sglang)(?:worker)?(?![a-z])"),
    # an install command that asks for a release below a bound ("pip3 install 'flash-attn<2'"): "flash-attn<2", read by
    # companion-too-old where the code then misses a name that release added
    ("asked_below", r"(?:pip3?|uv pip|python3? -m pip) install\b[^\n]{0,300}?(?<![\w.-])[\"']?(?P<v>[A-Za-z][\w.-]{0,80}"
                    r"\s?<\s?\d[\d.]{0,20})(?![\d.=])"),
    # pip's PEP 517 steps, run in an isolated build environment (pip's build isolation), and the package it collected
    ("build_step", r"(?P<v>Getting requirements to build (?:wheel|editable)|Preparing (?:editable )?metadata "
                   r"\((?:setup\.py|pyproject\.toml)\)|Installing build dependencies|python setup\.py egg_info)"),
    ("collecting", r"^\s{0,8}Collecting (?P<v>[A-Za-z][\w.-]{0,80})"),
    # a source build the log shows running (fix-n): Spack's build phase of a package ("==> py-torchvision: Executing phase:
    # 'build'", spack/spack lib/spack/spack/builder.py), a setup.py build or install command (Spack's ProcessError quotes
    # it: "'setup.py' '--no-user-cfg' 'build'"; pip's legacy "setup.py install"), and torch's cpp_extension choosing the
    # architectures from the visible GPUs (its _get_cuda_arch_flags frame in a traceback)
    ("spack_phase", r"==> (?P<v>[A-Za-z0-9][\w.-]{0,80}): Executing phase: '(?:build|build_ext|install|bdist_wheel|"
                    r"pip_install|configure|cmake)'"),
    ("setup_cmd", r"setup\.py['\"]?(?: ['\"]?--no-user-cfg['\"]?)? ['\"]?(?P<v>build_ext|build|install|bdist_wheel|develop)"
                  r"(?![\w-])"),
    ("arch_query", r"File \"[^\"\n]{0,400}cpp_extension\.py\", line \d{1,6}, in (?P<v>_get_cuda_arch_flags)"),
    # the isolated build environment itself, in a build's traceback paths: uv's, a temporary directory in its cache's
    # builds bucket (<cache>/builds-v0/.tmpXXXXXX/, the uv-0.13.10 binary's cache buckets: "builds-v0"), pip's,
    # TempDirectory(kind="build-env") with its "normal" and "overlay" prefixes (pip-23.2.1 wheel
    # pip/_internal/build_env.py:84-89, pip/_internal/utils/temp_dir.py:164 mkdtemp(prefix=f"pip-{kind}-"))
    ("build_env", r"(?P<v>[/\\]builds-v\d{1,2}[/\\]\.tmp\w{4,16}[/\\]|[/\\]pip-build-env-\w{4,16}[/\\](?:overlay|normal)[/\\])"),
    # a traceback frame in a package's setup.py (what pip runs to get its metadata or build it: the legacy "python
    # setup.py egg_info", setuptools' build_meta exec of it under a PEP 517 hook)
    ("setup_frame", r"^\s{0,16}File \"(?P<v>[^\"\n]{0,400}setup\.py)\", line \d{1,6}, in <module>"),
    # the first source distribution pip fetches, "<name>-<version>" of its file (pip-23.2.1 wheel
    # pip/_internal/network/download.py _log_download: "Using cached %s" / "Downloading %s" of the link's file name)
    ("sdist", r"^\s{0,8}(?:Using cached|Downloading) (?:\S{0,400}/)?(?P<v>[A-Za-z0-9][\w.]{0,80}-\d[\w.!]{0,40}?)"
              r"\.(?:tar\.gz|zip|tar\.bz2)(?:\s|$)"),
    # what pip builds where it is no index name: a VCS or URL requirement, an editable path ("Obtaining file:///app/src/x");
    # and the first module Python found missing (what a failed build step's traceback ends in)
    ("collecting_url", r"Collecting (?P<v>(?:git\+|https?://|file:)\S{1,300})"),
    ("obtaining", r"Obtaining (?P<v>(?:file:|git\+|https?://)\S{1,300})"),
    ("processing", r"Processing (?P<v>(?:file:|/|\.{1,2}/|[A-Za-z]:\\)\S{1,300})"),
    ("no_module", r"No module named '(?P<v>[A-Za-z_][\w.]{0,100})'"),
    # the same message wrapped after its "No" (uv renders a build's output with miette, at the terminal's width)
    ("no_module_wrapped", r"^\s{0,16}module named '(?P<v>[A-Za-z_][\w.]{0,100})'"),
    # the package uv's build hint names (crates/uv-build-frontend/src/error.rs hint_build_dependency), a name or a URL
    ("uv_hint_pkg", r"This error likely indicates that `?(?P<v>[^`\s]{1,300}?)`? depends on "),
    ("uv_hint_pkg", r"`uv pip install [\w.-]{1,100}` into the build environment for `?(?P<v>[^`\s]{1,300})"),
    # ... and the module it names (uv 0.4 and later: "depends on `torch`"; uv 0.2-0.3: "`uv pip install torch` into")
    ("uv_hint_module", r"This error likely indicates that [^\n]{1,300}? depends on `?(?P<v>[\w.-]{1,100})`?, but"),
    ("uv_hint_module", r"you need to `uv pip install (?P<v>[\w.-]{1,100})` into the build environment"),
    # the MPI library a loader error names (mpi4py 4 prints "cannot load MPI library", then each dlopen error)
    # the framework release a package's custom ops were compiled against, and the one installed, where the package's
    # own ABI warning says them: tensorflow/addons tensorflow_addons/utils/resource_loader.py@002008190d54763aeed4f85b72f215688daeb1e8
    # (LazySO.display_warning_if_incompatible: "You are currently using TensorFlow {} and trying to load a custom op ({})."
    # then "TensorFlow Addons has compiled its custom ops against TensorFlow {}, and there are no compatibility
    # guarantees"), and the same words in TensorFlow Recommenders-Addons' and KerasCV's resource loaders ("TFRA has
    # compiled ...", "KerasCV has compiled ...")
    ("fw_built", r"has compiled its custom ops against (?P<v>[A-Z][A-Za-z]{1,30} \d{1,3}\.\d{1,3}(?:\.\d{1,3})?)"),
    ("fw_using", r"You are currently using (?P<v>[A-Z][A-Za-z]{1,30} \d{1,3}\.\d{1,3}(?:\.\d{1,3})?[\w.+-]{0,20}) and "),
    ("mpi_lib", r"(?P<v>libmpi(?:_cxx|_mpifh|_usempif08)?\.so(?:\.\d{1,4}){0,3}): cannot open shared object file"),
    # the devices a process is told it may use, where the log sets or echoes it ("CUDA_VISIBLE_DEVICES=" hides every GPU)
    ("cuda_visible", r"CUDA_VISIBLE_DEVICES\s{0,4}=\s{0,4}['\"]?(?P<v>[\w,-]{0,100})"),
    # the GPU a log names as torch.cuda.get_device_name() and nvidia-smi print it ("NVIDIA GeForce RTX 5090", "NVIDIA
    # H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"; drivers before the "NVIDIA " prefix: "GeForce GTX 1080 Ti", "Tesla K80"):
    # the product, matched against the matrix's [[target]] and [[gpu_product]] products
    ("gpu_name", r"(?:NVIDIA (?:GeForce |Tesla |Quadro )?|(?<![\w-])(?:GeForce|Tesla|Quadro) )"
                 r"(?P<v>(?:RTX (?:PRO )?|GTX |TITAN )?[A-Z]{0,3}\d{1,4}[A-Za-z]{0,3}(?: Ti| SUPER| Ada| Blackwell)?)(?![\w.])"),
    # the GPU's compute capability where the log states it of the device (not a requirement's floor, not a build's list):
    # torch's own warnings ("Found GPU0 Tesla K80 which is of cuda capability 3.7", "... which is of compute capability
    # (CC) 10.0": torch-2.13.0 wheel torch/cuda/__init__.py _check_capability), a program's report of the device ("<GPU>
    # is compute capability sm_61", "Your Tesla T4 GPU has compute capability 7.5", jax's "Device 0 has CUDA compute
    # capability 3.7"), TensorFlow's device line ("..., compute capability: 3.5)", TF 2's "computeCapability: 6.1":
    # tensorflow/core/common_runtime/gpu/gpu_device.cc) and the CUDA samples' deviceQuery ("CUDA Capability Major/Minor
    # version number:    6.1"): "sm_61" or "6.1"
    ("gpu_cc", r"(?<![\w-])(?:is|of|has) (?:(?:CUDA|Cuda|cuda) (?:[Cc]ompute )?|[Cc]ompute )[Cc]apability (?:\(CC\) )?"
               r"(?P<v>sm_\d{2,3}|\d{1,2}\.\d)(?!\w|\.\d)"),
    ("gpu_cc", r"(?:, compute capability: |computeCapability: |CUDA Capability Major/Minor version number:\s{1,12})"
               r"(?P<v>\d{1,2}\.\d)(?!\w|\.\d)"),
    # bitsandbytes 0.35-0.42's CUDA setup report of the device (fix-n; bitsandbytes-foundation/bitsandbytes tag 0.36.0
    # bitsandbytes/cuda_setup/main.py:386, "CUDA SETUP: Highest compute capability among GPUs detected: {cc}")
    ("gpu_cc", r"CUDA SETUP: Highest compute capability among GPUs detected: (?P<v>\d{1,2}\.\d)(?!\w|\.\d)"),
    # torch's arch list as torch.cuda.get_arch_list() returns it and print() shows it (torch-2.9.1 wheel
    # torch/cuda/__init__.py get_arch_list: the build's TORCH_CUDA_ARCH_LIST, "sm_XX" for SASS and "compute_XX" for PTX,
    # e.g. ['sm_80', 'sm_90', 'sm_100', 'sm_120']): the architectures the installed torch carries code for
    ("torch_arch_list", r"\[(?P<v>'sm_\d{2,3}[af]?'(?:,\s{0,2}'(?:sm|compute)_\d{2,3}[af]?'){0,40})\]"),
    # the CUDA error NCCL's CUDACHECK names (NCCL_DEBUG=WARN), and a CUDA failure that is no mismatch of the stack
    ("nccl_cuda", r"Cuda failure (?:\d{1,4} )?'(?P<v>[^']{1,120})'"),
    # the first GPU target a build command in the log names (nvcc's -gencode arch=compute_XX,code=sm_XX, as NCCL's
    # NVCC_GENCODE and CMake print it, and -arch / --gpu-architecture=sm_XX): what the build was compiled for, "sm_120"
    # or "sm_120a" (the arch-specific target, CUDA 12.0+ nvcc), read by the rows whose cause is the build's target
    ("nvcc_arch", r"(?<![\w-])(?:-gencode[= ]{1,2}['\"]?arch=compute_\d{2,3}[af]?,\s?code=['\"]?\[?|"
                  r"--gpu-architecture[= ]{1,2}|-arch[= ]{1,2})(?P<v>(?:sm|compute)_\d{2,3}[af]?)(?![\w])"),
    # the log shows macOS (uname's Darwin, a macOS wheel's platform tag, the OS's name): torch has no CUDA build there, so
    # its torch.version.cuda is None whatever the wheel
    ("mac_os", r"(?<![\w-])(?P<v>macOS|Darwin|Mac OS X|macosx_\d{1,2}_\d{1,2})(?![\w-])"),
    # torch's own word that it is a CPU build (torch/cuda/__init__.py _lazy_init), wherever in the log it stands
    ("cpu_build", r"(?P<v>Torch not compiled with CUDA enabled)"),
    # a torch wheel of the package index's default build for Windows or macOS (no local label): CPU-only builds there
    # (PyTorch's CUDA wheels carry +cuXYZ and come from its own index; discuss.pytorch.org/t/198253: on Windows the
    # default is CPU; macOS has no CUDA build at all); a wheel file's name per the binary distribution format
    ("torch_os_wheel", r"(?<![\w-])(?P<v>torch-\d{1,2}\.\d{1,3}(?:\.\d{1,3})?-cp\d{2,3}-(?:cp\d{2,3}t?|none|abi3)-"
                       r"(?:win_amd64|win_arm64|macosx_\d{1,2}_\d{1,2}_(?:arm64|x86_64|universal2)))\.whl"),
    # a torch build for another device than CUDA, as a log names it: torch-directml (its package, and the webui forks
    # built on it: stable-diffusion-webui-directml, lshqqytiger's "-amd" releases) and ROCm's wheels (torch
    # <version>+rocm<X.Y>, the local label of PyTorch's rocm index)
    ("torch_other_build", r"(?i)(?P<v>torch[-_]directml|webui-directml|(?<![\w.])\d{1,2}\.\d{1,3}(?:\.\d{1,3})?\+rocm\d{1,2}(?:\.\d{1,2}){0,2})"),
    # the pip (or uv pip) install command the log shows, and the packages pip then installed (pip's "Installing collected
    # packages: a, b", src/pip/_internal/commands/install.py): what was asked for, and what came with it
    ("pip_command", r"(?<![\w-])pip3?(?:\.exe)? install (?P<v>[^\n]{1,500})"),
    ("collected", r"Installing collected packages: (?P<v>[^\n]{1,2000})"),
    # uv's derivation of a failed resolution (crates/uv-resolver/src/pubgrub/report.rs): its first conclusion
    ("uv_because", r"(?P<v>Because [^\n]{1,600}?we can conclude that [^\n]{1,300})"),
    # uv's hint after "Distribution `<dist>` can't be installed because it doesn't have a source distribution or wheel for
    # the current platform": "You're on <OS> (`<tag>`), but `<pkg>` (v<version>) only has wheels for the following
    # platform(s): `<tag>`, ..." (the host's platform tag, and the ones the locked release has wheels for)
    ("uv_platforms", r"You're on (?P<v>\w{1,20} \(`[\w.-]{1,80}`\), but `[\w.-]{1,100}` \([^()\n]{1,60}\) only has "
                     r"wheels for the following platforms?: [^;\n]{1,1000})"),
    # conda's UnsatisfiableError of the python class (conda/exceptions.py): the chain of the package that has no build
    # for the environment's python ("  - torchaudio==2.4.0 -> python[version='...']"), then "Your python: python==3.10.9"
    ("conda_py_spec", r"^\s{0,8}- (?P<v>[\w.=<>!*-]{1,80}) -> python\["),
    # the first chain of any class of the error ("  - pytorch-cuda=12.4 -> cuda-cudart"), conda 4.4's "in conflict" list
    ("conda_spec", r"^\s{0,8}- (?P<v>[\w.=<>!*-]{1,80}) -> \S"),
    ("conda_python", r"Your python: python=?=?(?P<v>\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)"),
    # fix-w: nixpkgs' pythonRuntimeDepsCheckHook names each wheel it checks before the check's lines
    # (pkgs/development/interpreters/python/hooks/python-runtime-deps-check-hook.sh: "Checking runtime dependencies for
    # $(basename $wheel)"); and the first problem libsolv reports of a package itself (src/problems.c
    # solver_problemruleinfo2str: "package <build> is excluded by strict repo priority", "... is not installable", ...)
    ("nix_wheel", r"Checking runtime dependencies for (?P<v>[^\s/]{1,300}\.whl)"),
    ("conda_excluded", r"^\s{0,8}- (?:package )?(?P<v>[A-Za-z0-9_][^\s,]{0,200} (?:is excluded by strict repo priority|is not "
                       r"installable|does not have a compatible architecture|is disabled|can only be installed by a direct request))"),
    # (and whether a problem of another rule is listed beside it: "nothing provides ...", "package X requires ..., but none
    # of the providers can be installed", "cannot install both ...", "package X conflicts with / has constraint ...")
    ("conda_other_problem", r"^\s{0,8}- (?P<v>nothing provides |cannot install both |package \S{1,200} (?:requires|conflicts "
                            r"with|has constraint|obsoletes|does not exist) )"),
    # pip's Requires-Python report of several packages (src/pip/_internal/resolution/resolvelib/factory.py
    # _report_requires_python_error: "Packages require a different Python. <version> not in:", then one
    # "'<specifier>' (required by <package>)" line each): the interpreter's version, read where a line names a package
    ("pip_python", r"Packages require a different Python\. (?P<v>\d[\w.+]{0,20}) not in:"),
    # a variant the Hugging Face kernels hub rejected, and why (kernels' variants.py VariantRejected reason): the torch
    # the variant is built for, then the environment's ("torch212-cxx11-cu126-x86_64-linux: Torch version (2.12) does
    # not match environment Torch version (2.13)")
    ("kernel_variant", r"(?P<v>torch\d{2,4}-[\w-]{1,80}): Torch version \((?:torch)?\d{1,2}\.\d{1,3}\) does not match environment"),
    ("kernel_torch", r"does not match environment Torch version \((?:torch)?(?P<v>\d{1,2}\.\d{1,3})\)"),
    ("kernel_variant_torch", r"Torch version \((?:torch)?(?P<v>\d{1,2}\.\d{1,3})\) does not match environment"),
    # torchvision's CUDA check (torchvision-0.24.1 wheel torchvision/extension.py:57-84: "PyTorch has CUDA Version=<t> and
    # torchvision has CUDA Version=<tv>. Please reinstall ...") where a terminal or a thread wrapped the message at one of
    # its spaces: each release read on the line it stands on (torch's is followed by " and", torchvision's by ".")
    ("wrapped_torch_cuda", r"(?:has\s{0,2}CUDA\s{0,2}|CUDA\s{1,2}|^\s{0,8})Version=(?P<v>\d{1,3}\.\d{1,3}) and(?:\s|$)"),
    ("wrapped_built_cuda", r"(?:has\s{0,2}CUDA\s{0,2}|CUDA\s{1,2}|^\s{0,8})Version=(?P<v>\d{1,3}\.\d{1,3})\.(?:\s|$)"),
    # the network failing under a build or an install (a build that downloads its prebuilt wheel, a pip fetch): a
    # network fault, not a packaging one (urllib's "<urlopen error ...>", the socket's errno texts, urllib3's retries)
    ("net_fault", r"(?P<v>urlopen error|Connection reset by peer|Connection refused|Temporary failure in name resolution|"
                  r"Name or service not known|Network is unreachable|Max retries exceeded with url|Read timed out)"),
    # the Python a log's paths show (.../lib/python3.7/site-packages/..., ...\\Python37\\lib\\site-packages\\...) and a
    # wheel's platform tag (PEP 427 file names: <name>-<version>-<python>-<abi>-<platform>.whl): what pip's "from
    # versions" was filtered by
    ("py_path", r"(?i)[\\/]lib[\\/]python(?P<v>\d\.\d{1,2})[\\/](?:site|dist)-packages|[\\/]Python(?P<w>3)(?P<x>\d{1,2})[\\/]lib[\\/]"),
    # the Python a log shows otherwise: torch's collect_env ("Python version: 3.10.1 (main, ...)", "Python platform:
    # Linux-5.15.12-...-x86_64-with-glibc2.34"; torch/utils/collect_env.py get_env_info / pretty_str), `pip --version`
    # ("pip 21.3.1 from <site-packages>/pip (python 3.10)"; pip/_internal/utils/misc.py get_pip_version), `python
    # --version` ("Python 3.12.0"), and a CPython wheel the installer takes (its cpXY tag names this interpreter)
    ("py_shown", r"(?i)^\s{0,4}Python version:\s{0,4}(?P<v>3\.\d{1,2})\.\d|^pip \d[\w.]{0,20} from \S.{0,300} \(python (?P<w>3)\.(?P<x>\d{1,2})\)\s*$"),
    ("py_run", r"(?i)^\s{0,4}Python (?P<v>3\.\d{1,2})\.\d{1,2}(?:[abrc]{1,2}\d{1,2})?\s*$"),
    ("py_cp", r"(?i)(?:Downloading|Using cached|Processing|File was already downloaded) \S{0,300}?-cp(?P<w>3)(?P<x>\d{1,2})-cp3\d{1,2}t?-"),
    ("py_platform", r"(?i)^\s{0,4}Python platform:\s{0,4}(?P<v>\S{1,200})"),
    ("wheel_platform", r"-(?:cp|py)\d{1,3}\w{0,4}-[\w.]{1,40}-(?P<v>(?:many|musl)linux[\w.]{1,60}?|macosx_[\w.]{1,40}?|win_?\w{1,10}|linux_\w{1,10})\.whl"),
    # torch's own CUDA check's tail (c10/cuda/CUDAException.cpp c10_cuda_check_implementation, CUDADeviceAssertionHost.cpp):
    # the error was raised through torch's C10_CUDA_CHECK, as torch's own kernels' launches are
    ("torch_tail", r"(?P<v>(?:CUDA|HIP) kernel errors might be asynchronously reported at some other API call|"
                   r"Compile with `?TORCH_USE_(?:CUDA|HIP)_DSA`? to enable device-side assertions|"
                   r"Device-side assertions were explicitly omitted for this error check)"),
    # torch's cpp_extension when it found a CUDA_HOME (the env var, nvcc on PATH, or /usr/local/cuda as it exists) but no
    # CUDA runtime (no GPU or driver visible: a docker build, a CPU node): torch-2.9.1 wheel
    # torch/utils/cpp_extension.py _find_cuda_home ("No CUDA runtime is found, using CUDA_HOME='%s'"); and a compile step
    # of nvcc the log shows (a build's nvcc command line): the toolkit's compiler ran
    ("no_cuda_runtime", r"(?i)No CUDA runtime is found, using CUDA_HOME=.(?P<v>[^'\"\n]{1,300})."),
    ("nvcc_ran", r"(?P<v>nvcc(?:\.exe)?\"?\s{1,4}(?:-c |-ccbin|-gencode|--generate-code|-Xcompiler|-I\S|-D\w|-O\d|"
                 r"--use_fast_math|-std=|\S{1,300}\.cu(?:\s|$)))"),
    ("gpu_fault", r"(?P<v>out of memory|an illegal memory access was encountered|unspecified launch failure|"
                  r"misaligned address|device-side assert triggered|uncorrectable ECC error)"),
    # where macOS's dyld (up to dyld 3) expected a missing symbol: the library its binder recorded for it, or "flat
    # namespace" where the referencing image recorded none (two-level namespace off, or -undefined dynamic_lookup left it
    # to a flat lookup): opensource-apple/dyld@3f928f32597888c5eac6003b9199d972d49857b5 (dyld 360.18)
    # src/ImageLoaderMachO.cpp:1552 ("Symbol not found: %s\n  Referenced from: %s%s\n  Expected in: %s\n"),
    # src/ImageLoaderMachOCompressed.cpp:752 (resolveFlat: "flat namespace") and :809 (BIND_SPECIAL_DYLIB_FLAT_LOOKUP)
    ("dyld_expected", r"^\s{0,8}Expected in:\s{1,8}(?:<[\w-]{1,60}> )?(?P<v>flat namespace|\S{1,300})"),
    # the scene of CUDA's init failing under HMM (NVIDIA/open-gpu-kernel-modules#901): a Proxmox LXC container, the
    # nvidia_uvm module's HMM (its uvm_disable_hmm parameter), as a log or its reporter names them
    ("container_hmm", r"(?i)(?P<v>uvm_disable_hmm|(?<![\w-])HMM(?![\w-])|proxmox|(?<![\w-])lxc(?![\w-])|pve-kernel)"),
    # the machine's glibc as `ldd --version` ("ldd (GNU libc) 2.17"), libc.so.6 itself ("GNU C Library (GNU libc) stable
    # release version 2.35.") or a report ("glibc 2.17", "GLIBC version: 2.28") prints it, and its distribution as
    # /etc/os-release, /etc/redhat-release or lsb_release name it: what a manylinux wheel's glibc floor is compared with
    ("host_glibc", r"(?i)(?:ldd \(GNU libc\)|GNU C Library \([^)\n]{1,60}\) (?:stable )?release version|(?<![\w_])glibc"
                   r"(?: version)?:?) ?(?P<v>2\.\d{1,3})(?![\d.]*\d)"),
    ("host_os", r"(?P<v>(?:CentOS(?: Linux)?(?: release)?|Red Hat Enterprise Linux(?: Server)?(?: release)?|RHEL|"
                r"Rocky Linux(?: release)?|AlmaLinux(?: release)?|Ubuntu|Debian GNU/Linux|Debian|Amazon Linux(?: release)?) "
                r"?(?:\d{1,2}\.\d{2}|\d{1,4})(?![\d]))"),
    # a package's warning that its compiled C++/CUDA ops did not import and it falls back to the CPU (GroundingDINO's
    # groundingdino/models/GroundingDINO/ms_deform_attn.py: `try: from groundingdino import _C` / `except:
    # warnings.warn("Failed to load custom C++ ops. Running on CPU mode Only!")`): the scene of a later NameError on _C
    ("cpu_ops", r"Failed to load custom C\+\+ ops\. (?P<v>Running on CPU mode)"),
    # the libtorch DJL's PyTorch engine loads (deepjavalibrary/djl tag v0.20.0 engines/pytorch/pytorch-engine/src/main/
    # java/ai/djl/pytorch/jni/LibUtils.java:357, loadNativeLibrary: logger.debug("Loading native library: {}", path), first
    # for each library of the libtorch directory, then for its JNI library libdjl_torch): the libtorch's own file
    ("djl_libtorch", r"Loading native library: (?P<v>\S{1,300}/libtorch(?:_cpu)?\.(?:so|dylib))\s{0,4}$"),
    # a C++ compiler's error at a file-scope line it cannot read as a declaration (g++: "expected constructor, destructor,
    # or type conversion before '(' token"; an undefined function-like macro such as torch's TORCH_LIBRARY_FRAGMENT):
    # the source file, read by companion-too-old where the line it echoes opens with one of torch's registration macros
    ("decl_error", r"(?P<v>[^\s:'\"]{1,300}\.(?:cpp|cc|cxx|cu|h|hpp|cuh)):\d{1,7}(?::\d{1,5})?: error: expected constructor, "
                   r"destructor, or type conversion before ['\u2018`]\(['\u2019] token"),
    # a mangled C++ symbol quoted alone on a line (a reporter's copy of the loader's symbol, `_ZNK3c10...`): read by
    # undefined-symbol where the loader's own line is cut after the library's name
    ("quoted_symbol", r"^\s{0,8}[`'\"\u2018\u201c]?(?P<v>_Z[A-Za-z0-9_]{4,400})[`'\"\u2019\u201d]?\s{0,4}$"),
    # a program's own call of an Auto class's register (transformers' AutoModel.register(MyConfig, MyModel)): the classes
    # it passes are its own, so transformers' config_class check of them is no remote code's (remote-code-config-class-mismatch)
    ("auto_register", r"(?<![\w.])(?P<v>Auto(?:Model\w{0,60}|Config|Tokenizer|ImageProcessor|Processor)\.register)\("),
    # fix-p: TensorFlow's notice after its import's libcudart probe failed (tensorflow/tensorflow tag v2.8.0
    # tensorflow/stream_executor/cuda/cudart_stub.cc:29, LOG(INFO) "Ignore above cudart dlerror if you do not have a GPU
    # set up on your machine."; v2.11 tensorflow/compiler/xla/stream_executor/cuda/cudart_stub.cc the same): read by
    # glmcompat.decide.sharpcauses.tf_probe_notice
    # fix-p: the floor torch's old_gpu_warn names (torch-2.7.1 wheel torch/cuda/__init__.py:262, "The minimum cuda
    # capability supported by this library is %d.%d."), read by gpu-capability-too-old where the log's torch called a GPU
    # too old (a line any library could print: no signature reads it alone)
    ("torch_min_cc", r"minimum cuda capability supported by this library is (?P<v>\d{1,2}\.\d)"),
    ("tf_cudart_notice", r"cudart_stub\.cc:\d{1,5}\] (?P<v>Ignore above cudart dlerror) if you do not have a GPU set up"),
    # a Python exception's line (CPython Lib/traceback.py TracebackException.format_exception_only: "<qualified type>:
    # <message>" after the frames), the first the log shows: a traceback with none was cut before its error
    ("py_exception", r"^\s{0,8}(?P<v>(?:[A-Za-z_]\w{0,60}\.){0,6}[A-Z]\w{0,60}(?:Error|Exception)):(?: |$)"),
)]
_NOTED: list[tuple[str, re.Pattern[str], tuple[str, ...] | None]] = []


def _noted() -> list[tuple[str, re.Pattern[str], tuple[str, ...] | None]]:
    """:data:`_NOTES` with each pattern's :func:`required_literals` (made at the first line read for notes): a note whose
    texts a line holds none of is not searched for there (a line the note words let through was searched by all 70)."""
    if not _NOTED:
        _NOTED.extend((what, pat, required_literals(pat.pattern)) for what, pat in _NOTES)
    return _NOTED


# the head of a paragraph of uv's derivation: "Because", "And because", "So, because" before a requirement's name
# fix-o: the steps of uv's derivation (astral-sh/uv crates/uv-resolver/src/pubgrub/report.rs, and_explain_external /
# explain_both_external: "[And ]because <external>, we can conclude that <terms>."; format_terms: "<a> and <b> are
# incompatible", format_root: "your requirements are unsatisfiable" / "your project's ..." / "<name>'s ..."): the step
# whose terms are two or more requirements that cannot hold together, and the last one, on the user's own requirements
_UV_STEP_WHY = r"(?:And |So, )?[Bb]ecause (?P<why>(?:(?![Bb]ecause |\. ).){1,800}?),? we can conclude that "
_UV_CLASH_STEP = re.compile(_UV_STEP_WHY + r"(?P<what>(?:(?!\. |we can conclude).){1,600}? are incompatible)\.(?=\s|$)")
_UV_ROOT_STEP = re.compile(_UV_STEP_WHY + r"(?P<what>(?:your|the|[\w.-]{1,100}'s) (?:(?:project|workspace)'s )?"
                           r"requirements are unsatisfiable)\.(?=\s|$)")
# fix-q: torch's DLL loader's error with its code (torch/__init__.py _load_dll_libraries: ctypes.WinError(code), whose
# str() is "[WinError <code>] <FormatMessage text>", then ' Error loading "<dll>" or one of its dependencies.'): the DLL's
# file name and the code, kept in the notes per DLL ("dll_error cublas64_11.dll": "127")
_WIN_DLL_ERROR = re.compile(r"\[WinError (?P<code>\d{1,5})\][^\"\n]{0,200}?Error loading \\{0,2}\"(?:[^\"\n]{0,400}[\\/])?"
                            r"(?P<dll>[^\"\\/\n]{1,200}\.dll)\\{0,2}\"")
# fix-q: a step's conclusion that a package (or all versions of one) depends on a requirement (astral-sh/uv tag 0.12.5
# crates/uv-resolver/src/pubgrub/report.rs: "... we can conclude that {terms}." where the terms are "{a} depends on {b}"
# / "all versions of {a} depend on {b}", the requirement printed without spaces, its ranges joined by commas)
_UV_CONCLUDED = re.compile(r"we can conclude that (?P<who>(?:all versions of )?[A-Za-z0-9][\w.\[\]=<>!~,+*-]{0,200}) "
                           r"(?P<verb>depends?) on (?P<req>[A-Za-z0-9][\w.\[\]-]{0,100}[=<>!~][^\s]{0,200}?)(?=\.(?:\s|$))")
# (fix-p: also after uv's headline where a paste joined the two, "No solution found when resolving dependencies: Because ...")
_UV_BECAUSE = re.compile(r"(?:^|(?<=^And )|(?<=^So, )|(?<=when resolving dependencies: ))[Bb]ecause (?=(?:all versions of |only |there is no |you require |your "
                         r"(?:project|workspace) requires )?[A-Za-z0-9][\w.\[\]-]{0,100}[\s{=<>!~,]|[A-Za-z0-9][\w.-]{0,100}$)")
# the words a line holds (any case) where one of the notes below may stand in it: a trie of them (:func:`_literal_trie`),
# and two line heads; the plain alternation of the 82 words, case ignored, took a third of the notes' time
_NOTE_WORD_LIST = (
    "setup.py", "no module named", "different python", "obtaining", "processing", "nvidia ", "cuda_visible_devices",
    "libmpi", "your python", "environment torch", " -> ", "index", "build", "install", "conclude",
    "compiled with cuda", "vllm", "sglang", "metadata", "egg_info", "collecting", "cuda failure", "memory",
    "launch failure", "misaligned", "assert", "ecc", "you're on", "version=", "hmm", "proxmox", "lxc", "pve-",
    "directml", "rocm", "urlopen", "connection re", ".whl", "name resolution", "service not known", "unreachable",
    "max retries", "timed out", "glibc", "gnu libc", "likely indicates", "gnu c library", "centos", "red hat", "rhel",
    "rocky", "almalinux", "ubuntu", "debian", "amazon linux", "expected in:", "'sm_", "custom ops against",
    "currently using", "-lcuda", "failed: ", "triton", "-packages", "python3", "asynchronously", "torch_use_",
    "no cuda runtime", "nvcc", "custom c++ ops", "inductor", ".tar.gz", "geforce", "tesla ", "quadro ", "capabilit",
    "native library", "macos", "darwin", "mac os", "python version:", "python platform:", "(python 3", ".register(",
    "constructor, destructor", "_get_cuda_arch_flags", "executing phase", "cudart_stub", "strict repo priority",
    "compatible architecture", " is disabled", "nothing provides", "none of the providers", "conflicts with",
    "has constraint", "obsoletes", "does not exist",
)
_NOTE_WORDS = re.compile("(?i)" + "|".join([_literal_trie(_NOTE_WORD_LIST), r"^\s{0,16}module named",
                                             r"^\s{0,4}python 3", r"^\s{0,8}[`'\"\u2018\u201c]?_z"]))
# a call of a function of a companion's module as a traceback's code line shows it (xformers.ops.memory_efficient_attention(),
# read where a TypeError names only the function): "call <function>" -> the dotted name, in the log's notes
# the causes pip lists under "The conflict is caused by:" (src/pip/_internal/resolution/resolvelib/factory.py
# get_installation_error): "<parent> <version> depends on <requirement>", "The user requested <requirement>"; each kept,
# in order, in the notes' "pip_causes" ("; "-joined, at most MAX_CAUSES)
# The parent is the candidate's name, with its extras where the candidate is one of a requirement with extras
# (resolvelib/candidates.py ExtrasCandidate.name: format_name, "sglang[srt]", "a[x,y]"); the requirement keeps its
# environment marker (req.format_for_error: 'torch==2.7.1; extra == "srt"'), which the note drops: "; " joins the causes
_PIP_CAUSE = re.compile(r"^\s{0,8}(?P<c>The user requested (?:\(constraint\) )?\S{1,200}|[A-Za-z0-9][\w.-]{0,60}(?:\[[\w.,-]{1,120}\])? "
                        r"\d[\w.+!]{0,40} depends on [^\n;]{1,300})")
MAX_CAUSES = 12
# fix-r: pip's dependency-conflict report after an install (pypa/pip tag 26.2.1 src/pip/_internal/commands/install.py
# _warn_about_conflicts: one record, its head then a line each; tag 10.0.0: a logger.critical line each, "ERROR: " before
# it from pip 19, "has requirement ... but you'll have"; src/pip/_internal/commands/check.py: `pip check`'s "has
# requirement ..., but you have X V."): the head, and each line (package, version, requirement, the installed one, its
# version; "" for one not installed) in the notes' "pip_conflicts" (a line each, tab-separated fields, at most MAX_CAUSES)
_PIP_REPORT_HEAD = re.compile(r"pip's (?:legacy )?dependency resolver does not (?:currently take into account|consider dependency "
                              r"conflicts)|This (?:behaviour|behavior) is the source of the following dependency conflicts|"
                              r"After October 2020 you may experience errors when installing|This may cause an uncaught dependency conflict")
_PIP_CONFLICT_LINE = re.compile(r"(?P<err>ERROR: )?(?P<pkg>[A-Za-z0-9][\w.-]{0,60}) (?P<ver>\d[\w.+!]{0,40}) (?P<verb>requires|has requirement) "
                                r"(?P<req>[^\n]{1,200}?)(?:, but (?P<you>you|you'll) have (?P<dep>[A-Za-z0-9][\w.-]{0,60}) "
                                r"(?P<have>\d[\w.+!]{0,40})(?P<inc> which is incompatible)?|, which is not installed)")
# fix-r: poetry's solver, its Python cause and its -vvv trace (python-poetry/poetry tag 0.12.10 poetry/mixology/failure.py
# and incompatibility.py, tags 1.0.10-2.4.1 src/poetry/mixology/failure.py, src/poetry/puzzle/provider.py debug): the
# project's Python range its head names, each "<package> (<version>) requires Python <range>" (or "every version of
# <package>", or 1.x's "  - <package> requires Python <range>" list), each "fact: <parent> depends on <name> (<range>)",
# the names its "conflict:" / "! not <name> (...)" lines name, and IncompatibleConstraintsError's requirement lines
_NAME = r"[A-Za-z0-9][\w.-]{0,80}"
_POETRY_ROOT = re.compile(r"must support the following Python versions: (?P<r>[^\s][^\n]{0,99}?)(?=\s{2}|\s{0,4}$)|The current project's "
                          r"(?:supported Python range|Python requirement) \((?P<r2>[^)\n]{1,100})\)")
POETRY_NEEDS = re.compile(rf"(?:every version of (?P<every>{_NAME})|(?P<pkg>{_NAME}) \((?P<ver>[^()\n]{{1,60}})\)) (?:which )?requires Python "
                           r"(?P<req>[<>=!~^*\d][^\n]{0,100}?)(?=,? (?![<>=!~^\d|*])|[,.]?\s{0,4}$| \(\d)|"
                           rf"^\s{{0,8}}- (?P<dash>{_NAME}) requires Python (?P<dreq>[^\n]{{1,100}}?)(?:, so it will not be|\s{{0,4}}$)")
_POETRY_FACT = re.compile(rf"fact: (?P<p>[^\n]{{1,200}}?) depends on (?P<x>{_NAME}) \((?P<c>[^()\n]{{1,100}})\)")
_POETRY_CONFLICT = re.compile(rf"conflict: [^\n]{{0,200}}? depends on (?P<x>{_NAME}) \(|! not (?P<y>{_NAME}) \(")
_POETRY_INCOMPATIBLE = re.compile(rf"^\s{{0,8}}(?P<c>{_NAME}(?:\[[\w,.-]{{1,100}}\])?(?: \([^()\n]{{1,200}}\))?(?: ; [^\n]{{1,300}})?)\s{{0,4}}$")


def _add_note(notes: dict[str, str], key: str, entry: str, sep: str = "\n") -> None:
    """``entry`` added to the note ``key`` (``sep``-joined, each once, at most MAX_CAUSES)."""
    have = notes.get(key, "")
    if entry not in have.split(sep) and have.count(sep) < MAX_CAUSES - 1:
        notes[key] = f"{have}{sep}{entry}" if have else entry
# the packages conda's classic solver lists in its conflict report, one "Package <name> conflicts for:" line each, then
# the chains that ask for it (conda/exceptions.py UnsatisfiableError, the "direct" class): each kept, in order, in the
# notes' "conda_conflicts" (", "-joined, at most MAX_CAUSES)
_CONDA_CONFLICT = re.compile(r"^\s{0,8}(?:\*\*)?Package (?P<c>[A-Za-z0-9_][\w.-]{0,80}) conflicts for:")
# the chains of conda's conflict report (conda 4.7-4.14 conda/exceptions.py UnsatisfiableError, class "direct": under
# "Package <name> conflicts for:", " -> ".join(str(MatchSpec) of each link), a version range printed as
# "<name>[version='<spec>']", the user's own request as its spec alone, "cudatoolkit=10.0"): each chain kept, in order,
# in the notes' "conda_chains" ("; "-joined, at most MAX_CAUSES), and each bare spec a chain block holds in
# "conda_requests" (", "-joined); a GitHub paste may wrap the block in Markdown's "**"
_CONDA_CHAIN = re.compile(r"^\s{0,8}(?:- )?(?:\*\*)?(?P<c>[A-Za-z0-9_][\w.-]{0,80}(?:\[[^\]\n]{0,600}\])? -> [^\n]{0,1000}?"
                          r"(?<=> )(?!__)[A-Za-z0-9_][\w.-]{0,80}\[version='[^'\n]{1,200}'\])(?:\*\*)?\s{0,4}$")
_CONDA_REQUEST = re.compile(r"^\s{0,8}(?:- )?(?:\*\*)?(?P<c>[A-Za-z0-9_][\w.-]{0,80}(?:==?|>=|<=|[<>])\d[\w.*]{0,40})(?:\*\*)?\s{0,4}$")
# pip's resolver note under its conflict report (pip-25.3 onward, src/pip/_internal/resolution/resolvelib/factory.py
# get_installation_error: "Additionally, some packages in these conflicts have no matching distributions available for
# your environment:" then "\n    ".join(sorted(no_candidates)), the causes' names for which _has_any_candidates finds
# none): each name kept, in order, in the notes' "pip_no_dists" (", "-joined, at most MAX_CAUSES); the names follow the
# header on its own line (a paste may join them onto it)
_PIP_NO_DISTS_HEAD = "have no matching distributions available for your environment:"
_PIP_NO_DIST_NAME = re.compile(r"^\s{0,8}(?P<c>[A-Za-z0-9][\w.-]{0,80})\s{0,4}$")
# the versions pip lists where it finds none that satisfies a requirement (pip-26.2.1 resolvelib/factory.py
# _report_single_requirement_conflict: "(from versions: %s)", ", ".join of the versions with a file this Python and
# platform install, or "none"), kept in the notes' "pip_versions" (the last listing the log shows); a paste that starts
# inside the listing keeps only its tail: a line of comma-separated versions closed by the listing's ")"
_PIP_VERSIONS = re.compile(r"\(from versions: (?P<v>[^)\n]{0,4000})\)")
_PIP_VERSIONS_TAIL = re.compile(r"^\s{0,8}(?P<v>(?:[\w.+!]{1,40}, ){2,400}\d[\w.+!]{0,40})\)\s{0,4}$")
# a version check (python -c "import torch; print(torch.__version__); print(torch.cuda.is_available())", or a REPL's
# ">>> torch.__version__"): each print() call's arguments (a call inside one: "is_available()", with no arguments of its
# own), and a REPL's bare expression; then each output line's values, and a version as torch/version.py holds it
# (__version__ with the wheel's local label: "2.4.0+cpu")
# pip's "Collecting <requirement>" of a requirement asked for at an exact version (no "(from <parent>)": pip-24.0
# src/pip/_internal/operations/prepare.py RequirementPreparer._log_preparing_link, logger.info("Collecting %s", information),
# " (from {comes_from})" appended only for a dependency), and the wheel whose metadata or file it then fetches
# (src/pip/_internal/network/download.py _log_download: "Using cached %s" / "Downloading %s" of the link's file name, the
# wheel's name per the binary distribution format: <dist>-<version>[-<build>]-<python>-<abi>-<platform>.whl, a local
# label's "+" percent-encoded in an index's URL)
_PIP_PIN = re.compile(r"^\s{0,8}Collecting (?P<name>[A-Za-z0-9][\w.-]{0,80})(?:\[[\w,.-]{1,80}\])?==(?P<ver>\d[\w.+!]{0,40})\s{0,8}$")
_PIP_CANDIDATE = re.compile(r"^\s{0,8}(?:Using cached|Downloading) (?:\S{0,400}/)?(?P<name>[A-Za-z0-9][A-Za-z0-9_.]{0,80})-"
                            r"(?P<ver>\d[\w.!]{0,40}?)(?:(?:%2[Bb]|\+)[\w.]{1,40})?-(?:\d[\w]{0,20}-)?[\w.]{1,40}-[\w.]{1,40}-[\w.]{1,200}\.whl")
_PRINT_CALL = re.compile(r"print\((?P<args>(?:[^()\n]|\(\)){1,300})\)")
_REPL_EXPR = re.compile(r"^\s{0,4}(?:>>> |In \[\d{1,5}\]: )(?P<e>[\w.]{1,100}(?:\(\))?)\s{0,4}$")
# IPython's echo of an expression's value (its displayhook: "Out[N]: <repr>"), read as the plain REPL's bare value
_IPYTHON_OUT = re.compile(r"^\s{0,4}Out\[\d{1,5}\]: ")
_IPYTHON_IN = re.compile(r"^\s{0,4}In \[\d{1,5}\]:")
# the expressions a version check prints that the notes keep (:meth:`LogContext._printed`), and a script's lines between
# its print() calls and before their output (imports, assignments, comments); a REPL's expression is kept as its call
# fix-v: and NumPy's version (numpy/version.py's __version__, by its import name or the "np" alias) to the versions read
_CHECKED = ("torch.__version__", "torch.cuda.is_available()", "torch.version.cuda", "torch.version.hip",
            "numpy.__version__", "np.__version__")
_NUMPY_CHECKED = frozenset({"numpy.__version__", "np.__version__"})
_SCRIPT_LINE = re.compile(r"^\s{0,8}(?:>>>|\.\.\.|In \[\d{1,4}\]:)?\s{0,8}(?:import [\w., ]{1,200}|from [\w.]{1,200} import "
                          r"[\w., *]{1,200}|[A-Za-z_][\w.]{0,60}\s{0,2}=\s{0,2}[^=\n][^\n]{0,300}|#[^\n]{0,300})?\s{0,4}$")
_FIELD = re.compile(r"\{(?P<e>[^{}!:]{1,120})(?:![rsa])?(?::[^{}]{0,40})?\}")
_STRING = re.compile(r"""^(?P<f>[fF]?)(?P<q>['"])(?P<s>.{0,300})(?P=q)$""")


def _output_pattern(args: str) -> re.Pattern[str]:
    """What one print() call (its argument text) writes as one line: each string literal as its text, an f-string's
    text with each field a value, each other argument a value (its repr-free str(): a word, a version, None), joined by
    one space (print's sep); a value of a checked expression (:data:`_CHECKED`) is the group "c<index>"."""
    parts, seen = [], set()

    def value(expr: str) -> str:
        expr = expr.strip()
        i = _CHECKED.index(expr) if expr in _CHECKED else -1
        if i < 0 or i in seen:
            return r"['\"]?[\w.+-]{1,60}['\"]?"
        seen.add(i)
        return rf"(?P<c{i}>['\"]?[\w.+-]{{1,60}}['\"]?)"

    for arg in (a.strip() for a in args.split(",")):
        if (lit := _STRING.match(arg)) is None:
            parts.append(value(arg))
            continue
        text, out, at = lit.group("s"), [], 0
        for f in (_FIELD.finditer(text) if lit.group("f") else ()):
            out += [re.escape(text[at:f.start()]), value(f.group("e"))]
            at = f.end()
        parts.append("".join(out) + re.escape(text[at:]))
    return re.compile(" ".join(parts))

# fix-q: a snippet annotated with its output as comments (a notebook's or a README's habit): the output under its print()
# call as a comment line ("# False"), or after the call on its line ("print(torch.__version__)  # 2.3.1+cpu"); read only
# where each checked value it gives is one the checked expression prints (:func:`_commented`), so a comment that is prose
# ("# check the build") stays a script line
_COMMENT_OUTPUT = re.compile(r"#\s{0,4}(?P<v>\S[^\n]{0,300}?)")
_INLINE_OUTPUT = re.compile(r"\)\s{1,40}#\s{0,4}(?P<v>\S[^#\n]{0,300}?)\s{0,4}$")


def _commented(call: str, text: str) -> re.Match[str] | None:
    """``text`` (a comment's) read as what the print() call ``call`` writes, where every checked expression's value in
    it is one that expression prints (a version for torch.__version__, True or False for is_available(), None or a
    CUDA release for torch.version.cuda); None otherwise."""
    got = _output_pattern(call).fullmatch(text.strip())
    if got is None or not got.groupdict():
        return None
    for name, value in got.groupdict().items():
        what, v = _CHECKED[int(name[1:])], (value or "").strip("'\"")
        if not ((what == "torch.__version__" and _PRINTED_VERSION.fullmatch(v))
                or (what == "torch.cuda.is_available()" and v in ("True", "False"))
                or (what == "torch.version.cuda" and (v == "None" or re.fullmatch(r"\d{1,2}\.\d{1,2}", v)))
                or (what == "torch.version.hip" and v)
                or (what in _NUMPY_CHECKED and _PRINTED_VERSION.fullmatch(v))):
            return None
    return got


_PRINTED_VALUE = re.compile(r"['\"]?[\w.+-]{1,60}['\"]?")
# the line the setup.py of flash-attn, FlashAttention-3, causal-conv1d and mamba-ssm prints before its CUDA checks
# (Dao-AILab/flash-attention tag v2.8.3 setup.py and hopper/setup.py:392, Dao-AILab/causal-conv1d tag v1.2.0 setup.py:89:
# print("\n\ntorch.__version__  = {}\n\n".format(torch.__version__))): the torch the build is for
_SETUP_TORCH = re.compile(r"\s{0,8}torch\.__version__  = (?P<v>\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:[a-z]{1,5}\d{0,12})?"
                          r"(?:\+[\w.]{1,30})?)\s{0,4}$")
_PRINTED_VERSION = re.compile(r"\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:[a-z]{1,5}\d{0,12})?(?:\+[\w.]{1,30})?")
_FROM_LINE = re.compile(r"^\s{0,8}from (?P<v>[A-Za-z_][\w.]{0,200})\s{0,4}$")
_DIST_NAME = re.compile(_DISTS)
_CALL = re.compile(r"(?<![\w.])(?P<path>(?P<top>[A-Za-z_]\w{0,40})\.[\w.]{1,200})\(")
# the log names torch at all (a path, an import, "PyTorch"), or raises a CUDA error as torch's CUDA check does (a Python
# RuntimeError "CUDA error: <cudaGetErrorString>", c10/cuda/CUDAException.cpp c10_cuda_check_implementation): a GPU
# failure in a log that does neither is another runtime's (ggml's, ollama's), never torch's build (the notes' "torch_named")
_TORCH_NAMED = re.compile(r"(?i)(?<![\w-])(?:py)?torch(?![\w-])")
# a program's word that torch.cuda.is_available() returned False ("Warning: torch.cuda.is_available() returned False.",
# text-generation-webui's start-up check; "torch.cuda.is_available(): False"), not a code line testing it (if ... is
# False:): the notes' "avail_said", read by torch-cpu-only beside a CPU build's version
_AVAIL_SAID = re.compile(r"torch\.cuda\.is_available\(\)\)?\s{0,4}(?:returned|returns|is|==?|:|->)\s{0,4}False\b")
_CODE_HEAD = ("if ", "elif ", "while ", "assert ", "return ", "not ", "and ", "or ")
# fix-o: a check's output of one line with labels of its own, torch's version and torch.cuda.is_available()'s value on
# it ("torch 2.14.0+cpu | cuda available: False | device count: 0", "PyTorch: 2.1.0+cpu, CUDA available: False": a
# script's print(f"torch {torch.__version__} | cuda available: {torch.cuda.is_available()} ...")), read as the check
# printed them (the notes' "printed_torch" and "printed_avail"); a code line (print(, if ...) prints nothing
_ONE_LINE_TORCH = re.compile(r"(?<![\w.-])(?:py)?torch(?:[ _](?:version|ver))?\s{0,2}[:=]?\s{0,2}[`'\"]?v?(?P<v>\d{1,2}\.\d{1,3}"
                             r"(?:\.\d{1,3})?(?:[a-z]{1,5}\d{0,12})?(?:\+[\w.]{1,30})?)(?![\w.])", re.IGNORECASE)
_ONE_LINE_AVAIL = re.compile(r"(?<![\w.])(?:is[ _])?cuda(?:[ _]is)?[ _]available\??\s{0,2}[:=]\s{0,2}[`'\"]?(?P<a>True|False)\b",
                             re.IGNORECASE)
# fix-p: the same report over lines of their own, torch's version on one and is_available()'s value on the next
# (nicolasdiolez/360Extractor@8e446342e856063729cc9b59ce40a557fc8596f2 src/core/ai_model.py:36-43: logger.info(f"PyTorch
# Version: {torch.__version__}"), then logger.info("CUDA Available: False"); the common start-up check print(f"PyTorch
# version: {torch.__version__}") / print(f"CUDA available: {torch.cuda.is_available()}")): a label line holding torch's
# version alone (after a logger's level tag or a mark), and within TORCH_LABEL_LINES lines a label line holding the value
_LABEL_HEAD = r"^\s{0,8}(?:\[[A-Z]{3,8}\]:?\s{1,3}|[A-Z]{4,8}:\s{1,3})?(?:[^\w\s\[(]{1,3}\s{1,2})?"
_TORCH_LABEL = re.compile(_LABEL_HEAD + r"(?:Py[Tt]orch|PYTORCH|[Tt]orch)(?:[ _](?:[Vv]ersion|VERSION))?\s{0,2}[:=]\s{0,2}"
                          r"[`'\"]?v?(?P<v>\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:[a-z]{1,5}\d{0,12})?(?:\+[\w.]{1,30})?)[`'\"]?\s{0,4}$")
_AVAIL_LABEL = re.compile(_LABEL_HEAD + r"(?i:(?:is[ _])?cuda(?:[ _]is)?[ _]available)\??\s{0,2}[:=]\s{0,2}[`'\"]?(?:True|False)\b")
TORCH_LABEL_LINES = 2
# a top-level name imported from a module ("from M import A, B as C", at a prompt, in a notebook cell's context line):
# its class's qualified name in a later TypeError is read against M (the module that defines it); and a method called on
# self ("self.m(", a frame's context line): the call that reaches a subclass's override
_FROM_IMPORT = re.compile(r"(?<![\w.])from (?P<mod>[A-Za-z_][\w.]{0,200}) import \(?(?P<names>[A-Za-z_][\w, ]{0,400})")
_SELF_CALL = re.compile(r"(?<![\w.])self\.(?P<m>[A-Za-z_]\w{0,80})\(")
# a frame's code line that calls a class (``trainer = pl.Trainer(``): the package whose own code makes the call (fix-x)
_CLASS_CALL = re.compile(r"(?<![\w])(?:[A-Za-z_]\w{0,80}\.){0,4}(?P<c>[A-Z]\w{0,80})\(")
# CPython's traceback frame of a file under site-packages (dist-packages): its top-level package and the function
_SITE_FRAME = re.compile(r'^\s{0,12}File "[^"\n]{0,300}[\\/](?:site|dist)-packages[\\/](?P<top>[A-Za-z_]\w{0,80})[\\/][^"\n]{1,300}", '
                         r'line \d{1,7}, in (?P<func>[A-Za-z_]\w{0,80})\s{0,4}$')


# A compiled module's own arch list as the log shows it: cuobjdump's --list-elf / --list-ptx rows (cuobjdump names each
# embedded image <module>.<n>.<arch>.cubin or .ptx: "ELF file    1: common_ops.abi3.1.sm_90a.cubin", "PTX file    1:
# x.1.sm_90.ptx"), and, after a command that lists them (cuobjdump, or a grep -o of the sm_ names), the bare arch names
# one a line ("sm_121a", "   4 sm_90a" from uniq -c). The command's .so path names the module's distribution.
_CUBIN_ROW = re.compile(r"^\s{0,8}(?P<kind>ELF|PTX) file\s{1,8}\d{1,5}:\s{1,8}\S{1,300}?\.(?P<arch>sm_\d{2,3}[af]?)\.(?:cubin|ptx)\s{0,4}$")
_BARE_ARCH = re.compile(r"^\s{0,8}(?:\d{1,6}\s{1,8})?(?P<arch>sm_\d{2,3}[af]?)\s{0,4}$")
_LISTING_CMD = re.compile(r"cuobjdump\b|grep\b[^\n]{0,40}-\w*o\w*\b[^\n]{0,20}sm_")
_LISTED_SO = re.compile(r"(?P<path>[^\s'\"=]{1,400}?\.so(?:\.[\w.]{1,40})?)(?![\w.])")


def module_package(module: str) -> str:
    """The distribution that ships top-level module ``module`` (``sgl_kernel`` -> ``sgl-kernel``)."""
    return name_tables().modules.get(module) or canonicalize(module)


@dataclass
class LogContext:
    """What a log shows besides its signatures: the versions it prints (``pip list``, ``collect_env``,
    banners, dist-info paths: the first one seen of each distribution) and the CUDA facts (the driver's
    CUDA from ``nvidia-smi``, the toolkit ``nvcc`` reports, the CUDA torch was built with)."""

    versions: dict[str, str] = field(default_factory=dict)
    cuda: dict[str, str] = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)  # every version seen per distribution, "a, b"
    libs: dict[str, str] = field(default_factory=dict)  # soname -> the path ldd resolved it to
    shown: str = ""  # the distribution a `pip show` block names ("Name: vllm"), until its "Version:" line
    notes: dict[str, str] = field(default_factory=dict)  # index, building, engine: the first of each the log shows (_NOTES)
    wrapped: str = ""  # the CUDA fact whose words ended the last line (torch's "..., NCCL" then "version 2.14.3")
    printing: list[str] = field(default_factory=list)  # a check's print() calls (their arguments) whose output lines are still to come
    printing_repl: bool = False  # ... a REPL's expression, whose value None echoes nothing
    printing_out: bool = False  # ... whose output lines have begun
    candidates: dict[str, str] = field(default_factory=dict)  # pip's first candidate of each distribution (its wheel's version)
    pins: list[str] = field(default_factory=list)  # the "name==version" requirements pip collected, in order
    derivation: str = ""  # uv's first "Because ..." paragraph of its derivation, while it is still being read
    uv_steps: str = ""  # fix-o: uv's whole derivation as read so far (its later "And because ..." steps), joined
    conda_block: bool = False  # inside conda's conflict report: its chains and the user's bare specs
    no_dists: bool = False  # pip's "no matching distributions available" note is listing its names
    frame_top: str = ""  # the installed package (site-packages/<top>/) whose file the last traceback frame line runs
    torch_label: str = ""  # fix-p: the torch version a report's own label line printed ("PyTorch Version: 2.8.0+cpu")
    torch_label_left: int = 0  # ... and the lines after it its "CUDA Available: ..." line may still come on
    poetry_incompatible: bool = False  # fix-r: inside poetry's IncompatibleConstraintsError: its requirement lines

    def _derivation(self, line: str) -> None:
        """uv's derivation (crates/uv-resolver/src/pubgrub/report.rs) as it wraps its paragraphs at the terminal's width
        (miette: a requirement's markers broken inside "{platform_machine" / "== 'x86_64' ...}"): the first paragraph
        that opens with "Because" is read whole, its lines joined, into the ``uv_because`` note, up to its "we can
        conclude that ..." or, where the log is cut before that, as far as it goes (its "X depends on Y" clauses name
        the conflict); a blank line ends it."""
        text = line.strip()
        if not self.derivation:
            if "uv_because" in self.notes or (b := _UV_BECAUSE.search(text)) is None:
                return
            text = text[b.start():]
        elif not text:
            self.derivation = ""
            return
        self.derivation = f"{self.derivation} {text}".strip()[:2000]
        if " depends on " in self.derivation or " depend on " in self.derivation:
            self.notes["uv_because_wip"] = self.derivation
        _, concluding, after = self.derivation.partition("we can conclude that ")
        if (concluding and (end := re.search(r"\.(?=\s|$)", after)) is not None) or len(self.derivation) >= 2000:
            # the paragraph's first sentence, to its conclusion's full stop (a one-line derivation: its whole line)
            self.notes["uv_because"] = self.derivation[:len(self.derivation) - len(after) + end.end()] if concluding \
                and end is not None else self.derivation
            self.notes.pop("uv_because_wip", None)
            self.derivation = ""

    def _derivation_end(self, line: str) -> None:
        """fix-o: uv's derivation past its first sentence (crates/uv-resolver/src/pubgrub/report.rs: each step "And
        because <external>, we can conclude that <terms>." or "Because we know from (N) that ..."), its wrapped lines
        joined, blank lines between its paragraphs kept out: the step that concludes the user's requirements are
        unsatisfiable (its "because you require A and B" / "your project requires ...") into the ``uv_root`` note, the
        last step before it that concludes two requirements "are incompatible" into ``uv_clash``; a "hint:" line, another
        prompt or 4000 characters end the reading."""
        text = line.strip()
        if not self.uv_steps:
            if (b := _UV_BECAUSE.search(text)) is None:
                return
            text = text[b.start():]
        elif text.startswith(("hint:", "help:", "$ ", "error:")) or len(self.uv_steps) >= 4000:
            self.uv_steps = ""
            return
        if not text:
            return
        self.uv_steps = f"{self.uv_steps} {text}".strip()
        if "conclude that " in text:  # fix-q: each step's conclusion that a package depends on a requirement, kept
            self.notes["uv_concluded"] = "; ".join(dict.fromkeys(
                f"{c.group('who')} {c.group('verb')} on {c.group('req')}"
                for c in _UV_CONCLUDED.finditer(re.sub(r"\{[^{}]{0,400}\}", "", self.uv_steps))))
        if "unsatisfiable" not in text and "incompatible" not in text:
            return
        joined = re.sub(r"\{[^{}]{0,400}\}", "", self.uv_steps)  # a requirement's markers left out of what is said
        clashes = list(_UV_CLASH_STEP.finditer(joined))
        if clashes:
            self.notes["uv_clash"] = f"{clashes[-1].group('why')}, so {clashes[-1].group('what')}"
        if (root := _UV_ROOT_STEP.search(joined)) is not None:
            self.notes["uv_root"] = f"{root.group('why')}, so {root.group('what')}"
            self.uv_steps = ""

    def version(self, package: str) -> str:
        return self.versions.get(canonicalize(package), "")

    def _no_dists(self, line: str) -> None:
        """pip's note of the conflict's packages with no distribution for the environment (:data:`_PIP_NO_DISTS_HEAD`):
        the names under it (or after its colon, where a paste joined them), one a line, into the ``pip_no_dists`` note,
        up to the first line that is no bare name."""
        _, found, rest = line.partition(_PIP_NO_DISTS_HEAD)
        names = rest.split() if found else [line]
        self.no_dists = bool(found)
        for name in names:
            if (m := _PIP_NO_DIST_NAME.match(name)) is None:
                self.no_dists = False
                return
            have = self.notes.get("pip_no_dists", "")
            if m.group("c") not in have.split(", ") and have.count(", ") < MAX_CAUSES - 1:
                self.notes["pip_no_dists"] = f"{have}, {m.group('c')}" if have else m.group("c")
            self.no_dists = True

    def take(self, line: str) -> None:
        if self.derivation or (("Because " in line or "because " in line) and "uv_because" not in self.notes):
            self._derivation(line)
        if self.uv_steps or ("uv_root" not in self.notes and ("Because " in line or "because " in line)):
            self._derivation_end(line)
        if line.startswith(("Name: ", "Version: ")):  # `pip show`: the name and the version on consecutive lines
            key, _, value = line.partition(": ")
            if key == "Name":
                self.shown = canonicalize(value.strip())
            elif self.shown and _PIP_SHOW.fullmatch(value.strip()):
                self._version(self.shown, value.strip())
                self.shown = ""
        if _NOTE_WORDS.search(line) is not None:
            for what, pat, need in _noted():
                if what not in self.notes and (need is None or any(map(line.__contains__, need))) \
                        and (n := pat.search(line)) is not None:
                    self.notes[what] = n.groupdict().get("v") or (f"{n.group('w')}.{n.group('x')}" if "w" in pat.groupindex else "")
        if "[WinError " in line and "Error loading" in line and (w := _WIN_DLL_ERROR.search(line)) is not None:
            self.notes.setdefault(f"dll_error {w.group('dll').lower()}", w.group("code"))  # fix-q: its WinError code
        if "torch_named" not in self.notes and ((("torch" in line or "Torch" in line) and _TORCH_NAMED.search(line))
                                                or "RuntimeError: CUDA error: " in line):
            self.notes["torch_named"] = "1"
        if "is_available()" in line and "avail_said" not in self.notes and (a := _AVAIL_SAID.search(line)) is not None and \
                not line.lstrip().startswith(_CODE_HEAD) and not line[:a.start()].rstrip().endswith(("if", "assert", "not", "and", "or")):
            self.notes["avail_said"] = a.group(0)
        if self.printing or "__version__" in line or "is_available()" in line or "print(" in line or "torch.version." in line:
            self._printed(line)
        if "torch.__version__  = " in line and (t := _SETUP_TORCH.match(line)) is not None:
            self._version("torch", t.group("v"))  # fix-u: a CUDA extension's setup.py printing the torch it builds for
        if ("available" in line or "Available" in line) and "(" not in line and not line.lstrip().startswith(_CODE_HEAD) \
                and (a := _ONE_LINE_AVAIL.search(line)) is not None:
            if (t := _ONE_LINE_TORCH.search(line)) is not None:
                self._printed_value("torch.__version__", t.group("v"))  # fix-o: a check's one line of its own labels
                self._printed_value("torch.cuda.is_available()", a.group("a").capitalize())
            elif self.torch_label_left and _AVAIL_LABEL.match(line) is not None:  # fix-p: the line after its torch line
                self._printed_value("torch.__version__", self.torch_label)
                self._printed_value("torch.cuda.is_available()", a.group("a").capitalize())
        self.torch_label_left = max(self.torch_label_left - 1, 0) if line.strip() else self.torch_label_left
        if ("orch" in line or "ORCH" in line) and (t := _TORCH_LABEL.match(line)) is not None:
            self.torch_label, self.torch_label_left = t.group("v"), TORCH_LABEL_LINES
        if "from_line" not in self.notes and line.lstrip().startswith("from ") and " import " not in line:
            # an ImportError re-wrapped across lines ("cannot import name 'X'" then "from M"): the module, M
            if (f := _FROM_LINE.match(line)) is not None:
                self.notes["from_line"] = f.group("v")
        if "dependency conflict" in line or "After October 2020" in line:
            if _PIP_REPORT_HEAD.search(line) is not None:
                self.notes.setdefault("pip_report", "head")
        # (fix-w: a line cut after the installed version, its " which is incompatible." lost in the paste, read too)
        if ("which is " in line or "has requirement " in line or ", but you have " in line) and (
                pc := _PIP_CONFLICT_LINE.search(line)) is not None:
            if pc.group("err") or (pc.group("verb") == "has requirement" and pc.group("you") == "you'll" and pc.group("inc")):
                self.notes.setdefault("pip_report", "line")  # pip's own record: its ERROR: line, or pip 10-20.1's install line
            _add_note(self.notes, "pip_conflicts", "\t".join((pc.group("pkg"), pc.group("ver"), pc.group("req").strip(),
                                                               pc.group("dep") or "", (pc.group("have") or "").rstrip("."))))
        if "Python" in line and ("requires Python" in line or "current project" in line):
            if (pr := _POETRY_ROOT.search(line)) is not None:
                self.notes.setdefault("poetry_py_root", (pr.group("r") or pr.group("r2")).strip())
            for pn in POETRY_NEEDS.finditer(line):
                _add_note(self.notes, "poetry_py_needs", "\t".join((
                    pn.group("every") or pn.group("pkg") or pn.group("dash"), pn.group("ver") or "",
                    (pn.group("req") or pn.group("dreq")).strip())))
        if "fact: " in line and (pf := _POETRY_FACT.search(line)) is not None:
            _add_note(self.notes, "poetry_facts", "\t".join((pf.group("p").strip(), pf.group("x"), pf.group("c").strip())))
        if ("conflict: " in line or "! not " in line) and (pk := _POETRY_CONFLICT.search(line)) is not None:
            _add_note(self.notes, "poetry_conflicts", canonicalize(pk.group("x") or pk.group("y")), ", ")
        if "version solving failed" in line:
            self.notes["poetry_failed"] = "1"
        if self.poetry_incompatible:
            if (pi := _POETRY_INCOMPATIBLE.match(line)) is not None:
                _add_note(self.notes, "poetry_incompatible", pi.group("c").strip())
            else:
                self.poetry_incompatible = False
        if "Incompatible constraints in requirements of " in line:
            self.poetry_incompatible = True
        if ("depends on " in line or "The user requested " in line) and (c := _PIP_CAUSE.search(line)) is not None:
            have = self.notes.get("pip_causes", "")
            if have.count("; ") < MAX_CAUSES - 1:
                self.notes["pip_causes"] = f"{have}; {c.group('c').strip()}" if have else c.group("c").strip()
        if "Collecting " in line or ".whl" in line:
            self._candidate(line)
        if self.no_dists or _PIP_NO_DISTS_HEAD in line:
            self._no_dists(line)
        if "from versions: " in line and (fv := _PIP_VERSIONS.search(line)) is not None:
            self.notes["pip_versions"] = fv.group("v").strip()
        elif line.endswith(")") and ", " in line and (ft := _PIP_VERSIONS_TAIL.match(line)) is not None:
            self.notes["pip_versions"] = ft.group("v").strip().split(", ", 1)[1]  # its first may be cut mid-version
        if "conflicts for:" in line and (c := _CONDA_CONFLICT.search(line)) is not None:
            have = self.notes.get("conda_conflicts", "")
            if c.group("c") not in have.split(", ") and have.count(", ") < MAX_CAUSES - 1:
                self.notes["conda_conflicts"] = f"{have}, {c.group('c')}" if have else c.group("c")
            self.conda_block = True
        elif " -> " in line and "[version='" in line and (c := _CONDA_CHAIN.match(line)) is not None:
            have = self.notes.get("conda_chains", "")
            if c.group("c") not in have.split("; ") and have.count("; ") < MAX_CAUSES - 1:
                self.notes["conda_chains"] = f"{have}; {c.group('c')}" if have else c.group("c")
            self.conda_block = True
        elif self.conda_block:
            if (c := _CONDA_REQUEST.match(line)) is not None:
                have = self.notes.get("conda_requests", "")
                if c.group("c") not in have.split(", ") and have.count(", ") < MAX_CAUSES - 1:
                    self.notes["conda_requests"] = f"{have}, {c.group('c')}" if have else c.group("c")
            else:
                self.conda_block = False
        if ".(" not in line and "(" in line and "." in line:
            for call in _CALL.finditer(line):
                if call.group("top") in name_tables().modules or _DIST_NAME.fullmatch(call.group("top")) is not None:
                    self.notes.setdefault("call " + call.group("path").rsplit(".", 1)[-1], call.group("path"))
        if "import " in line and (fi := _FROM_IMPORT.search(line)) is not None:
            for part in fi.group("names").split(","):
                if (imported := part.strip().split(" ", 1)[0]).isidentifier():
                    self.notes.setdefault("imported " + imported, fi.group("mod"))
        if "self." in line:
            for sc in _SELF_CALL.finditer(line):
                self.notes.setdefault("self call " + sc.group("m"), "1")
                if self.frame_top:  # the frame's code line: the package whose own code makes the call
                    self.notes.setdefault("self call in " + sc.group("m"), self.frame_top)
        if self.frame_top and line[:1] in (" ", "\t") and "(" in line:
            for cc in _CLASS_CALL.finditer(line):  # the frame's code line: the package whose code calls the class
                self.notes["class call " + cc.group("c")] = self.frame_top
        if "File" in line and (fr := _SITE_FRAME.match(line)) is not None:
            # a frame of an installed package's file: the package whose code runs it, and the function it runs there
            # (an override's own frame names the module that defines it: "InstructorEmbedding/instructor.py, in
            # _load_sbert_model")
            self.frame_top = fr.group("top")
            self.notes.setdefault("frame def " + fr.group("func"), fr.group("top"))
        elif line[:1] not in (" ", "\t"):
            self.frame_top = ""
        if self.wrapped:  # a pasted terminal line broken before the version: "internal error, NCCL" / "version 2.14.3"
            if (w := _WRAPPED_VERSION.match(line)) is not None:
                self.cuda.setdefault(self.wrapped, w.group("v"))
            self.wrapped = ""
        if line.rstrip().endswith(" NCCL"):
            self.wrapped = "nccl"
        if _DIGIT.search(line) is None:
            return
        if "sm_" in line or "cuobjdump" in line:
            self._cubins(line)
        self._listed(line)
        for pat in _VERSIONS if _NAMES.search(line.lower()) is not None else ():
            for m in pat.finditer(line):
                name = canonicalize(m.group("name"))
                name = "torch" if name == "pytorch" else name
                self._version(name, m.group("ver"))
        if "dist-info" in line:
            for m in _MENTIONS[1][1].finditer(line):
                self._version(module_package(m.group("mod")), m.group("ver"))
        for what, pat in _CUDA if _CUDA_WORDS.search(line) is not None else ():
            c = pat.search(line)
            if c is not None:
                self.cuda.setdefault(what, c.group("v"))
        if " => not found" in line:  # ldd: a DT_NEEDED soname no directory the loader searches holds, each kept in order
            for m in _LDD_MISSING.finditer(line):
                have = self.notes.get("ldd_missing", "")
                if m.group("so") not in have.split(", ") and have.count(", ") < MAX_CAUSES - 1:
                    self.notes["ldd_missing"] = f"{have}, {m.group('so')}" if have else m.group("so")
        if "NCCL WARN" in line or " -> " in line:
            for m in _NCCL_AT.finditer(line):
                have = self.notes.get("nccl_at", "")
                if m.group("at") not in have.split(", ") and have.count(", ") < 63:
                    self.notes["nccl_at"] = f"{have}, {m.group('at')}" if have else m.group("at")
        if " => /" in line:
            for m in _LDD.finditer(line):
                self.libs.setdefault(m.group("so"), m.group("path"))
        if "LD_LIBRARY_PATH" in line:
            ld = _LD_PATH.search(line)
            if ld is not None:
                self.cuda.setdefault("ld_library_path", ld.group("v"))

    def _cubins(self, line: str) -> None:
        """A compiled module's arch list (:data:`_CUBIN_ROW`, :data:`_BARE_ARCH`): its SASS to the notes' "listed_sass",
        its PTX (as compute_XY) to "listed_ptx", the .so the listing command names to "listed_from"."""
        if _LISTING_CMD.search(line) is not None:
            self.notes["listing"] = "1"
            if "listed_from" not in self.notes and (so := _LISTED_SO.search(line)) is not None:
                self.notes["listed_from"] = so.group("path")
            return
        row = _CUBIN_ROW.match(line)
        bare = _BARE_ARCH.match(line) if row is None and "listing" in self.notes else None
        m = row if row is not None else bare
        if m is None:
            return
        arch = m.group("arch")
        key = "listed_ptx" if row is not None and row.group("kind") == "PTX" else "listed_sass"
        arch = arch.replace("sm_", "compute_") if key == "listed_ptx" else arch
        have = self.notes.get(key, "")
        if arch not in have.split(", "):
            self.notes[key] = f"{have}, {arch}" if have else arch

    def _candidate(self, line: str) -> None:
        """pip's resolver at work: each requirement it collects at an exact pin ("Collecting xformers==0.0.29.post2", no
        "(from ...)": asked for), and each candidate whose metadata it fetches ("Using cached" / "Downloading" of a
        wheel). A distribution whose later candidate is another version than its first is one pip collected again: a
        requirement collected after the first candidate rejected it (the resolver backtracked), and the notes keep
        "<name> <first> <later>" ("pip_recollected") and the pins collected between ("pip_recollect_pins")."""
        if (pin := _PIP_PIN.match(line)) is not None:
            if len(self.pins) < MAX_CAUSES:
                self.pins.append(f"{canonicalize(pin.group('name'))}=={pin.group('ver')}")
            return
        if (c := _PIP_CANDIDATE.match(line)) is None or "pip_recollected" in self.notes:
            return
        name, ver = canonicalize(c.group("name")), c.group("ver")
        first = self.candidates.get(name)
        if first is None:
            self.candidates[name] = ver
            self.notes.setdefault(f"pip_first {name}", str(len(self.pins)))
        elif first != ver:
            since = int(self.notes.get(f"pip_first {name}", "0"))
            self.notes["pip_recollected"] = f"{name} {first} {ver}"
            self.notes["pip_recollect_pins"] = ", ".join(p for p in self.pins[since:] if not p.startswith(f"{name}=="))

    def _printed(self, line: str) -> None:
        """A version check's output, read against what it prints: the print() calls of a ``python -c`` line or of a
        script's consecutive lines (imports, assignments and blank lines between them), or a REPL's expression, that
        print torch.__version__, torch.cuda.is_available(), torch.version.cuda or torch.version.hip, then the output
        lines, one per call, each read against its call (:func:`_output_pattern`: a label's literal text, an f-string's
        text around its fields, values space-separated, print's default). The version printed for torch.__version__ goes
        to the notes' "printed_torch", the value of is_available() to "printed_avail", torch.version.cuda's to
        "printed_cuda" (None for a CPU build, and for a ROCm one, whose torch.version.hip is "printed_hip"); a REPL's
        expression whose value is None echoes nothing (CPython's sys.displayhook), so the next prompt after it is that
        None. A line that is no such output (a prompt, a traceback) ends the reading."""
        calls = [c.group("args") for c in _PRINT_CALL.finditer(line)]
        repl = False
        if not calls and (expr := _REPL_EXPR.match(line)) is not None:
            calls, repl = [expr.group("e")], True
        if self.printing_repl and _IPYTHON_OUT.match(line):
            line = _IPYTHON_OUT.sub("", line)  # IPython's "Out[N]: " before the value
        if self.printing and self.printing_repl and (line.lstrip().startswith(">>>") or _IPYTHON_IN.match(line)) and \
                not self.printing_out:
            self._printed_value(self.printing[0], "None")  # the expression echoed nothing: None
            self.printing = []
        if calls:
            if self.printing_out or repl or self.printing_repl:
                self.printing = []
            # fix-q: a snippet's one print() call with its output written as a comment after it ("print(x)  # False")
            if not repl and len(calls) == 1 and (c := _INLINE_OUTPUT.search(line)) is not None and \
                    (got := _commented(calls[0], c.group("v"))) is not None:
                for name, value in got.groupdict().items():
                    if value is not None:
                        self._printed_value(_CHECKED[int(name[1:])], value.strip("'\""))
                return
            self.printing, self.printing_repl, self.printing_out = self.printing + calls, repl, False
            if not any(t in c for c in self.printing for t in _CHECKED):
                self.printing = self.printing if not repl else []
            return
        if not self.printing:
            return
        out = line.strip()
        if (c := _COMMENT_OUTPUT.fullmatch(out)) is not None and _commented(self.printing[0], c.group("v")) is not None:
            out = c.group("v")  # fix-q: the call's output written as a comment line under it ("# 2.3.1+cpu")
        got = _output_pattern(self.printing[0]).fullmatch(out)
        if got is None and not self.printing_out and (not line.strip() or _SCRIPT_LINE.match(line) is not None):
            return  # the script's other lines before its output
        self.printing.pop(0)
        self.printing_out = True
        if got is None:
            self.printing = []
        else:
            for name, value in got.groupdict().items():
                if value is not None:
                    self._printed_value(_CHECKED[int(name[1:])], value.strip("'\""))
        if not self.printing:
            self.printing_out = False

    def _printed_value(self, name: str, value: str) -> None:
        """A checked expression's printed value (:meth:`_printed`) to the notes."""
        if name == "torch.__version__" and _PRINTED_VERSION.fullmatch(value):
            self.notes.setdefault("printed_torch", value)
            self._version("torch", value)  # the installed torch, as its torch/version.py holds it
        elif name == "torch.cuda.is_available()" and value in ("True", "False"):
            self.notes.setdefault("printed_avail", value)
        elif name == "torch.version.cuda" and (value == "None" or re.fullmatch(r"\d{1,2}\.\d{1,2}", value)):
            self.notes.setdefault("printed_cuda", value)
        elif name == "torch.version.hip" and value != "None":
            self.notes.setdefault("printed_hip", value)
        elif name in _NUMPY_CHECKED and _PRINTED_VERSION.fullmatch(value):
            self._version("numpy", value)  # the installed numpy, as its numpy/version.py holds it

    def _listed(self, line: str) -> None:
        """An environment listing's rows (:data:`_ROWS`, :data:`_JSON_PAIR`): any distribution's installed version,
        read by the row's layout; a listing of torch's conda build also gives the CUDA it was built with."""
        found = [(m.group("name"), m.group("ver")) for m in _JSON_NAMED.finditer(line)] if '"name"' in line else []
        if not found and '"' in line:
            found = [(m.group("name").removesuffix("_version"), m.group("ver")) for m in _JSON_PAIR.finditer(line)]
        if not found:
            row = next((m for pat in _ROWS if (m := pat.match(line)) is not None and (
                "gap" not in pat.groupindex or len(m.group("gap")) > 1 or _CONDA_TAIL.fullmatch(m.group("tail") or ""))), None)
            found = [(row.group("name"), row.group("ver"))] if row is not None else []
        for name, ver in found:
            dist = canonicalize(name)
            dist = "torch" if dist == "pytorch" else dist
            if dist not in _NOT_DISTS and not dist[0].isdigit():
                self._version(dist, ver)
        if "_cuda" in line and (c := _CONDA_TORCH_CUDA.match(line)) is not None:
            self.cuda.setdefault("torch_cuda", c.group("v"))

    def _version(self, name: str, ver: str) -> None:
        self.versions.setdefault(name, ver)
        have = self.seen.get(name)
        if have is None:
            self.seen[name] = ver
        elif ver not in have.split(", "):
            self.seen[name] = f"{have}, {ver}"


# a compiler or linker option whose argument is a directory (GCC's -L<dir> and -I<dir>, -isystem <dir>, -Wl,-rpath,<dir>,
# as a command line or its Python list prints them): a package's path there is a library or header directory the build
# uses (torch's torch/lib in the link of another package's extension), not the package being built
_OPTION_DIRS = ("-L", "-I", "-isystem", "-Wl,", "-Xlinker")
_TOKEN_START = re.compile(r"""[\s'"\[(,=]""")


def _option_argument(line: str, at: int) -> bool:
    """Whether position ``at`` of ``line`` is inside the argument of a directory option (:data:`_OPTION_DIRS`)."""
    start = at
    while start > 0 and not line[start - 1].isspace() and line[start - 1] not in "'\"":
        start -= 1
    if line.startswith(_OPTION_DIRS, start):
        return True
    before = re.sub(r"""[\s'",]+$""", "", line[max(0, start - 60):start])  # "-isystem /dir" / "'-L', '/dir'": the option before it
    head = _TOKEN_START.split(before)[-1] if before else ""
    return head in ("-L", "-I", "-isystem", "-rpath", "-Xlinker")


def mentions(line: str) -> list[tuple[int, str, str]]:
    """The packages a line names, as (position, kind, distribution): library paths, dist-info
    directories, ``torch.ops`` namespaces and operator names, compiled module names, C++ namespaces. A path that is the
    argument of a compiler or linker directory option (:func:`_option_argument`) names no package: the build uses it."""
    out = []
    for kind, pat in _MENTIONS:
        for m in pat.finditer(line):
            mod = m.group("mod")
            if kind == "path" and "-" in line and _option_argument(line, m.start()):
                continue
            if kind == "ops":
                pkg = name_tables().ops.get(mod)
                if pkg is None:
                    continue
            elif kind == "namespace":
                named = name_tables().cxx.get(mod, module_package(mod))
                if named is None:
                    continue
                pkg = named
            elif mod in ("vllm._C", "vllm._c"):
                pkg = "vllm"
            elif kind in ("torchlib", "torchsrc", "torchtail"):
                pkg = "torch"
            elif kind == "ortlib":
                pkg = "onnxruntime"
            else:
                pkg = module_package(mod)
            out.append((m.start(), kind, pkg))
    return out


def _attribute(own: list[tuple[int, str, str]], window: Iterable[list[tuple[int, str, str]]], at: int) -> str:
    """The package a failure at position ``at`` of its line belongs to: a non-glue package its own line names
    (the one nearest before ``at``: ``.../vllm/_C.abi3.so: undefined symbol``), else the innermost such
    frame or namespace before it (the traceback), an operator namespace first; else an engine; else torch."""
    before = sorted((m for m in own if m[0] <= at), key=lambda m: m[0])
    specific = [m for m in before if m[2] not in GLUE] or [m for m in own if m[2] not in GLUE]
    if specific:
        return specific[-1][2]
    earlier = [m for ms in window for m in ms]  # oldest first
    for kinds in (("ops",), ("path", "module", "dist")):
        found = [m for m in earlier if m[1] in kinds and m[2] not in GLUE]
        if found:
            return found[-1][2]
    for pool in (own, earlier):
        eng = [m for m in pool if m[2] in ENGINES]
        if eng:
            return eng[-1][2]
    return next((m[2] for m in reversed(own + earlier)), "")


@dataclass
class Scan:
    """The signatures found in a log and what else it shows (:class:`LogContext`)."""

    hits: list[Hit]
    context: LogContext


def scan_log(lines: Iterable[str], signatures: Sequence[SignatureRow]) -> Scan:
    """Match every line against every signature; one :class:`Hit` per signature, in order of first match,
    attributed to the package the log names for it (its version filled in from anywhere in the log)."""
    return scan_numbered(enumerate(lines, 1), signatures)


def scan_numbered(lines: Iterable[tuple[int, str]], signatures: Sequence[SignatureRow]) -> Scan:
    """:func:`scan_log` over (1-based line number, line) pairs, such as :func:`numbered_lines` gives (blank lines
    left out: no signature matches one, :func:`linear_time_problem`).

    One pass, linear in the log: each line is matched once per signature and per context pattern (all of
    them linear in the line, :func:`linear_time_problem`), and the package mentions of at most :data:`WINDOW`
    earlier lines are kept."""
    matcher = _matcher(signatures)
    first: dict[str, Hit] = {}
    counts: dict[str, int] = {}
    more: dict[str, dict[str, list[str]]] = {}  # sid -> COLLECTED_GROUPS group -> the values later matches add
    ctx = LogContext()
    window: deque[tuple[int, list[tuple[int, str, str]]]] = deque(maxlen=WINDOW)
    shown: deque[str] = deque(maxlen=WINDOW)  # the text of each window line: the words that named its packages
    pending: dict[str, int] = {}  # signatures whose first match named no package yet -> its line
    settled: set[str] = set()  # pending ones a frame has named: the next frame replaces it, until the stack ends
    # pending ones with no package at all -> the innermost glue package (torch) the frames that follow name: where the
    # stack names nothing else, that package's own code made the failing import (NumPy 2's message is followed by the
    # stack that imported the NumPy-1.x module, numpy-2.0.0 wheel numpy/core/_multiarray_umath.py:22-43, and a torch
    # built against NumPy 1.x shows only torch's frames)
    glue: dict[str, str] = {}
    importing: tuple[int, str] = (0, "")
    typed: tuple[int, str] = (0, "")  # the last top-level import statement (_TOP_IMPORT)
    typed_at = records = 0  # the record that statement was, and the records read (a screen's rows share a line number)
    frame: tuple[int, str] = (0, "")  # the last traceback frame's package (File ".../site-packages/<pkg>/...")
    framed: tuple[int, str, str, int] = (0, "", "", 0)  # the last frame line of any file: (line, file, function, its reach)
    for n, raw in lines:
        if not raw or raw.isspace():
            continue
        line = raw[:MAX_LINE]
        ctx.take(line)
        records += 1
        if "import" in line:
            if (im := _IMPORT_LINE.match(line)) is not None:
                importing = (n, im.group("from") or im.group("imp"))
            elif (top := _TOP_IMPORT.match(line)) is not None:
                typed, typed_at = (n, top.group("from") or top.group("imp")), records
        own = mentions(line) if ("/" in line or "_" in line or "." in line or "::" in line) else []
        if own and line.lstrip().startswith('File "'):
            frame = (n, next((m[2] for m in reversed(own) if m[1] == "path"), ""))
        if ("File" in line or " in " in line or "In" in line) and (fl := _FRAME_LINE.match(line)) is not None:
            if fl.group("cell"):
                framed = (n, fl.group("cell"), "", FRAME_CONTEXT)
            elif fl.group("file"):
                # (no ", in <func>": IPython's frame as glmcompat.decide.pasted rewrites it, its context lines after it)
                framed = (n, fl.group("file"), (fl.group("func") or "").strip(),
                          IMPORT_GAP + 1 if fl.group("func") else FRAME_CONTEXT)
            else:
                framed = (n, fl.group("ifile") or fl.group("ofile") or fl.group("lfile") or "",
                          (fl.group("ifunc") or fl.group("ofunc") or fl.group("lfunc") or "").strip(), FRAME_CONTEXT)
        found = matcher.found(line)
        if len(found) > 1:
            found = [(m, sig) for m, sig in found if not _inside(m, [o for o, s2 in found if s2.id not in YIELDS])]
            found = [(m, sig) for m, sig in found if sig.id not in YIELDS] or found
        for m, sig in found:
            sid = sig.id
            counts[sid] = counts.get(sid, 0) + 1
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            if importing[1] and 0 < n - importing[0] <= IMPORT_GAP:
                groups["importing"] = importing[1]  # the import statement the error ends
            if frame[1] and 0 < n - frame[0] <= IMPORT_GAP + 1:
                groups["frame"] = frame[1]  # the package whose code the traceback's last frame runs (the importing one)
            if framed[1] and 0 < n - framed[0] <= framed[3]:
                groups["frame_file"] = framed[1]  # the file the traceback's last frame runs, whoever's it is
                if framed[2]:
                    groups["frame_func"] = framed[2]
            if typed[1] and (0 < n - typed[0] or typed_at < records) and n - typed[0] <= IMPORT_GAP and frame[0] < typed[0]:
                groups["typed_import"] = typed[1]  # the top-level import statement the error follows, no frame between
            if sid not in first or (SCENE_GROUPS & first[sid].groups.keys() and not SCENE_GROUPS & groups.keys()) or (
                    YIELDING_GROUPS & first[sid].groups.keys() and not YIELDING_GROUPS & groups.keys()) or (
                    PREFERRED_GROUPS & groups.keys() and not (PREFERRED_GROUPS | SCENE_GROUPS) & first[sid].groups.keys()):
                pending.pop(sid, None)
                settled.discard(sid)
                glue.pop(sid, None)
                recent = (ms for at, ms in window if at >= n - WINDOW)  # the lines just before, blank ones included
                pkg = _attribute(own, recent, m.end())
                if pkg and not any(o[2] == pkg for o in own) and (word := _alias(next(
                        (t for (_, ms), t in zip(reversed(window), reversed(shown), strict=True) if any(o[2] == pkg for o in ms)), ""), pkg)):
                    groups["named_by"] = word  # an earlier line named it by a module alias (flash_attn_gpu): the log's word
                first[sid] = Hit(sid, sig.cause, sig.remedy, m.group(0), n, 1, groups, sig.source, pkg)
                if (not pkg or pkg in GLUE) and sid not in UNFRAMED:  # a message printed before its traceback: the frames that follow name it
                    pending[sid] = n
                    if not pkg and not groups.keys() & BUILD_STEP_GROUPS:
                        glue[sid] = ""
            else:
                for k in COLLECTED_GROUPS & groups.keys():
                    seen = more.setdefault(sid, {}).setdefault(k, [])
                    if groups[k] != first[sid].groups.get(k) and groups[k] not in seen:
                        seen.append(groups[k])
        if own:
            window.append((n, own))
            shown.append(line)
        for sid, at in list(pending.items()):
            # the traceback that follows runs outermost first: its innermost frame (the last indented line
            # before the traceback ends) is the import that failed (NumPy prints its message, then the stack)
            if n - at > WINDOW or (sid in settled and not raw[:1].isspace()):
                del pending[sid]
                continue
            named = [m[2] for m in own if m[2] not in GLUE]
            if named and sid not in {s2.id for _, s2 in found}:
                word = _alias(line, named[-1])
                first[sid] = replace(first[sid], package=named[-1],
                                     groups={**first[sid].groups, "named_by": word} if word else first[sid].groups)
                settled.add(sid)
                glue.pop(sid, None)
            elif sid in glue and sid not in settled and n > at:
                glue[sid] = next((m[2] for m in reversed(own) if m[2] in GLUE), glue[sid])
    for sid, pkg in glue.items():
        if pkg and sid not in settled and not first[sid].package:
            first[sid] = replace(first[sid], package=pkg)
    hits = [Hit(h.id, h.cause, h.remedy, h.text, h.line, counts[h.id], h.groups, h.source, h.package,
                ctx.version(h.package) if h.package else "",
                also={k: tuple(x for x in vs if x != h.groups.get(k)) for k, vs in more.get(h.id, {}).items()
                      if set(vs) - {h.groups.get(k)}}) for h in first.values()]
    return Scan(hits, ctx)


def split_message(pieces: Sequence[str], signatures: Sequence[SignatureRow]) -> bool:
    """Whether ``pieces`` (consecutive lines of a log), joined at a space, hold a signature's message that runs from the
    first piece into the last and that no piece holds alone, or holds from a later start (with fewer of its groups,
    "undefined symbol: X" without the library the line before names, or another reading of the same words): a message a user or a page broke at word boundaries
    (torch's "NVIDIA H100 PCIe with CUDA capability" / "sm_90 is not compatible with ..."). Linear in the pieces: one
    search of the join, and of each piece where the join holds such a message."""
    matcher = _matcher(signatures)
    cuts, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        cuts.append(at)
        at += 1
    alone: dict[str, int] = {}
    first: dict[str, set[tuple[str, str]]] = {}  # the groups each signature fills on the first piece
    later: dict[str, set[tuple[str, str]]] = {}  # and on a piece after it
    for k, piece in enumerate(pieces):
        for m, sig in matcher.found(piece):
            alone[sig.id] = max(alone.get(sig.id, 0), _read(m))
            (later if k else first).setdefault(sig.id, set()).update((g, v) for g, v in m.groupdict().items() if v)
    for m, sig in matcher.found_joined(pieces):
        if sig.id not in alone:
            return True  # the join holds it (across a break, or by what a piece says beside it), no piece does
        end = max([m.end(), *(m.end(g) for g, v in m.groupdict().items() if v)])  # a lookahead's groups read on past it
        if m.start() >= cuts[0] or end <= cuts[-1] + 1:
            continue  # it does not run from the first piece into the last
        # as many groups or more: the message read from its start in the first piece, unless a group only grew back
        # across a break (the words the line before ends in, read into the group a later line fills alone: a GPU's name)
        grew = any(any(m.start(g) < c < m.end(g) for c in cuts)
                   and any(h == g and v != w and v.endswith(w) for h, w in later.get(sig.id, ()))
                   and not any(h == g and v.startswith(w) for h, w in first.get(sig.id, ()))
                   for g, v in m.groupdict().items() if v)
        if _read(m) >= alone[sig.id] and not grew:
            return True
    return False


def _read(m: re.Match[str]) -> int:
    """How much of its message a signature's match reads: 1, and 1 for each group it fills."""
    return 1 + sum(1 for v in m.groupdict().values() if v)


def reads_more(text: str, other: str, signatures: Sequence[SignatureRow]) -> bool:
    """Whether the signatures read more of ``other`` than of ``text`` (two readings of one pasted message): each that
    matches ``text`` matches ``other`` with as many of its groups, and one matches ``other`` alone or with more."""
    matcher = _matcher(signatures)

    def read(t: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for m, sig in matcher.found(t):
            out[sig.id] = max(out.get(sig.id, 0), _read(m))
        return out

    mine, theirs = read(text), read(other)
    return all(theirs.get(sid, 0) >= k for sid, k in mine.items()) and any(k > mine.get(sid, 0) for sid, k in theirs.items())


def scan_lines(lines: Iterable[str], signatures: Sequence[SignatureRow]) -> list[Hit]:
    """:func:`scan_log`'s hits alone."""
    return scan_log(lines, signatures).hits


def _alias(line: str, pkg: str) -> str:
    """The module name (:func:`name_tables`) by which ``line`` names ``pkg`` where it is no plain form of the
    distribution's name (flash_attn_gpu for flash-attn); "" if none."""
    return next((m for m, p in name_tables().modules.items() if p == pkg and m != pkg.replace("-", "_")
                 and re.search(rf"(?<![\w-]){re.escape(m)}(?![\w-])", line)), "")


def _wider(m: re.Match[str], o: re.Match[str]) -> bool:
    """Whether ``m``'s span holds ``o``'s and more."""
    return m.start() <= o.start() and o.end() <= m.end() and m.end() - m.start() > o.end() - o.start()


def _more_values(m: re.Match[str], o: re.Match[str]) -> bool:
    """Whether ``m`` reads ``o``'s span and, of its values, more (a lookahead's group: CPython's "Did you mean" name
    after an attribute error, read in the case the log has it)."""
    return m.span() == o.span() and {g for g, v in o.groupdict().items() if v} < {g for g, v in m.groupdict().items() if v}


def _inside(m: re.Match[str], others: list[re.Match[str]]) -> bool:
    """Whether ``m``'s span lies inside a strictly wider match of another signature on the same line."""
    a, b = m.span()
    return any(o is not m and o.start() <= a and b <= o.end() and o.end() - o.start() > b - a for o in others)


def match_signatures(text: str, signatures: Sequence[SignatureRow]) -> list[Hit]:
    """The signatures found in ``text`` (a probe's error), with line 0."""
    return [replace(h, line=0) for h in scan_lines(text.splitlines(), signatures)]


def render(hits: list[Hit], name: str, others: Sequence[OtherCauseHit] = ()) -> str:
    """uv-style prose: what was found, why, and one concrete hint each; then one line for each cause outside packaging
    the log shows (what it shows, and the usual remedy)."""
    elsewhere = [f"line {o.line}: not a packaging failure ({o.id}): {o.shows}; hint: {o.remedy}" for o in others]
    if not hits:
        return "\n".join([f"{name}: no known failure signature found", *elsewhere])
    out = [f"{name}: {len(hits)} known failure signature(s)"]
    for h in hits:
        times = f" ({h.count} lines)" if h.count > 1 else ""
        out.append("")
        out.append(f"line {h.line}: {cause_name(h.id, h.family)}{times}")
        out.append(f"  matched: {h.text}")
        if h.package:
            out.append(f"  package: {h.package}{' ' + h.version if h.version else ''}")
        out.append(f"  cause:   {h.cause}")
        out.append(f"  hint:    {h.remedy}")
    if elsewhere:
        out += ["", *elsewhere]
    return "\n".join(out)


# --- linear time -------------------------------------------------------------------------------------


def linear_time_problem(pattern: str) -> str | None:
    """Why matching ``pattern`` against a line could cost more than linear time in the line (None when it
    cannot). Python's ``re`` backtracks, so a signature must avoid the shapes that make it backtrack
    without bound:

    * a quantifier inside a quantifier (``(a+)+``, ``(\\w+\\s?)*``): exponential;
    * a backreference;
    * an unbounded repeat (``*``, ``+``, ``{n,}``) followed by anything that can fail, an anchor included
      (``cuInit.*(failed|error)``: a search tries every start, and each scans the rest of the line, so
      a line repeating ``cuInit`` costs the square of its length). Write the gap bounded, ``.{0,200}``,
      or put the repeat last (``undefined symbol: \\S+``), where the first success ends the search;
    * a bound above :data:`MAX_BOUND`;
    * bounded gaps whose spans multiply past :data:`MAX_GAPS` (``a.{0,200}b.{0,200}c.{0,200}d``: a failing search
      backtracks through every split of each gap, the product of their spans at each start: seconds a line).
    """
    # the standard library's own regex parser (private modules without type stubs: typed as Any here)
    c: Any = importlib.import_module("re._constants")
    sre: Any = importlib.import_module("re._parser")

    try:
        tree = sre.parse(pattern)
    except re.error as e:
        return f"invalid regular expression: {e}"
    repeats = (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT)

    def always(item: tuple[Any, Any]) -> bool:
        """Whether ``item`` matches (the empty string, at least) wherever it is tried: then a repeat before
        it ends the match at its first success. Anchors and lookarounds can fail, so they do not."""
        op, av = item
        if op in repeats:
            lo, _, body = av
            return lo == 0 or all(map(always, body))
        if op == c.SUBPATTERN:
            return all(map(always, av[3]))
        if op == c.ATOMIC_GROUP:
            return all(map(always, av))
        if op == c.BRANCH:
            return any(all(map(always, b)) for b in av[1])
        return False

    def inner_repeat(seq: Iterable[tuple[Any, Any]]) -> bool:
        for op, av in seq:
            if op in repeats and (av[1] > 1 or inner_repeat(av[2])):
                return True
            inner = (av[3] if op == c.SUBPATTERN else av if op == c.ATOMIC_GROUP
                     else [x for b in av[1] for x in b] if op == c.BRANCH
                     else av[1] if op in (c.ASSERT, c.ASSERT_NOT) else ())
            if inner and inner_repeat(inner):
                return True
        return False

    gaps = [1]  # the product of the spans of the bounded repeats followed by pattern that can fail

    def char_ok(item: tuple[Any, Any], ch: str) -> bool | None:
        """Whether the one-character item matches ``ch``; None when this reader cannot tell."""
        op, av = item
        cats = {c.CATEGORY_DIGIT: str.isdigit, c.CATEGORY_WORD: lambda x: x.isalnum() or x == "_",
                c.CATEGORY_SPACE: str.isspace}
        if op == c.LITERAL:
            return chr(av) == ch
        if op == c.NOT_LITERAL:
            return chr(av) != ch
        if op == c.ANY:
            return ch != "\n"
        if op == c.IN:
            neg, hit = False, False
            for sub, sv in av:
                if sub == c.NEGATE:
                    neg = True
                elif sub == c.LITERAL:
                    hit |= chr(sv) == ch
                elif sub == c.RANGE:
                    hit |= sv[0] <= ord(ch) <= sv[1]
                elif sub == c.CATEGORY and sv in cats:
                    hit |= bool(cats[sv](ch))
                else:
                    return None
            return hit != neg
        return None

    def delimited(body: Any, rest: list[tuple[Any, Any]]) -> bool:
        """A repeat of one character class followed by a literal (or a set of literals) that class cannot match
        (``\\d{1,4}\\.``): where it ends is fixed by that literal, so its span does not multiply the others'."""
        items_ = list(body)
        if len(items_) != 1 or not rest:
            return False
        op, av = rest[0]
        if op == c.LITERAL:
            return char_ok(items_[0], chr(av)) is False
        # a set of literals (a quote read as any quote, :func:`tolerant`): the class can match none of them
        return (op == c.IN and bool(av) and all(sub == c.LITERAL for sub, _ in av)
                and all(char_ok(items_[0], chr(sv)) is False for _, sv in av))

    def first_disjoint(a: list[tuple[Any, Any]], b: list[tuple[Any, Any]]) -> bool:
        """Whether two alternatives provably start with different characters (an empty one starts with anything)."""
        if not a or not b:
            return False
        (oa, va), (ob, vb) = a[0], b[0]
        if oa == c.LITERAL and ob == c.LITERAL:
            return bool(va != vb)
        if oa == c.LITERAL:
            return char_ok(b[0], chr(va)) is False
        if ob == c.LITERAL:
            return char_ok(a[0], chr(vb)) is False
        return False

    def ambiguous(seq: Iterable[tuple[Any, Any]]) -> bool:
        """Whether a repeat's body can match the same text in more than one way (an optional or variable part, or
        alternatives not told apart by their first character: ``(?:a|a)``, ``(a|aa)``, ``(?:a?)``): repeated, every
        way multiplies the ways a failing search tries (exponential)."""
        for op, av in seq:
            if op in repeats and (av[0] != av[1] or ambiguous(av[2])):
                return True
            if op == c.BRANCH:
                alts = [list(b) for b in av[1]]
                if any(not first_disjoint(x, y) for i, x in enumerate(alts) for y in alts[i + 1:]):
                    return True
                if any(ambiguous(x) for x in alts):
                    return True
            inner = av[3] if op == c.SUBPATTERN else av if op == c.ATOMIC_GROUP else ()
            if inner and ambiguous(inner):
                return True
        return False

    def check(seq: Iterable[tuple[Any, Any]], in_repeat: bool, rest_always: bool,
              follow: list[tuple[Any, Any]] | None = None) -> str | None:
        items = list(seq)  # ``follow``: what comes after this sequence, where it is a group's (its delimiter)
        for i, (op, av) in enumerate(items):
            after = rest_always and all(map(always, items[i + 1:]))
            if op in repeats:
                lo, hi, body = av
                if hi > 1:
                    if in_repeat or inner_repeat(body):
                        return "a quantifier inside a quantifier (nested quantifiers backtrack exponentially)"
                    if ambiguous(body):
                        return ("a repeat of alternatives or optional parts that can match the same text ((?:a|a){0,1000}b, "
                                "(a|aa)*c: each way multiplies a failing search's tries, exponential); make the "
                                "alternatives start with different characters, or repeat one character class")
                    if hi == c.MAXREPEAT and not after:
                        return ("an unbounded repeat (*, +, {n,}) followed by more pattern that can fail (each start "
                                "of a search scans the rest of the line: quadratic); bound it, e.g. .{0,200}")
                    if hi != c.MAXREPEAT and hi > MAX_BOUND:
                        return f"a repeat bound of {hi} (at most {MAX_BOUND})"
                    if not after and not delimited(body, items[i + 1:] or list(follow or ())):
                        gaps[0] *= hi - lo + 1
                        if gaps[0] > MAX_GAPS:
                            return (f"bounded gaps whose spans multiply to more than {MAX_GAPS} (a failing search "
                                    "backtracks through every split of each: keep one gap, or narrow them)")
                why = check(body, in_repeat or hi > 1, after)
            elif op == c.SUBPATTERN:
                why = check(av[3], in_repeat, after, items[i + 1:] + list(follow or ()))
            elif op == c.ATOMIC_GROUP:
                why = check(av, in_repeat, after)
            elif op == c.BRANCH:  # alternatives are tried one after another: their gaps add, the worst counts
                base, worst, why = gaps[0], gaps[0], None
                for b in av[1]:
                    gaps[0] = base
                    why = check(b, in_repeat, after)
                    if why:
                        break
                    worst = max(worst, gaps[0])
                gaps[0] = worst
            elif op in (c.ASSERT, c.ASSERT_NOT):
                why = check(av[1], in_repeat, True)
            elif op in (c.GROUPREF, c.GROUPREF_EXISTS):
                why = "a backreference"
            else:
                why = None
            if why:
                return why
        return None

    why = check(tree, False, True)
    if why is None:  # only now is running the pattern known to be cheap
        compiled = re.compile(pattern)
        if any(compiled.search(w) is not None for w in BLANKS):
            return ("it matches an empty or blank line (a signature must name text the log prints; blank lines are "
                    "skipped)")
    return why


# --- reading a log -------------------------------------------------------------------------------------

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def _encoding(head: bytes) -> tuple[str, int]:
    """(codec, bytes of byte-order mark) of a log from its first bytes: the BOM's; UTF-16 without one when
    every other byte is NUL (ASCII text as UTF-16); else UTF-8."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, len(bom)
    sample = head[:4096] if len(head) % 2 == 0 else head[:4095]
    if len(sample) >= 4:
        even, odd = sample[0::2], sample[1::2]
        if odd.count(0) >= 0.9 * len(odd) and even.count(0) == 0:
            return "utf-16-le", 0
        if even.count(0) >= 0.9 * len(even) and odd.count(0) == 0:
            return "utf-16-be", 0
    return "utf-8", 0


def _opened(stream: BinaryIO, chunk: int) -> tuple[Callable[[int], bytes], bytes, codecs.IncrementalDecoder]:
    """(read, the first bytes past any byte-order mark, the decoder) of a log: enough read to tell its encoding."""
    read = stream.read
    head = b""
    while len(head) < 4096:  # enough to tell the encoding
        more = read(chunk)
        if not more:
            break
        head += more
    codec, skip = _encoding(head)
    return read, head[skip:], codecs.getincrementaldecoder(codec)(errors="replace")


def log_lines(stream: BinaryIO, chunk: int = CHUNK) -> Iterator[str]:
    """The lines of a binary stream (a log), read ``chunk`` bytes at a time and decoded by its BOM, each
    cut at :data:`MAX_LINE` characters: memory stays bounded whatever the log's size or line lengths."""
    read, data, decoder = _opened(stream, chunk)
    parts: list[str] = []  # the current line's first characters (at most MAX_LINE)
    have = 0
    while True:
        text = decoder.decode(data, final=not data)
        start = 0
        while True:
            nl = text.find("\n", start)
            end = len(text) if nl < 0 else nl
            if have < MAX_LINE and end > start:
                piece = text[start:min(end, start + MAX_LINE - have)]
                parts.append(piece)
                have += len(piece)
            if nl < 0:
                break
            yield "".join(parts).removesuffix("\r")
            parts, have = [], 0
            start = nl + 1
        if not data:
            break
        data = read(chunk)
    if parts:
        yield "".join(parts).removesuffix("\r")


_NONSPACE = re.compile(r"\S")


def numbered_lines(stream: BinaryIO, chunk: int = CHUNK) -> Iterator[tuple[int, str]]:
    """The lines of a binary stream (a log) that are not blank, each with its 1-based number, read as
    :func:`log_lines` reads them (``chunk`` bytes at a time, decoded by its BOM, each cut at :data:`MAX_LINE`).

    Runs of blank lines are counted, not split: the search for the next non-blank character and the count of
    the newlines before it run inside the regex and string engines, so 50 MB of bare newlines cost what
    reading them costs, and a line of text costs one search, one find and one slice."""
    read, data, decoder = _opened(stream, chunk)
    n = 0  # lines ended so far
    buf = ""  # the start of the line the last chunk left open (at most MAX_LINE characters)
    open_ = False  # whether a line is open (buf may be empty or blank while it is)
    search, cut = _NONSPACE.search, MAX_LINE
    while True:
        text = decoder.decode(data, final=not data)
        pos = 0
        if open_:
            nl = text.find("\n")
            end = len(text) if nl < 0 else nl
            if len(buf) < cut:
                buf += text[:min(end, cut - len(buf))]
            if nl < 0:
                text = ""
            else:
                n += 1
                line = buf.removesuffix("\r")
                if line and not line.isspace():
                    yield n, line
                buf, open_, pos = "", False, nl + 1
        size = len(text)
        while pos < size:
            m = search(text, pos)
            if m is None:  # only blank lines left: count them; an unfinished one stays open
                tail = max(pos, text.rfind("\n", pos) + 1)
                n += text.count("\n", pos)
                if tail < size:
                    buf, open_ = text[tail:tail + cut], True
                break
            at = m.start()
            start = max(pos, text.rfind("\n", pos, at) + 1)
            n += text.count("\n", pos, start)
            nl = text.find("\n", at)
            if nl < 0:
                buf, open_ = text[start:start + cut], True
                break
            n += 1
            yield n, text[start:min(nl, start + cut)].removesuffix("\r")
            pos = nl + 1
        if not data:
            break
        data = read(chunk)
    if open_:
        line = buf.removesuffix("\r")
        if line and not line.isspace():
            yield n + 1, line
