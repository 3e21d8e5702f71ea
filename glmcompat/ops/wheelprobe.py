"""The ABI and GPU-code probes: read published wheels, return plain data.

Layers:

* pure core: :func:`compare_abi` (an extension's undefined torch symbols vs what a torch exports)
  and :func:`arch_verdict` (which modules carry code that runs on a target);
* wheel readers: :func:`read_elf_member` and :func:`read_gpu_code_member` drive the ELF and fatbin
  parsers over a remote zip member, fetching only the ranges they ask for;
* orchestration: :func:`probe_abi` and :func:`probe_arch` find the wheels on the index, summarise
  each wheel once (cached by its sha256) and combine.

Which symbols a module needs from torch is :func:`glmcompat.readers.elf.needs_from_torch` (the one predicate
``abi``, ``matrix probe`` and ``verify`` share): a strong (GLOBAL) undefined symbol with torch's shape
(C++ in ``c10``, ``at``, ``torch``, ...; C-named ``aoti_torch_*``, ``torch_*``, ``THP*``) or one a
torch release exports. It is *missing* when neither torch's ``torch/lib/*.so`` nor a sibling library
the module links (DT_NEEDED) defines it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, TypeVar

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from glmcompat.model.outputs.wheels import (
    AbiModuleDoc,
    AbiOutput,
    ArchModuleDoc,
    ArchOutput,
    KernelGroupDoc,
    MissingSymbolDoc,
)
from glmcompat.edges.index import IndexFile, cache_key
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.rows import Kernel
from glmcompat.model.errors import InputError, WheelError
from glmcompat.model.gpu import KernelCode, kernel_groups, parse_capability, runs_on, sort_codes, uncovered
from glmcompat.model.numbers import check_digits, to_int
from glmcompat.model.platforms import PLATFORMS
from glmcompat.model.wheeltags import platform_tags
from glmcompat.readers.elf import BytesView, ElfError, check_torch_needs, cuda_majors, demangle, parse_elf
from glmcompat.readers.fatbin import FatbinCode, FatbinError, FatbinStream
from glmcompat.readers.wheelzip import NeedBytes, RemoteZip, SparseMember

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.readers.elf import ElfInfo
    from glmcompat.readers.wheelzip import ZipMember

_T = TypeVar("_T")
_R = TypeVar("_R")


# The modules whose GPU code decides whether a package runs on a GPU, where a wheel bundles others that
# load only on some paths (sgl-kernel: its loader imports sm90/common_ops on capability 9.0 exactly and
# sm100/common_ops everywhere else; flash_ops/flashmla_ops load only for Hopper/Blackwell attention,
# mscclpp for multi-node all-reduce). Packages not listed: every module with GPU code counts.
SUMMARY_VERSION = 1  # torch summaries
ARCH_VERSION = 2  # v2: kernels per code (grouped) and the toolkits of the cubins
EXT_SUMMARY_VERSION = 2  # v2: weak_undefined kept; siblings' defined names = those the wheel needs
ABI_VERSION = 2  # v2: C-named stable-ABI symbols count (glmcompat.readers.elf.needs_from_torch)
WHOLE_INFLATED = 64 << 20  # bytes: a member that inflates to more is read in parts (SparseMember), never whole
WHOLE_MEMBER = 2 << 20  # members up to this many compressed bytes are read whole
_SO = re.compile(r"\.so(\.\d+)*$")


# ------------------------------------------------------------------------------------------------
# Input
# ------------------------------------------------------------------------------------------------


def parse_pin(text: str) -> tuple[str, str]:
    """``sgl-kernel==0.3.21`` -> ``("sgl-kernel", "0.3.21")``; raise :class:`InputError` otherwise."""
    name, sep, version = check_digits(text, "pin").strip().partition("==")
    if not sep or not re.match(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$", name.strip()):
        raise InputError(f"expected NAME==VERSION, got {text!r}")
    try:
        Version(version.strip())
    except InvalidVersion:
        raise InputError(f"invalid version {version.strip()!r} in {text!r}") from None
    return str(canonicalize_name(name.strip())), version.strip()


def machine_of(platform: str) -> str:
    """The machine (``x86_64`` / ``aarch64``: :data:`glmcompat.matrix.view.PLATFORMS`) a ``--platform`` value names:
    an architecture, ``manylinux_aarch64`` or a full tag such as ``manylinux_2_28_aarch64``. A tag glmcompat
    cannot read (``win_amd64``) or an architecture it keeps no facts for (``ppc64le``) is an InputError."""
    p = platform.strip().lower()
    if p in ("arm64", "amd64"):
        p = {"arm64": "aarch64", "amd64": "x86_64"}[p]
    arch = next((a for a in PLATFORMS if p.endswith(a)), None)
    if arch is None:
        raise InputError(f"unknown platform {platform!r} (known: {', '.join(PLATFORMS)}, or a manylinux tag of one, "
                         "e.g. 'manylinux_2_28_aarch64')")
    platform_tags(p)  # the tag's shape
    return arch


def wheel_platform(platform: str) -> str:
    """The ``--platform`` value to hand the wheel picker (``arm64`` -> ``aarch64``)."""
    p = platform.strip().lower()
    return {"arm64": "aarch64", "amd64": "x86_64"}.get(p, platform)


def parse_target(text: str) -> tuple[str, tuple[int, int]]:
    """``sm120`` / ``sm_120`` / ``12.0`` -> ``("sm120", (12, 0))``."""
    t = check_digits(text, "--target").strip().lower()
    if re.match(r"^\d+\.\d$", t):
        cap = parse_capability(t)
        return f"sm{cap[0]}{cap[1]}", cap
    m = re.match(r"^sm_?(\d+)(\d)$", t)
    if not m:
        raise InputError(f"invalid target {text!r} (expected e.g. 'sm120', 'sm_90' or '12.0')")
    cap = (to_int(m.group(1), "--target"), int(m.group(2)))
    return f"sm{cap[0]}{cap[1]}", cap


# ------------------------------------------------------------------------------------------------
# What the probes read of a wheel (cached by its sha256: each record's to_json is the stored form and from_json
# reads it back, after the cache checked its shape, glmcompat.edges.cache.SHAPES)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModuleSymbols:
    """What an extension wheel's shared object links and names (stored kind ``ext``): the libraries it needs
    (DT_NEEDED), its strong and weak undefined names, and the names it defines that some module of the wheel
    leaves undefined (what a sibling can provide to another)."""

    needed: tuple[str, ...]
    undefined: tuple[str, ...]
    weak_undefined: tuple[str, ...]
    defined: tuple[str, ...]

    def to_json(self) -> dict[str, list[str]]:
        return {"needed": list(self.needed), "undefined": list(self.undefined),
                "weak_undefined": list(self.weak_undefined), "defined": list(self.defined)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModuleSymbols:
        return cls(tuple(d["needed"]), tuple(d["undefined"]), tuple(d.get("weak_undefined", ())), tuple(d["defined"]))


@dataclass(frozen=True, slots=True)
class ExtSummary:
    """Every shared object of an extension wheel, by member name (:func:`summarise_ext`)."""

    modules: Mapping[str, ModuleSymbols]

    def to_json(self) -> dict[str, dict[str, list[str]]]:
        return {name: m.to_json() for name, m in sorted(self.modules.items())}

    @classmethod
    def from_json(cls, d: Mapping[str, Mapping[str, Any]]) -> ExtSummary:
        return cls({name: ModuleSymbols.from_json(m) for name, m in sorted(d.items())})


@dataclass(frozen=True, slots=True)
class TorchSummary:
    """What a torch wheel's ``torch/lib/*.so`` export (stored as names, one a line, under kind ``torch``), the
    libraries they need and how many names each defines (stored as JSON, kind ``torch.meta``)."""

    exports: frozenset[str]
    needed: tuple[str, ...]
    libs: Mapping[str, int]

    def meta_json(self) -> dict[str, Any]:
        return {"needed": list(self.needed), "libs": dict(self.libs)}

    def names_bytes(self) -> bytes:
        return "\n".join(sorted(self.exports)).encode()

    @classmethod
    def from_stored(cls, names: bytes, meta: Mapping[str, Any]) -> TorchSummary:
        return cls(frozenset(names.decode().split("\n") if names else ()), tuple(meta["needed"]), dict(meta["libs"]))


# ------------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MissingSymbol:
    symbol: str
    demangled: str


@dataclass(frozen=True, slots=True)
class ModuleAbi:
    member: str
    needed: list[str]
    cuda_majors: list[int]
    needs_from_torch: int
    missing: list[MissingSymbol]

    @property
    def ok(self) -> bool:
        return not self.missing


@dataclass(frozen=True, slots=True)
class AbiResult:
    package: str
    version: str
    torch: str
    wheel: str
    torch_wheel: str
    modules: list[ModuleAbi]
    torch_exports: int
    torch_cuda_majors: list[int]
    bytes_fetched: int
    bytes_total: int
    seconds: float
    cached: bool
    warnings: list[str] = field(default_factory=list)
    platform: str = "x86_64"  # the machine both wheels are for

    @property
    def missing(self) -> list[MissingSymbol]:
        seen: dict[str, MissingSymbol] = {}
        for m in self.modules:
            for s in m.missing:
                seen.setdefault(s.symbol, s)
        return [seen[k] for k in sorted(seen)]

    @property
    def ok(self) -> bool:
        return all(m.ok for m in self.modules)

    def to_output(self) -> AbiOutput:
        """``abi --json``'s document."""
        return AbiOutput(
            package=self.package, package_version=self.version, torch=self.torch, platform=self.platform,
            wheel=self.wheel, torch_wheel=self.torch_wheel, ok=self.ok,
            modules=tuple(AbiModuleDoc(member=m.member, needed=tuple(m.needed), cuda_majors=tuple(m.cuda_majors),
                                       needs_from_torch=m.needs_from_torch, missing=_missing_docs(m.missing))
                          for m in self.modules),
            missing=_missing_docs(self.missing), torch_exports=self.torch_exports,
            torch_cuda_majors=tuple(self.torch_cuda_majors), bytes_fetched=self.bytes_fetched,
            bytes_total=self.bytes_total, seconds=self.seconds, cached=self.cached, warnings=tuple(self.warnings))

    def to_json(self) -> dict[str, Any]:
        """The stored form of the verdict (kind ``abi``; :meth:`from_json`): ``abi --json``'s document."""
        return self.to_output().to_json()

    @classmethod
    def from_json(cls, d: Mapping[str, Any], seconds: float, machine: str = "x86_64") -> AbiResult:
        """The stored verdict (:meth:`to_json`) as a cached result, ``seconds`` after the probe began."""
        modules = [ModuleAbi(m["member"], list(m["needed"]), list(m["cuda_majors"]), m["needs_from_torch"],
                             [MissingSymbol(s["symbol"], s["demangled"]) for s in m["missing"]]) for m in d["modules"]]
        return cls(d["package"], d["package_version"], d["torch"], d["wheel"], d["torch_wheel"], modules,
                   d["torch_exports"], list(d["torch_cuda_majors"]), 0, d["bytes_total"], round(seconds, 3), True,
                   list(d.get("warnings", [])), d.get("platform", machine))


@dataclass(frozen=True, slots=True)
class ModuleArch:
    member: str
    sass: list[str]
    ptx: list[str]
    counts: dict[str, int]
    runs: bool | None = None
    runs_with: list[str] = field(default_factory=list)
    toolkits: dict[str, int] = field(default_factory=dict)  # CUDA release -> cubins it built
    kernel_code: list[KernelCode] = field(default_factory=list)  # its kernels grouped by the code they carry
    unreadable: int = 0  # fatbin entries whose kernels could not be read (zstd without a decoder)
    uncovered: list[KernelCode] = field(default_factory=list)  # with a target: groups with no code for it

    @property
    def kernels(self) -> int:
        return sum(g.kernels for g in self.kernel_code)

    @classmethod
    def of_code(cls, member: str, code: FatbinCode) -> ModuleArch:
        """A module's GPU code as a fatbin read gave it: names, counts, toolkits, kernels grouped by code."""
        return cls(member, code.sass, code.ptx, code.counts, None, [], code.toolkits, kernel_groups(code.kernels or {}),
                   code.unreadable)

    def cached_json(self) -> dict[str, Any]:
        """Its stored form (kind ``arch``: its GPU code without a verdict; :meth:`from_cached_json`)."""
        return {"member": self.member, "sass": self.sass, "ptx": self.ptx, "counts": self.counts,
                "toolkits": self.toolkits,
                "kernel_code": [{"kernels": g.kernels, "code": list(g.code), "example": g.example} for g in self.kernel_code],
                "unreadable": self.unreadable}

    @classmethod
    def from_cached_json(cls, d: Mapping[str, Any]) -> ModuleArch:
        groups = [KernelCode(g["kernels"], tuple(g["code"]), g["example"]) for g in d.get("kernel_code", [])]
        return cls(d["member"], list(d["sass"]), list(d["ptx"]), dict(d["counts"]), None, [],
                   dict(d.get("toolkits", {})), groups, d.get("unreadable", 0))


@dataclass(frozen=True, slots=True)
class ArchResult:
    package: str
    version: str
    wheel: str
    modules: list[ModuleArch]
    target: str | None
    bytes_fetched: int
    bytes_total: int
    seconds: float
    cached: bool
    primary: list[str] = field(default_factory=list)
    platform: str = "x86_64"  # the machine the wheel is for

    def _checked(self) -> list[ModuleArch]:
        return [m for m in self.modules if m.member in self.primary] if self.primary else list(self.modules)

    @property
    def sass(self) -> list[str]:
        return sort_codes({c for m in self._checked() for c in m.sass})

    @property
    def ptx(self) -> list[str]:
        return sort_codes({c for m in self._checked() for c in m.ptx})

    @property
    def ok(self) -> bool:
        return all(m.runs is not False for m in self._checked())

    @property
    def not_running(self) -> list[str]:
        return [m.member for m in self._checked() if m.runs is False]

    @property
    def toolkits(self) -> dict[str, int]:
        """CUDA release -> cubins it built, over the main modules."""
        out: dict[str, int] = {}
        for m in self._checked():
            for k, n in m.toolkits.items():
                out[k] = out.get(k, 0) + n
        return dict(sorted(out.items(), key=lambda kv: _release_key(kv[0])))

    @property
    def kernel_code(self) -> list[KernelCode]:
        """The main modules' kernels grouped by the code they carry (groups of equal code merged)."""
        return merge_kernel_code(g for m in self._checked() for g in m.kernel_code)

    @property
    def uncovered(self) -> list[KernelCode]:
        return merge_kernel_code(g for m in self._checked() for g in m.uncovered)

    def labelled_kernel_code(self) -> list[dict[str, Any]]:
        """:attr:`kernel_code` as a matrix row keeps it: each example by its short demangled name
        (:func:`kernel_labels`); empty where some entry could not be read (no per-kernel fact then)."""
        if any(m.unreadable for m in self._checked()):
            return []
        groups = self.kernel_code
        labels = kernel_labels(g.example for g in groups)
        return [{"kernels": g.kernels, "code": list(g.code), "example": labels.get(g.example, g.example)}
                for g in groups]

    def to_output(self) -> ArchOutput:
        """``arch --json``'s document (without what the command adds: the target's machines, a note)."""
        return ArchOutput(
            package=self.package, package_version=self.version, platform=self.platform, wheel=self.wheel,
            target=self.target, ok=self.ok,
            modules=tuple(ArchModuleDoc(member=m.member, sass=tuple(m.sass), ptx=tuple(m.ptx), counts=m.counts,
                                        runs=m.runs, runs_with=tuple(m.runs_with), toolkits=m.toolkits,
                                        kernel_code=_kernel_docs(m.kernel_code), unreadable=m.unreadable,
                                        uncovered=_kernel_docs(m.uncovered))
                          for m in self.modules),
            primary=tuple(m.member for m in self._checked()), sass=tuple(self.sass), ptx=tuple(self.ptx),
            all_sass=tuple(sort_codes({c for m in self.modules for c in m.sass})),
            all_ptx=tuple(sort_codes({c for m in self.modules for c in m.ptx})), missing=tuple(self.not_running),
            bytes_fetched=self.bytes_fetched, bytes_total=self.bytes_total, seconds=self.seconds, cached=self.cached,
            toolkits=self.toolkits, kernels=sum(g.kernels for g in self.kernel_code),
            uncovered_kernels=sum(g.kernels for g in self.uncovered))

    def to_json(self) -> dict[str, Any]:
        """``arch --json``'s document as data (:meth:`to_output`)."""
        return self.to_output().to_json()


def _missing_docs(missing: Iterable[MissingSymbol]) -> tuple[MissingSymbolDoc, ...]:
    return tuple(MissingSymbolDoc(symbol=s.symbol, demangled=s.demangled) for s in missing)


def _kernel_docs(groups: Iterable[KernelCode]) -> tuple[KernelGroupDoc, ...]:
    return tuple(KernelGroupDoc(kernels=g.kernels, code=g.code, example=g.example) for g in groups)


def _release_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def merge_kernel_code(groups: Iterable[KernelCode]) -> list[KernelCode]:
    """Groups of equal code summed (the example of the first), largest first."""
    merged: dict[tuple[str, ...], KernelCode] = {}
    for g in groups:
        old = merged.get(g.code)
        merged[g.code] = g if old is None else KernelCode(old.kernels + g.kernels, g.code, old.example)
    return sorted(merged.values(), key=lambda g: (-g.kernels, g.code))


# ------------------------------------------------------------------------------------------------
# Pure core
# ------------------------------------------------------------------------------------------------


def compare_module(member: str, needed: list[str], undefined: Iterable[str], torch_exports: Collection[str],
                   demangled: Mapping[str, str] | None = None, *, siblings: Collection[str] = frozenset(),
                   known: Collection[str] = frozenset()) -> ModuleAbi:
    """One extension module (its strong undefined names) against what torch exports and its linked
    siblings define; ``known``: names other torch releases export (see
    :func:`glmcompat.readers.elf.check_torch_needs`)."""
    v = check_torch_needs(undefined, torch_exports, siblings=siblings, known=known)
    dm = demangled or {}
    return ModuleAbi(member, list(needed), cuda_majors(needed), len(v.needs),
                     [MissingSymbol(s, dm.get(s, s)) for s in sorted(v.missing)])


def compare_abi(ext: ExtSummary, torch_exports: frozenset[str] | set[str],
                demangled: Mapping[str, str] | None = None, *, known: Collection[str] = frozenset()
                ) -> list[ModuleAbi]:
    """Every module of an extension wheel summary (see :func:`summarise_ext`) against torch's exports
    (``known``: names other torch releases export, e.g. every release a refresh has read)."""
    mods = ext.modules
    by_base = {k.rsplit("/", 1)[-1]: k for k in mods}
    out = []
    for member in sorted(mods):
        mod = mods[member]
        provided: set[str] = set()
        for n in mod.needed:
            if n in by_base and by_base[n] != member:
                provided.update(mods[by_base[n]].defined)
        out.append(compare_module(member, list(mod.needed), mod.undefined, torch_exports, demangled,
                                  siblings=provided, known=known))
    return out


def arch_verdict(modules: Iterable[ModuleArch], capability: tuple[int, int] | None) -> list[ModuleArch]:
    """Fill in ``runs`` for a target: a module with GPU code runs when some entry runs there and no kernel
    it means for newer GPUs lacks code for the target (:func:`glmcompat.model.gpu.uncovered`; not judged
    where some entry's kernels could not be read)."""
    out = []
    for m in modules:
        if capability is None or not (m.sass or m.ptx):
            out.append(ModuleArch(m.member, m.sass, m.ptx, m.counts, None, [], m.toolkits, m.kernel_code,
                                  m.unreadable))
            continue
        good = [c for c in m.sass + m.ptx if runs_on(c, capability)]
        gaps = uncovered(m.kernel_code, capability) if not m.unreadable else []
        out.append(ModuleArch(m.member, m.sass, m.ptx, m.counts, bool(good) and not gaps, good, m.toolkits,
                              m.kernel_code, m.unreadable, gaps))
    return out


# ------------------------------------------------------------------------------------------------
# Reading members of a remote wheel
# ------------------------------------------------------------------------------------------------


def elf_members(zf: RemoteZip, prefix: str = "") -> list[ZipMember]:
    return sorted((m for m in zf.members if m.name.startswith(prefix) and _SO.search(m.name) and m.size),
                  key=lambda m: m.name)


def read_elf_member(zf: RemoteZip, m: ZipMember, *, dynamic: str = "require") -> ElfInfo:
    """Parse a member's ELF tables, fetching only the ranges the parser asks for."""
    label = f"{zf.name}: {m.name}"
    try:
        if m.compressed_size <= WHOLE_MEMBER and m.size <= WHOLE_INFLATED:  # a bomb is read in parts, as a big one
            data = zf.read(m)
            return parse_elf(BytesView(data, label), label, dynamic=dynamic, check=zf.tick)  # type: ignore[arg-type]
        sm = SparseMember(zf, m)
        try:
            for _ in range(32):
                try:
                    return parse_elf(sm, label, dynamic=dynamic, check=zf.tick)  # type: ignore[arg-type]
                except NeedBytes as e:
                    for off, n in e.ranges:
                        sm.ensure(off, n)
        finally:
            sm.close()  # what it kept no longer counts against the archive's cap on bytes held
        raise WheelError(zf.name, "ELF tables not found after 32 rounds of reads", m.name)
    except ElfError as e:
        if e.message.startswith(label):
            raise
        raise ElfError(f"{label}: {e.message}") from None


def read_gpu_code_member(zf: RemoteZip, m: ZipMember, *, payloads: bool = False,
                         first_cubin: bool = False) -> FatbinCode:
    """The fatbin entries of a member: its ELF sections first, then a stream up to the fatbin's end (with
    ``payloads``, each entry's kernels and toolkit too: the bytes fetched are the same). ``first_cubin``: stop
    after the first cubin (the stream ends a few MB into the member; the entries are those read so far)."""
    info = read_elf_member(zf, m, dynamic="skip")
    sec = info.section(".nv_fatbin")
    if sec is None or sec.type == 8 or sec.size == 0:
        return FatbinCode([], [], {}, 0)
    label = f"{zf.name}: {m.name}: .nv_fatbin"
    fs = FatbinStream(sec.size, label, payloads=payloads or first_cubin, present=m.compressed_size)
    pos = 0
    end = sec.offset + sec.size
    gen = zf.stream(m)
    try:
        for chunk in gen:
            zf.tick()
            lo, hi = pos, pos + len(chunk)
            pos = hi
            if hi > sec.offset:
                fs.feed(chunk[max(0, sec.offset - lo):min(len(chunk), end - lo)])
            if pos >= end:
                break
            if first_cubin and any(e.kind == "sass" for e in fs.entries):  # read, or unreadable here
                return FatbinCode.of(fs.entries, payloads=True)
    finally:
        gen.close()
    try:
        return FatbinCode.of(fs.finish(), payloads=payloads)
    except FatbinError:
        raise
    except WheelError:  # pragma: no cover
        raise


# ------------------------------------------------------------------------------------------------
# Wheel summaries (cached by sha256)
# ------------------------------------------------------------------------------------------------


class _Wheel:
    """An index file opened as a remote zip, counting the bytes it fetches."""

    def __init__(self, index: IndexClient, file: IndexFile) -> None:
        self.file = file
        self.reader = HttpRangeReader(index.client, file.url, name=file.filename, size=file.size,
                                      retries=index.retries, backoff=index.backoff)
        self.zip = RemoteZip(self.reader)


def _map(fn: Callable[[_T], _R], items: Sequence[_T], workers: int = 4) -> list[_R]:
    if len(items) <= 1 or workers <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(fn, items))


def summarise_ext(zf: RemoteZip) -> ExtSummary:
    """{member: {needed, undefined, weak_undefined, defined}} for every shared object of an extension
    wheel; ``defined`` keeps only the names some module of the wheel leaves undefined (what a sibling
    can provide to another)."""
    members = elf_members(zf)

    def one(m: ZipMember) -> tuple[str, ElfInfo]:
        return m.name, read_elf_member(zf, m, dynamic="require")

    infos = dict(_map(one, members))
    return ext_summary_of(infos)


def ext_summary_of(infos: Mapping[str, ElfInfo]) -> ExtSummary:
    """The extension summary of parsed modules ({member: ElfInfo}); see :func:`summarise_ext`."""
    wanted: set[str] = set()
    for info in infos.values():
        wanted |= info.undefined
    return ExtSummary({name: ModuleSymbols(tuple(info.needed), tuple(sorted(info.undefined)),
                                           tuple(sorted(info.weak_undefined)), tuple(sorted(info.defined & wanted)))
                       for name, info in sorted(infos.items())})


def summarise_torch(zf: RemoteZip) -> TorchSummary:
    """The names a torch wheel's ``torch/lib/*.so`` export, the sorted union of their DT_NEEDED, the names each
    defines (by member)."""
    members = elf_members(zf, "torch/lib/")
    if not members:
        raise InputError(f"{zf.name}: no torch/lib/*.so in this wheel (is it torch?)")

    def one(m: ZipMember) -> tuple[str, ElfInfo]:
        return m.name, read_elf_member(zf, m, dynamic="if-available")

    exports: set[str] = set()
    needed: set[str] = set()
    libs = {}
    for name, info in _map(one, members):
        exports |= info.defined
        needed |= set(info.needed)
        libs[name] = len(info.defined)
    return TorchSummary(frozenset(exports), tuple(sorted(needed)), libs)


# ------------------------------------------------------------------------------------------------
# Orchestration
# ------------------------------------------------------------------------------------------------


@dataclass
class _Stats:
    fetched: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, n: int) -> None:
        with self.lock:
            self.fetched += n


def _find(index: IndexClient, cache: Cache | None, name: str, version: str, python: str,
          platform: str) -> IndexFile:
    """The wheel an installer would pick; the choice itself is cached like the index page."""
    key = cache_key("pick", f"{index.base_url}|{name}|{version}|{python}|{platform}")
    if cache is not None:
        hit = cache.get_json(key, max_age=index.page_ttl)
        if isinstance(hit, dict):
            return _pick_of_json(hit)
    f = index.find_wheel(name, version, python=python, platform=platform)
    if cache is not None:
        cache.put_json(key, _pick_json(f))
    return f


def _pick_json(f: IndexFile) -> dict[str, Any]:
    """The stored form of a picked wheel (kind ``pick``; :func:`_pick_of_json`)."""
    return {"filename": f.filename, "url": f.url, "size": f.size, "sha256": f.sha256,
            "requires_python": f.requires_python, "yanked": f.yanked, "version": f.version, "is_wheel": f.is_wheel,
            "tags": sorted(f.tags), "metadata_sha256": f.metadata_sha256, "has_metadata": f.has_metadata,
            "upload_time": f.upload_time}


def _pick_of_json(d: Mapping[str, Any]) -> IndexFile:
    return IndexFile(d["filename"], d["url"], d["size"], d["sha256"], d["requires_python"], d["yanked"], d["version"],
                     d["is_wheel"], frozenset(d["tags"]), d.get("metadata_sha256"), d.get("has_metadata", False),
                     d.get("upload_time"))


def probe_abi(package: str, version: str, torch: str, *, index: IndexClient, cache: Cache | None = None,
              python: str = "cp311", platform: str = "manylinux_x86_64", torch_python: str | None = None,
              known: Collection[str] = frozenset()) -> AbiResult:
    """Compare ``package==version``'s extension modules with ``torch==torch``'s exported symbols.

    ``known``: names other torch releases export (:func:`torch_exports`), for a caller that has read
    several (see :func:`glmcompat.readers.elf.needs_from_torch`); with it the verdict is not cached."""
    t0 = time.perf_counter()
    machine = machine_of(platform)
    platform = wheel_platform(platform)
    pkg = str(canonicalize_name(package))
    ext_file = _find(index, cache, pkg, version, python, platform)
    torch_file = _find(index, cache, "torch", torch, torch_python or python, platform)
    total = (ext_file.size or 0) + (torch_file.size or 0)
    key = None
    if cache is not None and ext_file.sha256 and torch_file.sha256 and not known:
        key = f"abi-v{ABI_VERSION}-{ext_file.sha256[:32]}-{torch_file.sha256[:32]}"
        hit = cache.get_json(key)
        if isinstance(hit, dict):
            return AbiResult.from_json(hit, time.perf_counter() - t0, machine)
    stats = _Stats()
    ext = _ext_summary(index, cache, ext_file, stats)
    tor = _torch_summary(index, cache, torch_file, stats)
    exports = tor.exports
    modules = compare_abi(ext, exports, known=known)
    names = [s.symbol for m in modules for s in m.missing]
    if names:
        dm = demangle(names)
        modules = [ModuleAbi(m.member, m.needed, m.cuda_majors, m.needs_from_torch,
                             [MissingSymbol(s.symbol, dm.get(s.symbol, s.symbol)) for s in m.missing])
                   for m in modules]
    torch_majors = cuda_majors(list(tor.needed))
    warnings = cuda_warnings(modules, torch, torch_majors)
    result = AbiResult(pkg, version, torch, ext_file.filename, torch_file.filename, modules, len(exports),
                       torch_majors, stats.fetched, total, round(time.perf_counter() - t0, 3), False, warnings,
                       machine)
    if key is not None and cache is not None:
        cache.put_json(key, result.to_json())
    return result


def cuda_warnings(modules: Iterable[ModuleAbi], torch: str, torch_majors: list[int]) -> list[str]:
    """One warning per CUDA runtime major that modules link and torch does not (grouped: a vllm wheel
    has ten such modules)."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for m in modules:
        if m.cuda_majors and torch_majors and set(m.cuda_majors) != set(torch_majors):
            groups.setdefault(tuple(m.cuda_majors), []).append(m.member)
    out = []
    for majors, members in groups.items():
        who = f"{members[0]} links" if len(members) == 1 else f"{len(members)} modules ({', '.join(members)}) link"
        out.append(f"{who} CUDA runtime {'/'.join(map(str, majors))}, torch {torch} links "
                   f"{'/'.join(map(str, torch_majors))}")
    return out


def torch_exports(torch: str, *, index: IndexClient, cache: Cache | None = None, python: str = "cp311",
                  platform: str = "manylinux_x86_64") -> frozenset[str]:
    """The names ``torch==torch``'s ``torch/lib/*.so`` export (read once per wheel, then cached)."""
    machine_of(platform)
    f = _find(index, cache, "torch", torch, python, wheel_platform(platform))
    return _torch_summary(index, cache, f, _Stats()).exports


def _ext_summary(index: IndexClient, cache: Cache | None, f: IndexFile, stats: _Stats) -> ExtSummary:
    key = f"ext-v{EXT_SUMMARY_VERSION}-{f.sha256}" if f.sha256 else None
    if cache is not None and key:
        hit = cache.get_json(key)
        if isinstance(hit, dict):
            return ExtSummary.from_json(hit)
    w = _Wheel(index, f)
    try:
        summary = summarise_ext(w.zip)
    finally:
        stats.add(w.reader.bytes_fetched)
    if not summary.modules:
        raise InputError(f"{f.filename}: no shared objects in this wheel (a pure-Python package?)")
    if cache is not None and key:
        cache.put_json(key, summary.to_json())
    return summary


def _torch_summary(index: IndexClient, cache: Cache | None, f: IndexFile, stats: _Stats) -> TorchSummary:
    key = f"torch-v{SUMMARY_VERSION}-{f.sha256}" if f.sha256 else None
    if cache is not None and key:
        raw = cache.get_bytes(key)
        meta = cache.get_json(key + ".meta")
        if raw is not None and isinstance(meta, dict):
            return TorchSummary.from_stored(raw, meta)
    w = _Wheel(index, f)
    try:
        summary = summarise_torch(w.zip)
    finally:
        stats.add(w.reader.bytes_fetched)
    if cache is not None and key:
        cache.put_bytes(key, summary.names_bytes())
        cache.put_json(key + ".meta", summary.meta_json())
    return summary


def module_arch_json(member: str, code: FatbinCode) -> dict[str, Any]:
    """The cached summary of one module's GPU code (:meth:`ModuleArch.cached_json` of :meth:`ModuleArch.of_code`;
    kept for glmcompat.ops.refresh, which calls it)."""
    return ModuleArch.of_code(member, code).cached_json()


def module_arch_of_json(d: Mapping[str, Any]) -> ModuleArch:
    """A module's GPU code from its cached form (:meth:`ModuleArch.from_cached_json`; kept for glmcompat.ops.refresh)."""
    return ModuleArch.from_cached_json(d)


def primary_modules(package: str, members: Iterable[str], patterns: Iterable[str] | None = None) -> list[str]:
    """The members whose GPU code decides the verdict (``patterns``, else the matrix's
    ``[[primary_modules]]`` for the package, else all)."""
    pats = list(patterns) if patterns else list(load_facts().primary_modules(str(canonicalize_name(package))))
    names = sorted(members)
    if not pats:
        return names
    chosen = [n for n in names if any(fnmatchcase(n, p) for p in pats)]
    if patterns and not chosen:
        raise InputError(f"no module of {package} matches {', '.join(repr(p) for p in pats)} "
                         f"(modules: {', '.join(names)})")
    return chosen or names


def probe_arch(package: str, version: str, *, index: IndexClient, cache: Cache | None = None,
               target: str | None = None, python: str = "cp311", platform: str = "manylinux_x86_64",
               modules: Iterable[str] | None = None, select: Sequence[str] = ()) -> ArchResult:
    """SASS and PTX per shared object of ``package==version``; with a target, whether each runs there.

    ``select``: only the members these glob patterns match are read, and they are the main modules (``matrix
    refresh`` reads a kernel's ``[[primary_modules]]``: sgl-kernel's ``sm90``/``sm100`` ``common_ops``, not the
    bundled flash_ops / flashmla_ops / mscclpp); a cached whole-wheel result is reused, filtered."""
    t0 = time.perf_counter()
    machine = machine_of(platform)
    platform = wheel_platform(platform)
    pkg = str(canonicalize_name(package))
    tname, cap = parse_target(target) if target else (None, None)
    f = _find(index, cache, pkg, version, python, platform)
    key = f"arch-v{ARCH_VERSION}-{f.sha256}" if f.sha256 else None
    some = f"archsel-v{ARCH_VERSION}-{f.sha256}" if f.sha256 and select else None  # what `select` read

    def chosen(member: str) -> bool:
        return not select or any(fnmatchcase(member, p) for p in select)

    fetched = 0
    cached = False
    read_modules: list[ModuleArch] | None = None
    if cache is not None and key:
        hit = cache.get_json(key)
        if isinstance(hit, list):
            read_modules, cached = [ModuleArch.from_cached_json(d) for d in hit if chosen(d["member"])], True
    if read_modules is None and cache is not None and some:
        hit = cache.get_json(some)
        if isinstance(hit, dict) and hit.get("patterns") == list(select):
            read_modules, cached = [ModuleArch.from_cached_json(d) for d in hit["modules"]], True
    if read_modules is None:
        w = _Wheel(index, f)
        try:
            members = [m for m in elf_members(w.zip) if chosen(m.name)]

            def one(m: ZipMember) -> tuple[ModuleArch, int]:
                code = read_gpu_code_member(w.zip, m, payloads=True)
                return ModuleArch.of_code(m.name, code), code.undecoded

            read = _map(one, members)
            read_modules = [d for d, _ in read]
            undecoded = sum(n for _, n in read)
        finally:
            fetched = w.reader.bytes_fetched
        if cache is not None and some:
            cache.put_json(some, {"patterns": list(select), "modules": [m.cached_json() for m in read_modules]})
        elif cache is not None and key and not undecoded:  # a later run with a zstd decoder reads more
            cache.put_json(key, [m.cached_json() for m in read_modules])
    mods = arch_verdict(read_modules, cap)
    coded = [m.member for m in mods if m.sass or m.ptx]
    primary = coded if select else primary_modules(pkg, coded, modules)
    return ArchResult(pkg, version, f.filename, mods, tname, fetched, f.size or 0,
                      round(time.perf_counter() - t0, 3), cached, primary, machine)


@dataclass(frozen=True, slots=True)
class ToolkitResult:
    """The CUDA toolkit that built a wheel's cubins, per main module: {release: cubins read}."""

    package: str
    version: str
    wheel: str
    platform: str
    modules: dict[str, dict[str, int]]
    every: bool  # every cubin read (else the first cubin of each module)
    bytes_fetched: int
    bytes_total: int
    seconds: float

    @property
    def toolkits(self) -> list[str]:
        return sorted({k for m in self.modules.values() for k in m}, key=_release_key)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["package_version"] = self.version
        d["toolkits"] = self.toolkits
        return d


def probe_toolkit(package: str, version: str, *, index: IndexClient, cache: Cache | None = None,
                  python: str = "cp311", platform: str = "manylinux_x86_64", every: bool = False,
                  modules: Iterable[str] | None = None) -> ToolkitResult:
    """The CUDA release that built the cubins of ``package==version``'s main modules, read from each cubin's
    ELF header (``e_version``) or ``.note.nv.tkinfo`` note. By default the first cubin of each module is
    read (its fatbin starts a few MB into the module: the stream stops there); ``every``: all of them (the
    whole module is fetched, as ``glmcompat arch`` does)."""
    t0 = time.perf_counter()
    machine = machine_of(platform)
    platform = wheel_platform(platform)
    pkg = str(canonicalize_name(package))
    f = _find(index, cache, pkg, version, python, platform)
    key = f"toolkit-v2-{int(every)}-{f.sha256}" if f.sha256 else None
    if cache is not None and key:
        hit = cache.get_json(key)
        if isinstance(hit, dict):
            return ToolkitResult(pkg, version, f.filename, machine, hit["modules"], every, 0, f.size or 0,
                                 round(time.perf_counter() - t0, 3))
    w = _Wheel(index, f)
    try:
        members = {m.name: m for m in elf_members(w.zip)}
        chosen = primary_modules(pkg, members, modules)

        def one(name: str) -> tuple[str, dict[str, int], int]:
            code = read_gpu_code_member(w.zip, members[name], payloads=every, first_cubin=not every)
            return name, code.toolkits, code.undecoded

        read = _map(one, chosen)
        found = {name: tk for name, tk, _ in read if tk}
        undecoded = sum(n for _, _, n in read)
    finally:
        fetched = w.reader.bytes_fetched
    if cache is not None and key and not undecoded:  # a later run with a zstd decoder reads more
        cache.put_json(key, {"modules": found})
    return ToolkitResult(pkg, version, f.filename, machine, found, every, fetched, f.size or 0,
                         round(time.perf_counter() - t0, 3))


def kernel_cuda_drift(row: Kernel, *, index: IndexClient, cache: Cache | None = None, python: str = "cp311",
                      every: bool = False) -> list[tuple[str, str, list[str]]]:
    """Audit a ``[[kernel]]`` row's ``cuda`` against the wheels of its own platform: for each of its releases,
    the toolkit that built the cubins of its main modules (:func:`probe_toolkit`). Returns (version, recorded,
    found) for each release whose cubins state another release than the row (or more than one); a row with no
    ``cuda``, a labelled ``variant`` (not on the package index) or no cubins in a release's wheel is skipped.
    For :mod:`glmcompat.ops.refresh`'s audit."""
    if row.cuda is None or row.variant:
        return []
    out = []
    for v in row.versions:
        r = probe_toolkit(row.package, v, index=index, cache=cache, python=python,
                          platform=f"manylinux_{row.platform}", every=every)
        if r.toolkits and r.toolkits != [row.cuda]:
            out.append((v, row.cuda, r.toolkits))
    return out


def kernel_labels(names: Iterable[str]) -> dict[str, str]:
    """Short display names of kernels: demangled, without template arguments, parameters or return type
    (``_ZN4vllm25paged_attention_v2_kernelI...`` -> ``vllm::paged_attention_v2_kernel``)."""
    out = {}
    for mangled, full in demangle(names).items():
        text, depth, keep = full, 0, []
        for ch in text:
            if ch in "<(":
                depth += 1
            elif ch in ">)":
                depth = max(0, depth - 1)
            elif depth == 0:
                keep.append(ch)
        label = "".join(keep).strip()
        out[mangled] = label.rsplit(" ", 1)[-1] if label else mangled
    return out
