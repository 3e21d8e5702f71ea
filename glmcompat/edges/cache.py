"""An on-disk cache for probe results, keyed by the wheels' sha256 from the index.

Where: ``GLMCOMPAT_CACHE_DIR`` if set, else the user cache directory (``$XDG_CACHE_HOME/glmcompat`` on Linux,
platformdirs' answer elsewhere: :func:`glmcompat.matrix.store.cache_dir`). Entries are
written atomically (a temporary file in the same directory, then ``os.replace``), so a reader never
sees half a file; :meth:`Cache.lock` (a file lock per key) keeps concurrent runs from doing the same
work twice. Keys are plain names (``abi-v1-<sha>-<sha>``); a result derived from a wheel never goes
stale, index pages do (``max_age``).

Nothing read back is trusted blindly. Every entry is read through the one safe reader (a regular file, never
a link, a FIFO or a device, of bounded size) and starts with a line holding the digest of its key and the rest
(:func:`glmcompat.matrix.locations.seal`: a truncated, edited, foreign file or one copied under another key is a
miss: a truncated torch export list can no longer become a wrong "incompatible"), and a JSON entry of a known kind must have that kind's shape (:data:`SHAPES`):
wrong-type JSON is a miss, recomputed and replaced by the caller, never a crash. What a probe stores is a typed
record's ``to_json`` and what it reads back that record's ``from_json`` (:mod:`glmcompat.ops.wheelprobe`'s
``ExtSummary``, ``TorchSummary``, ``ModuleArch``, ``AbiResult``; :class:`glmcompat.ops.modelprobe.Known`;
:class:`glmcompat.edges.sources.ReleaseWheel`): the JSON stays at this edge.
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

from glmcompat.matrix.locations import MAX_STORED, read_bounded, seal, unseal
from glmcompat.matrix.store import LockFile, atomic_write, cache_dir
from glmcompat.model.errors import EnvironmentFailure
from glmcompat.model.shapes import Check, decoded
from glmcompat.model.shapes import fields as _fields
from glmcompat.model.shapes import int_list as _ints
from glmcompat.model.shapes import is_bool as _bool
from glmcompat.model.shapes import is_int as _int
from glmcompat.model.shapes import is_str as _str
from glmcompat.model.shapes import list_of
from glmcompat.model.shapes import map_of
from glmcompat.model.shapes import opt as _opt
from glmcompat.model.shapes import str_int_map as _str_int_map
from glmcompat.model.shapes import str_list as _strs

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def is_sha256(value: object) -> bool:
    """Whether ``value`` is a sha256 hex digest (lowercase): only such a value may name a cache entry."""
    return isinstance(value, str) and bool(_SHA256.match(value))


def _frame(key: str, data: bytes) -> bytes:
    return seal("cache", key, data)


def _unframe(key: str, raw: bytes | None) -> bytes | None:
    """The payload of an entry written under ``key`` whose digest line matches it; None for anything else (an entry
    copied under another key included: its digest covers its key)."""
    return unseal("cache", key, raw)


# -- shapes of the JSON entries (the checks of glmcompat.model.shapes) ----------------------------------

def _page(v: Any) -> bool:  # a PEP 691 project page (parse_project_page copes with odd rows inside)
    return isinstance(v, dict) and isinstance(v.get("files"), list)


def _pick(v: Any) -> bool:  # an IndexFile as glmcompat.ops.wheelprobe caches the wheel it picked
    return _fields(v, {"filename": _str, "url": _str, "size": _opt(_int), "sha256": _opt(is_sha256),
                       "requires_python": _opt(_str), "yanked": _bool, "version": _opt(_str), "is_wheel": _bool,
                       "tags": _strs},
                   {"metadata_sha256": _opt(is_sha256), "has_metadata": _bool, "upload_time": _opt(_str)})


def _module_abi(v: Any) -> bool:
    return _fields(v, {"member": _str, "needed": _strs, "cuda_majors": _ints, "needs_from_torch": _int,
                       "missing": lambda m: isinstance(m, list) and all(
                           _fields(x, {"symbol": _str, "demangled": _str}) and len(x) == 2 for x in m)})


def _abi(v: Any) -> bool:
    return _fields(v, {"package": _str, "package_version": _str, "torch": _str, "wheel": _str, "torch_wheel": _str,
                       "modules": lambda m: isinstance(m, list) and all(map(_module_abi, m)),
                       "torch_exports": _int, "torch_cuda_majors": _ints, "bytes_total": _int},
                   {"warnings": _strs})


def _ext(v: Any) -> bool:  # {member: {needed, undefined, weak_undefined, defined}}
    return isinstance(v, dict) and all(
        isinstance(k, str) and _fields(x, {"needed": _strs, "undefined": _strs, "defined": _strs},
                                       {"weak_undefined": _strs}) for k, x in v.items())


def _torch_meta(v: Any) -> bool:
    return _fields(v, {"needed": _strs, "libs": _str_int_map})


def _arch_modules(v: Any) -> bool:
    return isinstance(v, list) and all(
        _fields(x, {"member": _str, "sass": _strs, "ptx": _strs, "counts": _str_int_map}) for x in v)


def _archsel(v: Any) -> bool:
    return _fields(v, {"patterns": _strs, "modules": _arch_modules})


def _wheels_memo(v: Any) -> bool:  # glmcompat.edges.sources.IndexSource's per-project memo (ReleaseWheel)
    wheel = {"filename": _str, "url": _str, "size": _opt(_int), "sha256": _opt(is_sha256),
             "has_metadata": _bool, "metadata_sha256": _opt(is_sha256)}
    return _fields(v, {"versions": _strs, "wheels": lambda w: isinstance(w, dict) and all(
        isinstance(k, str) and (x is None or _fields(x, wheel)) for k, x in w.items())}) and "format" in v


def _journal(v: Any) -> bool:  # glmcompat.ops.refresh's journal of one candidate
    return _fields(v, {"rows": lambda r: isinstance(r, list) and all(
        isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], list)
        and all(isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str) for kv in x[1]) for x in r),
        "proved": _strs, "unproved": _strs})


def _modelprobe(v: Any) -> bool:  # glmcompat.ops.modelprobe's Known of one wheel
    return _fields(v, {"package": _str, "version": _str, "wheel": _str, "sha256": _opt(_str), "names": _strs,
                       "files": _strs, "where": map_of(_str), "configs": _strs, "configs_file": _opt(_str)})


def _toolkit(v: Any) -> bool:  # glmcompat.ops.wheelprobe's CUDA toolkits per module of one wheel
    return _fields(v, {"modules": map_of(_str_int_map)})


def _artifact(v: Any) -> bool:  # glmcompat.model.artifacts.ArtifactFacts of one artifact against some torch releases
    return _fields(v, {"name": _str, "version": _str, "artifact": _str, "sha256": _str, "numpy_abi": _opt(_int),
                       "numpy_member": _str, "torch_needs": _int, "torch_missing": map_of(_strs),
                       "demangled": map_of(_str), "cuda_majors": _ints, "unread": _str, "command": _str,
                       "recorded_sha256": _str}, {"unverified": _str, "cpu_only": _bool, "partial": _str})


# key kind (its first dash-separated word; ``.meta`` keys apart) -> the shape its JSON must have
SHAPES: dict[str, Check] = {
    "page": _page, "pick": _pick, "abi": _abi, "ext": _ext, "torch.meta": _torch_meta, "arch": _arch_modules,
    "archsel": _archsel, "requires": _strs, "wheels": _wheels_memo, "refresh": _journal, "modelprobe": _modelprobe,
    "toolkit": _toolkit, "artifact": _artifact, "npabi": map_of(_int), "skipped": map_of(_str),
    "unread": lambda v: _fields(v, {"unread": _str, "command": _str}),
    "indexpins": map_of(_strs),  # glmcompat.ops.indexpins: name==version -> the exact pins its METADATA declares
    "lockart": lambda v: _fields(v, {"keys": list_of(_strs), "facts": list_of(_artifact)}) and len(v["keys"]) == len(v["facts"]),
}


def shape_ok(key: str, value: Any) -> bool:
    """Whether ``value`` has the shape entries of ``key``'s kind must have (kinds without one: any JSON)."""
    kind = key.split("-", 1)[0] + (".meta" if key.endswith(".meta") else "")
    check = SHAPES.get(kind)
    try:
        return check is None or bool(check(value))
    except (TypeError, AttributeError, RecursionError):
        return False


def default_cache_dir() -> Path:
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
        """The entry's payload; None when it is absent, older than ``max_age``, not a regular file, or its
        digest line does not match (truncated, edited, written by an older glmcompat)."""
        path = self._path(key)
        if max_age is not None:
            try:
                if time.time() - os.lstat(path).st_mtime > max_age:
                    return None
            except OSError:
                return None
        return _unframe(key, read_bounded(str(path), MAX_STORED))

    def put_bytes(self, key: str, data: bytes) -> None:
        try:
            atomic_write(self._path(key), _frame(key, data))
        except OSError:
            # A cache that cannot be written is not an error: the result is still correct.
            return

    # -- JSON -------------------------------------------------------------------------------------
    def get_json(self, key: str, *, max_age: float | None = None) -> Any:
        """The entry as JSON; None (a miss) when :meth:`get_bytes` has none or it is not the JSON its kind's
        shape (:func:`shape_ok`) says."""
        value = decoded(self.get_bytes(key, max_age=max_age))
        return value if value is not None and shape_ok(key, value) else None

    def put_json(self, key: str, value: Any) -> None:
        self.put_bytes(key, json.dumps(value, sort_keys=True, separators=(",", ":")).encode())

    # -- locking ----------------------------------------------------------------------------------
    @contextmanager
    def lock(self, key: str, timeout: float = 1800) -> Iterator[None]:
        """Hold a per-key file lock (other processes computing the same key wait)."""
        path = self._path(key)
        lockdir = self.root / "locks"
        try:
            lockdir.mkdir(parents=True, exist_ok=True)
        except OSError:
            yield
            return
        lock = LockFile(str(lockdir / (path.name + ".lock")))
        try:
            lock.acquire(timeout)
        except TimeoutError:
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
