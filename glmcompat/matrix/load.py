"""Load the matrix for the hot paths: validate it once (pydantic, :mod:`glmcompat.matrix.schema`), keep the
rows as JSON in the user cache keyed by the files' content and glmcompat's code, and answer later runs from
that JSON as a :class:`glmcompat.matrix.view.Facts` of typed rows (:mod:`glmcompat.matrix.rows`).

A cache entry is sealed with its name (:func:`glmcompat.matrix.locations.seal`: one framing, one digest kind and one
safe reader for everything glmcompat stores), its payload ``{"format": FORMAT, "fields": {table: [field, ...]}, "tables": {table:
[[value, ...], ...]}}``: each row's values in its class's field order (:data:`glmcompat.matrix.rows.FIELDS`),
which is smaller and faster to read than a dict per row. An entry of another format, or whose fields are
not the row classes' own, is a miss: the rows are never built from a shape they were not written for.

A wheel also ships the same document for its own matrix (:data:`SNAPSHOT`, written by the build through
``hatch_build.py``, sealed as ``snapshot.json``), with glmcompat's version and each matrix file's digest
(:func:`glmcompat.matrix.locations.file_digest`): the first run after an install
reads it instead of validating (about 0.35 s), as long as the files are byte for byte those it was made from."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from glmcompat.matrix.locations import (code_fingerprint, file_digest, hasher, matrix_file_names, read_bounded, read_stored,
                                        seal, seal_line, unseal)
from glmcompat.matrix.rows import FIELDS, ROWS, from_values, to_values
from glmcompat.matrix.store import atomic_write, cache_dir, default_matrix_dir
from glmcompat.matrix.view import Facts, Tables
from glmcompat.model.errors import InputError, MatrixError
from glmcompat.model.memo import BoundedMemo
from glmcompat.model.public import __version__
from glmcompat.model.shapes import decoded

FORMAT = 3  # 1: {table: [row dict, ...]} (matrix-KEY.json); 2: the rows' values in field order; 3: sealed only (no inner
#             blake2b-128 digest line), keyed and file digests by locations.hasher (blake2b-160)
SNAPSHOT = Path(__file__).with_name("snapshot.json")  # in a built wheel only (hatch_build.py writes it)


def load_facts(paths: Sequence[str | Path] | None = None) -> Facts:
    """The matrix as :class:`Facts`, validated once and then served from the cache."""
    files, key, digests = _keyed(paths)
    cached = cache_dir() / entry_name(key)
    if files:
        served = _served(cached, key)
        if served is not None:
            return served
        if not paths:  # the shipped matrix: the wheel's snapshot, if these are its files
            data = _rows(read_stored(str(SNAPSHOT), "snapshot", SNAPSHOT.name), digests)
            if data is not None:
                return Facts(data, key)
    from glmcompat.matrix.schema import TABLES, load_matrix  # lazy: pydantic, only when the cache misses

    m = load_matrix(paths)
    if files:
        try:
            atomic_write(cached, seal("matrix", cached.name, _document(m.plain())))
        except OSError:
            pass  # a read-only cache only costs speed
    return Facts({t: getattr(m, t) for t in TABLES}, key)  # the validated rows themselves


# The Facts this process decoded from cache entries, by the entry's seal (its first line: the verified digest of the
# entry's name and payload): a process that checks many locks (the API, a long-lived tool) decodes the 400 KB of rows
# once, and an entry whose bytes changed is decoded again. A few entries: one per matrix a process uses.
_SERVED: BoundedMemo[bytes, Facts] = BoundedMemo(8)


def _served(path: Path, key: str) -> Facts | None:
    """The Facts of the cache entry ``path`` (of cache key ``key``); None: a miss (see :func:`_cached_matrix`). An entry
    whose seal line this process has already verified and decoded, in a file of the same size, is served from memory on
    reading that line alone (the line is the digest of the entry's name and whole payload, so the rows decoded then are
    the rows the entry holds); otherwise the whole entry is read and verified."""
    head = seal_line(str(path))
    if head is not None and (known := _SERVED.get(head)) is not None:
        return known
    raw = read_bounded(str(path))
    body = unseal("matrix", path.name, raw)
    if raw is None or body is None:
        return None
    line = raw[: len(raw) - len(body)] + str(len(raw)).encode()  # as seal_line gives it: the line, then the size
    hit = _SERVED.get(line)
    if hit is None:
        data = _rows(body)
        if data is None:
            return None
        hit = _SERVED.keep(line, Facts(data, key))
    return hit


# each matrix file's digest in this process, by what stat says of it: (device, inode, size, mtime, ctime) -> digest. A
# stat taken less than RACY seconds after the file's last change is not trusted (an edit within the clock's step
# keeps mtime and ctime: git's racily-clean rule), so an edit is always seen; bounded
_DIGESTS: dict[str, tuple[tuple[int, int, int, int, int], str]] = {}
RACY = 2.0


def _digest(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return file_digest(path)
    sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _DIGESTS.get(path)
    if hit is not None and hit[0] == sig:
        return hit[1]
    d = file_digest(path)
    if d and time.time() - max(st.st_mtime, st.st_ctime) > RACY:
        if len(_DIGESTS) >= 256:
            _DIGESTS.clear()
        _DIGESTS[path] = (sig, d)
    return d


# each set of matrix files' key in this process, by what stat says of every file (as _DIGESTS, under the same RACY rule)
# and, where a path is relative, the working directory: a process that reads the matrix again and again (the API
# explaining many logs, the suite's thousands of in-process runs) keys it from its files' stats, without each file's
# absolute path and digest again (about 0.3 ms a run); bounded
_KEYS: dict[tuple[str, tuple[str, ...]], tuple[tuple[tuple[int, int, int, int, int], ...], str, dict[str, str]]] = {}


def _stats(files: list[str]) -> tuple[tuple[int, int, int, int, int], ...] | None:
    """Each file's (device, inode, size, mtime, ctime); None when one cannot be read or changed less than RACY seconds
    ago (its stat is not trusted)."""
    out, newest = [], 0.0
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            return None
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        newest = max(newest, st.st_mtime, st.st_ctime)
    return tuple(out) if time.time() - newest > RACY else None


def _keyed(paths: Sequence[str | Path] | None) -> tuple[list[str], str, dict[str, str]]:
    """(the matrix files, the cache key, each file's digest by name); no files when one cannot be read."""
    files = matrix_file_names([str(p) for p in paths] if paths else [_shipped_dir()])
    if isinstance(files, str):
        raise MatrixError("directory holds no *.toml matrix files", path=files)
    where = (os.getcwd() if not all(os.path.isabs(f) for f in files) else "", tuple(files))
    stats = _stats(files)
    hit = _KEYS.get(where) if stats is not None else None
    if hit is not None and hit[0] == stats:
        return files, hit[1], dict(hit[2])

    # keyed by the files' content (an edit that keeps the size and the mtime is still seen) and absolute paths
    # (not resolved: a symlinked path is only another entry); each file digested as the start-up paths digest it
    # (a regular file, size-capped): on any other, the validating loader names what is wrong
    h = hasher()
    h.update(code_fingerprint().encode())
    digests: dict[str, str] = {}
    for f in files:
        d = _digest(f)
        if not d:
            return [], h.hexdigest(), {}  # let the validating loader name the missing or unreadable file
        h.update(f"\0{os.path.abspath(f)}\0{d}".encode("utf-8", "surrogateescape"))
        digests[os.path.basename(f)] = d
    key = h.hexdigest()
    if stats is not None and stats == _stats(files):  # unchanged while digested: the key is the files' as stat saw them
        if len(_KEYS) >= 64:
            _KEYS.clear()
        _KEYS[where] = (stats, key, dict(digests))
    return files, key, digests


_SHIPPED: list[str] = []  # the shipped matrix's directory, found once a process (the package does not move)


def _shipped_dir() -> str:
    if not _SHIPPED:
        _SHIPPED.append(str(default_matrix_dir()))
    return _SHIPPED[0]


def entry_name(key: str) -> str:
    """The file name, in the cache directory, of the entry for the matrix of cache key ``key``."""
    return f"matrix-v{FORMAT}-{key}.json"


def cache_entry_name(paths: Sequence[str | Path] | None = None) -> str | None:
    """The name of the cache entry :func:`load_facts` reads and writes for these matrix files (the shipped
    ones by default); None when a file cannot be read."""
    files, key, _ = _keyed(paths)
    return entry_name(key) if files else None


def _document(plain: Any, **extra: Any) -> bytes:
    """The payload of a cache entry (or, with ``extra``, of a snapshot) of validated rows; the caller seals it, so
    that a truncated, edited or renamed entry is a miss, never wrong facts."""
    doc = {"format": FORMAT, "fields": FIELDS,
           "tables": {t: [to_values(t, r) for r in rows] for t, rows in plain.items()}, **extra}
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def snapshot() -> bytes:
    """The shipped matrix, validated, as the wheel's :data:`SNAPSHOT`: with glmcompat's version and the digest of
    each matrix file, which a run compares before it trusts the rows. Raises what validation raises."""
    from glmcompat.matrix.schema import load_matrix  # lazy: pydantic, only when the cache misses

    files, _, digests = _keyed(None)
    if not files:
        load_matrix(None)  # names the file that cannot be read
        raise InputError("the shipped matrix cannot be read")
    return seal("snapshot", SNAPSHOT.name, _document(load_matrix(None).plain(), files=digests, version=__version__))


def _cached_matrix(path: Path) -> Tables | None:
    """The rows a cache entry holds (see :func:`_rows`), read through the one safe reader and sealed with its name
    (:func:`glmcompat.matrix.locations.read_stored`); None (a miss, rewritten by the caller) otherwise."""
    return _rows(read_stored(str(path), "matrix", path.name))


def _rows(body: bytes | None, files: dict[str, str] | None = None) -> Tables | None:
    """The rows an entry's unsealed payload holds, when it is of this :data:`FORMAT` and its fields
    are the row classes' own — and, for a snapshot (``files``: each matrix file's digest), when it was made by
    this glmcompat from exactly these files; None otherwise."""
    doc = decoded(body)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None
    if files is not None:
        if doc.get("files") != files or doc.get("version") != __version__:
            return None
    fields, tables = doc.get("fields"), doc.get("tables")
    if not isinstance(fields, dict) or not isinstance(tables, dict) or tables.keys() - ROWS.keys():
        return None
    try:
        out: Tables = {}
        for t, rows in tables.items():
            if fields.get(t) != list(FIELDS[t]) or not isinstance(rows, list):
                return None
            if not all(isinstance(values, list) for values in rows):
                return None
            out[t] = from_values(t, rows)
    except (TypeError, ValueError, AttributeError):  # a value of the wrong shape (a mapping that is no object, ...)
        return None
    return out
