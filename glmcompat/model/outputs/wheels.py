"""``glmcompat abi --json`` and ``glmcompat arch --json``: what the wheels' shared objects hold."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from glmcompat.model.outputs.base import OMIT_NONE, Count, JsonRecord, NonEmpty, Platform, Schema


Code = Annotated[str, Schema(pattern="^(sm|compute)_[0-9]+[af]?$")]


@dataclass(frozen=True, kw_only=True)
class MissingSymbolDoc(JsonRecord):
    """A symbol the extension needs from torch that the torch wheel does not export."""

    symbol: NonEmpty
    demangled: NonEmpty


@dataclass(frozen=True, kw_only=True)
class AbiModuleDoc(JsonRecord):
    """One shared object of the extension wheel."""

    member: NonEmpty
    needed: tuple[str, ...]
    """its DT_NEEDED libraries"""
    cuda_majors: tuple[Count, ...]
    needs_from_torch: Count
    missing: tuple[MissingSymbolDoc, ...]


@dataclass(frozen=True, kw_only=True)
class WheelOutput(JsonRecord):
    """What the documents of a wheel's probe (``abi``, ``arch``) open with: the JSON version, the kind of document,
    and the package and release read."""

    version: Literal[1] = 1
    kind: Literal["abi", "arch"]
    package: NonEmpty
    package_version: NonEmpty


@dataclass(frozen=True, kw_only=True)
class AbiOutput(WheelOutput):
    """An extension wheel's torch symbols against a torch release, read from the wheels."""

    kind: Literal["abi"] = "abi"
    torch: NonEmpty
    platform: Platform
    wheel: NonEmpty
    torch_wheel: NonEmpty
    ok: bool
    modules: tuple[AbiModuleDoc, ...]
    missing: tuple[MissingSymbolDoc, ...]
    torch_exports: Count
    torch_cuda_majors: tuple[Count, ...]
    bytes_fetched: Count
    bytes_total: Count
    seconds: Annotated[float, Schema(minimum=0)]
    cached: bool
    warnings: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class KernelGroupDoc(JsonRecord):
    """Kernels that carry the same GPU code."""

    kernels: Annotated[int, Schema(minimum=1)]
    code: tuple[Code, ...]
    example: NonEmpty
    """one of them, by name"""


Toolkits = Mapping[str, Annotated[int, Schema(minimum=1)]]


@dataclass(frozen=True, kw_only=True)
class ArchModuleDoc(JsonRecord):
    """The GPU code of one shared object."""

    member: NonEmpty
    sass: tuple[Code, ...]
    ptx: tuple[Code, ...]
    counts: Mapping[str, Count]
    runs: bool | None
    """with a target: whether its code runs there"""
    runs_with: tuple[Code, ...]
    toolkits: Toolkits
    """CUDA release that built cubins ("12.4") -> how many"""
    kernel_code: tuple[KernelGroupDoc, ...]
    """its kernels grouped by the GPU code they carry"""
    unreadable: Count
    """fatbin entries whose kernels could not be read"""
    uncovered: tuple[KernelGroupDoc, ...]
    """with --target: groups of kernels meant for newer GPUs with no code for the target"""


@dataclass(frozen=True, kw_only=True)
class ArchOutput(WheelOutput):
    """The GPU code (SASS, PTX) in a wheel's shared objects and, with a target, whether it runs there."""

    kind: Literal["arch"] = "arch"
    platform: Platform
    wheel: NonEmpty
    target: str | None
    ok: bool
    modules: tuple[ArchModuleDoc, ...]
    primary: tuple[str, ...]
    """the members whose GPU code decides the verdict"""
    sass: tuple[Code, ...]
    ptx: tuple[Code, ...]
    all_sass: tuple[Code, ...]
    all_ptx: tuple[Code, ...]
    missing: tuple[str, ...]
    """the judged members with no code for the target"""
    bytes_fetched: Count
    bytes_total: Count
    seconds: Annotated[float, Schema(minimum=0)]
    cached: bool
    toolkits: Toolkits
    """CUDA release that built cubins ("12.4") -> how many"""
    kernels: Count
    """kernels of the main modules"""
    uncovered_kernels: Count
    """with --target: main-module kernels with no code for it"""
    target_platforms: Annotated[tuple[Platform, ...], Schema(minItems=1)] | None = field(default=None,
                                                                                        metadata=OMIT_NONE)
    """with --target: the machines it ships on"""
    note: NonEmpty | None = field(default=None, metadata=OMIT_NONE)
    """with --target: the wheel read is for a machine the target never ships on"""


__all__ = ["AbiModuleDoc", "AbiOutput", "ArchModuleDoc", "ArchOutput", "Code", "KernelGroupDoc", "MissingSymbolDoc",
           "Toolkits", "WheelOutput"]
