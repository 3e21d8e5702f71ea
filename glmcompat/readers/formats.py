"""Readers for the dependency files people hand to ``glmcompat check`` besides uv.lock and pylock.toml.

pip requirements files (with their ``-r``/``-c`` includes; also pip-freeze, ``uv pip compile`` and rye
``requirements.lock`` output), poetry.lock, pdm.lock, Pipfile.lock and conda environment files; and the
helpers that decode a file's bytes and tell its kind by name or by content.

Each reader takes the file's path (for messages and for includes) and its decoded text, and returns a
:class:`~glmcompat.readers.depset.Lock` whose entries are in file order. Every failure is a one-line
:class:`~glmcompat.model.errors.LockFormatError` naming the file, and the line where one applies. The only
I/O is reading the files that a requirements file (or a conda file's ``pip:`` section) includes.
``Lock.meta`` holds only JSON values (lists, dicts, strings), so a lock caches as JSON.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

from glmcompat.matrix.store import read_input
from glmcompat.model.errors import LockFormatError
from glmcompat.readers.depset import Entry, Lock
from glmcompat.readers.depset import line_of as _line_of
from glmcompat.readers.depset import toml as _toml

KNOWN_POETRY_LOCK_VERSIONS = ("1", "2")  # lock-version majors ("1.1", "2.1", ...)
KNOWN_PDM_LOCK_VERSIONS = ("4",)  # lock_version majors ("4.4.1", "4.5.0", ...)
KNOWN_PIPFILE_SPECS = (6,)
MAX_INCLUDE_DEPTH = 32

_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
_ARCHIVE = (".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tar", ".zip", ".whl")


# --- bytes to text ----------------------------------------------------------------------------------------------

_BOMS = (  # UTF-32 first: its little-endian BOM begins with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode_text(path: Path, data: bytes) -> str:
    """The text of a dependency file: UTF-8 (with or without a BOM), or UTF-16/UTF-32 with a BOM; the
    BOM dropped and CRLF / CR line ends made LF. Undecodable bytes and NUL characters (binary data, or
    UTF-16 without a BOM) raise :class:`LockFormatError` naming the file and line."""
    codec, body = "utf-8", data
    for bom, name in _BOMS:
        if data.startswith(bom):
            codec, body = name, data[len(bom):]
            break
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as e:
        line = _count_lines(body[: e.start].decode(codec, errors="replace"), None)
        raise LockFormatError(f"not {codec.upper()} text: cannot decode {body[e.start:e.end]!r}",
                              path=str(path), line=line) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    nul = text.find("\0")
    if nul >= 0:
        hint = " (UTF-16 without a byte-order mark?)" if codec == "utf-8" else ""
        raise LockFormatError(f"binary data (a NUL character), not a text file{hint}", path=str(path),
                              line=_count_lines(text, nul))
    return text


def _count_lines(text: str, end: int | None) -> int:
    """The 1-based line of offset ``end`` in ``text`` (its last line when None), any line end counted."""
    head = text if end is None else text[:end]
    return head.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1


# --- kinds ------------------------------------------------------------------------------------------------------

def kind_from_name(name: str) -> str | None:
    """The kind a well-known file name tells (``poetry.lock``, ``conda-cuda.yml``, ``requirements-dev.lock``,
    ``*.txt``, ...), or None when only the content can tell (``prod.lock``, ``env.yaml``)."""
    low = name.lower()
    if low == "uv.lock" or low.endswith(".uv.lock"):
        return "uv.lock"
    if low == "pylock.toml" or (low.startswith("pylock.") and low.endswith(".toml")):
        return "pylock.toml"
    exact = {"poetry.lock": "poetry.lock", "pdm.lock": "pdm.lock", "pipfile.lock": "Pipfile.lock"}
    if low in exact:
        return exact[low]
    if re.fullmatch(r"(environment|conda)[^/]*\.ya?ml", low):
        return "environment.yml"
    if re.fullmatch(r"requirements[^/]*\.lock", low) or low.endswith((".txt", ".in")):
        return "requirements.txt"
    return None


_SIGNS = (  # (kind, patterns that must all match), checked in order
    ("poetry.lock", (r"\A(#[^\n]*\n)*# This file is automatically @generated by Poetry",)),
    ("poetry.lock", (r"^\[metadata\]", r"^content-hash\s*=", r"^\[\[package\]\]")),
    ("pdm.lock", (r"\A(#[^\n]*\n)*# This file is @generated by PDM",)),
    ("pdm.lock", (r"^\[metadata\]", r"^lock_version\s*=")),
    ("pylock.toml", (r"^lock-version\s*=", r"^\[\[packages\]\]")),
    ("uv.lock", (r"^version\s*=\s*\d+\s*$", r"^\[\[package\]\]", r"^source\s*=")),
    ("environment.yml", (r"^dependencies\s*:",)),
)


def sniff_kind(path: Path, text: str) -> str | None:
    """The kind a file's content tells, for names that do not (``locks/prod.lock``, ``env.yaml``, a
    ``deps.txt`` that is really a poetry.lock): one of the lock kinds, ``requirements.txt`` for anything
    else that reads as text lines, or None for a TOML or JSON document of no known kind."""
    body = text.lstrip("\ufeff")
    head = body.lstrip()
    if head.startswith("{"):
        return "Pipfile.lock" if re.search(r'"_meta"\s*:', body) else None
    for kind, patterns in _SIGNS:
        if all(re.search(p, body, re.MULTILINE) for p in patterns):
            return kind
    if re.search(r"^\[{1,2}[A-Za-z_.\"-]+\]{1,2}\s*$", body, re.MULTILINE):
        return None  # TOML tables of some other document (a pyproject.toml, a config)
    return "requirements.txt"


# --- shared by the readers --------------------------------------------------------------------------------------
# packaging's InvalidVersion / InvalidSpecifier / InvalidMarker / InvalidRequirement / InvalidWheelFilename are
# ValueErrors, and so is int()'s digit limit on an absurd version: readers catch ValueError (and RecursionError
# where a parser recurses: markers, TOML, JSON).

MAX_MESSAGE = 300  # characters: a quoted value from a hostile or binary file must not flood the terminal


def _cap(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


def _error(message: str, path: Path | str, line: int | None = None) -> LockFormatError:
    return LockFormatError(_cap(message), path=str(path), line=line)


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _checked(spec: SpecifierSet) -> SpecifierSet:
    """``spec`` once every version it names parses (packaging's specifier grammar admits a version of
    5000 digits, which only fails, as a ValueError, where it is compared); ValueError otherwise."""
    for s in spec:
        if s.operator != "===":
            Version(s.version[:-2] if s.version.endswith(".*") else s.version)
    return spec


def _checked_marker(marker: Marker) -> Marker:
    """``marker`` once it evaluates (every clause is evaluated: a version of 5000 digits in one fails
    here, as a ValueError, instead of where the environments are computed)."""
    marker.evaluate({"extra": "", "extras": frozenset(), "dependency_groups": frozenset()})
    return marker


def _pin_or_spec(spec: SpecifierSet) -> tuple[str | None, str | None]:
    """(exact version, None) for ``==X`` / ``===X`` with a plain version X (local label kept), else
    (None, the specifier: "" when there is none). ValueError when a version it names does not parse."""
    specs = list(_checked(spec))
    if len(specs) == 1 and specs[0].operator in ("==", "===") and not specs[0].version.endswith(".*"):
        try:
            Version(specs[0].version)
            return specs[0].version, None
        except ValueError:
            pass
    return None, str(spec)


def _marker(value: Any, path: Path | str, line: int | None, what: str) -> str | None:
    """A marker string, validated and in packaging's normal form (``python_version >= "3.8"``: the caller
    evaluates it), or None when absent or empty."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _error(f"{what}: marker must be a string, not {value!r}", path, line)
    try:
        return str(_checked_marker(Marker(value)))
    except (ValueError, TypeError, LookupError, RecursionError) as e:
        raise _error(f"{what}: invalid marker {value!r}: {_first_line(e)}", path, line) from None


def _url_file(url: str) -> str:
    """The unquoted last path component of a URL or path (``torch-2.9.1%2Bcu128-...whl`` -> ``+``)."""
    try:
        p = urlsplit(url).path if "://" in url else url.split("#")[0].split("?")[0]
    except ValueError:
        p = url
    return unquote(p.rstrip("/").rsplit("/", 1)[-1])


def _local_kind(location: str) -> str:
    """``wheel`` / ``path`` (an archive) / ``directory`` for a local path, by its name alone (no I/O)."""
    f = _url_file(location).lower()
    if f.endswith(".whl"):
        return "wheel"
    return "path" if f.endswith(_ARCHIVE) else "directory"


def _url_kind(url: str) -> str:
    """The :class:`Entry` source kind of a direct reference (``name @ url``, a Pipfile ``file``)."""
    low = url.lower()
    if low.startswith("git+"):
        return "git"
    if low.startswith(("hg+", "svn+", "bzr+")):
        return "url"
    if low.startswith("file:") or "://" not in low:
        return _local_kind(url[5:] if low.startswith("file:") else url)
    return "wheel" if _url_file(url).lower().endswith(".whl") else "url"


# --- requirements files -----------------------------------------------------------------------------------------

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
    opts = " ".join(tokens[i:])
    try:
        words = split_words(opts)
    except ValueError:
        words = opts.split()
    return " ".join(tokens[:i]).strip(), words


def include_targets(text: str) -> list[str]:
    """The files a requirements text's ``-r``/``-c`` lines name, as written (relative to that file), in order;
    what bump mode reads at a git revision before it parses the file."""
    out: list[str] = []
    for _, line in logical_lines(text.lstrip("\ufeff")):
        req, words = _split_args(line)
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
class _File:
    """A requirements file being read: its path (to read and resolve includes from), how messages name
    it, and its ``Entry.origin`` (None for the top file)."""

    path: Path
    shown: str
    origin: str | None


class _RequirementsReader:
    """Reads a requirements file and its includes into entries, in file order (an include's entries
    where its ``-r`` line is). Includes resolve against the including file's directory; one that stays
    inside the top file's directory tree as written must stay inside it once symlinks are resolved."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.root = os.path.realpath(top.parent)
        self.entries: list[Entry] = []
        self.notes: list[str] = []
        self.indexes: list[str] = []
        self.stack: list[tuple[str, str]] = [(os.path.realpath(top), str(top))]  # (real path, shown)
        self.done: set[tuple[str, bool]] = set()
        self.includes: list[str] = []  # every included file, relative to the top file (a cache must key on them)
        self._parsed: dict[str, tuple[str, str | None, str | None, str | None, str | None]] = {}

    def lock(self, kind: str = "requirements.txt", requires_python: str | None = None,
             meta: dict[str, Any] | None = None) -> Lock:
        """The :class:`Lock` of what was read; ``meta`` gains ``notes`` and ``index_urls`` when there are any."""
        out = dict(meta or {})
        if self.includes:
            out["includes"] = sorted(set(self.includes))
        if self.notes:
            out["notes"] = list(self.notes)
        if self.indexes:
            out["index_urls"] = list(dict.fromkeys(self.indexes))
        return Lock(str(self.top), kind, tuple(self.entries), requires_python, (), out)

    def read(self, f: _File, lines: Iterable[tuple[int, str]], constraint: bool) -> None:
        """Read the logical ``lines`` of ``f`` (``constraint``: entries narrow and install nothing)."""
        for n, line in lines:
            req, words = _split_args(line)
            if req:
                self.requirement(f, n, req, constraint)
            else:
                self.option_line(f, n, words, constraint)

    def option_line(self, f: _File, n: int, words: list[str], constraint: bool) -> None:
        for opt, value in _options(words):
            if opt in _INCLUDES or opt in ("-e", "--editable"):
                if not value:
                    raise _error(f"option {opt} needs a value", f.shown, n)
                if opt in _INCLUDES:
                    self.include(f, n, opt, value, _INCLUDES[opt])
                else:
                    self.editable(f, n, value, constraint)
            elif opt in _INDEXES and value:
                self.indexes.append(value)

    # includes

    def include(self, f: _File, n: int, opt: str, target: str, constraint: bool) -> None:
        """Read the file ``-r``/``-c`` names: ``constraint`` for ``-c`` (as in pip, a ``-r`` inside a
        constraints file names requirements)."""
        what = f"{opt} {target!r}"
        if "://" in target:
            raise _error(f"{what}: a URL; glmcompat reads local include files only", f.shown, n)
        origin = os.path.normpath(os.path.join(os.path.dirname(f.origin or ""), target))
        path = Path(os.path.join(f.path.parent, target))
        shown = os.path.normpath(os.path.join(os.path.dirname(f.shown), target))
        real = os.path.realpath(path)
        if not (origin == ".." or origin.startswith("../") or os.path.isabs(origin)) and \
                os.path.commonpath([self.root, real]) != self.root:
            raise _error(f"{what} escapes {str(self.top.parent) or '.'!r} through a symlink (to {real!r})", f.shown, n)
        if any(r == real for r, _ in self.stack):
            chain = " -> ".join([s for _, s in self.stack] + [shown])
            raise _error(f"{what}: include cycle {chain}", f.shown, n)
        if len(self.stack) > MAX_INCLUDE_DEPTH:
            raise _error(f"{what}: includes nested deeper than {MAX_INCLUDE_DEPTH}", f.shown, n)
        if (real, constraint) in self.done:
            return  # read already: the same entries again would say nothing new
        try:
            data = read_input(path, LockFormatError, "a requirements file", MAX_REQUIREMENTS)
        except LockFormatError as e:
            raise _error(f"{what}: {e.message}", f.shown, n) from None
        self.includes.append(origin)
        self.stack.append((real, shown))
        sub = _File(path, shown, origin)
        self.read(sub, logical_lines(decode_text(Path(shown), data)), constraint)
        self.stack.pop()
        self.done.add((real, constraint))

    # requirement lines

    def requirement(self, f: _File, n: int, text: str, constraint: bool) -> None:
        if _is_location(text):
            self.location(f, n, text, constraint)
            return
        parsed = self._parsed.get(text)  # a line seen before is parsed once (a file of one line repeated)
        if parsed is None:
            try:
                req = Requirement(text)
                marker = str(_checked_marker(req.marker)) if req.marker else None
                version, spec = _pin_or_spec(req.specifier)
            except (ValueError, TypeError, LookupError, RecursionError) as e:
                raise _error(f"invalid requirement {text!r}: {_first_line(e)}", f.shown, n) from None
            parsed = self._parsed[text] = (canonicalize_name(req.name), req.url, marker, version, spec)
        name, url, marker, version, spec = parsed
        if url:
            source, _, version = _direct(f.shown, n, name, url)
            self.add(Entry(name, version, marker, source, None, constraint, f.origin, n))
            return
        self.add(Entry(name, version, marker, "registry", spec, constraint, f.origin, n))

    def location(self, f: _File, n: int, text: str, constraint: bool) -> None:
        """A line that is a URL or path with no ``name @`` (``./wheels/x-1.0-py3-none-any.whl``, ``git+...#egg=x``)."""
        m = re.search(r"\s;|;\s", text)  # pip: a URL's marker follows "; " or " ;"
        loc, mark = (text[: m.start()].strip(), text[m.end():]) if m else (text, "")
        marker = _marker(mark.strip() or None, f.shown, n, f"requirement {text!r}")
        source, wname, version = _direct(f.shown, n, None, loc)
        if wname is not None:
            self.add(Entry(wname, version, marker, source, None, constraint, f.origin, n))
            return
        name = _egg(loc) or _sdist_name(loc) or _directory_name(loc)
        if name is None:
            self.notes.append(_cap(f"{f.shown}:{n}: cannot tell the project name of {loc!r} (no #egg=); not checked"))
            return
        self.add(Entry(name, None, marker, source, None, constraint, f.origin, n))

    def editable(self, f: _File, n: int, target: str, constraint: bool) -> None:
        """``-e LOCATION``: an editable entry, named by ``#egg=`` or a local directory's name, else a note."""
        location = re.sub(r"\[[^\]]*\]$", "", target)
        name = _egg(location) or _directory_name(location)
        if name is None:
            self.notes.append(_cap(f"{f.shown}:{n}: editable {target!r}: cannot tell its project name (no #egg=); "
                                   "not checked"))
            return
        self.add(Entry(name, None, None, "editable", None, constraint, f.origin, n))

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)


def _direct(where: Path | str, line: int | None, name: str | None, url: str) -> tuple[str, str | None, str | None]:
    """(source kind, project, version) of a direct reference: a wheel's project and version come from its
    file name (whose project must be ``name`` when that is given); others have neither."""
    source = _url_kind(url)
    if source != "wheel":
        return source, None, None
    file = _url_file(url)
    try:
        wname, wversion, _, _ = parse_wheel_filename(file)
    except ValueError as e:
        raise _error(f"invalid wheel file name {file!r}: {_first_line(e)}", where, line) from None
    if name is not None and canonicalize_name(wname) != name:
        raise _error(f"{name!r} names the wheel {file!r}, which is {wname!r}", where, line)
    return "wheel", canonicalize_name(wname), str(wversion)


def _is_location(text: str) -> bool:
    """Whether a requirement line is a bare URL or path (pip: a scheme, a path separator, a leading dot,
    or an archive file name) rather than a PEP 508 requirement."""
    head = text.split(";", 1)[0].strip()
    if re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*@", head):
        return False  # name @ url
    return bool(re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://|file:|[A-Za-z]:[\\/]|\.|/|~)", head)) \
        or head.lower().endswith(_ARCHIVE)


def _egg(location: str) -> str | None:
    m = re.search(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)", location)
    return canonicalize_name(m.group(1)) if m and _NAME.match(m.group(1)) else None


def _sdist_name(location: str) -> str | None:
    try:
        name, _ = parse_sdist_filename(_url_file(location))
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
    if not last or last in (".", "..") or last.lower() in _GENERIC_DIRS or not _NAME.match(last):
        return None
    return canonicalize_name(last)


def parse_requirements(path: Path, text: str) -> Lock:
    """A pip requirements file (kind ``requirements.txt``): pins, ranges, markers, ``name @ url``,
    ``-e``, ``--hash`` continuations, and its ``-r``/``-c`` includes read recursively. ``name==X`` gives
    ``version=X``; anything else ``version=None`` and ``spec``. Option lines are skipped (index URLs are
    kept in ``meta["index_urls"]``); ``meta["notes"]`` says what could not be named."""
    if len(text) > MAX_REQUIREMENTS:
        raise _error(f"{len(text)} characters is more than a requirements file may hold ({MAX_REQUIREMENTS >> 20} "
                     "MiB; pip-compile's largest, with hashes, are far smaller)", path)
    reader = _RequirementsReader(path)
    reader.read(_File(path, str(path), None), logical_lines(text), False)
    if not any(not e.constraint for e in reader.entries):
        extra = " (only constraints)" if reader.entries else ""
        notes = f"; {'; '.join(reader.notes)}" if reader.notes else ""
        raise _error(f"no requirements found{extra}{notes}", path)
    return reader.lock()


# --- TOML locks: poetry.lock and pdm.lock -----------------------------------------------------------------------

def _toml_doc(path: Path, text: str) -> dict[str, Any]:
    try:
        return _toml(path, text)
    except RecursionError:
        raise _error("invalid TOML: nested too deeply", path) from None


def _packages(path: Path, text: str, doc: dict[str, Any]) -> list[tuple[dict[str, Any], int | None]]:
    """The ``[[package]]`` tables, each with the line of its header (None when the file spells them otherwise)."""
    pkgs = doc.get("package", [])
    if not isinstance(pkgs, list) or not all(isinstance(p, dict) for p in pkgs):
        raise _error("'package' must be an array of tables", path, _line_of(text, "package"))
    heads = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r"^\[\[package\]\][ \t]*(#.*)?$", text, re.M)]
    lines: list[int | None] = list(heads) if len(heads) == len(pkgs) else [None] * len(pkgs)
    return list(zip(pkgs, lines, strict=True))


def _name_version(path: Path, p: dict[str, Any], line: int | None, i: int) -> tuple[str, str]:
    """A package table's canonical name and exact version, both validated."""
    name, version = p.get("name"), p.get("version")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _error(f"package {i + 1}: invalid name {name!r}", path, line)
    if not isinstance(version, str):
        raise _error(f"package {name!r}: invalid version {version!r}", path, line)
    try:
        Version(version)
    except ValueError:
        raise _error(f"package {name!r}: invalid version {version!r}", path, line) from None
    return canonicalize_name(name.strip()), version


def _metadata(path: Path, text: str, doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata", {})
    if not isinstance(meta, dict):
        raise _error("'metadata' must be a table", path, _line_of(text, "metadata"))
    return meta


def _check_version(path: Path, text: str, kind: str, key: str, value: Any, known: tuple[str, ...]) -> None:
    ok = isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)*", value) and value.split(".")[0] in known
    if not ok:
        raise _error(f"{kind} {key} {value!r} is not supported (known: {', '.join(k + '.x' for k in known)})",
                     path, _line_of(text, key))


def _str_list(value: Any, path: Path, line: int | None, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _error(f"{what} must be a list of strings, not {value!r}", path, line)
    return list(value)


def _merge_groups(groups: dict[str, list[str]], name: str, new: list[str]) -> None:
    have = groups.setdefault(name, [])
    have.extend(g for g in new if g not in have)


_POETRY_SOURCES = {"git": "git", "directory": "directory", "legacy": "registry"}


def _poetry_source(path: Path, p: dict[str, Any], line: int | None) -> str:
    """Map a poetry ``[package.source]`` to an :class:`Entry` source kind (``develop = true``: editable)."""
    src = p.get("source")
    if src is None:
        return "registry"
    kind = src.get("type") if isinstance(src, dict) else None
    url = src.get("url", "") if isinstance(src, dict) else ""
    if kind in ("file", "url") and isinstance(url, str):
        if url.lower().split("?")[0].endswith(".whl"):
            return "wheel"
        return "path" if kind == "file" else "url"
    if isinstance(kind, str) and kind in _POETRY_SOURCES:
        return "editable" if kind == "directory" and p.get("develop") is True else _POETRY_SOURCES[kind]
    raise _error(f"package {p.get('name')!r}: unknown source type {kind!r} (known: directory, file, git, legacy, url)",
                 path, line)


def _poetry_marker(path: Path, p: dict[str, Any], line: int | None) -> str | None:
    """poetry 2's ``markers``: a string, or a table of group -> marker (installed where any holds; a group of
    ``groups`` absent from the table installs it everywhere, as poetry 2.5 writes ``markers = {dev = ...}`` for a
    package that main needs unconditionally)."""
    value = p.get("markers")
    what = f"package {p.get('name')!r}"
    if isinstance(value, dict):
        groups = p.get("groups")
        if isinstance(groups, list) and any(isinstance(g, str) and g not in value for g in groups):
            return None
        parts = sorted({m for m in (_marker(v, path, line, what) for v in value.values()) if m})
        return None if not parts else parts[0] if len(parts) == 1 else " or ".join(f"({m})" for m in parts)
    return _marker(value, path, line, what)


_POETRY_TERM = r"(?:(\^|~=|~|>=|<=|!=|==|>|<|=)\s*)?([0-9][0-9A-Za-z.*+!-]*|\*)"  # no blank without an operator:
# the blanks between terms then belong to the separator alone, and a failing match cannot backtrack exponentially


def poetry_python(constraint: Any) -> str | None:
    """A poetry Python constraint as a PEP 440 specifier (``^3.9.10`` -> ``>=3.9.10,<4``, ``~3.10`` ->
    ``>=3.10,<3.11``, ``>=3.10,<4.0`` as is), or None when it is absent, ``*``, an ``||`` or not simple."""
    if not isinstance(constraint, str) or \
            not re.fullmatch(rf"\s*{_POETRY_TERM}((\s*,\s*|\s+){_POETRY_TERM})*\s*", constraint):
        return None
    try:
        parts = [p for m in re.finditer(_POETRY_TERM, constraint) for p in _poetry_term(m.group(1) or "", m.group(2))]
        _checked(SpecifierSet(",".join(parts)))
    except ValueError:
        return None
    return ",".join(parts) or None


def _poetry_term(op: str, ver: str) -> list[str]:
    """One poetry constraint term as PEP 440 clauses (ValueError when it has none)."""
    if ver == "*":
        return []
    if op not in ("^", "~"):
        return [("==" if op in ("", "=") else op) + ver]
    nums = [int(x) for x in ver.split(".")]  # ValueError for a non-numeric caret/tilde version
    i = next((k for k, x in enumerate(nums) if x), len(nums) - 1) if op == "^" else min(1, len(nums) - 1)
    return [f">={ver}", "<" + ".".join(map(str, nums[:i] + [nums[i] + 1]))]


def parse_poetry_lock(path: Path, text: str) -> Lock:
    """A poetry.lock (kind ``poetry.lock``, lock-version 1.x or 2.x): each ``[[package]]`` with its source
    kind and (poetry 2) markers. ``meta``: ``extras`` (extra -> package names), ``optional`` (sorted names
    of optional packages), ``groups`` (name -> groups, or poetry 1's category)."""
    doc = _toml_doc(path, text)
    meta = _metadata(path, text, doc)
    _check_version(path, text, "poetry.lock", "lock-version", meta.get("lock-version"), KNOWN_POETRY_LOCK_VERSIONS)
    entries: list[Entry] = []
    optional: set[str] = set()
    groups: dict[str, list[str]] = {}
    for i, (p, line) in enumerate(_packages(path, text, doc)):
        name, version = _name_version(path, p, line, i)
        if p.get("optional", False) not in (True, False):
            raise _error(f"package {name!r}: 'optional' must be true or false, not {p['optional']!r}", path, line)
        if p.get("optional"):
            optional.add(name)
        grp = p.get("groups", [p["category"]] if isinstance(p.get("category"), str) else [])
        _merge_groups(groups, name, _str_list(grp, path, line, f"package {name!r}: 'groups'"))
        entries.append(Entry(name, version, _poetry_marker(path, p, line), _poetry_source(path, p, line), line=line))
    out: dict[str, Any] = {"extras": _poetry_extras(path, text, doc), "optional": sorted(optional)}
    if any(groups.values()):
        out["groups"] = groups
    return Lock(str(path), "poetry.lock", tuple(entries), poetry_python(meta.get("python-versions")), (), out)


def _poetry_extras(path: Path, text: str, doc: dict[str, Any]) -> dict[str, list[str]]:
    extras = doc.get("extras", {})
    if not isinstance(extras, dict):
        raise _error("'extras' must be a table", path, _line_of(text, "[extras]"))
    out: dict[str, list[str]] = {}
    for extra, names in extras.items():
        line = _line_of(text, f"{extra} =")
        found = [re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", s) for s in _str_list(names, path, line, f"extra {extra!r}")]
        if not all(found):
            raise _error(f"extra {extra!r}: invalid package name in {names!r}", path, line)
        out[extra] = [canonicalize_name(m.group(1)) for m in found if m]
    return out


def _pdm_source(p: dict[str, Any]) -> str:
    """Map a pdm package's location keys to an :class:`Entry` source kind."""
    if p.get("editable") is True:
        return "editable"
    if isinstance(p.get("git"), str) or isinstance(p.get("hg"), str):
        return "git" if "git" in p else "url"
    if isinstance(p.get("path"), str):
        return _local_kind(p["path"])
    if isinstance(p.get("url"), str):
        return _url_kind(p["url"])
    return "registry"


def _pdm_python(path: Path, text: str, meta: dict[str, Any]) -> str | None:
    """The lock's Python: ``[metadata] requires_python``, or the one all ``[[metadata.targets]]`` share
    (a package's own ``requires_python`` says what that package needs, not what the lock is for)."""
    rp = meta.get("requires_python")
    targets = meta.get("targets")
    if rp is None and isinstance(targets, list):
        found = {t["requires_python"] for t in targets if isinstance(t, dict) and isinstance(t.get("requires_python"), str)}
        rp = found.pop() if len(found) == 1 else None
    if rp is None or rp == "":
        return None
    try:
        if isinstance(rp, str) and _checked(SpecifierSet(rp)) is not None:
            return rp
    except ValueError:
        pass
    raise _error(f"invalid requires_python {rp!r}", path, _line_of(text, "requires_python"))


def parse_pdm_lock(path: Path, text: str) -> Lock:
    """A pdm.lock (kind ``pdm.lock``, lock_version 4.x): each ``[[package]]`` with its ``marker`` and source
    kind; an entry repeated for extras (same name and version) once. ``meta["groups"]``: name -> groups."""
    doc = _toml_doc(path, text)
    meta = _metadata(path, text, doc)
    _check_version(path, text, "pdm.lock", "lock_version", meta.get("lock_version"), KNOWN_PDM_LOCK_VERSIONS)
    entries: list[Entry] = []
    groups: dict[str, list[str]] = {}
    seen: set[tuple[str, str, str | None, str]] = set()
    for i, (p, line) in enumerate(_packages(path, text, doc)):
        name, version = _name_version(path, p, line, i)
        marker = _marker(p.get("marker"), path, line, f"package {name!r}")
        _merge_groups(groups, name, _str_list(p.get("groups", []), path, line, f"package {name!r}: 'groups'"))
        key = (name, version, marker, _pdm_source(p))
        if key not in seen:
            seen.add(key)
            entries.append(Entry(name, version, marker, key[3], line=line))
    return Lock(str(path), "pdm.lock", tuple(entries), _pdm_python(path, text, meta), (), {"groups": groups})


# --- Pipfile.lock -----------------------------------------------------------------------------------------------

def _json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _error(f"invalid JSON: {e.msg}", path, e.lineno) from None
    except RecursionError:
        raise _error("invalid JSON: nested too deeply", path) from None


def _pipfile_entry(path: Path, name: str, info: dict[str, Any], line: int | None) -> Entry:
    """One package of a Pipfile.lock section: ``"version": "==X"`` pins, a ``file`` wheel's version comes
    from its file name, ``git``/``path``/``file``/``editable`` give the source kind."""
    what = f"package {name!r}"
    source, version, spec = "registry", None, None
    for key in ("git", "path", "file"):
        if isinstance(info.get(key), str):
            source = {"git": "git", "path": _local_kind(info[key]), "file": _url_kind(info[key])}[key]
            if source == "wheel":
                source, _, version = _direct(path, line, canonicalize_name(name.strip()), info[key])
            break
    if info.get("editable") is True:
        source = "editable"
    raw = info.get("version")
    if raw is not None:
        if not isinstance(raw, str):
            raise _error(f"{what}: invalid version {raw!r}", path, line)
        try:
            version, spec = _pin_or_spec(SpecifierSet("" if raw == "*" else raw))
        except ValueError:
            raise _error(f"{what}: invalid version {raw!r}", path, line) from None
    elif source == "registry":
        spec = ""
    return Entry(canonicalize_name(name.strip()), version, _marker(info.get("markers"), path, line, what), source, spec, line=line)


def _pipfile_python(meta: dict[str, Any]) -> str | None:
    req = meta.get("requires", {})
    if not isinstance(req, dict):
        return None
    full, minor = req.get("python_full_version"), req.get("python_version")
    for value, fmt in ((full, "=={}"), (minor, "=={}.*")):
        if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)*", value):
            try:
                return str(_checked(SpecifierSet(fmt.format(value))))
            except ValueError:
                return None
    return None


def parse_pipfile_lock(path: Path, text: str) -> Lock:
    """A Pipfile.lock (kind ``Pipfile.lock``, pipfile-spec 6): the ``default`` then ``develop`` packages.
    ``"==X"`` gives ``version=X``; ``git``/``path``/``file`` keys the source kind. ``meta["groups"]``:
    name -> the sections it is in; ``requires_python`` from ``_meta.requires``."""
    doc = _json(path, text)
    meta = doc.get("_meta") if isinstance(doc, dict) else None
    if not isinstance(meta, dict):
        raise _error("not a Pipfile.lock: no '_meta' object", path, 1)
    spec = meta.get("pipfile-spec")
    if type(spec) is not int or spec not in KNOWN_PIPFILE_SPECS:
        raise _error(f"_meta.pipfile-spec {spec!r} is not supported (known: "
                     f"{', '.join(map(str, KNOWN_PIPFILE_SPECS))})", path, _line_of(text, '"pipfile-spec"'))
    entries: list[Entry] = []
    groups: dict[str, list[str]] = {}
    for section in ("default", "develop"):
        pkgs = doc.get(section, {})
        start = text.find(f'"{section}"')
        if not isinstance(pkgs, dict):
            raise _error(f"{section!r} must be an object", path, _count_lines(text, max(start, 0)))
        for name, info in pkgs.items():
            at = text.find(f'"{name}"', max(start, 0))
            line = _count_lines(text, at) if at >= 0 else None
            if not _NAME.match(name) or not isinstance(info, dict):
                raise _error(f"{section}: invalid package {name!r}", path, line)
            entries.append(_pipfile_entry(path, name, info, line))
            _merge_groups(groups, canonicalize_name(name.strip()), [section])
    return Lock(str(path), "Pipfile.lock", tuple(entries), _pipfile_python(meta), (), {"groups": groups})


# --- conda environment files ------------------------------------------------------------------------------------

Scalar = tuple[int, str]  # (line, value) of a YAML scalar
_CONDA_KEYS = ("name", "channels", "dependencies", "prefix", "variables")
_CONDA_LISTS = ("channels", "dependencies")
MAX_CONDA = 2 << 20  # characters of a conda environment file (such files are a few KB; PyYAML reads ~1 MB a second)
MAX_CONDA_DEPTH = 8  # nesting of YAML collections (a conda file nests three deep: dependencies, - pip:, its list)
_NULL = "tag:yaml.org,2002:null"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def conda_document(path: Path, text: str) -> dict[str, Any]:
    """Read a conda environment file with PyYAML's safe loader (libyaml's where PyYAML has it). Anchors and aliases
    are refused (a few lines of aliases can stand for more nodes than memory holds), and so is any shape a conda
    environment file does not have; each refusal is a :class:`LockFormatError` naming the line. Returns
    {key: (line, str) | [(line, str) | {"pip": [(line, str)] | None}] | {var: (line, str)} | None}: each scalar
    with its line and its text as written (no type conversion: ``- 1.10`` stays ``1.10``)."""
    import yaml

    if len(text) > MAX_CONDA:
        raise _error(f"{len(text)} characters is more than a conda environment file may hold ({MAX_CONDA >> 20} "
                     "MiB)", path)
    for n, raw in enumerate(text.split("\n"), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip(" \t"))] and raw.strip():
            raise _error("a tab in the indentation (YAML allows spaces only)", path, n)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        depth = 0
        for event in yaml.parse(text, Loader=loader):
            line = event.start_mark.line + 1 if event.start_mark is not None else None
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise _error("a YAML anchor or alias (refused: conda environment files need none, and aliases can "
                             "expand without bound)", path, line)
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_CONDA_DEPTH:
                    raise _error(f"YAML nested deeper than {MAX_CONDA_DEPTH}", path, line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = ", ".join(x for x in (e.context, e.problem) if x)
        raise _error(f"invalid YAML: {what}", path, mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as e:
        raise _error(f"invalid YAML: {_first_line(e)}", path) from None
    return _CondaNodes(path, text).document(root)


class _CondaNodes:
    """The composed YAML of a conda environment file as :func:`conda_document`'s plain values."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.split("\n")

    def source(self, node: Any) -> str:
        """The text of ``node`` as written on its first line."""
        m = node.start_mark
        return self.lines[m.line][m.column:].strip() if m.line < len(self.lines) else ""

    def unsupported(self, node: Any, where: str, expected: str) -> LockFormatError:
        return _error(f"unsupported YAML in {where} ({expected} is expected): {self.source(node)!r}", self.path,
                      node.start_mark.line + 1)

    def scalar(self, node: Any, where: str, expected: str) -> Scalar:
        import yaml

        line = node.start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode):
            raise self.unsupported(node, where, expected)
        if node.tag == _NULL and node.value in ("", "~"):
            raise _error(f"an empty value in {where}", self.path, line)
        if node.end_mark.line != node.start_mark.line and not (node.end_mark.line == node.start_mark.line + 1
                                                                 and node.end_mark.column == 0):
            raise _error(f"a value over several lines in {where}: {' '.join(node.value.split())!r}", self.path, line)
        if _CONTROL.search(node.value):
            raise _error(f"a control character in {node.value!r}", self.path, line)
        return line, node.value

    def document(self, root: Any) -> dict[str, Any]:
        import yaml

        doc: dict[str, Any] = {}
        if root is None:
            return doc
        if not isinstance(root, yaml.MappingNode):
            raise _error(f"expected 'key:' at the top level, not {self.source(root)!r}", self.path,
                         root.start_mark.line + 1)
        for knode, vnode in root.value:
            line = knode.start_mark.line + 1
            if not isinstance(knode, yaml.ScalarNode):
                raise _error(f"expected 'key:' at the top level, not {self.source(knode)!r}", self.path, line)
            key = knode.value
            if key not in _CONDA_KEYS:
                raise _error(f"unsupported key {key!r} (known: {', '.join(_CONDA_KEYS)})", self.path, line)
            if key in doc:
                raise _error(f"duplicate key {key!r}", self.path, line)
            if isinstance(vnode, yaml.ScalarNode) and vnode.tag == _NULL and vnode.value in ("", "~", "null"):
                doc[key] = None
            elif key in _CONDA_LISTS:
                doc[key] = self.items(key, vnode)
            elif key == "variables":
                if not isinstance(vnode, yaml.MappingNode):
                    raise _error(f"'variables' must be a mapping, not {self.source(vnode)!r}", self.path,
                                 vnode.start_mark.line + 1)
                doc[key] = {self.scalar(k, "variables", "a name")[1]: self.scalar(v, "variables", "a value")
                            for k, v in vnode.value}
            else:
                doc[key] = self.scalar(vnode, repr(key), "a value")
        return doc

    def items(self, key: str, node: Any) -> list[Any]:
        import yaml

        if not isinstance(node, yaml.SequenceNode):
            raise _error(f"{key!r} must be a list, not {self.source(node)!r}", self.path, node.start_mark.line + 1)
        out: list[Any] = []
        for item in node.value:
            if key == "dependencies" and isinstance(item, yaml.MappingNode) and len(item.value) == 1 \
                    and isinstance(item.value[0][0], yaml.ScalarNode) and item.value[0][0].value == "pip":
                if any(isinstance(x, dict) for x in out):
                    raise _error("a second '- pip:' section", self.path, item.start_mark.line + 1)
                pip = item.value[0][1]
                if isinstance(pip, yaml.ScalarNode) and pip.tag == _NULL:
                    out.append({"pip": None})
                elif isinstance(pip, yaml.SequenceNode):
                    out.append({"pip": [self.scalar(x, "'- pip:'", "a requirement line") for x in pip.value] or None})
                else:
                    raise self.unsupported(pip, "'- pip:'", "a list of requirement lines")
                continue
            expected = "a package spec or a '- pip:' list" if key == "dependencies" else "a channel name"
            out.append(self.scalar(item, repr(key), expected))
        return out


_CONDA_SPEC = re.compile(r"^(?:(?P<channel>[^\s:]+)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9._-]*)\s*(?P<rest>.*)$")
_CONDA_NAMES = {"pytorch": "torch"}
_CUDA_PACKAGES = ("pytorch-cuda", "cuda-version", "cudatoolkit")


@dataclass(frozen=True)
class _CondaSpec:
    name: str  # canonical, conda's pytorch as torch
    version: str | None
    spec: str | None
    raw_version: str  # the version as written after "=", "==" or a space ("" for a range or none)
    build: str


def _conda_spec(path: Path, n: int, s: str) -> _CondaSpec:
    """One conda MatchSpec of the simple kinds: ``name``, ``name=X[=build]``, ``name==X[=build]``,
    ``name X [build]``, ``name>=X,<Y``, ``channel::name...``. conda's ``=X`` means ``X.*``: exact only
    with three or more components."""
    m = _CONDA_SPEC.match(s.strip())
    rest = m.group("rest").strip() if m else ""
    if not m or "[" in rest or "|" in rest:
        raise _error(f"unsupported conda package spec {s!r}", path, n)
    name = canonicalize_name(_CONDA_NAMES.get(m.group("name").lower(), m.group("name")))
    if not rest:
        return _CondaSpec(name, None, "", "", "")
    if rest[0] in "<>!~":
        try:
            return _CondaSpec(name, None, str(_checked(SpecifierSet(rest.replace(" ", "")))), "", "")
        except ValueError:
            raise _error(f"unsupported conda version {rest!r} in {s!r}", path, n) from None
    exact = rest.startswith("==")
    ver, _, build = (rest[2:] if exact else rest.lstrip("=")).replace(" ", "=", 1).partition("=")
    ver = ver.strip()
    if not ver or not re.fullmatch(r"[0-9A-Za-z_.+*!-]+", ver) or not re.fullmatch(r"[0-9A-Za-z_.*+-]*", build):
        raise _error(f"unsupported conda package spec {s!r}", path, n)
    return _CondaSpec(name, *_conda_version(ver, exact), ver, build.strip())


def _conda_version(ver: str, exact: bool) -> tuple[str | None, str | None]:
    """(version, spec) of a conda version: exact for ``==X`` or three components, else ``==X.*``;
    a version PEP 440 cannot read becomes ``===X``."""
    if "*" not in ver and (exact or ver.count(".") >= 2):
        try:
            Version(ver)
            return ver, None
        except ValueError:
            return None, f"==={ver}"
    spec = "==" + (ver if ver.endswith("*") else ver + ".*")
    try:
        return None, str(_checked(SpecifierSet(spec)))
    except ValueError:
        return None, f"==={ver}"


def _cuda_of(raw: str) -> str | None:
    m = re.match(r"(\d+)\.(\d+)", raw)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _build_cuda(build: str) -> str | None:
    """The CUDA a conda build string names: ``py3.11_cuda12.1_cudnn8_0`` -> 12.1, ``cuda126_generic_...`` -> 12.6."""
    m = re.search(r"cuda(\d+)\.(\d+)", build) or re.search(r"cuda(\d{1,2})(\d)(?!\d)", build)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _torch_label(version: str, build: str, cuda: str | None, cpu: bool) -> str:
    """conda's torch as the wheel it corresponds to: ``2.3.0+cu121`` / ``2.3.0+cpu`` (or as it was)."""
    if cpu or re.search(r"(^|_)cpu(_|$)", build):
        return f"{version}+cpu"
    cuda = _build_cuda(build) or cuda
    return f"{version}+cu{cuda.replace('.', '')}" if cuda else version


def parse_conda_env(path: Path, text: str) -> Lock:
    """A conda environment file (kind ``environment.yml``). conda packages become entries (``pytorch`` as
    ``torch``, an exact version labelled ``+cuXY``/``+cpu`` from ``pytorch-cuda``/``cuda-version``/
    ``cudatoolkit``, its build string or ``cpuonly``); ``python`` gives ``requires_python``; the ``pip:``
    section reads like requirement lines (``-r`` relative to the file). ``meta``: ``channels``,
    ``conda_packages`` (sorted names from conda), ``conda_cuda`` when known, and the requirements
    reader's ``notes``/``index_urls``."""
    doc = conda_document(path, text)
    reader = _RequirementsReader(path)
    specs: dict[int, _CondaSpec] = {}  # entry index -> its conda spec
    python: str | None = None
    for item in doc.get("dependencies") or []:
        if isinstance(item, dict):
            reader.read(_File(path, str(path), None), item["pip"] or [], False)
            continue
        spec = _conda_spec(path, *item)
        if spec.name == "python":
            python = f"=={spec.version}" if spec.version else spec.spec or None
            continue
        specs[len(reader.entries)] = spec
        reader.add(Entry(spec.name, spec.version, None, "registry", spec.spec, line=item[0]))
    if not reader.entries:
        raise _error("no packages (neither conda packages nor a pip section with requirements)", path)
    cuda = next((_cuda_of(s.raw_version) for s in specs.values() if s.name in _CUDA_PACKAGES and s.raw_version), None)
    cuda = cuda or next((_build_cuda(s.build) for s in specs.values() if s.name == "torch" and s.build), None)
    cpu = any(s.name == "cpuonly" for s in specs.values())
    for i, spec in specs.items():
        version = reader.entries[i].version
        if spec.name == "torch" and version and "+" not in version:
            reader.entries[i] = replace(reader.entries[i], version=_torch_label(version, spec.build, cuda, cpu))
    meta: dict[str, Any] = {"channels": [c for _, c in doc.get("channels") or []],
                            "conda_packages": sorted({s.name for s in specs.values()})}
    if cuda:
        meta["conda_cuda"] = cuda
    return reader.lock("environment.yml", python, meta)
