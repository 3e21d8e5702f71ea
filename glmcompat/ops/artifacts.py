"""Read the artifact a set installs for each compiled package the matrix has no row for, before the rules run: the
wheel an installer would take from the index for the machine's tags (or the second index the file names with
``--index-url``/``--extra-index-url``), a wheel URL (``name @ URL``) or a local wheel (a path, ``file://``). Each is
read with the same bounded range reads as the probes (:mod:`glmcompat.readers.wheelzip`): its extensions' dynamic
tables (the torch symbols they leave undefined, the CUDA runtime they link) and, where numpy is in the set, the
NumPy C-API module name in their read-only data (``numpy._core._multiarray_umath``: built against NumPy 2;
``numpy.core._multiarray_umath`` alone: NumPy 1.x). A summary is stored by the wheel's sha256 (kinds ``ext`` and
``npabi``), so the next check reads nothing. What cannot be read (no network, an sdist) becomes an
:class:`~glmcompat.model.artifacts.ArtifactFacts` that says why and names the command that would read it.

Which packages: those of the set the matrix does not track (torch, its family, the kernels and numpy are judged by
their rows) and that are not built here from source, in an environment with torch or numpy >= 2 (what the bytes are
judged against); from the index only where the file is resolved at install (a requirements file names what the
installer fetches) or the package is a known compiled torch extension (the matrix's ``[[compiled]]`` rows), and a
wheel or URL wherever the file names one."""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from glmcompat.edges.index import cache_key
from glmcompat.model.artifacts import ArtifactFacts
from glmcompat.model.errors import GlmcompatError
from glmcompat.model.names import canonicalize
from glmcompat.ops.wheelprobe import (
    WHOLE_INFLATED,
    WHOLE_MEMBER,
    ExtSummary,
    _find,
    _map,
    _Stats,
    _torch_summary,
    compare_abi,
    elf_members,
    read_elf_member,
    summarise_ext,
)
from glmcompat.readers.elf import demangle
from glmcompat.readers.wheelzip import BytesSource, RangeSource, RemoteZip, SparseMember

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, IndexFile
    from glmcompat.matrix.view import Facts
    from glmcompat.readers.formats.common import Lock

NUMPY_VERSION = 1
ARTIFACT_VERSION = 3  # the stored verdict of one artifact against a lock's torch releases (kind ``artifact``)
NUMPY2 = b"numpy._core._multiarray_umath"
NUMPY1 = (b"numpy.core._multiarray_umath", b"numpy.core.multiarray\x00", b"numpy.core.umath\x00")
RODATA_LIMIT = 64 << 20  # bytes of .rodata scanned in one member; a bigger one is left unscanned
LOCAL_LIMIT = 2 << 30  # a local wheel larger than this is not read into memory
UNREAD_TTL = 3600.0  # seconds a failed read (no network, no wheel) is remembered before it is tried again
PROBE_ENV = "GLMCOMPAT_NO_ARTIFACTS"  # set (to anything but ""): read no artifact over the network


def numpy_abi_of(data: bytes) -> int | None:
    """2 for a module built against NumPy 2 headers, 1 for NumPy 1.x headers, None for none (see the module doc)."""
    if NUMPY2 in data:
        return 2
    if any(s in data for s in NUMPY1):
        return 1
    return None


def numpy_member(zf: RemoteZip, m: Any) -> int | None:
    """The NumPy C API one shared object imports, from its read-only data (whole for a small member, else its
    ``.rodata`` section through sparse reads)."""
    if m.compressed_size <= WHOLE_MEMBER and m.size <= WHOLE_INFLATED:
        return numpy_abi_of(zf.read(m))
    info = read_elf_member(zf, m, dynamic="skip")
    sec = info.section(".rodata")
    if sec is None or sec.size > RODATA_LIMIT or sec.type == 8:
        return None
    sm = SparseMember(zf, m)
    sm.ensure(sec.offset, sec.size)
    return numpy_abi_of(sm.get(sec.offset, sec.size))


def numpy_summary(zf: RemoteZip) -> dict[str, int]:
    """{member: 1 | 2} for the shared objects of a wheel that import NumPy's C API (stored kind ``npabi``)."""
    members = elf_members(zf)
    found = _map(lambda m: (m.name, numpy_member(zf, m)), members)
    return {name: abi for name, abi in found if abi is not None}


class Opened:
    """An artifact to read: its file name, its sha256 (from the index or the lock; computed for a local file) and its
    zip, opened (its central directory read) only when something is not stored already."""

    def __init__(self, source: Callable[[], RangeSource], filename: str, sha256: str) -> None:
        self._source = source
        self._zip: RemoteZip | None = None
        self.filename = filename
        self.sha256 = sha256

    @property
    def zip(self) -> RemoteZip:
        if self._zip is None:
            self._zip = RemoteZip(self._source())
        return self._zip


def open_local(path: Path) -> Opened:
    """A local wheel file, read into memory (bounded)."""
    size = path.stat().st_size
    if size > LOCAL_LIMIT:
        raise GlmcompatError(f"{path}: {size} bytes is more than a local wheel is read whole ({LOCAL_LIMIT >> 20} MiB)")
    data = path.read_bytes()
    return Opened(lambda: BytesSource(data, path.name), path.name, hashlib.sha256(data).hexdigest())


def open_url(index: IndexClient, url: str, sha256: str = "") -> Opened:
    """A wheel at ``url``, read by HTTP range requests."""
    from glmcompat.edges.ranges import HttpRangeReader  # lazy: httpx, only when a URL is read

    name = url.split("?")[0].split("#")[0].rsplit("/", 1)[-1]
    frag = url.partition("#sha256=")[2]
    return Opened(lambda: HttpRangeReader(index.client, url.split("#")[0], name=name, retries=index.retries,
                                          backoff=index.backoff), name, sha256 or frag)


def open_index(index: IndexClient, f: IndexFile) -> Opened:
    from glmcompat.edges.ranges import HttpRangeReader  # lazy: httpx, only when a URL is read

    return Opened(lambda: HttpRangeReader(index.client, f.url, name=f.filename, size=f.size, retries=index.retries,
                                          backoff=index.backoff), f.filename, f.sha256 or "")


def summaries(op: Opened, cache: Cache | None, numpy: bool) -> tuple[ExtSummary, dict[str, int]]:
    """The extension summary (kind ``ext``, shared with ``glmcompat abi``) and, with ``numpy``, the NumPy imports
    (kind ``npabi``) of an opened wheel, each read once per sha256."""
    from glmcompat.ops.wheelprobe import EXT_SUMMARY_VERSION  # lazy: a cycle-free name at call time

    ext_key = f"ext-v{EXT_SUMMARY_VERSION}-{op.sha256}" if op.sha256 else None
    np_key = f"npabi-v{NUMPY_VERSION}-{op.sha256}" if op.sha256 else None
    ext = None
    if cache is not None and ext_key:
        hit = cache.get_json(ext_key)
        if isinstance(hit, dict):
            ext = ExtSummary.from_json(hit)
    if ext is None:
        ext = summarise_ext(op.zip)
        if cache is not None and ext_key:
            cache.put_json(ext_key, ext.to_json())
    np: dict[str, int] = {}
    if numpy and ext.modules:
        hit = cache.get_json(np_key) if cache is not None and np_key else None
        if isinstance(hit, dict):
            np = {str(k): int(v) for k, v in hit.items()}
        else:
            np = numpy_summary(op.zip)
            if cache is not None and np_key:
                cache.put_json(np_key, np)
    return ext, np


_NAMED_TORCH = re.compile(r"torch[_-]?v?(\d)[._]?(\d{1,2})(?!\d)")


def named_torch(member: str) -> str | None:
    """The torch release (``2.9``) a module's file name says it is built for, where a wheel ships one build per
    torch and loads the one for the torch beside it (``libtorch_c_dlpack_addon_torch29-cuda.so``); None otherwise."""
    m = _NAMED_TORCH.search(member.rsplit("/", 1)[-1])
    return f"{m.group(1)}.{int(m.group(2))}" if m else None


def judge(name: str, version: str, op: Opened, ext: ExtSummary, np: Mapping[str, int],
          torches: Mapping[str, frozenset[str]]) -> ArtifactFacts:
    """The facts of one read artifact: its NumPy C API and, against each torch (public version -> its exports),
    the torch symbols missing."""
    missing: dict[str, tuple[str, ...]] = {}
    needs = 0
    named = {k: t for k in ext.modules if (t := named_torch(k)) is not None}
    for tv, exports in torches.items():
        mm = ".".join(tv.split(".")[:2])
        if named and mm not in named.values():
            missing[tv] = ()  # builds for other torch releases only: which one loads is the package's choice
            continue
        mods = compare_abi(ExtSummary({k: v for k, v in ext.modules.items() if named.get(k, mm) == mm}), exports)
        needs = max(needs, sum(m.needs_from_torch for m in mods))
        missing[tv] = tuple(sorted({s.symbol for m in mods for s in m.missing}))
    names = sorted({s for v in missing.values() for s in v})
    dm = demangle(names[:50]) if names else {}
    abi = max(np.values()) if np else None
    if np and min(np.values()) == 1:
        abi = 1  # one module built against NumPy 1.x is enough to fail the import
    member = next((k for k, v in sorted(np.items()) if v == abi), "")
    majors = sorted({int(n.rsplit(".", 1)[-1]) for m in ext.modules.values() for n in m.needed
                     if n.startswith("libcudart.so.") and n.rsplit(".", 1)[-1].isdigit()})
    return ArtifactFacts(name, version, op.filename, op.sha256, abi, member, needs if torches else 0, missing,
                         {k: v for k, v in dm.items() if v != k}, tuple(majors))


def _torches(lock: Lock) -> set[str]:
    return {Version(e.packages["torch"]).public for e in lock.sets if "torch" in e.packages}


def _python_of(names: tuple[str, ...]) -> str | None:
    """The CPython tag an environment's name states (``extra sglang, Python 3.12, Linux x86_64`` -> ``cp312``)."""
    m = re.search(r"Python 3\.(\d+)", " ".join(names))
    return f"cp3{m.group(1)}" if m else None


def candidates(lock: Lock, facts: Facts, resolved_at_install: bool) -> list[tuple[str, str, str, str | None]]:
    """(name, version, where, python) of the packages whose artifact is to be read: ``where`` is ``wheel`` (the file
    names a wheel file or URL) or ``index``; ``python``: the CPython tag of the first environment installing it, when
    its name states one."""
    from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: keeps the start-up path light

    tracked = facts.kernel_packages() | facts.family_packages() | {"torch", "numpy"}
    compiled = {n for row in facts.rows("compiled") for n in row.packages}
    wheels = lock.meta.get("wheel_urls", {})
    out: dict[tuple[str, str], tuple[str, str | None]] = {}
    for env in lock.sets:
        py = _python_of(env.names)
        np = env.packages.get("numpy")
        judged = "torch" in env.packages or (np is not None and Version(np).major >= 2)
        if not judged:
            continue
        for name, ver in env.packages.items():
            if name in tracked or name.startswith(("nvidia-", "triton", "pytorch-triton")):
                continue
            src = env.sources.get(name)
            if src in BUILT_FROM_SOURCE:
                continue
            if src == "wheel":
                if f"{name}=={ver}" in wheels:
                    out.setdefault((name, ver), ("wheel", py))
                continue
            if src is None and (resolved_at_install or name in compiled):
                out.setdefault((name, ver), ("index", py))
    return [(n, v, w, p) for (n, v), (w, p) in sorted(out.items())]


def probe_lock(lock: Lock, facts: Facts, *, index: IndexClient, cache: Cache | None, resolved_at_install: bool,
               machine: str = "x86_64", python: str = "cp311") -> dict[tuple[str, str], ArtifactFacts]:
    """{(name, version): ArtifactFacts} for every candidate of ``lock`` (:func:`candidates`); nothing raises: what
    cannot be read is an ArtifactFacts with ``unread`` set."""
    todo = candidates(lock, facts, resolved_at_install)
    if not todo:
        return {}
    numpy = any("numpy" in e.packages for e in lock.sets)
    platform = f"manylinux_{machine}"
    network = not os.environ.get(PROBE_ENV)
    base = Path(lock.path).parent
    wheels = lock.meta.get("wheel_urls", {})
    picks: dict[str, IndexFile] = {}
    torch_error = ""
    for tv in sorted(_torches(lock)):
        if not network:
            torch_error = f"torch {tv}'s exported symbols were not read (reading over the network is off: {PROBE_ENV})"
            break
        try:
            picks[tv] = _find(index, cache, "torch", tv, python, platform)
        except GlmcompatError as e:
            torch_error = f"torch {tv}'s exported symbols could not be read ({e.message.splitlines()[0][:160]})"
    tkey = hashlib.blake2b("|".join(f"{tv}={f.sha256}" for tv, f in sorted(picks.items())).encode(),
                           digest_size=10).hexdigest()
    loaded: dict[str, frozenset[str]] = {}
    guard = threading.Lock()

    def torches() -> dict[str, frozenset[str]]:
        """The exports of every torch of the lock, read (from the cache, by sha256) only when a verdict is not stored."""
        with guard:
            for tv, f in picks.items():
                if tv not in loaded:
                    loaded[tv] = _torch_summary(index, cache, f, _Stats()).exports
            return dict(loaded)

    def one(item: tuple[str, str, str, str | None]) -> tuple[tuple[str, str], ArtifactFacts]:
        name, ver, where, py = item
        py = py or python
        command = f"glmcompat abi {name}=={Version(ver).public}"  # the rule adds --torch (the set's)
        failed = cache_key("unread", f"{index.base_url if where == 'index' else ''}|{wheels.get(f'{name}=={ver}', '')}|"
                                     f"{name}=={ver}|{py}|{platform}")
        if network and cache is not None:  # a read that failed lately is not tried on every check
            hit = cache.get_json(failed, max_age=UNREAD_TTL)
            if isinstance(hit, dict):
                return (name, ver), ArtifactFacts(name, ver, "", unread=hit["unread"], command=hit["command"])
        try:
            if where == "wheel":
                loc = wheels[f"{name}=={ver}"]
                if loc.startswith("file://"):
                    loc = loc[len("file://"):]
                if "://" in loc:
                    if not network:
                        raise GlmcompatError(f"reading over the network is off ({PROBE_ENV})")
                    command = f"glmcompat abi '{name} @ {loc}'"
                    op = open_url(index, loc)
                else:
                    loc, _, recorded = loc.partition("#sha256=")
                    p = Path(loc) if os.path.isabs(loc) else base / loc
                    command = f"glmcompat abi {p}"
                    op = open_local(p)
                    if recorded and recorded.lower() != op.sha256:
                        return (name, ver), ArtifactFacts(name, ver, op.filename, op.sha256, recorded_sha256=recorded.lower(),
                                                          command=command)
            else:
                if not network:
                    raise GlmcompatError(f"reading over the network is off ({PROBE_ENV})")
                f = _find(index, cache, canonicalize(name), Version(ver).public, py, platform)
                if not f.is_wheel or f.filename.endswith("-any.whl"):
                    return (name, ver), ArtifactFacts(name, ver, f.filename, f.sha256 or "", command=command)  # pure
                op = open_index(index, f)
            key = f"artifact-v{ARTIFACT_VERSION}-{op.sha256}-{tkey}-{int(numpy)}" if op.sha256 and not torch_error else None
            hit = cache.get_json(key) if cache is not None and key else None
            if isinstance(hit, dict):
                return (name, ver), replace(ArtifactFacts.from_json(hit), name=name, version=ver, command=command)
            ext, np = summaries(op, cache, numpy)
            got = replace(judge(name, ver, op, ext, np, torches() if ext.modules else {}), command=command)
            if cache is not None and key:
                cache.put_json(key, got.to_json())
            if torch_error and ext.modules and got.torch_needs == 0:
                return (name, ver), ArtifactFacts(name, ver, op.filename, op.sha256, got.numpy_abi, got.numpy_member,
                                                  unread=torch_error, command=command)
            return (name, ver), got
        except (GlmcompatError, OSError, KeyError) as e:
            msg = getattr(e, "message", None) or str(e)
            why = str(msg).splitlines()[0][:200] if msg else type(e).__name__
            if network and cache is not None:
                cache.put_json(failed, {"unread": why, "command": command})
            return (name, ver), ArtifactFacts(name, ver, "", unread=why, command=command)

    return dict(_map(one, todo, workers=8))

