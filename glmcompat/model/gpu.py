"""GPU code and the rule for which code runs on a GPU (pure; no I/O).

A fatbin entry is SASS (a cubin for one ``sm_XY``) or PTX (``compute_XY``):

* ``sm_XY``  SASS runs on the same major and a minor >= its own;
* ``sm_XYa`` (arch-specific) runs only on exactly X.Y;
* ``sm_XYf`` (family, CUDA 12.9+) runs on its family: the same major, a minor >= its own;
* ``compute_XY`` PTX is JIT-compiled by the driver for any GPU of capability >= X.Y;
* ``compute_XYa`` PTX is never JIT-compiled for another GPU: exactly X.Y only.
"""

from __future__ import annotations

import re
from typing import NamedTuple

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


def parse_code(text: str) -> CodeName:
    """Parse ``sm_90a`` / ``compute_90`` / ``sm_120f``; raise ``ValueError`` quoting the input."""
    m = _CODE.match(text)
    if not m:
        raise ValueError(f"invalid GPU code {text!r} (expected e.g. 'sm_90a' or 'compute_90')")
    kind = "sass" if m.group(1) == "sm" else "ptx"
    return CodeName(kind, int(m.group(2)), int(m.group(3)), m.group(4))


def parse_capability(text: str) -> tuple[int, int]:
    """Parse ``"12.0"`` into ``(12, 0)``; raise ``ValueError`` quoting the input."""
    m = _CC.match(text)
    if not m:
        raise ValueError(f"invalid compute capability {text!r} (expected e.g. '12.0')")
    return int(m.group(1)), int(m.group(2))


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
