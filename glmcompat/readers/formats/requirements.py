"""pip requirements files (kind ``requirements.txt``), with their ``-r``/``-c`` includes; also pip-freeze,
``uv pip compile`` and rye ``requirements.lock`` output. The only I/O is reading the files a requirements file
includes. The conda reader reads a ``pip:`` section with :class:`RequirementsReader`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_sdist_filename

from glmcompat.matrix.store import read_input
from glmcompat.model.errors import LockFormatError
from glmcompat.model.numbers import shorten
from glmcompat.readers.formats.common import (
    Format, ARCHIVE_SUFFIXES, VALID_NAME, Entry, Lock, LockMeta, cap, checked_marker, decode_text, direct_reference, error, first_line,
    marker_of, pin_or_spec, url_file,
)

MAX_INCLUDE_DEPTH = 32
# (one whitespace character before "#", not pip's "\s+": the same result once lines are stripped, without
# pip's quadratic backtracking on a long run of blanks)
MAX_REQUIREMENTS = 2 << 20  # characters (bytes, for an include) of one requirements file
_COMMENT = re.compile(r"(^|\s)#.*$")
_COMMENT_LINE = re.compile(r"\s*#")
_TAKES_VALUE = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "--trusted-host", "--no-binary", "--only-binary", "--use-feature", "--config-settings",
    "--global-option", "--hash",
})
_INCLUDES = {"-r": False, "--requirement": False, "-c": True, "--constraint": True}
# "name==version" with a plain release (digits and dots, none long enough to pass int()'s limit), nothing else: what
# packaging's Requirement and pin_or_spec make of it, read without them (a file of 100,000 pins spent most of its read
# in packaging's parser): the name as written (canonicalized after), no URL, no marker, the version as written
_PLAIN_PIN = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]{0,200}[A-Za-z0-9])?)==([0-9]{1,20}(?:\.[0-9]{1,20}){0,20})")
_URL_START = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|[.~/\\]|[^\s]*[/\\]")  # a scheme, or a path pip takes
_INDEXES = frozenset({"-i", "--index-url", "--extra-index-url"})
_GENERIC_DIRS = frozenset({"python", "src", "lib", "pkg", "package", "packages"})


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """pip's view of a requirements file: (first physical line, line) with ``\\`` continuations joined,
    comments (``#`` at the start or after whitespace) removed and blank lines dropped."""
    parts: list[str] = []
    first = 0
    for n, raw in enumerate(text.split("\n"), 1):
        if raw.endswith("\\") and not _COMMENT_LINE.match(raw):
            first = first or n
            parts.append(raw[:-1])
            continue
        line = _COMMENT.sub("", "".join(parts) + (" " + raw if _COMMENT_LINE.match(raw) else raw)).strip()
        if line:
            yield first or n, line
        parts, first = [], 0
    line = _COMMENT.sub("", "".join(parts)).strip()
    if line:
        yield first, line


_PIECE = re.compile(r"""([^ \t\r\n'"\\]+)|'([^']*)'|"((?:[^"\\]|\\[\s\S])*)"|\\([\s\S])|([ \t\r\n]+)""")
_DQ_ESCAPE = re.compile(r'\\(["\\])')


def split_words(s: str) -> list[str]:
    """``shlex.split(s)`` (POSIX, no comments), in time linear in ``s``: shlex builds a token a character at a time,
    quadratic on a long one (an 800 KB option token took 12 s). ValueError where shlex raises one (an unclosed
    quote, a trailing backslash)."""
    words: list[str] = []
    parts: list[str] | None = None
    pos, n = 0, len(s)
    match = _PIECE.match
    while pos < n:
        m = match(s, pos)
        if m is None:
            raise ValueError("No closing quotation" if s[pos] in "'\"" else "No escaped character")
        pos = m.end()
        plain, single, double, escaped, space = m.groups()
        if space is not None:
            if parts is not None:
                words.append("".join(parts))
                parts = None
            continue
        if parts is None:
            parts = []
        if plain is not None:
            parts.append(plain)
        elif single is not None:
            parts.append(single)
        elif double is not None:
            parts.append(_DQ_ESCAPE.sub(r"\1", double))
        else:
            parts.append(escaped)
    if parts is not None:
        words.append("".join(parts))
    return words


def _split_args(line: str) -> tuple[str, list[str]]:
    """pip's break_args_options: the requirement (tokens before the first ``-`` one) and the option tokens."""
    tokens = line.split(" ")
    i = next((k for k, t in enumerate(tokens) if t.startswith("-")), len(tokens))
    return " ".join(tokens[:i]).strip(), split_words(" ".join(tokens[i:]))  # ValueError: pip's shlex refuses it too


def include_targets(text: str) -> list[str]:
    """The files a requirements text's ``-r``/``-c`` lines name, as written (relative to that file), in order;
    what bump mode reads at a git revision before it parses the file."""
    out: list[str] = []
    for _, line in logical_lines(text.lstrip("\ufeff")):
        try:
            req, words = _split_args(line)
        except ValueError:
            continue  # the parse of the file names the line
        if req:
            continue
        for opt, value in _options(words):
            if opt in _INCLUDES and value and "://" not in value:
                out.append(value)
    return out


def _options(words: list[str]) -> Iterator[tuple[str, str | None]]:
    """(option, value) pairs of an option line: ``--opt=V``, ``--opt V``, ``-oV``, ``-o V``."""
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-"):
            continue
        if word.startswith("--"):
            opt, eq, val = word.partition("=")
            value: str | None = val if eq else None
        else:
            opt, value = word[:2], (word[2:] or None)
        if value is None and opt in _TAKES_VALUE and i < len(words):
            value, i = words[i], i + 1
        yield opt, value


@dataclass(frozen=True)
class ReqFile:
    """A requirements file being read: its path (to read and resolve includes from), how messages name
    it, and its ``Entry.origin`` (None for the top file)."""

    path: Path
    shown: str
    origin: str | None


class RequirementsReader:
    """Reads a requirements file and its includes into entries, in file order (an include's entries
    where its ``-r`` line is). Includes resolve against the including file's directory; one that stays
    inside the top file's directory tree as written must stay inside it once symlinks are resolved."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.root = os.path.realpath(top.parent)
        self.entries: list[Entry] = []
        self.notes: list[str] = []
        self.indexes: list[str] = []
        self.index_url = ""  # the last --index-url / -i (pip keeps the last)
        self.stack: list[tuple[str, str]] = [(os.path.realpath(top), str(top))]  # (real path, shown)
        self.done: set[tuple[str, bool]] = set()
        self.includes: list[str] = []  # every included file, relative to the top file (a cache must key on them)
        self._parsed: dict[str, tuple[str, str | None, str | None, str | None, str | None]] = {}
        self.wheels: dict[str, str] = {}  # name==version -> the wheel's URL or path (relative to the top file's folder)

    def lock(self, kind: str = "requirements.txt", requires_python: str | None = None,
             meta: LockMeta | None = None) -> Lock:
        """The :class:`Lock` of what was read; ``meta`` gains ``includes``, ``notes`` and ``index_urls`` when there are
        any."""
        out = meta.copy() if meta else LockMeta()
        if self.includes:
            out["includes"] = sorted(set(self.includes))
        if self.notes:
            out["notes"] = list(self.notes)
        if self.indexes:
            out["index_urls"] = list(dict.fromkeys(self.indexes))
        if self.index_url:
            out["index_url"] = self.index_url
        if self.wheels:
            out["wheel_urls"] = dict(sorted(self.wheels.items()))
        return Lock(str(self.top), kind, tuple(self.entries), requires_python, (), out)

    def read(self, f: ReqFile, lines: Iterable[tuple[int, str]], constraint: bool) -> None:
        """Read the logical ``lines`` of ``f`` (``constraint``: entries narrow and install nothing)."""
        for n, line in lines:
            try:
                req, words = _split_args(line)
            except ValueError as e:
                raise error(f"options {shorten(line.strip())!r}: {first_line(e).lower()} (pip refuses the line too)",
                            f.shown, n) from None
            if req:
                self.requirement(f, n, req, constraint)
            else:
                self.option_line(f, n, words, constraint)

    def option_line(self, f: ReqFile, n: int, words: list[str], constraint: bool) -> None:
        for opt, value in _options(words):
            if opt in _INCLUDES or opt in ("-e", "--editable"):
                if not value:
                    raise error(f"option {opt} needs a value", f.shown, n)
                if opt in _INCLUDES:
                    self.include(f, n, opt, value, _INCLUDES[opt])
                else:
                    self.editable(f, n, value, constraint)
            elif opt in _INDEXES and value:
                self.indexes.append(value)
                if opt != "--extra-index-url":
                    self.index_url = value

    # includes

    def include(self, f: ReqFile, n: int, opt: str, target: str, constraint: bool) -> None:
        """Read the file ``-r``/``-c`` names: ``constraint`` for ``-c`` (as in pip, a ``-r`` inside a
        constraints file names requirements)."""
        what = f"{opt} {target!r}"
        if "://" in target:
            raise error(f"{what}: a URL; glmcompat reads local include files only", f.shown, n)
        origin = os.path.normpath(os.path.join(os.path.dirname(f.origin or ""), target))
        path = Path(os.path.join(f.path.parent, target))
        shown = os.path.normpath(os.path.join(os.path.dirname(f.shown), target))
        real = os.path.realpath(path)
        if not (origin == ".." or origin.startswith("../") or os.path.isabs(origin)) and \
                os.path.commonpath([self.root, real]) != self.root:
            raise error(f"{what} escapes {str(self.top.parent) or '.'!r} through a symlink (to {real!r})", f.shown, n)
        if any(r == real for r, _ in self.stack):
            chain = " -> ".join([s for _, s in self.stack] + [shown])
            raise error(f"{what}: include cycle {chain}", f.shown, n)
        if len(self.stack) > MAX_INCLUDE_DEPTH:
            raise error(f"{what}: includes nested deeper than {MAX_INCLUDE_DEPTH}", f.shown, n)
        if (real, constraint) in self.done:
            return  # read already: the same entries again would say nothing new
        try:
            data = read_input(path, LockFormatError, "a requirements file", MAX_REQUIREMENTS)
        except LockFormatError as e:
            raise error(f"{what}: {e.message}", f.shown, n) from None
        self.includes.append(origin)
        self.stack.append((real, shown))
        sub = ReqFile(path, shown, origin)
        self.read(sub, logical_lines(decode_text(Path(shown), data)), constraint)
        self.stack.pop()
        self.done.add((real, constraint))

    # requirement lines

    def requirement(self, f: ReqFile, n: int, text: str, constraint: bool) -> None:
        if _is_location(text):
            self.location(f, n, text, constraint)
            return
        parsed = self._parsed.get(text)  # a line seen before is parsed once (a file of one line repeated)
        if parsed is None and (pin := _PLAIN_PIN.fullmatch(text)) is not None:
            parsed = self._parsed[text] = (canonicalize_name(pin[1]), None, None, pin[2], None)
        if parsed is None:
            try:
                req = Requirement(text)
                marker = str(checked_marker(req.marker)) if req.marker else None
                version, spec = pin_or_spec(req.specifier)
            except (ValueError, TypeError, LookupError, RecursionError) as e:
                raise error(f"invalid requirement {text!r}: {first_line(e)}", f.shown, n) from None
            if req.url is not None and not _URL_START.match(req.url):
                raise error(f"invalid requirement {shorten(text)!r}: {shorten(req.url)!r} after '@' is neither a URL "
                            "(https:, file:, git+https:...) nor a path", f.shown, n)
            parsed = self._parsed[text] = (canonicalize_name(req.name), req.url, marker, version, spec)
        name, url, marker, version, spec = parsed
        if url:
            source, _, version = direct_reference(f.shown, n, name, url)
            self.wheel_at(f, name, version, url)
            self.add(Entry(name, version, marker, source, None, constraint, f.origin, n))
            return
        self.add(Entry(name, version, marker, "registry", spec, constraint, f.origin, n))

    def wheel_at(self, f: ReqFile, name: str, version: str | None, loc: str) -> None:
        """Keep where a wheel entry's file is (a URL, or a path made relative to the top file's folder)."""
        if version is None:
            return
        if "://" not in loc and not os.path.isabs(loc):
            loc = os.path.normpath(os.path.join(os.path.dirname(f.origin or ""), loc))
        self.wheels[f"{name}=={version}"] = loc

    def location(self, f: ReqFile, n: int, text: str, constraint: bool) -> None:
        """A line that is a URL or path with no ``name @`` (``./wheels/x-1.0-py3-none-any.whl``, ``git+...#egg=x``)."""
        m = re.search(r"\s;|;\s", text)  # pip: a URL's marker follows "; " or " ;"
        loc, mark = (text[: m.start()].strip(), text[m.end():]) if m else (text, "")
        marker = marker_of(mark.strip() or None, f.shown, n, f"requirement {text!r}")
        source, wname, version = direct_reference(f.shown, n, None, loc)
        if wname is not None:
            self.wheel_at(f, wname, version, loc)
            self.add(Entry(wname, version, marker, source, None, constraint, f.origin, n))
            return
        name = _egg(loc) or _sdist_name(loc) or _directory_name(loc)
        if name is None:
            self.notes.append(cap(f"{f.shown}:{n}: cannot tell the project name of {loc!r} (no #egg=); not checked"))
            return
        self.add(Entry(name, None, marker, source, None, constraint, f.origin, n))

    def editable(self, f: ReqFile, n: int, target: str, constraint: bool) -> None:
        """``-e LOCATION``: an editable entry, named by ``#egg=`` or a local directory's name, else a note."""
        location = re.sub(r"\[[^\]]*\]$", "", target)
        name = _egg(location) or _directory_name(location)
        if name is None:
            self.notes.append(cap(f"{f.shown}:{n}: editable {target!r}: cannot tell its project name (no #egg=); "
                                   "not checked"))
            return
        self.add(Entry(name, None, None, "editable", None, constraint, f.origin, n))

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)


def _is_location(text: str) -> bool:
    """Whether a requirement line is a bare URL or path (pip: a scheme, a path separator, a leading dot,
    or an archive file name) rather than a PEP 508 requirement."""
    head = text.split(";", 1)[0].strip()
    if re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*@", head):
        return False  # name @ url
    return bool(re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://|file:|[A-Za-z]:[\\/]|\.|/|~)", head)) \
        or head.lower().endswith(ARCHIVE_SUFFIXES)


def _egg(location: str) -> str | None:
    m = re.search(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)", location)
    return canonicalize_name(m.group(1)) if m and VALID_NAME.match(m.group(1)) else None


def _sdist_name(location: str) -> str | None:
    try:
        name, _ = parse_sdist_filename(url_file(location))
        return canonicalize_name(name)
    except ValueError:
        return None


def _directory_name(location: str) -> str | None:
    """The project name a local directory's own name gives (``-e ./vendor/flashinfer``), unless the
    location is a URL, ``.``, or a name that says nothing (``python``, ``src``)."""
    loc = location[5:] if location.lower().startswith("file:") else location
    if "://" in loc or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*\+", loc):
        return None
    last = os.path.basename(os.path.normpath(loc.rstrip("/"))) if loc.strip() else ""
    if not last or last in (".", "..") or last.lower() in _GENERIC_DIRS or not VALID_NAME.match(last):
        return None
    return canonicalize_name(last)


def parse_requirements(path: Path, text: str) -> Lock:
    """A pip requirements file (kind ``requirements.txt``): pins, ranges, markers, ``name @ url``,
    ``-e``, ``--hash`` continuations, and its ``-r``/``-c`` includes read recursively. ``name==X`` gives
    ``version=X``; anything else ``version=None`` and ``spec``. Option lines are skipped (index URLs are
    kept in ``meta["index_urls"]``); ``meta["notes"]`` says what could not be named."""
    if len(text) > MAX_REQUIREMENTS:
        raise error(f"{len(text)} characters is more than a requirements file may hold ({MAX_REQUIREMENTS >> 20} "
                     "MiB; pip-compile's largest, with hashes, are far smaller)", path)
    reader = RequirementsReader(path)
    reader.read(ReqFile(path, str(path), None), logical_lines(text), False)
    if not any(not e.constraint for e in reader.entries):
        extra = " (only constraints)" if reader.entries else ""
        notes = f"; {'; '.join(reader.notes)}" if reader.notes else ""
        raise error(f"no requirements found{extra}{notes}", path)
    return reader.lock()


FORMAT = Format("requirements.txt", parse_requirements,
                names=(r"requirements[^/]*\.lock", r"(requirements|constraints)[^/]*\.(txt|in)"), loose=(r".*\.(txt|in)",), fallback=True,
                beside=5)
