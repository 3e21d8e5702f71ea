"""The machine a verdict judged, as every ``--json`` document that judges one carries it (``machine``): each value
with where it came from (:class:`glmcompat.model.machine.Machine`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from glmcompat.model.machine import Machine, Provenance
from glmcompat.model.outputs.base import JsonRecord, NonEmpty, Schema

Origin = Annotated[str, Schema(enum=["flag", "env", "pyproject", "detected", "default"])]


@dataclass(frozen=True, kw_only=True)
class FromDoc(JsonRecord):
    """Where a value came from."""

    origin: Origin
    """flag, env (a GLMCOMPAT_* variable), pyproject ([tool.glmcompat]), detected (read from the machine) or default"""
    where: str
    """the flag, variable, pyproject.toml or reader (/sys/module/nvidia/version, NVML, ...); empty for a default"""

    @classmethod
    def of(cls, p: Provenance) -> FromDoc:
        return cls(origin=p.origin, where=p.where)


@dataclass(frozen=True, kw_only=True)
class GpuDoc(JsonRecord):
    """A GPU the driver reports."""

    index: Annotated[int, Schema(minimum=0)]
    name: str
    capability: NonEmpty


@dataclass(frozen=True, kw_only=True)
class MachineDoc(JsonRecord):
    """The machine judged: each value (null: not named, not read) and where it came from."""

    targets: tuple[NonEmpty, ...]
    targets_from: FromDoc
    driver: str | None
    """the NVIDIA driver version (null: not judged)"""
    driver_from: FromDoc
    glibc: str | None
    """the glibc version, the manylinux floor (null: not judged)"""
    glibc_from: FromDoc
    arch: str | None
    kernel_module: Annotated[str, Schema(enum=["open", "proprietary"])] | None
    uvm_hmm: bool | None
    """nvidia_uvm's HMM on (uvm_disable_hmm N); null: not read"""
    gpus: tuple[GpuDoc, ...]

    @classmethod
    def of(cls, m: Machine) -> MachineDoc:
        return cls(targets=m.targets, targets_from=FromDoc.of(m.targets_from), driver=m.driver,
                   driver_from=FromDoc.of(m.driver_from), glibc=m.glibc, glibc_from=FromDoc.of(m.glibc_from),
                   arch=m.arch, kernel_module=m.kernel_module, uvm_hmm=m.uvm_hmm,
                   gpus=tuple(GpuDoc(index=g.index, name=g.name, capability=g.capability) for g in m.gpus))


__all__ = ["FromDoc", "GpuDoc", "MachineDoc"]
