"""An on-disk cache for probe results, keyed by the wheels' sha256 from the index.

Where: ``GLMCOMPAT_CACHE_DIR`` if set, else the user cache directory (platformdirs). Entries are
written atomically (a temporary file in the same directory, then ``os.replace``), so a reader never
sees half a file; :meth:`Cache.lock` (a file lock per key) keeps concurrent runs from doing the same
work twice. Keys are plain names (``abi-v1-<sha>-<sha>``); a result derived from a wheel never goes
stale, index pages do (``max_age``).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")


def default_cache_dir() -> Path:
    from .facts import cache_dir

    return cache_dir()


class Cache:
    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def _path(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"invalid cache key {key!r}")
        kind = key.split("-", 1)[0]
        return self.root / kind / key

    # -- bytes ------------------------------------------------------------------------------------
    def get_bytes(self, key: str, *, max_age: float | None = None) -> bytes | None:
        path = self._path(key)
        try:
            if max_age is not None and time.time() - path.stat().st_mtime > max_age:
                return None
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            return None

    def put_bytes(self, key: str, data: bytes) -> None:
        from .facts import atomic_write

        try:
            atomic_write(self._path(key), data)
        except OSError:
            # A cache that cannot be written is not an error: the result is still correct.
            return

    # -- JSON -------------------------------------------------------------------------------------
    def get_json(self, key: str, *, max_age: float | None = None) -> Any:
        raw = self.get_bytes(key, max_age=max_age)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def put_json(self, key: str, value: Any) -> None:
        self.put_bytes(key, json.dumps(value, sort_keys=True, separators=(",", ":")).encode())

    # -- locking ----------------------------------------------------------------------------------
    @contextmanager
    def lock(self, key: str, timeout: float = 1800) -> Iterator[None]:
        """Hold a per-key file lock (other processes computing the same key wait)."""
        from filelock import FileLock, Timeout

        path = self._path(key)
        lockdir = self.root / "locks"
        try:
            lockdir.mkdir(parents=True, exist_ok=True)
        except OSError:
            yield
            return
        lock = FileLock(str(lockdir / (path.name + ".lock")), timeout=timeout)
        try:
            lock.acquire()
        except Timeout:
            from .errors import EnvironmentFailure

            raise EnvironmentFailure(f"cache {self.root}: waited {timeout:.0f} s for another run on {key}") from None
        try:
            yield
        finally:
            lock.release()


class NoCache(Cache):
    """A cache that keeps nothing (``--no-cache``)."""

    def __init__(self) -> None:
        super().__init__(Path(os.devnull))

    def get_bytes(self, key: str, *, max_age: float | None = None) -> bytes | None:
        return None

    def put_bytes(self, key: str, data: bytes) -> None:
        return None

    @contextmanager
    def lock(self, key: str, timeout: float = 1800) -> Iterator[None]:
        yield
