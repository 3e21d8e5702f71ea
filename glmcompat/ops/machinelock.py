"""What a lock needs of the machine it runs on, and what it is compiled for: the manylinux platform of the machine's
glibc (uv's ``--python-platform``), the lowest NVIDIA driver every CUDA build of the set runs on, and the header
comment a requirements output states them in. The machine is the command's (:class:`glmcompat.model.machine.Machine`):
a lock targets its glibc (the running machine's by default, as uv does) or the one named."""

from __future__ import annotations

import re
from collections.abc import Mapping

from glmcompat.decide import cudadriver
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import InputError
from glmcompat.model.machine import Machine, glibc_key, manylinux

OLDEST = (2, 17)  # uv's --python-platform knows x86_64-manylinux_2_17 .. _2_40
NEWEST = (2, 40)
DEFAULT = "2.28"  # where no glibc is named or read (a musl machine): what locks were compiled for before


def compile_glibc(machine: Machine | None) -> str:
    """The glibc a compile targets: the machine's (named or read), within what uv can name; 2.28 where unknown."""
    g = machine.glibc if machine is not None and machine.glibc else DEFAULT
    k = glibc_key(g)
    if k < OLDEST:
        raise InputError(f"glibc {g} ({machine.glibc_from.show() if machine else 'default'}): no manylinux wheel "
                         f"targets a glibc older than 2.17; name a newer one, e.g. --glibc 2.28")
    return g if k <= NEWEST else f"{NEWEST[0]}.{NEWEST[1]}"


def python_platform(arch: str, machine: Machine | None) -> str:
    """uv's ``--python-platform`` for ``arch`` and the machine's glibc: ``x86_64-manylinux_2_36``."""
    return f"{arch}-{manylinux(compile_glibc(machine))}"


def floors(facts: Facts, pins: Mapping[str, str], machine: Machine | None) -> dict[str, str]:
    """What the set needs of the machine: ``driver`` (the lowest NVIDIA driver every CUDA build runs on) and
    ``glibc`` (the glibc its wheels were chosen for: at most this; a machine with an older glibc may lack some)."""
    out: dict[str, str] = {}
    got = cudadriver.floor(pins, facts)
    if got is not None:
        out["driver"] = got[0]
    out["glibc"] = compile_glibc(machine)
    return out


def driver_floor(facts: Facts, pins: Mapping[str, str]) -> dict[str, str]:
    """``{"driver": ...}``: the lowest NVIDIA driver every CUDA build of ``pins`` runs on (a project's uv.lock is
    universal: it names no one glibc); empty without a CUDA build."""
    got = cudadriver.floor(pins, facts)
    return {} if got is None else {"driver": got[0]}


def header(facts: Facts, pins: Mapping[str, str], machine: Machine | None) -> str:
    """The comment lines a requirements output states the machine it needs in (each ends in a line break)."""
    lines = []
    got = cudadriver.floor(pins, facts)
    if got is not None:
        lines.append(f"# needs: NVIDIA driver >= {got[0]} (the lowest every CUDA build here runs on; {got[1]})\n")
    g = compile_glibc(machine)
    where = f", {machine.glibc_from.show()}" if machine is not None and machine.glibc else ", the default"
    lines.append(f"# needs: glibc {g} ({manylinux(g)} wheels chosen{where}; an older glibc may lack some)\n")
    if machine is not None and machine.driver:
        lines.append(f"# judged for NVIDIA driver {machine.driver} ({machine.driver_from.show()})\n")
    return "".join(lines)


_AVAILABLE = re.compile(r"Wheels are available for `([^`]+)` \(v([^)]+)\) on the following platforms: ([^\n]+)")
_TAG = re.compile(r"manylinux_(\d+)_(\d+)_(x86_64|aarch64)")


def glibc_cause(uv_output: str, arch: str, machine: Machine | None) -> tuple[str, str] | None:
    """glmcompat's explanation of a compile that failed because a release has no wheel for the machine's glibc (uv:
    "Wheels are available for `sglang` (v0.5.23) on the following platforms: `manylinux_2_34_x86_64`, ..."), naming
    the release, the glibc its wheels need and the machine's, and one remedy; None when that is not why it failed."""
    m = _AVAILABLE.search(uv_output)
    if m is None:
        return None
    name, version, platforms = m.groups()
    floors = sorted({(int(a), int(b)) for a, b, arch_ in _TAG.findall(platforms) if arch_ == arch})
    if not floors:
        return None
    need = f"{floors[0][0]}.{floors[0][1]}"
    have = compile_glibc(machine)
    where = machine.glibc_from.show() if machine is not None and machine.glibc else "the default"
    if glibc_key(need) <= glibc_key(have):
        return None
    return (f"Because {name} {version} publishes Linux {arch} wheels for {manylinux(need)} and newer only (glibc >= "
            f"{need}) and the machine's glibc is {have} ({where}), we can conclude that {name} {version} cannot be "
            f"installed there",
            f"lock for the glibc of the machine that runs it (`--glibc {need}` or newer, if it has one), or pin a "
            f"{name} release with wheels for glibc {have}")


def flags(machine: Machine | None) -> list[str]:
    """The ``--driver``/``--glibc`` a compile command shows (those its flags gave: the output says how to remake it)."""
    if machine is None:
        return []
    out = []
    if machine.driver and machine.driver_from.origin == "flag":
        out.append(f"--driver {machine.driver}")
    if machine.glibc and machine.glibc_from.origin == "flag":
        out.append(f"--glibc {machine.glibc}")
    return out


def with_header(data: bytes, head: str) -> bytes:
    """``data`` (uv's output) with ``head`` after its leading comment block."""
    text = data.decode("utf-8")
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    return "".join(lines[:i] + [head] + lines[i:]).encode("utf-8")


__all__ = ["compile_glibc", "driver_floor", "flags", "floors", "glibc_cause", "header", "python_platform", "with_header"]
