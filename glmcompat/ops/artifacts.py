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
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from glmcompat.edges.index import cache_key
from glmcompat.model.artifacts import ArtifactFacts
from glmcompat.model.errors import GlmcompatError, WheelError
from glmcompat.model.names import canonicalize
from glmcompat.model.wheeltags import supported_tags, wheel_file_tags
from glmcompat.ops.wheelprobe import (
    JUDGE_WHOLE_MEMBER,
    WHOLE_INFLATED,
    WHOLE_MEMBER,
    ExtSummary,
    ModuleSymbols,
    _find,
    _map,
    _Stats,
    _torch_summary,
    compare_abi,
    elf_members,
    ext_summary_of,
    read_elf_member,
    read_elf_then,
    read_members,
)
from glmcompat.readers.elf import BytesView, ElfInfo, demangle, parse_elf
from glmcompat.readers.wheelzip import BytesSource, NeedBytes, OverBudget, RangeSource, RemoteZip, SparseMember, ZipMember

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, IndexFile
    from glmcompat.matrix.view import Facts
    from glmcompat.readers.formats.common import Lock

NUMPY_VERSION = 3  # 3: pybind11's import is not NumPy 1.x's; 2: only extension modules that take a capsule are scanned (may_import_numpy)
ARTIFACT_VERSION = 5  # 5: partial (a module beyond the byte budget); the stored verdict of one artifact against a lock's torch releases (kind ``artifact``)
NUMPY2 = b"numpy._core._multiarray_umath"
NUMPY1 = (b"numpy.core._multiarray_umath", b"numpy.core.multiarray\x00", b"numpy.core.umath\x00")
RODATA_LIMIT = 64 << 20  # bytes of .rodata scanned in one member; a bigger one is left unscanned
LOCAL_LIMIT = 2 << 30  # a local wheel larger than this is not read into memory
UNREAD_TTL = 3600.0  # seconds a failed read (no network, no wheel) is remembered before it is tried again
PROBE_ENV = "GLMCOMPAT_NO_ARTIFACTS"  # set (to anything but ""): read no artifact over the network


PYBIND11_NUMPY = b"pybind11 numpy support requires numpy"  # pybind11's own NumPy API lookup (pybind11/numpy.h)


def numpy_abi_of(data: bytes) -> int | None:
    """2 for a module built against NumPy 2 headers, 1 for NumPy 1.x headers, None for none (see the module doc).
    pybind11 before 2.12 imports ``numpy.core.multiarray`` for its ``_ARRAY_API`` table itself, with no NumPy ABI
    version check: NumPy 2 still provides that module (a forwarding shim), so such a module imports; only NumPy 1.x
    headers' ``import_array`` (``numpy.core._multiarray_umath``) refuses NumPy 2 ('numpy.core.multiarray failed to
    import')."""
    if NUMPY2 in data:
        return 2
    if NUMPY1[0] in data:
        return 1
    if any(s in data for s in NUMPY1[1:]) and PYBIND11_NUMPY not in data:
        return 1
    return None


def numpy_member(zf: RemoteZip, m: Any) -> int | None:
    """The NumPy C API one shared object imports, from its read-only data (whole for a small member, else its
    ``.rodata`` section through sparse reads)."""
    if m.compressed_size <= WHOLE_MEMBER and m.size <= WHOLE_INFLATED:
        return numpy_abi_of(zf.read(m))
    info = read_elf_member(zf, m, dynamic="skip", bounded=True, names=True)
    sec = info.section(".rodata")
    if sec is None or sec.size > RODATA_LIMIT or sec.type == 8:
        return None
    sm = SparseMember(zf, m)
    why = sm.within([(sec.offset, sec.size)])
    if why is not None:
        raise OverBudget(zf.name, f"its NumPy C API (.rodata) was not read: {why}", m.name)
    sm.ensure(sec.offset, sec.size)
    return numpy_abi_of(sm.get(sec.offset, sec.size))


def _shared_ok(zf: RemoteZip, m: ZipMember) -> bool:
    """Whether :func:`numpy_member`'s own reading of a big member's section table (a fresh
    :class:`SparseMember`, bounded) could not have been refused, so its sections can be taken from the reader that
    already parsed the member instead (:func:`_numpy_of`). That reading asks for at most two ranges a round (the
    header; the section headers; their names; .dynsym and .dynstr), and a :class:`SparseMember` of a member that
    inflates to at most 64 MiB (its ``max_tail``; ``max_prefix`` is 128 MiB) never finds a range past its limits,
    has fetched at most twice its compressed size (a prefix and a tail) and estimates a range at most 1.3 times its
    compressed size and 256 KiB (:meth:`SparseMember.cost`): a need of at most 4.6 times its compressed size and
    512 KiB, which a budget of that much always allows."""
    if m.size > 64 << 20:
        return False
    budget = zf.budget(required=True)
    return budget is None or 23 * m.compressed_size // 5 + (512 << 10) <= budget


def _scan_rodata(sm: SparseMember, offset: int, size: int) -> int | None:
    """:func:`numpy_abi_of` of ``[offset, offset+size)`` of a member read in parts (its ``.rodata``). Read from the
    front of the member (where its prefix already reaches), it stops at NumPy 2's module name: :func:`numpy_abi_of`
    answers 2 wherever that name is, whatever follows it, so the rest is never inflated."""
    step = 1 << 20
    end = offset + size
    if sm.m.method == 0 or offset - sm.prefix_len > sm.size - end:  # stored, or read as a tail: whole, as before
        sm.ensure(offset, size)
        return numpy_abi_of(sm.get(offset, size))
    pos = offset
    while pos < end:
        nxt = min(end, pos + step)
        sm.ensure(offset, nxt - offset, fetch_to=end)
        if NUMPY2 in sm.get(max(offset, pos - len(NUMPY2) + 1), nxt - max(offset, pos - len(NUMPY2) + 1)):
            return 2
        pos = nxt
    return numpy_abi_of(sm.get(offset, size))


def _numpy_of(zf: RemoteZip, m: ZipMember, info: ElfInfo, view: BytesView | SparseMember) -> int | None:
    """:func:`numpy_member` of a member whose ELF tables were just read from ``view`` (by :func:`summaries`):
    the same answer, from the bytes already inflated. A member read whole is scanned whole, as
    :func:`numpy_member` reads it; a big one's ``.rodata`` is found from the sections already parsed (their names
    read now where the first reading did without them) and read on from the same prefix and tail, its byte budget
    judged as :func:`numpy_member` judges it (a fresh reader's estimate). Where :func:`_shared_ok` cannot prove
    that :func:`numpy_member`'s own reading of the section table is within the budget, it is that reading."""
    if isinstance(view, BytesView):
        return numpy_abi_of(bytes(view.data))
    if not _shared_ok(zf, m):
        return numpy_member(zf, m)
    if not info.names_read:
        label = f"{zf.name}: {m.name}"
        for _ in range(32):
            try:
                info = parse_elf(view, label, dynamic="skip", check=zf.tick, names=True)
                break
            except NeedBytes as e:
                for off, n in e.ranges:
                    view.ensure(off, n)
        else:
            raise WheelError(zf.name, "ELF tables not found after 32 rounds of reads", m.name)
    sec = info.section(".rodata")
    if sec is None or sec.size > RODATA_LIMIT or sec.type == 8:
        return None
    why = SparseMember(zf, m).within([(sec.offset, sec.size)])  # as numpy_member's fresh reader judges it
    if why is not None:
        raise OverBudget(zf.name, f"its NumPy C API (.rodata) was not read: {why}", m.name)
    return _scan_rodata(view, sec.offset, sec.size)


def ext_and_numpy(zf: RemoteZip, keep: Callable[[str], bool], numpy: bool, skipped: dict[str, str],
                  npskipped: dict[str, str]) -> tuple[ExtSummary, dict[str, int]]:
    """:func:`summarise_ext` (bounded, ``skipped``) and, with ``numpy``, :func:`numpy_summary` of the modules it read
    that may import NumPy's C API (``npskipped``), in one pass: each member is inflated once, its NumPy scan
    continuing from the bytes its ELF tables were read from (:func:`_numpy_of`). The same answers, skips and errors
    as the two passes: a member the first leaves out is not scanned; an error of the first is raised before any of
    the second, each the first in member order."""
    members = [m for m in elf_members(zf) if keep(m.name)]

    def one(m: ZipMember) -> tuple[str, ElfInfo | None, str | None, tuple[str, Any] | None]:
        def then(info: ElfInfo, view: BytesView | SparseMember) -> tuple[str, Any] | None:
            if not (numpy and may_import_numpy(m.name, info.undefined)):
                return None
            try:
                return "abi", _numpy_of(zf, m, info, view)
            except OverBudget as e:
                return "skip", e.message.rsplit(f"{m.name}: ", 1)[-1]
            except Exception as e:  # noqa: BLE001 - raised after every member's tables are read (as the second pass)
                return "error", e

        try:
            info, np = read_elf_then(zf, m, then, dynamic="require", bounded=True, whole=JUDGE_WHOLE_MEMBER)
        except OverBudget as e:
            return m.name, None, e.message.rsplit(f"{m.name}: ", 1)[-1], None
        return m.name, info, None, np

    infos: dict[str, ElfInfo] = {}
    found: dict[str, int] = {}
    failed: Exception | None = None
    for name, info, why, np in _map(one, members):
        if info is None:
            skipped[name] = str(why)
            continue
        infos[name] = info
        if np is None:
            continue
        if np[0] == "abi" and np[1] is not None:
            found[name] = np[1]
        elif np[0] == "skip":
            npskipped[name] = np[1]
        elif np[0] == "error" and failed is None:
            failed = np[1]
    if failed is not None:
        raise _NumpyFailed(ext_summary_of(infos), failed)
    return ext_summary_of(infos), found


class _NumpyFailed(Exception):
    """The NumPy scan of :func:`ext_and_numpy` failed where the extension summary did not (stored before it raises,
    as the two passes stored it)."""

    def __init__(self, ext: ExtSummary, error: Exception) -> None:
        super().__init__(str(error))
        self.ext, self.error = ext, error


def may_import_numpy(member: str, undefined: Collection[str]) -> bool:
    """Whether a module may import NumPy's C API, from what its dynamic table already told: a Python extension module
    (not a ``lib*.so``) that calls ``PyCapsule_GetPointer`` (NumPy's ``import_array`` takes the API table from a
    capsule of the module it imports). Only these have their read-only data scanned: in a deflated member that
    data can be reached only by inflating what comes before it."""
    return not member.rsplit("/", 1)[-1].startswith("lib") and "PyCapsule_GetPointer" in undefined


def numpy_summary(zf: RemoteZip, only: Collection[str] | None = None,
                  skipped: dict[str, str] | None = None) -> dict[str, int]:
    """{member: 1 | 2} for the shared objects of a wheel that import NumPy's C API (stored kind ``npabi``);
    ``only``: the members to scan (default: every shared object). With ``skipped``, a member whose read-only data lies
    beyond the wheel's byte budget is left out and gains {member: why} (else that raises)."""
    members = [m for m in elf_members(zf) if only is None or m.name in only]
    found = read_members(members, lambda m: numpy_member(zf, m), skipped)
    return {name: abi for name, abi in found.items() if abi is not None}


class Opened:
    """An artifact to read: its file name, its sha256 (from the index or the lock; computed for a local file) and its
    zip, opened (its central directory read) only when something is not stored already."""

    def __init__(self, source: Callable[[], RangeSource], filename: str, sha256: str,
                 fallback: Callable[[], RangeSource] | None = None) -> None:
        self._source = source
        self._fallback = fallback
        self._zip: RemoteZip | None = None
        self.source: RangeSource | None = None  # what was read, once opened
        self.filename = filename
        self.sha256 = sha256

    @property
    def zip(self) -> RemoteZip:
        """The opened zip; where its own source cannot be read and a ``fallback`` is given (the same file, by sha256,
        on the configured index: :func:`same_file`), that one."""
        if self._zip is None:
            try:
                self.source = self._source()
                self._zip = RemoteZip(self.source)
            except (GlmcompatError, OSError):
                if self._fallback is None:
                    raise
                self.source = self._fallback()
                self._zip = RemoteZip(self.source)
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


def open_index(index: IndexClient, f: IndexFile, mirrors: Sequence[IndexClient] = ()) -> Opened:
    """An index file (or a wheel a lock records at a URL) read by HTTP range requests; where its URL cannot be read,
    the file of the same sha256 on one of ``mirrors`` (:func:`same_file`)."""
    from glmcompat.edges.ranges import HttpRangeReader  # lazy: httpx, only when a URL is read

    def reader(i: IndexClient, g: IndexFile) -> RangeSource:
        return HttpRangeReader(i.client, g.url, name=g.filename, size=g.size, retries=i.retries, backoff=i.backoff)

    def fallback() -> RangeSource:
        i, g = same_file(mirrors, f)
        return reader(i, g)

    return Opened(lambda: reader(index, f), f.filename, f.sha256 or "", fallback if mirrors and f.sha256 else None)


def _torch_elsewhere(indexes: Sequence[IndexClient], cache: Cache | None, f: IndexFile, public: str, python: str,
                     machine: str) -> tuple[IndexClient, Cache | None, IndexFile]:
    """Where torch's exports are read when the wheel a lock records for it cannot be: the same file (by sha256) on a
    configured index; else, for a CUDA variant (``2.8.0+cu128`` from PyTorch's own index), the same release's wheel on
    the configured index -- the variants of one release are built from one source with one C++ ABI (the matrix's
    torch rows: "its C++ ABI is torch 2.8.0's"), so the symbols an extension needs are looked up there."""
    try:
        i, g = same_file(indexes, f)
        return i, cache, g
    except GlmcompatError:
        if "+" not in f.filename.split("-")[1].replace("%2B", "+"):
            raise
    i, g = _find_where(indexes, cache, "torch", public, python, f"manylinux_{machine}")
    return i, cache, g


def same_file(indexes: Sequence[IndexClient], f: IndexFile) -> tuple[IndexClient, IndexFile]:
    """The file ``f`` (a wheel a lock records at a URL that could not be read: the lock was made against a host this
    machine cannot reach, or the index it names is mirrored here) as one of ``indexes`` lists it: the same file name
    with the same sha256, so the bytes read are the bytes the lock names. Raises when none lists it."""
    if not f.sha256:
        raise GlmcompatError(f"{f.filename}: its recorded URL could not be read, and the lock records no sha256 to "
                             "find the same file elsewhere")
    try:
        name = str(parse_wheel_filename(f.filename)[0])
    except InvalidWheelFilename:
        name = f.filename.split("-", 1)[0]
    seen = ""
    for i in indexes:
        try:
            files = i.project(name).files
        except GlmcompatError as e:
            seen = seen or e.message.splitlines()[0][:160]
            continue
        for g in files:
            if g.filename == f.filename and g.sha256 and g.sha256.lower() == f.sha256.lower():
                return i, g
        if any(g.filename == f.filename for g in files):
            seen = seen or f"the index {i.base_url} lists {f.filename} with another sha256"
    raise GlmcompatError(f"{f.filename}: its recorded URL could not be read, and no configured index lists the file "
                         f"with the sha256 the lock records" + (f" ({seen})" if seen else ""))


def own_code(member: str) -> bool:
    """Whether a shared object of a wheel is read for its verdict: all but the system libraries auditwheel grafted into
    ``<package>.libs/`` (OpenBLAS, libgfortran, ...: built without torch or NumPy, and in a deflated wheel read only by
    inflating them whole), except a grafted torch (``libc10``, ``libtorch``), whose exports a module may take instead of
    the set's torch's."""
    top, _, rest = member.partition("/")
    return not top.endswith(".libs") or rest.rsplit("/", 1)[-1].startswith(("libc10", "libtorch"))


BUDGET_VERSION = 1  # kind ``skipped``: the members of a wheel left unread, beyond its byte budget


def summaries(op: Opened, cache: Cache | None, numpy: bool,
              skipped: dict[str, str] | None = None, *, shipped: bool = True) -> tuple[ExtSummary, dict[str, int]]:
    """The extension summary of its own code (kind ``ext``, key suffix ``-own``: :func:`own_code`) and, with ``numpy``, the NumPy imports
    (kind ``npabi``) of an opened wheel, each read once per sha256. Each member is read within the wheel's byte budget
    (:data:`glmcompat.readers.wheelzip.BUDGET_SHARE`): one that needs more is left out, and ``skipped`` gains
    {member: what was not read and why} (stored with them, kind ``skipped``). With ``shipped``, a wheel whose sha256
    :mod:`glmcompat.ops.shipped` holds (read whole when it was recorded: nothing skipped) is answered from there,
    nothing read."""
    from glmcompat.ops.wheelprobe import EXT_SUMMARY_VERSION  # lazy: a cycle-free name at call time

    if shipped and op.sha256:
        from glmcompat.ops.shipped import summary  # lazy: the shipped rows, only when a wheel is summarised

        hit = summary(op.sha256, numpy, NUMPY_VERSION)
        if hit is not None:
            return hit

    ext_key = f"ext-v{EXT_SUMMARY_VERSION}-{op.sha256}-own" if op.sha256 else None
    np_key = f"npabi-v{NUMPY_VERSION}-{op.sha256}" if op.sha256 else None
    skip_key = f"skipped-v{BUDGET_VERSION}-{op.sha256}" if op.sha256 else None
    left: dict[str, str] = {}
    hit = cache.get_json(skip_key) if cache is not None and skip_key else None
    stored = isinstance(hit, dict)
    if isinstance(hit, dict):
        left.update({str(k): str(v) for k, v in hit.items()})
    ext = None
    if cache is not None and ext_key and stored:
        hit = cache.get_json(ext_key)
        if isinstance(hit, dict):
            ext = ExtSummary.from_json(hit)
    np: dict[str, int] | None = None
    if ext is None:
        left = {k: v for k, v in left.items() if not k.startswith("numpy:")}
        npleft: dict[str, str] = {}
        failed: Exception | None = None
        try:  # one pass: each member inflated once for its tables and its NumPy import (ext_and_numpy)
            ext, np = ext_and_numpy(op.zip, own_code, numpy, left, npleft)
        except _NumpyFailed as e:
            ext, failed = e.ext, e.error
        if cache is not None and ext_key:
            cache.put_json(ext_key, ext.to_json())
        if failed is not None:
            raise failed
        stored = False
        if numpy and ext.modules:
            assert np is not None
            left |= {f"numpy:{k}": v for k, v in npleft.items()}
            if cache is not None and np_key:
                cache.put_json(np_key, np)
    if np is None and numpy and ext.modules:
        hit = cache.get_json(np_key) if cache is not None and np_key and stored else None
        if isinstance(hit, dict):
            np = {str(k): int(v) for k, v in hit.items()}
        else:
            npleft = {}
            np = numpy_summary(op.zip, {k for k, m in ext.modules.items() if may_import_numpy(k, m.undefined)}, npleft)
            left = {k: v for k, v in left.items() if not k.startswith("numpy:")} | {f"numpy:{k}": v for k, v in npleft.items()}
            if cache is not None and np_key:
                cache.put_json(np_key, np)
            stored = False
    if cache is not None and skip_key and not stored:
        cache.put_json(skip_key, left)
    if skipped is not None:
        skipped.update(left)
    return ext, np or {}


_NAMED_TORCH = re.compile(r"torch[_-]?v?(\d)[._]?(\d{1,2})(?!\d)")


def named_torch(member: str) -> str | None:
    """The torch release (``2.9``) a module's file name says it is built for, where a wheel ships one build per
    torch and loads the one for the torch beside it (``libtorch_c_dlpack_addon_torch29-cuda.so``); None otherwise."""
    m = _NAMED_TORCH.search(member.rsplit("/", 1)[-1])
    return f"{m.group(1)}.{int(m.group(2))}" if m else None


_SIBLING = re.compile(r"^(?P<stem>.+?)[_-]v?(?P<major>\d)[._](?P<minor>\d{1,2})(?:[._]\d{1,2})?(?P<tail>\.(?:cpython|abi3|so).*)$")


def named_torches(members: Collection[str]) -> dict[str, str]:
    """{member: the torch release (``2.11``) it is built for} where a wheel ships one build per torch and loads the one
    beside it: a name that says ``torch`` (:func:`named_torch`), or sibling modules that differ only by a release in
    their names (mooncake-transfer-engine's ``mooncake/ep_2_10_0``, ``ep_2_11_0``, ``ep_2_12_0``)."""
    out = {k: t for k in members if (t := named_torch(k)) is not None}
    groups: dict[tuple[str, str, str], dict[str, str]] = {}
    for k in members:
        folder, _, base = k.rpartition("/")
        m = _SIBLING.match(base)
        if m and k not in out:
            groups.setdefault((folder, m["stem"], m["tail"]), {})[k] = f"{m['major']}.{int(m['minor'])}"
    for found in groups.values():
        if len(set(found.values())) >= 2:
            out.update(found)
    return out


def judge(name: str, version: str, op: Opened, ext: ExtSummary, np: Mapping[str, int],
          torches: Mapping[str, frozenset[str]]) -> ArtifactFacts:
    """The facts of one read artifact: its NumPy C API and, against each torch (public version -> its exports),
    the torch symbols missing."""
    missing: dict[str, tuple[str, ...]] = {}
    needs = 0
    named = named_torches(ext.modules)
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


def _torches(lock: Lock) -> dict[str, str]:
    """{torch public version: a version the lock names for it (its local label kept)}."""
    return {Version(e.packages["torch"]).public: e.packages["torch"] for e in lock.sets if "torch" in e.packages}


def _python_of(names: tuple[str, ...]) -> str | None:
    """The CPython tag an environment's name states (``extra sglang, Python 3.12, Linux x86_64`` -> ``cp312``)."""
    m = re.search(r"Python 3\.(\d+)", " ".join(names))
    return f"cp3{m.group(1)}" if m else None


@lru_cache(maxsize=16)
def _rank(python: str, machine: str) -> dict[str, int]:
    return {str(t): i for i, t in enumerate(supported_tags(python, f"manylinux_{machine}"))}


def pick_wheel(locs: Sequence[str], python: str, machine: str) -> str | None:
    """Of the compiled wheels a lock records for one package (``LOCATION#sha256=``), the one an installer on
    ``machine`` with ``python`` takes (best tag first); failing that (the environment's Python is not stated), the
    first built for ``machine`` at all; None when none is. Chosen once a process for the same wheels (the judge of a
    lock asks twice for each package: :func:`stored_key`, then :func:`probe_lock`)."""
    return _pick_wheel(tuple(locs), python, machine)


@lru_cache(maxsize=1024)
def _pick_wheel(locs: tuple[str, ...], python: str, machine: str) -> str | None:
    rank = _rank(python, machine)
    best: tuple[int, str] | None = None
    fallback = None
    for loc in locs:
        got = wheel_file_tags(loc.split("#")[0].rsplit("/", 1)[-1])
        if got is None:
            continue
        tags, platforms = got
        r = min((rank[t] for t in tags if t in rank), default=None)
        if r is not None and (best is None or r < best[0]):
            best = (r, loc)
        if fallback is None and any(p.endswith(f"_{machine}") for p in platforms):
            fallback = loc
    return best[1] if best is not None else fallback


Candidate = tuple[str, str, str, "str | None", str]  # (name, version, where, python, machine)


def key_of(name: str, version: str, machine: str) -> tuple[str, ...]:
    """The key of an artifact's facts: (name, version) on x86_64, (name, version, machine) elsewhere
    (:func:`glmcompat.decide.rules.artifacts.on_machine` takes one machine's back)."""
    return (name, version) if machine == "x86_64" else (name, version, machine)


def _fits(loc: str, machine: str) -> bool:
    """Whether a wheel file name's platform tags install on ``machine`` (``any`` does; a name not of a wheel: yes)."""
    try:
        tags = parse_wheel_filename(loc.split("#")[0].split("?")[0].rsplit("/", 1)[-1])[3]
    except InvalidWheelFilename:
        return True
    return any(t.platform == "any" or t.platform.endswith(f"_{machine}") for t in tags)


def read_machines(lock: Lock, platforms: Sequence[str] | None = None, ships_on: Collection[str] = ()) -> set[str]:
    """The machines whose artifacts are read: those ``platforms`` names (``--platform``), else x86_64 where the file
    installs there and every other machine it installs on that a target checked ships on (``ships_on``: sm90's GH200
    and sm100's GB200 are aarch64 machines, so a lock's aarch64 environments are judged from the aarch64 wheels they
    install), else every machine it installs on. A machine not read is told so (:func:`probe_lock`)."""
    have = {e.platform for e in lock.sets}
    if platforms:
        return have & set(platforms)
    return ({"x86_64"} | (have & set(ships_on))) if "x86_64" in have else have


def candidates(lock: Lock, facts: Facts, resolved_at_install: bool,
               machines: set[str] | None = None) -> list[Candidate]:
    """(name, version, where, python, machine) of the packages whose artifact is to be read: ``where`` is ``conda``
    (environment.yml's conda section: its channel's build, told as not read), ``wheel``
    (the file names a wheel file or URL), ``lock`` (the lock records the compiled wheels of a package from an index:
    every one of them is read, listed in the matrix or not; pure ``-none-any`` wheels are not) or ``index``;
    ``python``: the CPython tag of the first environment installing it, when its name states one; ``machine``: the
    environment's."""
    from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: keeps the start-up path light

    tracked = facts.kernel_packages() | facts.family_packages() | {"torch", "numpy"}
    compiled = {n for row in facts.rows("compiled") for n in row.packages}
    wheels = lock.meta.get("wheel_urls", {})
    binary = lock.meta.get("lock_wheels", {})
    conda = set(lock.meta.get("conda_packages", ()))  # environment.yml: installed by conda from its channel
    out: dict[tuple[str, str, str], tuple[str, str | None]] = {}
    for env in lock.sets:
        if machines is not None and env.platform not in machines:
            continue
        py = _python_of(env.names)
        np = env.packages.get("numpy")
        judged = "torch" in env.packages or (np is not None and Version(np).major >= 2)
        if not judged:
            continue
        for name, ver in env.packages.items():
            if name.startswith(("nvidia-", "triton", "pytorch-triton")) or name in tracked and (
                    name in ("torch", "numpy") or _has_row(facts, name, ver)):
                continue
            src = env.sources.get(name)
            if src in BUILT_FROM_SOURCE:
                continue
            if name in conda:  # its bytes are the channel's build, not the index's wheel: not read in its place
                out.setdefault((name, ver, env.platform), ("conda", py))
                continue
            if src == "wheel":
                if f"{name}=={ver}" in wheels and _fits(wheels[f"{name}=={ver}"], env.platform):
                    out.setdefault((name, ver, env.platform), ("wheel", py))
                continue
            if src is None and f"{name}=={ver}" in binary:
                out.setdefault((name, ver, env.platform), ("lock", py))
            elif src is None and (resolved_at_install or name in compiled):
                out.setdefault((name, ver, env.platform), ("index", py))
    return [(n, v, w, p, m) for (n, v, m), (w, p) in sorted(out.items())]


def _has_row(facts: Facts, name: str, version: str) -> bool:
    """Whether the matrix says what torch a tracked package's release was built for (a kernel row, a family pin); one
    it has no row for is read from its own bytes like any other compiled package."""
    try:
        return facts.kernel(name, version) is not None or facts.family(name, version) is not None
    except (ValueError, TypeError):
        return True


def _lock_file(loc: str) -> IndexFile:
    """An :class:`IndexFile` of a wheel URL a lock records (``URL#sha256=``)."""
    from glmcompat.edges.index import IndexFile  # lazy: a cycle-free name at call time

    url, _, sha = loc.partition("#sha256=")
    return IndexFile(url.rsplit("/", 1)[-1], url, None, sha or None, None, False, None, True)


def _needs_torch(ext: ExtSummary) -> bool:
    """Whether any module of an extension wheel links torch or leaves a torch/c10/ATen name undefined (only then are
    torch's exports read)."""
    return any(n.startswith(("libc10", "libtorch")) for m in ext.modules.values() for n in m.needed) or any(
        "c10" in u or "torch" in u or "2at" in u for m in ext.modules.values() for u in m.undefined)


def judged_part(ext: ExtSummary) -> ExtSummary:
    """What :func:`probe_lock` reads of a wheel's extension summary: all of it where the wheel needs torch's exports
    (:func:`_needs_torch`: :func:`judge` compares its modules' undefined names, and their siblings' defined ones, with
    torch's), else its modules' names and the libraries they need only (the CUDA runtime's major; with no torch to
    compare, :func:`judge` reads nothing else, and :func:`_needs_torch` of this part is false as well): the same
    verdict. What a shipped row holds (:mod:`glmcompat.ops.shipped`)."""
    if _needs_torch(ext):
        return ext
    return ExtSummary({k: ModuleSymbols(m.needed, (), (), ()) for k, m in ext.modules.items()})


def probe_lock(lock: Lock, facts: Facts, *, index: IndexClient, cache: Cache | None, resolved_at_install: bool,
               machine: str = "x86_64", python: str = "cp311",
               indexes: Sequence[IndexClient] = (),
               platforms: Sequence[str] | None = None,
               own: Mapping[str, IndexClient] | None = None) -> dict[tuple[str, ...], ArtifactFacts]:
    """{key: ArtifactFacts} for every candidate of ``lock`` (:func:`candidates`; keys :func:`key_of`); nothing raises:
    what cannot be read is an ArtifactFacts with ``unread`` set. A package from an index is looked up in ``index`` and
    then ``indexes`` (the file's own, in order); a wheel the lock records is read from the URL it records. ``machine``:
    the machine torch's exports are read for when the lock records no torch wheel; ``own``: the index each package's
    lock records (``name==version`` -> its client, poetry's ``legacy`` sources), searched first for it."""
    machines = read_machines(lock, platforms)
    todo = candidates(lock, facts, resolved_at_install, machines)
    skipped = _not_read(lock, facts, resolved_at_install, machines)
    if not todo:
        return skipped
    from glmcompat.ops import shipped  # lazy: the shipped rows, only when a verdict is computed

    numpy = numpy_scanned(lock, resolved_at_install)
    network = not os.environ.get(PROBE_ENV)
    base = Path(lock.path).parent
    wheels = lock.meta.get("wheel_urls", {})
    binary = lock.meta.get("lock_wheels", {})
    searched = [index, *indexes]
    picks: dict[tuple[str, str], IndexFile] = {}
    torch_error: dict[str, str] = {}
    for m in sorted({c[4] for c in todo}):
        for tv, tfull in sorted(_torches(lock).items()):
            if not network:
                torch_error[m] = f"torch {tv}'s exported symbols were not read (reading over the network is off: {PROBE_ENV})"
                break
            loc = pick_wheel(binary.get(f"torch=={tfull}", ()), python, m)
            if loc is not None and "://" in loc:
                picks[(m, tv)] = _lock_file(loc)
                continue
            try:
                first = (own or {}).get(f"torch=={tfull}")
                try:
                    picks[(m, tv)] = _find_in([first, *searched] if first else searched, cache, "torch", tfull, python,
                                              f"manylinux_{m}")
                except GlmcompatError:
                    if tfull == tv:
                        raise
                    # a variant (+cu128, +cpu) not on the configured index: the same release's wheel, one C++ ABI
                    picks[(m, tv)] = _find_in(searched, cache, "torch", tv, python, f"manylinux_{m}")
            except GlmcompatError as e:
                torch_error[m] = f"torch {tv}'s exported symbols could not be read ({e.message.splitlines()[0][:160]})"
    tkeys = {m: hashlib.blake2b("|".join(f"{tv}={f.sha256}" for (pm, tv), f in sorted(picks.items()) if pm == m).encode(),
                                digest_size=10).hexdigest() for m in {c[4] for c in todo}}
    loaded: dict[tuple[str, str], frozenset[str]] = {}
    guard = threading.Lock()

    def torches(m: str, ext_sha: str = "") -> dict[str, frozenset[str]]:
        """The exports of every torch of the lock on ``m``, read (from the cache, by sha256) only when a verdict is not
        stored; where the extension of ``ext_sha`` is one a shipped torch row covers (:func:`shipped.torch_exports`:
        the same answer for it), that row, nothing read."""
        out: dict[str, frozenset[str]] = {}
        with guard:
            for (pm, tv), f in picks.items():
                if pm != m:
                    continue
                if (pm, tv) not in loaded and f.sha256 and ext_sha and (
                        cut := shipped.torch_exports(f.sha256, ext_sha)) is not None:
                    out[tv] = cut
                    continue
                if (pm, tv) not in loaded:
                    try:
                        loaded[(pm, tv)] = _torch_summary(index, cache, f, _Stats()).exports
                    except (GlmcompatError, OSError):
                        loaded[(pm, tv)] = _torch_summary(*_torch_elsewhere(searched, cache, f, tv, python, pm),
                                                          _Stats()).exports
                out[tv] = loaded[(pm, tv)]
            return out

    def one(item: Candidate) -> tuple[tuple[str, ...], ArtifactFacts]:
        name, ver, where, py, m = item
        key = key_of(name, ver, m)
        py = py or python
        platform = f"manylinux_{m}"
        command = f"glmcompat abi {name}=={Version(ver).public}"  # the rule adds --torch (the set's)
        if m != "x86_64":
            command += f" --platform {m}"
        url = ""  # a wheel URL the file names (its recorded sha256 is checked against what the server states)
        recorded_at = "|".join(binary.get(f"{name}=={ver}", ())) if where == "lock" else ""
        failed = cache_key("unread", f"{ARTIFACT_VERSION}|{'|'.join(i.base_url for i in searched) if where != 'wheel' else ''}|{recorded_at}|"
                                     f"{wheels.get(f'{name}=={ver}', '')}|{name}=={ver}|{py}|{platform}")
        if network and cache is not None:  # a read that failed lately is not tried on every check
            hit = cache.get_json(failed, max_age=UNREAD_TTL)
            if isinstance(hit, dict):
                return key, ArtifactFacts(name, ver, "", unread=hit["unread"], command=hit["command"])
        if where == "conda":
            return key, ArtifactFacts(name, ver, "", unread="it is installed by conda from the file's channels, and "
                                      "glmcompat reads wheels, not conda packages", command="glmcompat verify")
        try:
            if where == "wheel":
                loc = wheels[f"{name}=={ver}"]
                wname = loc.split("#")[0].split("?")[0].rsplit("/", 1)[-1]
                if wname.endswith("-any.whl"):  # pure, by its platform tag, as an index's is (below): nothing compiled
                    return key, ArtifactFacts(name, ver, wname, loc.partition("#sha256=")[2], command=command)
                if loc.startswith("file://"):
                    loc = loc[len("file://"):]
                if "://" in loc:
                    if not network:
                        raise GlmcompatError(f"reading over the network is off ({PROBE_ENV})")
                    command = f"glmcompat abi '{name} @ {loc}'"
                    op = open_url(index, loc)
                    url = loc.split("#")[0]
                else:
                    loc, _, recorded = loc.partition("#sha256=")
                    p = Path(loc) if os.path.isabs(loc) else base / loc
                    command = f"glmcompat abi {p}"
                    op = open_local(p)
                    if recorded and recorded.lower() != op.sha256:
                        return key, ArtifactFacts(name, ver, op.filename, op.sha256, recorded_sha256=recorded.lower(),
                                                  command=command)
            elif where == "lock" and "://" in next(iter(binary[f"{name}=={ver}"]), "") and (
                    chosen := pick_wheel(binary[f"{name}=={ver}"], py, m)) is not None:
                # (none for this machine: the installer takes the release's pure wheel, or builds its sdist, as the
                # index lists them: looked up there, below)
                if not network:
                    raise GlmcompatError(f"reading over the network is off ({PROBE_ENV})")
                f = _lock_file(chosen)
                op = open_index(index, f, searched)
            else:
                if not network:
                    raise GlmcompatError(f"reading over the network is off ({PROBE_ENV})")
                first = (own or {}).get(f"{name}=={ver}")
                f = _find_any_python([first, *searched] if first else searched, cache, canonicalize(name),
                                     Version(ver).public, py, platform, stated=item[3] is not None)
                if not f.is_wheel or f.filename.endswith("-any.whl"):
                    return key, ArtifactFacts(name, ver, f.filename, f.sha256 or "", command=command)  # pure
                hashes = {r.split("#")[0]: r.partition("#sha256=")[2] for r in binary.get(f"{name}=={ver}", ())}
                if hashes.get(f.filename) and f.sha256 and hashes[f.filename].lower() != f.sha256.lower():
                    return key, ArtifactFacts(name, ver, f.filename, f.sha256, recorded_sha256=hashes[f.filename].lower(),
                                              command=command)
                op = open_index(index, f)
            terr = torch_error.get(m, "")
            akey = f"artifact-v{ARTIFACT_VERSION}-{op.sha256}-{tkeys[m]}-{int(numpy)}" if op.sha256 and not terr else None
            hit = cache.get_json(akey) if cache is not None and akey else None
            if isinstance(hit, dict):
                return key, replace(ArtifactFacts.from_json(hit), name=name, version=ver, artifact=op.filename,
                                   command=command)
            left: dict[str, str] = {}
            shipped_row = not url and op.sha256 and shipped.row(op.sha256, NUMPY_VERSION) is not None
            ext, np = summaries(op, cache, numpy, left, shipped=not url)  # a URL's bytes: read (its stated sha256)
            needs = _needs_torch(ext)
            got = replace(judge(name, ver, op, ext, np, torches(m, "" if url else op.sha256) if needs else {}), command=command,
                          partial=_partial(left))
            if url and op.sha256:  # range reads never see the whole file: the server's stated hash, else a warning
                stated = getattr(op.source, "stated_sha256", None)
                if stated and stated != op.sha256.lower():
                    return key, ArtifactFacts(name, ver, op.filename, stated, recorded_sha256=op.sha256.lower(),
                                              command=command)
                if not stated:
                    got = replace(got, unverified=f"it was read by HTTP range requests and the server states no "
                                  f"sha256 for it; `curl -sL '{url}' | sha256sum` checks it against {op.sha256.lower()}")
            if cache is not None and akey and (needs or not shipped_row):
                # (a wheel whose summary is shipped and that needs nothing of torch is judged again from its row for
                # about what reading its facts back costs: only a comparison with torch's exports is stored, not the
                # file a cold project lock's judge wrote for each of 60 such wheels)
                cache.put_json(akey, got.to_json())
            if terr and needs and got.torch_needs == 0:
                return key, ArtifactFacts(name, ver, op.filename, op.sha256, got.numpy_abi, got.numpy_member,
                                          unread=terr, command=command)
            return key, got
        except (GlmcompatError, OSError, KeyError) as e:
            msg = getattr(e, "message", None) or str(e)
            why = str(msg).splitlines()[0][:200] if msg else type(e).__name__
            if network and cache is not None:
                cache.put_json(failed, {"unread": why, "command": command})
            return key, ArtifactFacts(name, ver, "", unread=why, command=command)

    def local(item: Candidate) -> bool:
        """Whether the wheel of ``item`` is one whose summary is shipped (:mod:`glmcompat.ops.shipped`: nothing is read
        over the network for it, most of a serving lock's compiled wheels)."""
        name, ver, where, py, m = item
        locs = binary.get(f"{name}=={ver}", ()) if where == "lock" else ()
        chosen = pick_wheel(locs, py or python, m) if locs and "://" in locs[0] else None
        return chosen is not None and shipped.row(chosen.partition("#sha256=")[2], NUMPY_VERSION) is not None

    return skipped | _answers(one, todo, local) | torch_builds(lock, facts, searched, cache, python)


def _answers(one: Callable[[Candidate], tuple[tuple[str, ...], ArtifactFacts]], todo: Sequence[Candidate],
             local: Callable[[Candidate], bool]) -> dict[tuple[str, ...], ArtifactFacts]:
    """``dict(one(item) for item in todo)``, in the order of ``todo``: the items ``local`` says read nothing over the
    network one after another in this thread, the rest (where more than one) in 8 threads, started first. A cold
    project lock's judge read its 70 compiled wheels' shipped summaries in 8 threads, each waiting on the others for
    the interpreter: 15 ms more than in one."""
    here = [local(item) for item in todo]
    far = [item for item, near in zip(todo, here, strict=True) if not near]
    if len(far) <= 1:
        return dict(one(item) for item in todo)
    from concurrent.futures import ThreadPoolExecutor  # lazy: only where wheels are read over the network

    got: dict[Candidate, tuple[tuple[str, ...], ArtifactFacts]] = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        running = {item: pool.submit(one, item) for item in far}
        for item, near in zip(todo, here, strict=True):
            if near:
                got[item] = one(item)
        for item, future in running.items():
            got[item] = future.result()
    return dict(got[item] for item in todo)


def _partial(left: Mapping[str, str]) -> str:
    """What of a wheel was left unread (:func:`summaries`), for a warning: the first module and why, and how many
    more."""
    if not left:
        return ""
    first = sorted(left)[0]
    more = f" (and {len(left) - 1} more module(s))" if len(left) > 1 else ""
    return f"{first.removeprefix('numpy:')}: {left[first]}{more}"


TORCH_CUDA_LIB = "torch/lib/libtorch_cuda.so"


def torch_builds(lock: Lock, facts: Facts, indexes: Sequence[IndexClient], cache: Cache | None,
                 python: str) -> dict[tuple[str, ...], ArtifactFacts]:
    """{key: ArtifactFacts} of each default torch wheel (no local label) the matrix has no GPU-code row for, on
    every machine the lock installs on: whether its file list holds ``torch/lib/libtorch_cuda.so`` (one read of the
    central directory, stored by sha256). A build without it is CPU-only (torch's default aarch64 wheels before
    2.11.0), so its environments cannot serve a GPU target; what cannot be read is left out (the matrix's unknown
    stands)."""
    from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: keeps the start-up path light

    if os.environ.get(PROBE_ENV) or not indexes:
        return {}
    binary = lock.meta.get("lock_wheels", {})
    out: dict[tuple[str, ...], ArtifactFacts] = {}
    for env in lock.sets:
        v, m = env.packages.get("torch"), env.platform
        if (v is None or env.sources.get("torch") in BUILT_FROM_SOURCE or Version(v).local
                or key_of("torch", v, m) in out or facts.on(m).gpu_code("torch", v) is not None):
            continue
        py = _python_of(env.names) or python
        try:
            loc = pick_wheel(binary.get(f"torch=={v}", ()), py, m)
            f = _lock_file(loc) if loc and "://" in loc else _find_in(indexes, cache, "torch", v, py, f"manylinux_{m}")
            skey = f"torchbuild-v1-{f.sha256}" if f.sha256 else None
            hit = cache.get_json(skey) if cache is not None and skey else None
            if isinstance(hit, dict) and isinstance(hit.get("cuda"), bool):
                cuda = hit["cuda"]
            else:
                cuda = any(e.name == TORCH_CUDA_LIB for e in open_index(indexes[0], f, indexes).zip.members)
                if cache is not None and skey:
                    cache.put_json(skey, {"cuda": cuda})
        except (GlmcompatError, OSError):
            continue
        out[key_of("torch", v, m)] = ArtifactFacts("torch", v, f.filename, f.sha256 or "", cpu_only=not cuda,
                                                   command=f"glmcompat arch torch=={v} --platform {m}")
    return out


def _not_read(lock: Lock, facts: Facts, resolved_at_install: bool,
              machines: set[str]) -> dict[tuple[str, ...], ArtifactFacts]:
    """An unread fact for each candidate of a machine whose artifacts are not read (aarch64 beside x86_64): its sets
    are told what was not checked and how to check it, not judged silently."""
    rest = {e.platform for e in lock.sets} - machines
    if not rest:
        return {}
    return {key_of(n, v, m): ArtifactFacts(
        n, v, "", unread=f"its {m} artifacts are read only when asked for (--platform {m})",
        command=f"glmcompat check {lock.path} --platform {m}")
        for n, v, _, _, m in candidates(lock, facts, resolved_at_install, rest)}


OTHER_PYTHONS = ("cp312", "cp313", "cp310", "cp311", "cp314", "cp39")


def _find_any_python(indexes: Sequence[IndexClient], cache: Cache | None, name: str, version: str, python: str,
                     platform: str, *, stated: bool) -> IndexFile:
    """:func:`_find_in` for ``python``; where the environment states no Python (a poetry or pdm lock's environments)
    and the release has no wheel for the assumed one, the wheel for another CPython it ships (cosmos-xenna 0.4.0:
    cp312-abi3 only): the installer on that Python installs that build."""
    try:
        return _find_in(indexes, cache, name, version, python, platform)
    except GlmcompatError as e:
        if stated or "has no wheel for" not in e.message:
            raise
        for other in OTHER_PYTHONS:
            if other == python:
                continue
            try:
                return _find_in(indexes, cache, name, version, other, platform)
            except GlmcompatError:
                continue
        raise


def _find_in(indexes: Sequence[IndexClient], cache: Cache | None, name: str, version: str, python: str,
             platform: str) -> IndexFile:
    """The wheel of ``name==version`` from the first of ``indexes`` that has one (the file's own indexes first, as
    ``--index-url``/``--extra-index-url`` name them); the first index's error when none has."""
    return _find_where(indexes, cache, name, version, python, platform)[1]


def _find_where(indexes: Sequence[IndexClient], cache: Cache | None, name: str, version: str, python: str,
                platform: str) -> tuple[IndexClient, IndexFile]:
    """:func:`_find_in`, with the index that has the wheel."""
    first: GlmcompatError | None = None
    for i in indexes:
        try:
            return i, _find(i, cache, name, version, python, platform)
        except GlmcompatError as e:
            first = first or e
    assert first is not None
    raise first


LOCKART_VERSION = 1  # the facts of every artifact one lock's candidates name, stored whole (kind ``lockart``)


def numpy_scanned(lock: Lock, resolved_at_install: bool) -> bool:
    """Whether the NumPy C API the extensions import is read: where the set has numpy, and in a resolved-at-install
    file also where it leaves numpy open or to a package that needs it (the installer's numpy, which
    :func:`glmcompat.ops.indexpins.with_installed_numpy` names where an extension was built against NumPy 1.x)."""
    return resolved_at_install or any("numpy" in e.packages or "numpy" in e.unpinned for e in lock.sets)


def stored_key(lock: Lock, todo: Sequence[Candidate], platforms: Sequence[str] | None,
               resolved_at_install: bool = False) -> str | None:
    """The key under which the facts of all of ``todo`` are stored together, when the lock itself names every byte
    they depend on (each wheel a URL or path with its sha256, torch's wheels likewise); None otherwise (an index
    lookup or an unhashed local file decides, so each is looked up on its own). With it a check of a lock whose
    compiled wheels did not change reads one entry, not one per wheel."""
    wheels = lock.meta.get("wheel_urls", {})
    binary = lock.meta.get("lock_wheels", {})
    parts: list[str] = [f"{ARTIFACT_VERSION}|{NUMPY_VERSION}|{int(numpy_scanned(lock, resolved_at_install))}|"
                        f"{','.join(sorted(platforms or ()))}|{lock.path}"]
    for tfull in sorted(_torches(lock).values()):
        locs = binary.get(f"torch=={tfull}")
        if not locs or not all("://" in u and "#sha256=" in u for u in locs):
            return None
        parts.append("|".join(locs))
    for name, ver, where, py, m in todo:
        loc = wheels.get(f"{name}=={ver}", "") if where == "wheel" else (
            pick_wheel(binary.get(f"{name}=={ver}", ()), py or "cp311", m) or "" if where == "lock" else "")
        if "#sha256=" not in loc or (where == "lock" and "://" not in loc):
            return None
        parts.append(f"{name}|{ver}|{where}|{py}|{m}|{loc}")
    return f"lockart-v{LOCKART_VERSION}-" + hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


def read_artifacts(lock: Lock, facts: Facts, *, resolved_at_install: bool,
                   read_wheels: list[bool] | None = None, platforms: Sequence[str] | None = None,
                   ships_on: Collection[str] = ()) -> dict[tuple[str, ...], ArtifactFacts]:
    """What the artifacts of the compiled packages of ``lock`` say (:func:`probe_lock`), read from the indexes the file
    names (its ``--index-url``/``--extra-index-url``, in order), then the configured one; the wheels a lock records
    from their own URLs (a second index included); stored by sha256, so read once. The one entry of ``check`` and
    :func:`glmcompat.api.check`. ``read_wheels`` gains whether a wheel file or URL of a package the matrix does not
    name is read (the record is then kept for these exact bytes only). ``ships_on``: the machines the targets checked
    ship on (:func:`read_machines`)."""
    from glmcompat.edges.cache import Cache  # lazy: only when something is to be read
    from glmcompat.edges.index import IndexClient  # lazy: only when something is to be read

    if not platforms and ships_on and (more := read_machines(lock, None, ships_on)) != read_machines(lock):
        platforms = sorted(more)  # the machines read, as --platform would name them
    todo = [] if os.environ.get(PROBE_ENV) else candidates(lock, facts, resolved_at_install, read_machines(lock, platforms))
    if not todo:
        return {}
    named = facts.kernel_packages() | facts.family_packages() | {n for row in facts.rows("compiled") for n in row.packages}
    if read_wheels is not None:
        read_wheels.append(any(c[2] == "wheel" and c[0] not in named for c in todo))
    urls = list(dict.fromkeys(lock.meta.get("index_urls") or []))
    cache = Cache()
    whole = stored_key(lock, todo, platforms, resolved_at_install)
    hit = cache.get_json(whole) if whole else None
    if isinstance(hit, dict):
        return {tuple(k): ArtifactFacts.from_json(f) for k, f in zip(hit["keys"], hit["facts"], strict=True)}
    primary = lock.meta.get("index_url")
    if primary:  # --index-url replaces the configured index; it is searched first, then the --extra-index-url ones
        urls = [primary, *(u for u in urls if u != primary)]
    with ExitStack() as stack:
        own = [stack.enter_context(IndexClient(u, cache=cache, retries=1, backoff=0.2)) for u in urls]
        if urls and not primary:  # --extra-index-url only: the configured index stays, as pip keeps it, and is first
            own.insert(0, stack.enter_context(IndexClient(None, cache=cache, retries=1, backoff=0.2)))
        default = own[0] if own else stack.enter_context(IndexClient(None, cache=cache, retries=1, backoff=0.2))
        sources = {u: stack.enter_context(IndexClient(u, cache=cache, retries=1, backoff=0.2))
                   for u in sorted(set(lock.meta.get("wheel_indexes", {}).values()))}
        got = probe_lock(lock, facts, index=default, cache=cache, resolved_at_install=resolved_at_install,
                         indexes=own[1:] if own else (), platforms=platforms,
                         own={k: sources[u] for k, u in lock.meta.get("wheel_indexes", {}).items()})
    if whole and all(a.read or k[2:] and a.command.startswith("glmcompat check") for k, a in got.items()):
        cache.put_json(whole, {"keys": [list(k) for k in got], "facts": [a.to_json() for a in got.values()]})
    return got
