"""GPU code and the rule for which code runs on a GPU (pure; no I/O).

A fatbin entry is SASS (a cubin for one ``sm_XY``) or PTX (``compute_XY``):

* ``sm_XY``  SASS runs on the same major and a minor >= its own;
* ``sm_XYa`` (arch-specific) runs only on exactly X.Y;
* ``sm_XYf`` (family, CUDA 12.9+) runs on its family: the same major, a minor >= its own;
* ``compute_XY`` PTX is JIT-compiled by the driver for any GPU of capability >= X.Y;
* ``compute_XYa`` PTX is never JIT-compiled for another GPU: exactly X.Y only.

A library covers a target kernel by kernel, not as a whole: vllm 0.9.1's ``_C`` carries PTX compute_90,
but only for its 633 Marlin kernels; its 1,628 other general kernels (paged_attention, reshape_and_cache_flash,
rotary_embedding ...) carry SASS up to sm_100 and nothing that runs on sm_120. :func:`kernel_groups` groups a
library's kernels by the code each carries and :func:`uncovered` names the groups a target cannot run. A kernel
counts only where the library plainly means it to run on newer GPUs: it carries *portable* code (PTX that is not
arch-specific, or plain/family SASS of at least two majors) and all of its code is for older GPUs than the
target: the library was built before the target or without it in its arch list. Not counted: kernels written
for one generation (arch-specific ``sm_90a`` CUTLASS kernels; vllm's Ampere-only ``allspark`` kernels, sm_80 and
sm_89 SASS only), which the library launches only there; kernels compiled only for newer GPUs than the target
(bf16/fp8 kernels absent from sm_75), which it never launches on older ones; and kernels with code on both
sides of the target that skip it (vllm 0.18.0's FP8 Marlin kernels: sm_89 and sm_120 SASS, none for sm_90 or
sm_100, where vllm takes another path).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from glmcompat.model.numbers import to_int

_CODE = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")
_CC = re.compile(r"^(\d+)\.(\d)$")


class CodeName(NamedTuple):
    kind: str  # "sass" or "ptx"
    major: int
    minor: int
    suffix: str  # "", "a" or "f"

    @property
    def name(self) -> str:
        prefix = "sm" if self.kind == "sass" else "compute"
        return f"{prefix}_{self.major}{self.minor}{self.suffix}"


@lru_cache(maxsize=1024)
def parse_code(text: str) -> CodeName:
    """Parse ``sm_90a`` / ``compute_90`` / ``sm_120f``; raise ``ValueError`` quoting the input. Once per text and
    process (a resolution asks :func:`runs_on` thousands of times, over a few dozen codes)."""
    m = _CODE.match(text)
    if not m:
        raise ValueError(f"invalid GPU code {text!r} (expected e.g. 'sm_90a' or 'compute_90')")
    kind = "sass" if m.group(1) == "sm" else "ptx"
    return CodeName(kind, to_int(m.group(2), "GPU code"), int(m.group(3)), m.group(4))


@lru_cache(maxsize=256)
def parse_capability(text: str) -> tuple[int, int]:
    """Parse ``"12.0"`` into ``(12, 0)``; raise ``ValueError`` quoting the input."""
    m = _CC.match(text)
    if not m:
        raise ValueError(f"invalid compute capability {text!r} (expected e.g. '12.0')")
    return to_int(m.group(1), "compute capability"), to_int(m.group(2), "compute capability")


def runs_on(code: CodeName | str, capability: tuple[int, int]) -> bool:
    """Whether ``code`` can run on a GPU of compute capability ``capability``."""
    c = parse_code(code) if isinstance(code, str) else code
    major, minor = capability
    if c.suffix == "a":
        return (c.major, c.minor) == (major, minor)
    if c.kind == "sass":
        # Plain and family SASS: same major, minor at least the code's own.
        return c.major == major and minor >= c.minor
    if c.suffix == "f":
        return c.major == major and minor >= c.minor
    return (major, minor) >= (c.major, c.minor)


def runnable(codes: list[str] | tuple[str, ...], capability: tuple[int, int]) -> list[str]:
    """The entries of ``codes`` that run on ``capability``, in input order."""
    return [c for c in codes if runs_on(c, capability)]


def sort_codes(codes: set[str] | list[str]) -> list[str]:
    """Sort GPU code names by (kind, capability, suffix): sm_80, sm_89, sm_90, sm_90a, sm_100a ..."""

    def key(name: str) -> tuple[int, int, int, str]:
        c = parse_code(name)
        return (0 if c.kind == "sass" else 1, c.major, c.minor, c.suffix)

    return sorted(set(codes), key=key)


@dataclass(frozen=True, slots=True)
class KernelCode:
    """Kernels of a library that carry the same GPU code: how many, that code (sorted), one of them by name."""

    kernels: int
    code: tuple[str, ...]
    example: str


def kernel_groups(kernels_by_code: Mapping[str, Iterable[str]]) -> list[KernelCode]:
    """Group kernels by the code names they carry (``{"sm_80": [names], "compute_90": [names]}``); largest
    group first, then by code; the example is the group's shortest name (then the first in order)."""
    codes_of: dict[str, set[str]] = {}
    for code, names in kernels_by_code.items():
        for n in names:
            codes_of.setdefault(n, set()).add(code)
    groups: dict[tuple[str, ...], list[str]] = {}
    for n, cs in codes_of.items():
        groups.setdefault(tuple(sort_codes(cs)), []).append(n)
    out = [KernelCode(len(ns), code, min(ns, key=lambda x: (len(x), x))) for code, ns in groups.items()]
    return sorted(out, key=lambda g: (-g.kernels, [(c.kind, c.major, c.minor, c.suffix) for c in map(parse_code, g.code)]))


def portable(code: Iterable[str]) -> bool:
    """Whether a kernel carrying ``code`` is meant for more than one GPU generation: PTX that is not
    arch-specific, or plain/family SASS of two majors or more."""
    majors = set()
    for name in code:
        c = parse_code(name)
        if c.suffix == "a":
            continue
        if c.kind == "ptx":
            return True
        majors.add(c.major)
    return len(majors) >= 2


def uncovered(groups: Iterable[KernelCode], capability: tuple[int, int]) -> list[KernelCode]:
    """The groups of portable kernels whose code is all for older GPUs than ``capability`` and none of it runs there."""
    out = []
    for g in groups:
        if not portable(g.code) or any(runs_on(c, capability) for c in g.code):
            continue
        if all((c.major, c.minor) < capability for c in map(parse_code, g.code)):
            out.append(g)
    return out
