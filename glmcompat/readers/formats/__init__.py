"""Read the package set out of a dependency file: the kind from the file's name or content
(:mod:`glmcompat.readers.formats.registry`), its format's reader, the environments it installs.

Hot path: ``glmcompat check`` must answer faster than ``uv lock --check``, and a full TOML parse of a
180-package uv.lock alone costs ~50 ms. So each file's content is hashed (cheap) and the extracted
entries are cached under that hash; the first sight of a content parses it fully (validating it),
later runs only hash and read the small cached extraction.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from glmcompat.matrix.locations import code_fingerprint, file_digest, hasher, read_stored, seal
from glmcompat.matrix.store import atomic_write, cache_dir, read_input
from glmcompat.model.errors import LockFormatError
from glmcompat.model.environments import Environment
from glmcompat.model.shapes import fields, is_bool, is_str, list_of, opt, str_map
from glmcompat.readers.formats.common import Entry, Lock, decode_text, flat_sets, is_lock_meta
from glmcompat.readers.formats.registry import BY_KIND, detect_kind, kind_of

CACHE_FORMAT = 6  # 4: environments for Linux x86_64 and aarch64 ("platform"; uv.lock: "missing_wheels"); 5: "glibc"; 6: "missing_wheels" of pylock, poetry, pdm


def read_bytes(path: Path) -> bytes:
    """The bytes of a dependency file the user named (a regular file, size-capped); LockFormatError when empty."""
    data = read_input(path, LockFormatError, "a lock file")
    if not data.strip():
        raise LockFormatError("empty file", path=str(path))
    return data


def _to_json(lock: Lock) -> dict[str, Any]:
    return {"format": CACHE_FORMAT, "kind": lock.kind, "requires_python": lock.requires_python,
            "entries": [[e.name, e.version, e.marker, e.source, e.spec, e.constraint, e.origin, e.line] for e in lock.entries],
            "sets": [e.to_json() for e in lock.sets], "meta": lock.meta}


def _from_json(path: str, raw: Any) -> Lock | None:
    """The lock a cache entry holds, or None (a miss) when the entry has another shape than :func:`_to_json` writes."""
    meta = raw.get("meta", {}) if _cache_shape_ok(raw) else None
    if not is_lock_meta(meta):
        return None
    return Lock(path, raw["kind"], tuple(Entry(*e) for e in raw["entries"]), raw.get("requires_python"),
                tuple(Environment.from_json(e) for e in raw["sets"]), meta)


def read_lock(path: str | Path, *, use_cache: bool = True) -> Lock:
    """Parse ``path`` (kind from its name), through the content-hash cache."""
    p = Path(path)
    if detect_kind(p) == "pyproject.toml":
        raise LockFormatError("a pyproject.toml is not a lock; pass the lock beside it", path=str(p))
    data = read_bytes(p)
    h = hasher()
    h.update(data + b"\0" + code_fingerprint().encode())
    digest = h.hexdigest()
    kind = detect_kind(p) or "sniffed"
    cached = None
    if use_cache:
        cached = cache_dir() / "locks" / f"{kind}-{digest}.json"
        try:  # sealed with its name: a damaged, foreign or renamed entry, a link or a FIFO is a miss, parsed again
            body = read_stored(str(cached), "lock", cached.name)
            raw: Any = json.loads(body) if body is not None else None
            hit = _from_json(str(p), raw)
            if hit is not None and _includes_unchanged(p, raw["includes"]):
                return hit
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            pass  # ... and replaced below
    text = decode_text(p, data)
    kind = kind_of(p, text)
    lock = with_sets(BY_KIND[kind].read(p, text))
    if cached is not None:
        blob = _to_json(lock)
        blob["includes"] = _include_digests(p, lock)
        try:
            atomic_write(cached, seal("lock", cached.name, json.dumps(blob).encode()))
        except OSError:
            pass
    return lock


def _cache_shape_ok(raw: Any) -> bool:
    """Whether a lock-cache entry has the shape :func:`_to_json` writes (anything else is a miss), in the one
    vocabulary of stored shapes (:mod:`glmcompat.model.shapes`); ``meta`` is checked against its declaration
    (:func:`~glmcompat.readers.formats.common.is_lock_meta`) by :func:`_from_json`."""
    def entry(e: Any) -> bool:  # [name, version, marker, source, spec, constraint, origin, line]
        return (isinstance(e, list) and len(e) == 8 and is_str(e[0]) and all(map(opt(is_str), e[1:5]))
                and is_bool(e[5]) and opt(is_str)(e[6]) and (e[7] is None or type(e[7]) is int))

    if not (fields(raw, {"kind": is_str, "entries": list_of(entry), "sets": lambda s: isinstance(s, list)},
                   {"requires_python": opt(is_str), "includes": str_map})
            and raw.get("format") == CACHE_FORMAT):
        return False
    raw.setdefault("includes", {})
    return True


def _file_digest(path: Path) -> str:
    """The content digest (:func:`glmcompat.matrix.locations.file_digest`, the one every record keys on) of a file an
    include names; '' when it is not a regular file that can be read."""
    return file_digest(str(path)) or ""


def _include_digests(top: Path, lock: Lock) -> dict[str, str]:
    """Content digests of the files ``top`` includes (``-r``/``-c``): part of the cache key, since the
    verdict depends on them too."""
    out: dict[str, str] = {}
    for origin in sorted({e.origin for e in lock.entries if e.origin}):
        out[origin] = _file_digest(top.parent / origin)
    for inc in lock.meta.get("includes", ()):
        if inc not in out:
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
    body = decode_text(p, text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
    return with_sets(BY_KIND[kind if kind in BY_KIND else kind_of(p, body)].read(p, body))


def with_sets(lock: Lock) -> Lock:
    """``lock`` with its environments (a parser that knows them, as uv.lock's, fills them itself; a format whose
    entries' markers do not tell them, as poetry.lock's extras, builds them by its own rule)."""
    if lock.sets:
        return lock
    fmt = BY_KIND.get(lock.kind)
    build = fmt.environments if fmt is not None and fmt.environments is not None else flat_sets
    return replace(lock, sets=tuple(build(lock)))
