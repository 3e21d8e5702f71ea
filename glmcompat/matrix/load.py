"""Load the matrix for the hot paths: validate it once (pydantic, :mod:`glmcompat.matrix.schema`), keep the
plain rows as JSON in the user cache keyed by the files' content and glmcompat's code, and answer later runs
from that JSON as a :class:`glmcompat.matrix.view.Facts`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from glmcompat.matrix.store import atomic_write, cache_dir, matrix_files, read_input
from glmcompat.matrix.view import Facts, Row
from glmcompat.model.errors import InputError


def load_facts(paths: Sequence[str | Path] | None = None) -> Facts:
    """The matrix as :class:`Facts`, validated once and then served from the cache."""
    files = matrix_files(paths)
    from glmcompat.matrix.fingerprint import code_fingerprint

    # keyed by the files' content (an edit that keeps the size and the mtime is still seen); each file is
    # read as any input is (regular files only, size-capped): the validating loader names what is wrong
    h = hashlib.blake2b(code_fingerprint().encode(), digest_size=16)
    try:
        for f in files:
            h.update(f"{f.resolve()}\0".encode("utf-8", "surrogateescape"))
            h.update(hashlib.blake2b(read_input(f, InputError, "a matrix file")).digest())
    except (OSError, InputError):
        files = []  # let the validating loader name the missing file
    key = h.hexdigest()
    cached = cache_dir() / f"matrix-{key}.json"
    if files:
        data = _cached_matrix(cached)
        if data is not None:
            return Facts(data, key)
    from glmcompat.matrix.schema import load_matrix

    m = load_matrix(paths)
    data = m.plain()
    if files:
        body = json.dumps(data, sort_keys=True).encode()
        try:  # a digest line first: a truncated or edited entry is a miss, never wrong facts
            atomic_write(cached, hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b"\n" + body)
        except OSError:
            pass  # a read-only cache only costs speed
    return Facts(data, key)


def _cached_matrix(path: Path) -> dict[str, list[Row]] | None:
    """The plain matrix a cache entry holds, when its digest line matches its body and its shape is a
    matrix's ({table: [row, ...]}); None (a miss, rewritten by the caller) otherwise."""
    try:
        raw = path.read_bytes()
        digest, _, body = raw.partition(b"\n")
        if hashlib.blake2b(body, digest_size=16).hexdigest().encode() != digest:
            return None
        data = json.loads(body)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not all(isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
                                             for rows in data.values()):
        return None
    return data
