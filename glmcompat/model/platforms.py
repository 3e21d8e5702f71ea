"""The Linux machines glmcompat judges, and how each is named: in matrix rows, uv environment markers and prose."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from glmcompat.model.errors import InputError


class TargetRow(Protocol):
    """What is read here of a [[target]] row (:class:`glmcompat.matrix.rows.Target`, or the validated model)."""

    @property
    def products(self) -> Sequence[str]: ...

    @property
    def platforms(self) -> Mapping[str, Sequence[str]]: ...  # empty: every product on x86_64


# The Linux machines glmcompat judges: a lock's environments, the wheels a probe reads and the matrix rows
# about wheels (``platform`` on [[torch]], [[kernel]], [[arch_probe]], [[abi_probe]]; absent: x86_64) are
# each for one of them. The aarch64 wheels are separate builds (torch's default aarch64 wheels up to 2.10.0
# carry no CUDA at all), so a fact about one platform's wheel says nothing about the other's.
PLATFORMS = ("x86_64", "aarch64")
PER_PLATFORM = frozenset({"torch", "kernel", "arch_probe", "abi_probe"})


def check_platform(platform: str) -> str:
    """``platform`` when it is one of :data:`PLATFORMS` (``arm64`` and ``amd64`` read as their Linux names);
    :class:`InputError` otherwise."""
    p = {"arm64": "aarch64", "amd64": "x86_64", "x86-64": "x86_64"}.get(platform.strip().lower(), platform.strip().lower())
    if p not in PLATFORMS:
        raise InputError(f"unknown platform {platform!r} (known: {', '.join(PLATFORMS)})")
    return p


def target_platforms(target: TargetRow) -> list[str]:
    """The platforms some product of ``target`` (a [[target]] row) ships on, x86_64 first."""
    plats = target.platforms
    have = {p for v in plats.values() for p in v} if plats else {"x86_64"}
    return [p for p in PLATFORMS if p in have]


def products_on(target: TargetRow, platform: str) -> list[str]:
    """The products of ``target`` that ship on ``platform`` (H100, H200 on x86_64; GH200 on aarch64)."""
    plats = target.platforms
    return [p for p in target.products if platform in (plats.get(p) or (["x86_64"] if not plats else []))]

ENVIRONMENT = "sys_platform == 'linux' and platform_machine == 'x86_64'"  # the x86_64 lock's (unchanged since the first)


PLATFORM_NAME = {"x86_64": "Linux x86_64", "aarch64": "Linux aarch64"}


def environment(platform: str) -> str:
    """The uv environment marker of a lock for ``platform``."""
    p = check_platform(platform)
    return ENVIRONMENT if p == "x86_64" else f"sys_platform == 'linux' and platform_machine == '{p}'"


# The parts of a PEP 508 marker environment every machine glmcompat judges shares (CPython on Linux).
PLATFORM_ENV = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_version": "",
    "implementation_version": "",
}


def marker_env(python: str, machine: str = "x86_64", full: str | None = None) -> dict[str, str]:
    """The marker environment of CPython ``python`` (``"3.11"``; ``full`` is its patch release, default
    ``.0``) on Linux ``machine``, with no extra."""
    return {**PLATFORM_ENV, "platform_machine": machine, "python_version": python,
            "python_full_version": full or python + ".0", "extra": ""}


def python_minor(value: str) -> str:
    """The CPython minor ``value`` names, as ``X.Y``: ``3.11``, ``cp311``, ``cp3.11``, ``py311``,
    ``python3.11``, ``cpython3.11`` and ``cpython@3.11`` are all ``3.11``. Anything else (a patch release, a
    Python 2, another interpreter) is an InputError naming the value (exit 2)."""
    raw = value
    v = value.strip().lower()
    for prefix in ("cpython@", "cpython", "python", "cp", "py"):
        if v.startswith(prefix):
            v = v[len(prefix):]
            break
    if "." in v:
        major, _, minor = v.partition(".")
    else:
        major, minor = v[:1], v[1:]
    if not (major == "3" and minor.isdigit() and minor.isascii() and len(minor) <= 2 and (minor == "0" or not minor.startswith("0"))):
        raise InputError(f"--python {raw!r}: expected a CPython 3 minor version such as 3.11 or cp311")
    return f"3.{int(minor)}"
