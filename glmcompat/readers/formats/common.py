"""What every dependency-file format shares: the :class:`Entry` rows and the :class:`Lock` that holds them, the
bytes-to-text decoding, one-line errors, and the validation helpers several readers use (markers, specifiers, direct
references, the tables of TOML locks).

packaging's InvalidVersion / InvalidSpecifier / InvalidMarker / InvalidRequirement / InvalidWheelFilename are
ValueErrors, and so is int()'s digit limit on an absurd version: readers catch ValueError (and RecursionError where a
parser recurses: markers, TOML, JSON). ``Lock.meta`` is a :class:`LockMeta`: JSON values only (lists, dicts,
strings), so a lock caches as JSON, and :func:`is_lock_meta` checks a cached one against the same declaration.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, TypeGuard, get_args, get_origin, get_type_hints
from urllib.parse import unquote, urlsplit

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from glmcompat.model.environments import Environment, flat_environments
from glmcompat.model.errors import LockFormatError
from glmcompat.model.names import canonicalize
from glmcompat.model.shapes import Check, fields, is_str, list_of, map_of
from glmcompat.model.tomltext import loads


@dataclass(frozen=True)
class Entry:
    """One distribution a dependency file names.

    ``version`` is the exact version (local label kept: ``2.9.1+cu128``), or None when the file does not
    pin it exactly (``torch>=2.8``, ``torchvision==0.24.*``): then ``spec`` holds what it asks for.
    ``source`` says where it comes from: ``registry`` (an index), ``wheel`` (a wheel file or URL: its
    name and version come from the file name), or a source build (``git``, ``path``, ``directory``,
    ``editable``, ``url`` of an sdist). ``constraint`` entries (``-c`` files) narrow what something else
    installs and install nothing. ``origin`` names the file it was read from when that is an include,
    ``line`` its line there.
    """

    name: str
    version: str | None
    marker: str | None = None
    source: str = "registry"
    spec: str | None = None
    constraint: bool = False
    origin: str | None = None
    line: int | None = None


class LockMeta(TypedDict, total=False):
    """What a dependency file says beside its entries, declared once: every format module fills the keys it knows
    (absent: the file does not say), ``check``, the API and the parsed-lock cache read them. JSON values only."""

    notes: list[str]  # what the reader could not name or fully read (shown by check, one line each)
    includes: list[str]  # requirements: the files ``-r``/``-c`` include, relative to the top file (the cache keys on them)
    index_urls: list[str]  # requirements: ``--index-url`` / ``--extra-index-url`` values, first-seen order
    index_url: str  # requirements: the ``--index-url`` / ``-i`` value (it replaces the configured index; absent: the configured index stays, as in pip)
    wheel_urls: dict[str, str]  # requirements: ``name==version`` -> a wheel entry's URL or path (relative to the file)
    wheel_indexes: dict[str, str]  # poetry.lock: ``name==version`` -> the index (``legacy`` source URL) its lock_wheels come from
    lock_wheels: dict[str, list[str]]  # uv.lock, pylock, poetry, pdm: ``name==version`` -> its compiled Linux wheels (URL or file name, ``#sha256=``)
    wheels_only: dict[str, list[str]]  # pylock, poetry, pdm: ``name==version`` -> the wheel file names it lists, where it lists no sdist (what installs it, and where)
    overrides: dict[str, str]  # uv.lock: ``[manifest] overrides``, name -> specifier (deliberate, uv override-dependencies)
    extras: dict[str, list[str]]  # poetry.lock: extra -> the package names it installs
    optional: list[str]  # poetry.lock: packages installed only by an extra, sorted
    groups: dict[str, list[str]]  # poetry.lock, pdm.lock, Pipfile.lock: name -> its groups (sections), file order
    variants: dict[str, list[str]]  # pylock.toml: name -> its PEP 825 variant wheels, 'label: ns :: feature :: value, ...'
    channels: list[str]  # environment.yml: conda channels, file order
    conda_packages: list[str]  # environment.yml: names the conda section installs, sorted
    conda_cuda: str  # environment.yml: the CUDA version pytorch-cuda / cuda-version / cudatoolkit / a build names
    index_pins: dict[str, list[str]]  # resolved-at-install files: ``name==version`` -> the exact pins its METADATA declares, read from the index by ``check`` (glmcompat.ops.indexpins), never by a reader


def _shape(tp: Any) -> Check:
    """The :mod:`glmcompat.model.shapes` check of one :class:`LockMeta` value type (str, list[T], dict[str, T])."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is str:
        return is_str
    if origin is list:
        return list_of(_shape(args[0]))
    if origin is dict and args[0] is str:
        return map_of(_shape(args[1]))
    raise TypeError(f"LockMeta: no JSON shape for {tp!r}")


_META_SHAPES = {key: _shape(tp) for key, tp in get_type_hints(LockMeta).items()}


def is_lock_meta(value: Any) -> TypeGuard[LockMeta]:
    """Whether a JSON value read back (the parsed-lock cache) is a :class:`LockMeta`: known keys only, each of its
    declared shape."""
    return isinstance(value, dict) and value.keys() <= _META_SHAPES.keys() and fields(value, {}, _META_SHAPES)


@dataclass(frozen=True)
class Lock:
    path: str
    kind: str  # a Format's kind (glmcompat.readers.formats.registry.BY_KIND): its conventional file name
    entries: tuple[Entry, ...]
    requires_python: str | None = None
    sets: tuple[Environment, ...] = ()  # filled by read_lock: the environments the file installs on the target platform
    meta: LockMeta = field(default_factory=LockMeta)


@dataclass(frozen=True, slots=True)
class Format:
    """A dependency-file format, declared once by its module (``FORMAT``) and listed in
    :data:`glmcompat.readers.formats.registry.FORMATS`: the kind ``check`` reports, its reader, how a file is
    recognised (``names``: regular expressions a lower-cased file name matches in full; ``signs``: sets of
    patterns, searched line by line, that a file's content matches all of: a JSON document (``json``) is
    sniffed only by the signs of JSON formats; ``loose``: names that suggest the kind without being a dependency
    file's conventional name, as ``README.txt`` suggests a requirements file) and, where the entries' own markers do
    not tell them, how its environments are built. The ``fallback`` format reads any other text that has no TOML
    table. ``beside``: the rank of its file name among the locks a ``pyproject.toml`` names (the lowest there wins;
    None: a pyproject.toml never names it)."""

    kind: str
    read: Callable[[Path, str], Lock]
    names: tuple[str, ...] = ()
    signs: tuple[tuple[str, ...], ...] = ()
    json: bool = False
    fallback: bool = False
    environments: Callable[[Lock], list[Environment]] | None = None
    loose: tuple[str, ...] = ()
    beside: int | None = None


def toml(path: Path, text: str) -> dict[str, Any]:
    """The TOML document of a dependency file; a :class:`LockFormatError` naming the file and line if it is not."""
    return loads(text, LockFormatError, str(path))


def line_of(text: str, needle: str) -> int | None:
    """The 1-based line where ``needle`` first occurs in ``text``, or None."""
    i = text.find(needle)
    return text.count("\n", 0, i) + 1 if i >= 0 else None


VALID_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tar", ".zip", ".whl")


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
        line = count_lines(body[: e.start].decode(codec, errors="replace"), None)
        raise LockFormatError(f"not {codec.upper()} text: cannot decode {body[e.start:e.end]!r}",
                              path=str(path), line=line) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    nul = text.find("\0")
    if nul >= 0:
        hint = " (UTF-16 without a byte-order mark?)" if codec == "utf-8" else ""
        raise LockFormatError(f"binary data (a NUL character), not a text file{hint}", path=str(path),
                              line=count_lines(text, nul))
    return text


def count_lines(text: str, end: int | None) -> int:
    """The 1-based line of offset ``end`` in ``text`` (its last line when None), any line end counted."""
    head = text if end is None else text[:end]
    return head.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1


# --- shared by the readers --------------------------------------------------------------------------------------

MAX_MESSAGE = 300  # characters: a quoted value from a hostile or binary file must not flood the terminal


def cap(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."


def error(message: str, path: Path | str, line: int | None = None) -> LockFormatError:
    return LockFormatError(cap(message), path=str(path), line=line)


def first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def checked_spec(spec: SpecifierSet) -> SpecifierSet:
    """``spec`` once every version it names parses (packaging's specifier grammar admits a version of
    5000 digits, which only fails, as a ValueError, where it is compared); ValueError otherwise."""
    for s in spec:
        if s.operator != "===":
            Version(s.version[:-2] if s.version.endswith(".*") else s.version)
    return spec


def checked_marker(marker: Marker) -> Marker:
    """``marker`` once it evaluates (every clause is evaluated: a version of 5000 digits in one fails
    here, as a ValueError, instead of where the environments are computed)."""
    marker.evaluate({"extra": "", "extras": frozenset(), "dependency_groups": frozenset()})
    return marker


def pin_or_spec(spec: SpecifierSet) -> tuple[str | None, str | None]:
    """(exact version, None) for ``==X`` / ``===X`` with a plain version X (local label kept), else
    (None, the specifier: "" when there is none). ValueError when a version it names does not parse."""
    specs = list(checked_spec(spec))
    if len(specs) == 1 and specs[0].operator in ("==", "===") and not specs[0].version.endswith(".*"):
        try:
            Version(specs[0].version)
            return specs[0].version, None
        except ValueError:
            pass
    return None, str(spec)


def marker_of(value: Any, path: Path | str, line: int | None, what: str) -> str | None:
    """A marker string, validated and in packaging's normal form (``python_version >= "3.8"``: the caller
    evaluates it), or None when absent or empty."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise error(f"{what}: marker must be a string, not {value!r}", path, line)
    try:
        return str(checked_marker(Marker(value)))
    except (ValueError, TypeError, LookupError, RecursionError) as e:
        raise error(f"{what}: invalid marker {value!r}: {first_line(e)}", path, line) from None


def url_file(url: str) -> str:
    """The unquoted last path component of a URL or path (``torch-2.9.1%2Bcu128-...whl`` -> ``+``)."""
    try:
        p = urlsplit(url).path if "://" in url else url.split("#")[0].split("?")[0]
    except ValueError:
        p = url
    return unquote(p.rstrip("/").rsplit("/", 1)[-1])


def local_kind(location: str) -> str:
    """``wheel`` / ``path`` (an archive) / ``directory`` for a local path, by its name alone (no I/O)."""
    f = url_file(location).lower()
    if f.endswith(".whl"):
        return "wheel"
    return "path" if f.endswith(ARCHIVE_SUFFIXES) else "directory"


def url_kind(url: str) -> str:
    """The :class:`Entry` source kind of a direct reference (``name @ url``, a Pipfile ``file``)."""
    low = url.lower()
    if low.startswith("git+"):
        return "git"
    if low.startswith(("hg+", "svn+", "bzr+")):
        return "url"
    if low.startswith("file:") or "://" not in low:
        return local_kind(url[5:] if low.startswith("file:") else url)
    return "wheel" if url_file(url).lower().endswith(".whl") else "url"


def direct_reference(where: Path | str, line: int | None, name: str | None, url: str) -> tuple[str, str | None, str | None]:
    """(source kind, project, version) of a direct reference: a wheel's project and version come from its
    file name (whose project must be ``name`` when that is given); others have neither."""
    source = url_kind(url)
    if source != "wheel":
        return source, None, None
    file = url_file(url)
    try:
        wname, wversion, _, _ = parse_wheel_filename(file)
    except ValueError as e:
        raise error(f"invalid wheel file name {file!r}: {first_line(e)}", where, line) from None
    if name is not None and canonicalize_name(wname) != name:
        raise error(f"{name!r} names the wheel {file!r}, which is {wname!r}", where, line)
    return "wheel", canonicalize_name(wname), str(wversion)


# --- TOML locks: poetry.lock and pdm.lock -----------------------------------------------------------------------

def toml_lock_doc(path: Path, text: str) -> dict[str, Any]:
    try:
        return toml(path, text)
    except RecursionError:
        raise error("invalid TOML: nested too deeply", path) from None


def package_tables(path: Path, text: str, doc: dict[str, Any]) -> list[tuple[dict[str, Any], int | None]]:
    """The ``[[package]]`` tables, each with the line of its header (None when the file spells them otherwise)."""
    pkgs = doc.get("package", [])
    if not isinstance(pkgs, list) or not all(isinstance(p, dict) for p in pkgs):
        raise error("'package' must be an array of tables", path, line_of(text, "package"))
    heads = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r"^\[\[package\]\][ \t]*(#.*)?$", text, re.M)]
    lines: list[int | None] = list(heads) if len(heads) == len(pkgs) else [None] * len(pkgs)
    return list(zip(pkgs, lines, strict=True))


def name_version(path: Path, p: dict[str, Any], line: int | None, i: int) -> tuple[str, str]:
    """A package table's canonical name and exact version, both validated."""
    name, version = p.get("name"), p.get("version")
    if not isinstance(name, str) or not VALID_NAME.match(name):
        raise error(f"package {i + 1}: invalid name {name!r}", path, line)
    if not isinstance(version, str):
        raise error(f"package {name!r}: invalid version {version!r}", path, line)
    try:
        Version(version)
    except ValueError:
        raise error(f"package {name!r}: invalid version {version!r}", path, line) from None
    return canonicalize_name(name.strip()), version


def metadata_table(path: Path, text: str, doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata", {})
    if not isinstance(meta, dict):
        raise error("'metadata' must be a table", path, line_of(text, "metadata"))
    return meta


def check_lock_version(path: Path, text: str, kind: str, key: str, value: Any, known: tuple[str, ...]) -> None:
    ok = isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)*", value) and value.split(".")[0] in known
    if not ok:
        raise error(f"{kind} {key} {value!r} is not supported (known: {', '.join(k + '.x' for k in known)})",
                     path, line_of(text, key))


def str_list(value: Any, path: Path, line: int | None, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise error(f"{what} must be a list of strings, not {value!r}", path, line)
    return list(value)


def merge_groups(groups: dict[str, list[str]], name: str, new: list[str]) -> None:
    have = groups.setdefault(name, [])
    have.extend(g for g in new if g not in have)


# --- uv.lock and pylock.toml ------------------------------------------------------------------------------------

def package_entries(path: Path, text: str, doc: dict[str, Any], table: str, marker: Any) -> list[Entry]:
    """The (name, version, marker) of each entry of the array of tables ``table`` (uv.lock: package,
    pylock.toml: packages); entries without a version (the project itself) are skipped."""
    pkgs = doc.get(table, [])
    if not isinstance(pkgs, list):
        raise LockFormatError(f"{table!r} must be an array of tables", path=str(path), line=line_of(text, table))
    entries = []
    for i, p in enumerate(pkgs):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            raise LockFormatError(f"{table} entry {i + 1} has no name", path=str(path))
        ver = p.get("version")
        if ver is None:
            continue

        def line(name: str = p["name"]) -> int | None:  # searched only for a message: a search per entry costs
            head = line_of(text, f'[[{table}]]\nname = "{name}"')
            return head + 1 if head else line_of(text, f'name = "{name}"')

        if not isinstance(ver, str):
            raise LockFormatError(f"package {p['name']!r} has a non-string version {ver!r}"[:300], path=str(path),
                                  line=line())
        check_package_version(path, line, p["name"], ver)
        entries.append(Entry(canonicalize(p["name"]), ver, check_marker(path, line, p["name"], marker(p))))
    return entries


def check_package_version(path: Path, line: Any, name: str, ver: str) -> None:
    """A package's version must parse (an invalid one, or one with more digits than Python converts, is a
    :class:`LockFormatError` here rather than a crash wherever it is compared)."""
    try:
        Version(ver)
    except ValueError:
        raise LockFormatError(f"package {name!r} has an invalid version {ver!r}"[:300], path=str(path),
                              line=line()) from None


_CHECKED_MARKERS: set[str] = set()  # the markers this process found valid (their check is a pure answer of the text)


def check_marker(path: Path, line: Any, name: str, marker: Any) -> str | None:
    """A package's marker: None, or a string that parses as a PEP 508 marker (each text checked once a process; a
    lock names the same few markers on hundreds of packages, and a process that reads many locks reads them again)."""
    if marker is None or marker == "":
        return None
    if not isinstance(marker, str):
        raise LockFormatError(f"package {name!r}: the marker must be a string, not {marker!r}"[:300], path=str(path),
                              line=line())
    if marker in _CHECKED_MARKERS:
        return marker
    try:
        # every clause is evaluated: a 5000-digit version fails here, not where environments are computed
        Marker(marker).evaluate({"extra": "", "extras": frozenset(), "dependency_groups": frozenset()})
    except (ValueError, TypeError, LookupError, RecursionError):
        raise LockFormatError(f"package {name!r}: invalid marker {marker!r}"[:300], path=str(path), line=line()) from None
    if len(_CHECKED_MARKERS) >= 65_536:
        _CHECKED_MARKERS.clear()
    _CHECKED_MARKERS.add(marker)
    return marker


def requires_python_of(path: Path, text: str, doc: dict[str, Any]) -> str | None:
    """The lock's ``requires-python``: absent, or a string that parses as a specifier set."""
    rp = doc.get("requires-python")
    if rp is None:
        return None
    try:
        if not isinstance(rp, str):
            raise TypeError
        for spec in SpecifierSet(rp):  # and each version in it parses (a 5000-digit one fails only here)
            if spec.operator != "===":
                Version(spec.version.removesuffix(".*"))
    except (ValueError, TypeError):
        raise LockFormatError(f"invalid requires-python {rp!r}"[:300], path=str(path),
                              line=line_of(text, "requires-python")) from None
    return rp


def versioned_tables(doc: dict[str, Any], table: str) -> list[dict[str, Any]]:
    return [p for p in doc.get(table, []) if isinstance(p, dict) and p.get("version") is not None]


def flat_sets(lock: Lock) -> list[Environment]:
    """The environments of a file whose entries carry their own markers (:func:`flat_environments`)."""
    return flat_environments(lock.path, lock.entries, lock.requires_python, lock.meta.get("overrides"),
                             wheels=lock.meta.get("wheels_only"))


LINUX_TAGS = ("linux", "manylinux", "musllinux")  # the platform tags of Linux wheels start so


def compiled_wheels(files: list[tuple[str, str]]) -> list[str]:
    """The wheels of one package that ship compiled code for Linux, from what a lock records of each (its URL, path or
    file name, and its sha256 or ""): a platform tag other than ``any`` (``py3-none-any`` is pure and is left out),
    as ``LOCATION#sha256=HEX``; the order of the lock."""
    out = []
    for loc, sha in files:
        fn = loc.split("?")[0].split("#")[0].rsplit("/", 1)[-1]
        if not fn.endswith(".whl"):
            continue
        if "linux" in fn and any(t.startswith(LINUX_TAGS) for t in fn[:-4].rsplit("-", 1)[-1].split(".")):
            out.append(loc.split("#")[0] + (f"#sha256={sha}" if sha else ""))
    return out


def wheels_only(files: list[str]) -> list[str] | None:
    """The wheel file names of one package's recorded files (URL, path or file name each), sorted, when every file
    is a wheel: an installer can then install the package only where one of them fits (no sdist to build). None when
    it records an sdist, or nothing."""
    from urllib.parse import unquote  # lazy: only locks that list their files

    names = sorted({unquote(f.split("?")[0].split("#")[0].rsplit("/", 1)[-1]) for f in files if f})
    if not names or not all(n.endswith(".whl") for n in names):
        return None
    return names


def sha256_of(digest: object) -> str:
    """The hex of a ``sha256:HEX`` hash string (uv.lock, poetry), else ""."""
    return digest[len("sha256:"):] if isinstance(digest, str) and digest.startswith("sha256:") else ""
