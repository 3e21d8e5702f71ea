"""The NVIDIA driver a set needs, and whether the machine's runs it: pure, from the matrix's ``[[cuda]]`` rows.

The CUDA of each build in a set: torch's (its ``+cuXYZ`` label, else its default wheel's row), any ``+cuXYZ`` label,
a kernel's linked CUDA runtime (``[[kernel]]`` rows), torchvision / torchaudio's (``[[family]]`` cudart), the NVIDIA
runtime libraries (``nvidia-*-cu12`` / ``-cu13``: their major; ``nvidia-cuda-runtime-cu12 12.8.90``: 12.8) and
``cuda-toolkit``. A build for CUDA X.Y runs on a driver at least the minor-version-compatibility minimum of major X
(NVIDIA: 12.x on >= 525.60.13, 13.x on >= 580); PTX it carries JIT-compiles only on a driver at least as new as
its toolkit's own (a warning where the target needs that PTX); data-center GPUs may run a newer CUDA on an older
driver through NVIDIA's cuda-compat package (said in the remedy, never assumed).

The rule (:func:`check`) is registered in :mod:`glmcompat.decide.rules` as ``rule_driver``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from glmcompat.matrix.rows import CudaDriver, Fact, Target
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.causes import Break
from glmcompat.model.findings import Finding
from glmcompat.model.machine import Machine, driver_key
from glmcompat.model.names import local_cuda

_NVIDIA_LIB = re.compile(r"^nvidia-[a-z0-9-]+-cu(\d+)$")


@dataclass(frozen=True, slots=True)
class Build:
    """One package of a set built for a CUDA release (``cuda``: ``12.8``, or the major alone, ``13``)."""

    name: str
    version: str
    cuda: str
    how: str  # how its CUDA is known, as a clause: "its default wheel (the [[torch]] row)"
    sass: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    row: Fact | None = None


def _release(version: str) -> str | None:
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    return f"{v.release[0]}.{v.release[1] if len(v.release) > 1 else 0}"


def build_of(name: str, version: str, facts: Facts) -> Build | None:
    """The CUDA build ``name`` ``version`` is (None: no CUDA, or not known)."""
    label = local_cuda(version)
    if name == "torch":
        cuda = facts.torch_cuda(version)
        if not cuda:
            return None
        code = facts.gpu_code("torch", version)
        tb = facts.torch_build(version)
        how = f"its +{Version(version).local} label" if label else "its default wheel"
        return Build(name, version, cuda, how, tuple(code[0]) if code else (), tuple(code[1]) if code else (),
                     tb if label is None else None)
    if name in facts.kernel_packages():
        cuda = facts.kernel_cuda(name, version)
        if not cuda:
            return None
        row = facts.kernel(name, version)
        code = facts.gpu_code(name, version)
        how = f"its +{Version(version).local} label" if label and (row is None or not row.variant) else \
            "the CUDA runtime its wheel links"
        return Build(name, version, cuda, how, tuple(code[0]) if code else (), tuple(code[1]) if code else (), row)
    if name in facts.family_packages():
        got = facts.family_cuda(name, version)
        if got is None or not got[0]:
            return None
        return Build(name, version, label or got[0], "the CUDA runtime its wheel links", row=got[1])
    if label is not None:
        return Build(name, version, label, f"its +{Version(version).local} label")
    m = _NVIDIA_LIB.match(name)
    if m is not None:
        rel = _release(version)
        major = m.group(1)
        cuda = rel if name.startswith("nvidia-cuda-runtime-") and rel and rel.split(".")[0] == major else major
        return Build(name, version, cuda, f"an NVIDIA CUDA {major} runtime library")
    if name in ("nvidia-cuda-runtime", "cuda-toolkit"):
        rel = _release(version)
        if rel is not None and int(rel.split(".")[0]) >= 11:
            return Build(name, version, rel, "its version (the CUDA toolkit release it is)")
    return None


def builds(packages: Mapping[str, str], facts: Facts) -> list[Build]:
    """Every CUDA build of ``packages`` (name -> version), sorted by name."""
    out = []
    for name in sorted(packages):
        b = build_of(name, packages[name], facts)
        if b is not None:
            out.append(b)
    return out


def _rows(facts: Facts) -> tuple[CudaDriver, ...]:
    return facts.rows("cuda")


def needs(cuda: str, facts: Facts) -> tuple[str, CudaDriver | None, CudaDriver | None]:
    """(the minimum driver a build for ``cuda`` runs on, the row of its major that says so, the row of the release
    itself (None: the matrix has none: its toolkit driver is not known)). ("", None, None) where the matrix knows
    nothing of the major."""
    major = cuda.split(".")[0]
    rows = [r for r in _rows(facts) if r.release.split(".")[0] == major]
    exact = next((r for r in rows if r.release == cuda), None)
    if not rows:
        return "", None, None
    floor = max(rows, key=lambda r: driver_key(r.minor_compat))
    return floor.minor_compat, floor, exact


def floor(packages: Mapping[str, str], facts: Facts) -> tuple[str, str] | None:
    """(the lowest driver every CUDA build of ``packages`` runs on, the build that needs it); None without one."""
    best: tuple[tuple[int, ...], str, str] | None = None
    for b in sorted(builds(packages, facts), key=lambda b: b.name != "torch"):  # torch names a tie
        need, _, _ = needs(b.cuda, facts)
        if need and (best is None or driver_key(need) > best[0]):
            best = (driver_key(need), need, f"{b.name} {b.version} (CUDA {b.cuda})")
    return None if best is None else (best[1], best[2])


def runs(cuda: str, driver: str, facts: Facts) -> bool:
    """Whether a build for ``cuda`` runs on ``driver`` (minor-version compatibility); True where nothing is known."""
    need, _, _ = needs(cuda, facts)
    return not need or driver_key(driver) >= driver_key(need)


def older_torch(target: Target, driver: str, facts: Facts) -> str | None:
    """The newest default torch release whose CUDA ``driver`` runs and whose GPU code runs on ``target`` (None: none)."""
    got = _newest_torch(target, driver, facts)
    return None if got is None else got[0]


def _older_torch(target: Target, driver: str, facts: Facts) -> str:
    """:func:`older_torch` as a remedy names it: ``torch==2.10.0 (CUDA 12.8)``; "" where none."""
    got = _newest_torch(target, driver, facts)
    return f"torch=={got[0]} (CUDA {got[1]})" if got else ""


def _newest_torch(target: Target, driver: str, facts: Facts) -> tuple[str, str] | None:
    cap = target.capability
    best: tuple[Version, str, str] | None = None
    for row in facts.rows("torch"):
        if row.variant or not row.cuda or not runs(row.cuda, driver, facts):
            continue
        if not gpu.runnable(list(row.sass) + list(row.ptx), cap):
            continue
        for v in row.versions:
            if best is None or Version(v) > best[0]:
                best = (Version(v), v, row.cuda)
    return (best[1], best[2]) if best else None


def check(packages: Mapping[str, str], target: Target, facts: Facts, machine: Machine | None) -> list[Finding]:
    """Findings (rule ``driver``): a CUDA build of ``packages`` that the machine's driver cannot run is an error
    naming the build, its CUDA, the driver (and where it came from) and the minimum, with one remedy; PTX the target
    needs that the driver cannot JIT is a warning. Nothing where the machine names no driver."""
    if machine is None or machine.driver is None:
        return []
    driver = machine.driver
    have = driver_key(driver)
    where = machine.driver_from.show()
    out: list[Finding] = []
    for b in builds(packages, facts):
        need, major_row, exact = needs(b.cuda, facts)
        if not need or major_row is None:
            continue
        major = b.cuda.split(".")[0]
        # the driver's rule; how the build's CUDA is known is said in the message (its row's evidence differs per
        # platform, and one finding is reported once for every environment it holds in)
        evidence: tuple[tuple[str, str], ...] = ((major_row.evidence, major_row.source),)
        if have < driver_key(need):
            own = f"; CUDA {exact.release}'s own toolkit driver is {exact.driver}" if exact is not None else ""
            said = Break(rule="driver", package=b.name, version=b.version, against=driver, built=b.cuda).sentence()
            msg = (f"{said}; {b.name} {b.version} is built for CUDA {b.cuda} ({b.how}), which needs NVIDIA driver >= "
                   f"{need} on Linux (CUDA {major}.x minor-version compatibility{own}); the machine's driver: {driver} "
                   f"({where})")
            older = _older_torch(target, driver, facts) if b.name == "torch" else ""
            install = exact.driver if exact is not None else need
            remedy = (f"use {older}, which runs on driver {driver} and carries {target.name}'s code, or install "
                      f"NVIDIA driver >= {install}" if older else
                      f"use a build of {b.name} for a CUDA the driver runs, or install NVIDIA driver >= {install}")
            if major_row.forward_compat:
                remedy += " (on a data-center GPU, NVIDIA's cuda-compat forward-compatibility package is the other way)"
            out.append(Finding(rule="driver", severity="error", packages=((b.name, b.version),), message=msg,
                               evidence=evidence, remedy=remedy))
            continue
        if exact is not None and b.ptx and have < driver_key(exact.driver):
            cap = target.capability
            if not gpu.runnable(list(b.sass), cap) and gpu.runnable(list(b.ptx), cap):
                msg = (f"{b.name} {b.version} runs on {target.name} only through its PTX ({', '.join(b.ptx)}), built by "
                       f"CUDA {exact.release}, and the driver JIT-compiles PTX only from toolkits no newer than itself: "
                       f"driver {driver} ({where}) is older than CUDA {exact.release}'s {exact.driver}")
                out.append(Finding(rule="driver", severity="warning", packages=((b.name, b.version),), message=msg,
                                   evidence=((exact.evidence, exact.source),),
                                   remedy=f"install NVIDIA driver >= {exact.driver}, or use a build with SASS for "
                                          f"{target.name}"))
    return out


__all__ = ["Build", "build_of", "builds", "check", "floor", "needs", "older_torch", "runs"]
