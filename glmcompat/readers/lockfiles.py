"""Read the package set out of a lock: uv.lock and pylock.toml (PEP 751) here, and the dispatch to the other
formats' readers (requirements.txt and the rest: :mod:`glmcompat.readers.formats`).

Hot path: ``glmcompat check`` must answer faster than ``uv lock --check``, and a full TOML parse of a
180-package uv.lock alone costs ~50 ms. So each file's content is hashed (cheap) and the extracted
entries are cached under that hash; the first sight of a content parses it fully (validating it),
later runs only hash and read the small cached extraction.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glmcompat.model.errors import LockFormatError
from glmcompat.model.names import canonicalize as _canon
from glmcompat.readers.depset import BUILT_FROM_SOURCE as BUILT_FROM_SOURCE
from glmcompat.readers.depset import SOURCE_KINDS as SOURCE_KINDS
from glmcompat.readers.depset import Entry as Entry
from glmcompat.readers.depset import Env as Env
from glmcompat.readers.depset import Lock as Lock
from glmcompat.readers.depset import line_of as _line_of
from glmcompat.readers.depset import toml as _toml_doc

if TYPE_CHECKING:
    from packaging.pylock import Package, Pylock

KNOWN_UV_LOCK_VERSIONS = (1,)
CACHE_FORMAT = 4  # 4: environments for Linux x86_64 and aarch64 ("platform"; uv.lock: "missing_wheels")


READABLE = ("uv.lock, pylock.toml, requirements files (*.txt, *.in, requirements*.lock, pip freeze, uv pip compile), "
            "poetry.lock, pdm.lock, Pipfile.lock, conda environment.yml, or a pyproject.toml with one of them beside it")


def detect_kind(path: Path) -> str | None:
    """The kind a file's name tells (``pyproject.toml`` included), or None when only its content can."""
    if path.name == "pyproject.toml":
        return "pyproject.toml"
    from glmcompat.readers.formats import kind_from_name

    return kind_from_name(path.name)


def kind_of(path: Path, text: str) -> str:
    """The kind by name, else by content; LockFormatError listing what glmcompat reads otherwise."""
    kind = detect_kind(path)
    if kind is None:
        from glmcompat.readers.formats import sniff_kind

        kind = sniff_kind(path, text)
    if kind is None:
        raise LockFormatError(f"unknown file kind (glmcompat reads {READABLE})", path=str(path))
    return kind


def _read(path: Path) -> bytes:
    from glmcompat.matrix.store import read_input

    data = read_input(path, LockFormatError, "a lock file")
    if not data.strip():
        raise LockFormatError("empty file", path=str(path))
    return data


def _text(path: Path, data: bytes) -> str:
    """Text of a dependency file: UTF-8 with or without BOM, UTF-16/32 with BOM, any line ending."""
    from glmcompat.readers.formats import decode_text

    return decode_text(path, data)


_toml = _toml_doc  # the TOML document of a file, LockFormatError naming file and line (check.py reads pyproject.toml with it)


def _entries(path: Path, text: str, doc: dict[str, Any], table: str, marker: Any) -> list[Entry]:
    """The (name, version, marker) of each entry of the array of tables ``table`` (uv.lock: package,
    pylock.toml: packages); entries without a version (the project itself) are skipped."""
    pkgs = doc.get(table, [])
    if not isinstance(pkgs, list):
        raise LockFormatError(f"{table!r} must be an array of tables", path=str(path), line=_line_of(text, table))
    entries = []
    for i, p in enumerate(pkgs):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            raise LockFormatError(f"{table} entry {i + 1} has no name", path=str(path))
        ver = p.get("version")
        if ver is None:
            continue

        def line(name: str = p["name"]) -> int | None:  # searched only for a message: a search per entry costs
            head = _line_of(text, f'[[{table}]]\nname = "{name}"')
            return head + 1 if head else _line_of(text, f'name = "{name}"')

        if not isinstance(ver, str):
            raise LockFormatError(f"package {p['name']!r} has a non-string version {ver!r}"[:300], path=str(path),
                                  line=line())
        _check_package_version(path, line, p["name"], ver)
        entries.append(Entry(_canon(p["name"]), ver, _check_marker(path, line, p["name"], marker(p))))
    return entries


def _check_package_version(path: Path, line: Any, name: str, ver: str) -> None:
    """A package's version must parse (an invalid one, or one with more digits than Python converts, is a
    :class:`LockFormatError` here rather than a crash wherever it is compared)."""
    from packaging.version import Version

    try:
        Version(ver)
    except ValueError:
        raise LockFormatError(f"package {name!r} has an invalid version {ver!r}"[:300], path=str(path),
                              line=line()) from None


def _check_marker(path: Path, line: Any, name: str, marker: Any) -> str | None:
    """A package's marker: None, or a string that parses as a PEP 508 marker."""
    if marker is None or marker == "":
        return None
    if not isinstance(marker, str):
        raise LockFormatError(f"package {name!r}: the marker must be a string, not {marker!r}"[:300], path=str(path),
                              line=line())
    from packaging.markers import Marker

    try:
        # every clause is evaluated: a 5000-digit version fails here, not where environments are computed
        Marker(marker).evaluate({"extra": "", "extras": frozenset(), "dependency_groups": frozenset()})
    except (ValueError, TypeError, LookupError, RecursionError):
        raise LockFormatError(f"package {name!r}: invalid marker {marker!r}"[:300], path=str(path), line=line()) from None
    return marker


def _requires_python(path: Path, text: str, doc: dict[str, Any]) -> str | None:
    """The lock's ``requires-python``: absent, or a string that parses as a specifier set."""
    rp = doc.get("requires-python")
    if rp is None:
        return None
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    try:
        if not isinstance(rp, str):
            raise TypeError
        for spec in SpecifierSet(rp):  # and each version in it parses (a 5000-digit one fails only here)
            if spec.operator != "===":
                Version(spec.version.removesuffix(".*"))
    except (ValueError, TypeError):
        raise LockFormatError(f"invalid requires-python {rp!r}"[:300], path=str(path),
                              line=_line_of(text, "requires-python")) from None
    return rp


def parse_uv_lock(path: Path, text: str) -> Lock:
    """A uv.lock with one environment per installable extra/group combination (see :mod:`glmcompat.readers.uvlock`)."""
    from glmcompat.readers.uvlock import UvLockGraph, source_kind

    doc = _toml(path, text)
    version = doc.get("version")
    if version not in KNOWN_UV_LOCK_VERSIONS:
        raise LockFormatError(
            f"uv.lock version {version!r} is not supported (known: {', '.join(map(str, KNOWN_UV_LOCK_VERSIONS))})",
            path=str(path), line=_line_of(text, "version"),
        )

    def marker(p: dict[str, Any]) -> str | None:
        markers = p.get("resolution-markers")
        if markers is None or markers == []:
            return None
        if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
            raise LockFormatError(f"package {p['name']!r}: resolution-markers must be a list of strings, "
                                  f"not {markers!r}"[:300], path=str(path), line=_line_of(text, f'name = "{p["name"]}"'))
        return " or ".join(f"({m})" for m in markers)

    for key in ("resolution-markers", "supported-markers", "required-markers"):  # the lock's own, at the top
        markers = doc.get(key, [])
        if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
            raise LockFormatError(f"{key} must be a list of strings, not {markers!r}"[:300], path=str(path),
                                  line=_line_of(text, key))
        for m in markers:
            _check_marker(path, lambda k=key: _line_of(text, k), key, m)

    entries = [Entry(e.name, e.version, e.marker, source_kind(p.get("source")))
               for e, p in zip(_entries(path, text, doc, "package", marker), _versioned(doc, "package"), strict=True)]
    rp = _requires_python(path, text, doc)
    graph = UvLockGraph(str(path), doc)
    sets, note = graph.environments(rp)
    meta: dict[str, Any] = {"overrides": dict(sorted(graph.overrides.items()))}
    if note:
        meta["notes"] = [note]
    return Lock(str(path), "uv.lock", tuple(entries), rp, tuple(sets), meta)


def _versioned(doc: dict[str, Any], table: str) -> list[dict[str, Any]]:
    return [p for p in doc.get(table, []) if isinstance(p, dict) and p.get("version") is not None]


def parse_pylock(path: Path, text: str) -> Lock:
    """A pylock.toml (PEP 751), read and validated by :mod:`packaging.pylock`.

    glmcompat's own checks come first, as for uv.lock, because they name the line: the lock-version
    (1.x), each package's name, version and marker (every marker clause evaluated: a 5000-digit version
    fails here) and ``requires-python``. Then :meth:`packaging.pylock.Pylock.from_dict` checks the rest of
    the standard (``created-by``, normalized names, a wheel, sdist or exactly one direct source per
    package, hashes, wheel and sdist file names that agree with the name and version); its error is one
    :class:`LockFormatError` naming the package and, where the file has ``[[packages]]`` headers, the
    line. Entries keep the version and marker text as written (the local label, the quoting); the source
    kind comes from the validated package (``vcs``: git, ``directory``: directory or editable,
    ``archive``: wheel, url or path; wheels or an sdist: registry). A lock-version above 1.0 is read as
    1.0 (what glmcompat reads has not changed since) with a note.
    """
    doc = _toml(path, text)
    lv = doc.get("lock-version")
    if not isinstance(lv, str) or not lv.startswith("1."):
        raise LockFormatError(f"pylock lock-version {lv!r} is not supported (known: 1.x)", path=str(path),
                              line=_line_of(text, "lock-version"))
    checked = _entries(path, text, doc, "packages", lambda p: p.get("marker"))
    rp = _requires_python(path, text, doc)
    pylock = _pylock(path, text, doc)
    versioned = [p for p in pylock.packages if p.version is not None]
    entries = [Entry(p.name, e.version, e.marker, _pylock_source(p)) for e, p in zip(checked, versioned, strict=True)]
    meta: dict[str, Any] = {}
    if pylock.lock_version.release[:2] != (1, 0):  # 1.0.0 is 1.0
        meta["notes"] = [f"pylock lock-version {lv} is newer than the 1.0 glmcompat knows: read as 1.0"]
    return Lock(str(path), "pylock.toml", tuple(entries), rp, (), meta)


def _pylock(path: Path, text: str, doc: dict[str, Any]) -> Pylock:
    """``packaging.pylock.Pylock.from_dict(doc)``, its validation error as one :class:`LockFormatError`."""
    import logging

    from packaging.pylock import Pylock, PylockValidationError

    log = logging.getLogger("packaging.pylock")  # it logs a newer minor lock-version; parse_pylock notes it
    disabled, log.disabled = log.disabled, True
    try:
        return Pylock.from_dict(doc)
    except PylockValidationError as e:
        context = e.context or ""
        m = re.match(r"packages\[(\d+)\](?:\.([A-Za-z0-9_-]+))?", context)
        pkgs = doc.get("packages")
        pkg = pkgs[int(m.group(1))] if m and isinstance(pkgs, list) and int(m.group(1)) < len(pkgs) else None
        name = pkg.get("name") if isinstance(pkg, dict) else None
        what = f"package {name!r}: " if isinstance(name, str) else ""
        line = _pylock_line(text, int(m.group(1)), m.group(2)) if m else _key_line(text, context, 0, len(text))
        raise LockFormatError(f"not a valid pylock.toml (PEP 751): {what}{e}"[:300], path=str(path),
                              line=line) from None
    finally:
        log.disabled = disabled


def _key_line(text: str, key: str, start: int, end: int) -> int | None:
    """The line of ``key = ...`` at the start of a line between offsets ``start`` and ``end``, or None."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        return None
    m = re.compile(rf"^[ \t]*{re.escape(key)}[ \t]*=", re.M).search(text, start, end)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _pylock_line(text: str, index: int, key: str | None) -> int | None:
    """The line of package ``index``'s ``key`` (else of its ``[[packages]]`` header); None when the
    packages are not written as ``[[packages]]`` tables."""
    heads = [m.start() for m in re.finditer(r"^[ \t]*\[\[[ \t]*packages[ \t]*\]\]", text, re.M)]
    if index >= len(heads):
        return None
    end = heads[index + 1] if index + 1 < len(heads) else len(text)
    at = _key_line(text, key, heads[index], end) if key else None
    return at or text.count("\n", 0, heads[index]) + 1


def _pylock_source(package: Package) -> str:
    """The :class:`Entry` source kind of a validated :class:`packaging.pylock.Package`."""
    if package.vcs is not None:
        return "git"
    if package.directory is not None:
        return "editable" if package.directory.editable else "directory"
    if package.archive is not None:
        where = package.archive.url or package.archive.path or ""
        if where.split("?")[0].split("#")[0].endswith(".whl"):
            return "wheel"
        return "url" if package.archive.url else "path"
    return "registry"


def _parsers() -> dict[str, Any]:
    from glmcompat.readers import formats

    return {"uv.lock": parse_uv_lock, "pylock.toml": parse_pylock, "requirements.txt": formats.parse_requirements,
            "poetry.lock": formats.parse_poetry_lock, "pdm.lock": formats.parse_pdm_lock,
            "Pipfile.lock": formats.parse_pipfile_lock, "environment.yml": formats.parse_conda_env}


def _to_json(lock: Lock) -> dict[str, Any]:
    return {"format": CACHE_FORMAT, "kind": lock.kind, "requires_python": lock.requires_python,
            "entries": [[e.name, e.version, e.marker, e.source, e.spec, e.constraint, e.origin, e.line] for e in lock.entries],
            "sets": list(lock.sets), "meta": lock.meta}


def _from_json(path: str, raw: dict[str, Any]) -> Lock:
    return Lock(path, raw["kind"], tuple(Entry(*e) for e in raw["entries"]), raw.get("requires_python"),
                tuple(raw["sets"]), raw.get("meta") or {})


def read_lock(path: str | Path, *, use_cache: bool = True) -> Lock:
    """Parse ``path`` (kind from its name), through the content-hash cache."""
    p = Path(path)
    if detect_kind(p) == "pyproject.toml":
        raise LockFormatError("a pyproject.toml is not a lock; pass the lock beside it", path=str(p))
    data = _read(p)
    from glmcompat.matrix.locations import code_fingerprint, hasher, read_stored, seal

    h = hasher()
    h.update(data + b"\0" + code_fingerprint().encode())
    digest = h.hexdigest()
    kind = detect_kind(p) or "sniffed"
    cached = None
    if use_cache:
        from glmcompat.matrix.store import cache_dir

        cached = cache_dir() / "locks" / f"{kind}-{digest}.json"
        try:  # sealed with its name: a damaged, foreign or renamed entry, a link or a FIFO is a miss, parsed again
            body = read_stored(str(cached), "lock", cached.name)
            raw = json.loads(body) if body is not None else None
            if raw is not None and _cache_shape_ok(raw) and _includes_unchanged(p, raw["includes"]):
                return _from_json(str(p), raw)
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            pass  # ... and replaced below
    text = _text(p, data)
    kind = kind_of(p, text)
    lock = with_sets(_parsers()[kind](p, text))
    if cached is not None:
        from glmcompat.matrix.store import atomic_write

        blob = _to_json(lock)
        blob["includes"] = _include_digests(p, lock)
        try:
            atomic_write(cached, seal("lock", cached.name, json.dumps(blob).encode()))
        except OSError:
            pass
    return lock


def _cache_shape_ok(raw: Any) -> bool:
    """Whether a lock-cache entry has the shape :func:`_to_json` writes (anything else is a miss), in the one
    vocabulary of stored shapes (:mod:`glmcompat.model.shapes`)."""
    from glmcompat.model.shapes import fields, is_bool, is_str, list_of, opt, str_list, str_map

    def entry(e: Any) -> bool:  # [name, version, marker, source, spec, constraint, origin, line]
        return (isinstance(e, list) and len(e) == 8 and is_str(e[0]) and all(map(opt(is_str), e[1:5]))
                and is_bool(e[5]) and opt(is_str)(e[6]) and (e[7] is None or type(e[7]) is int))

    env = {"name": is_str, "packages": str_map}
    env_optional = {"sources": str_map, "unpinned": str_map, "overrides": str_map, "also": str_list}
    if not (fields(raw, {"kind": is_str, "entries": list_of(entry),
                         "sets": list_of(lambda e: fields(e, env, env_optional))},
                   {"requires_python": opt(is_str), "meta": lambda m: isinstance(m, dict), "includes": str_map})
            and raw.get("format") == CACHE_FORMAT):
        return False
    raw.setdefault("includes", {})
    return True


def _file_digest(path: Path) -> str:
    """The content digest (:func:`glmcompat.matrix.locations.file_digest`, the one every record keys on) of a file an
    include names; '' when it is not a regular file that can be read."""
    from glmcompat.matrix.locations import file_digest

    return file_digest(str(path)) or ""


def _include_digests(top: Path, lock: Lock) -> dict[str, str]:
    """Content digests of the files ``top`` includes (``-r``/``-c``): part of the cache key, since the
    verdict depends on them too."""
    out: dict[str, str] = {}
    for origin in sorted({e.origin for e in lock.entries if e.origin}):
        out[origin] = _file_digest(top.parent / origin)
    for inc in lock.meta.get("includes") or []:
        if isinstance(inc, str) and inc not in out:
            out[inc] = _file_digest(top.parent / inc)
    return out


def _includes_unchanged(top: Path, digests: dict[str, str]) -> bool:
    return all(digest and _file_digest(top.parent / origin) == digest for origin, digest in digests.items())


def read_text_lock(path: str, kind: str, text: str | bytes) -> Lock:
    """Parse lock content given as text or as the file's bytes (e.g. ``git show REV:PATH``'s output: bytes
    are decoded as a file's are, so undecodable ones are a :class:`LockFormatError` naming the line); no
    cache."""
    if not text.strip():
        raise LockFormatError("empty file", path=path)
    p = Path(path)
    body = _text(p, text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
    return with_sets(_parsers()[kind if kind in _parsers() else kind_of(p, body)](p, body))


def with_sets(lock: Lock) -> Lock:
    """``lock`` with its environments (a parser that knows them, as uv.lock's, fills them itself)."""
    from dataclasses import replace

    from glmcompat.model.environments import flat_environments

    if lock.sets:
        return lock
    extras = lock.meta.get("extras") if lock.kind == "poetry.lock" else None
    if isinstance(extras, dict) and extras:
        return replace(lock, sets=tuple(_extras_environments(lock, extras)))
    return replace(lock, sets=tuple(flat_environments(lock.path, lock.entries, lock.requires_python,
                                                      lock.meta.get("overrides"))))


def _extras_environments(lock: Lock, extras: dict[str, list[str]]) -> list[Env]:
    """poetry.lock: the base set (packages not marked optional) and the base plus each extra."""
    from glmcompat.model.environments import flat_environments, merge

    optional = set(lock.meta.get("optional") or [])
    out: list[Env] = []
    for extra in [None, *sorted(extras)]:
        chosen = set() if extra is None else {_canon(n) for n in extras[extra]}
        entries = [e for e in lock.entries if e.name not in optional or e.name in chosen]
        for env in flat_environments(lock.path, entries, lock.requires_python, lock.meta.get("overrides")):
            label = "base" if extra is None else f"extra {extra}"
            env["name"] = f"{label}, {env['name']}" if env["name"] else label
            merge(out, env)
    return out
