"""What the jobs of ``matrix refresh`` and ``matrix audit`` share: the wheels they read (platform and Python
tags), the index client, the matrix files, upload times, and running work on a bounded pool."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from packaging.version import InvalidVersion, Version

from glmcompat.edges.http import make_client
from glmcompat.edges.index import IndexClient, select_wheel, supported_tags
from glmcompat.matrix import store
from glmcompat.model.errors import InputError

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexFile, Project

PYTHONS = ("cp311", "cp312", "cp310", "cp313", "cp39")  # wheel choice, best first
PLATFORM = "manylinux_x86_64"
# The machines whose wheels the matrix records (glmcompat.model.platforms.PLATFORMS) and the platform each
# is read with: a row without ``platform`` is about the x86_64 wheel, an aarch64 row about the aarch64 one.
PLATFORM_TAGS = {"x86_64": "manylinux_x86_64", "aarch64": "manylinux_aarch64"}
TORCH_PYTHON = "cp311"


def parse_time(text: str | None) -> datetime | None:
    """An RFC 3339 upload time (``2026-11-18T11:06:54.123Z``) as an aware datetime; None if absent/bad."""
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def group_files(project: Project) -> dict[Version, list[IndexFile]]:
    out: dict[Version, list[IndexFile]] = {}
    for f in project.files:
        if f.version is None:
            continue
        try:
            out.setdefault(Version(f.version), []).append(f)
        except InvalidVersion:
            continue
    return out


def release_time(files: Iterable[IndexFile]) -> datetime | None:
    times = [t for t in (parse_time(f.upload_time) for f in files) if t is not None]
    return min(times) if times else None


def pick_wheel(files: Sequence[IndexFile], platform: str = "x86_64") -> tuple[IndexFile, str] | None:
    """The wheel glmcompat reads for a release (Linux ``platform``; CPython 3.11 first), with its Python tag."""
    for py in PYTHONS:
        w = select_wheel(files, supported_tags(py, PLATFORM_TAGS.get(platform, platform)))
        if w is not None:
            return w, py
    return None


def pmap(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int) -> list[Any]:
    if len(items) <= 1 or jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(fn, items))


def bounded_client(jobs: int) -> httpx.Client:
    """An httpx client whose pool holds at most ``jobs`` connections: the bound on parallel downloads."""
    return make_client(max_connections=jobs)


def make_index(index_url: str | None, jobs: int, cache: Cache) -> IndexClient:
    """The index client of a refresh / audit run (tests replace this to serve recorded pages)."""
    return IndexClient(index_url, client=bounded_client(jobs), cache=cache)


def matrix_files(matrix: str | Path | None) -> tuple[Path, list[Path]]:
    d = Path(matrix) if matrix else store.default_matrix_dir()
    if not d.is_dir():
        raise InputError(f"--matrix {str(d)!r} is not a directory of matrix files")
    return d, store.matrix_files([d])


def show(x: Any) -> str:
    """A claimed or found value said short: ``nothing``, a list joined, a mapping as ``k=v`` pairs."""
    if x is None:
        return "nothing"
    if isinstance(x, list):
        return ", ".join(map(str, x)) or "[]"
    if isinstance(x, dict):
        return " ".join(f"{k}={show(v) if isinstance(v, list) else v}" for k, v in x.items())
    return str(x)
