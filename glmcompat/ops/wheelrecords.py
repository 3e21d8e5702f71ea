"""The wheel probes' typed records (what they read of a wheel, cached by its sha256, and their results, with the JSON
forms at the cache edge) and their pure core: an extension's undefined torch symbols against what a torch exports
(:func:`compare_abi`), which modules carry code that runs on a target (:func:`arch_verdict`)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any


from glmcompat.model.outputs.wheels import (
    AbiModuleDoc,
    AbiOutput,
    ArchModuleDoc,
    ArchOutput,
    KernelGroupDoc,
    MissingSymbolDoc,
)
from glmcompat.model.gpu import KernelCode, kernel_groups, runs_on, sort_codes, uncovered
from glmcompat.readers.elf import check_torch_needs, cuda_majors, demangle
from glmcompat.readers.fatbin import FatbinCode

if TYPE_CHECKING:
    from glmcompat.readers.elf import ElfInfo



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


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelRead:
    """What reading a probe's wheels cost: the bytes fetched of their size, the seconds, and whether a stored verdict
    answered (then nothing was fetched)."""

    bytes_fetched: int
    bytes_total: int
    seconds: float
    cached: bool


@dataclass(frozen=True, slots=True)
class AbiResult(WheelRead):
    package: str
    version: str
    torch: str
    wheel: str
    torch_wheel: str
    modules: list[ModuleAbi]
    torch_exports: int
    torch_cuda_majors: list[int]
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
                   d["torch_exports"], list(d["torch_cuda_majors"]), list(d.get("warnings", [])),
                   d.get("platform", machine), bytes_fetched=0, bytes_total=d["bytes_total"],
                   seconds=round(seconds, 3), cached=True)


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
class ArchResult(WheelRead):
    package: str
    version: str
    wheel: str
    modules: list[ModuleArch]
    target: str | None
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


def ext_summary_of(infos: Mapping[str, ElfInfo]) -> ExtSummary:
    """The extension summary of parsed modules ({member: ElfInfo}; what
    :func:`glmcompat.ops.wheelprobe.summarise_ext` reads of a wheel, or ``verify`` of the installed files): each
    one's needed libraries and undefined names, and the names it defines that some module leaves undefined."""
    wanted: set[str] = set()
    for info in infos.values():
        wanted |= info.undefined
    return ExtSummary({name: ModuleSymbols(tuple(info.needed), tuple(sorted(info.undefined)),
                                           tuple(sorted(info.weak_undefined)), tuple(sorted(info.defined & wanted)))
                       for name, info in sorted(infos.items())})


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

