"""What a failure log (or, in ``glmcompat verify``, the environment) shows of the environment it happened in, and the
small version helpers the cause builders share (:mod:`glmcompat.decide.diagnose`, :mod:`glmcompat.decide.cudacauses`).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import LogContext


@dataclass(frozen=True)
class Env:
    """What is known of the environment the failure happened in.

    ``versions``: distribution -> version (canonical names); ``cuda``: ``driver_cuda`` (what nvidia-smi
    calls "CUDA Version": the newest CUDA the driver supports), ``driver``, ``nvcc`` (the toolkit),
    ``torch_cuda``; ``half_installed``: distribution -> the files its RECORD lists that are missing;
    ``capability``: the device's (``9.0``); ``where``: ``log`` or ``environment``, for the wording;
    ``seen``: every version the log shows of a distribution (``2.18.1, 2.29.7``)."""

    versions: Mapping[str, str] = field(default_factory=dict)
    cuda: Mapping[str, str] = field(default_factory=dict)
    half_installed: Mapping[str, Sequence[str]] = field(default_factory=dict)
    capability: str = ""
    where: str = "log"
    targets: Mapping[str, str] = field(default_factory=dict)  # package -> the --target folder it is installed in
    seen: Mapping[str, str] = field(default_factory=dict)
    libs: Mapping[str, str] = field(default_factory=dict)  # soname -> where the loader (ldd) found it
    notes: Mapping[str, str] = field(default_factory=dict)  # index, building, engine: what the log shows of the run

    @classmethod
    def from_log(cls, ctx: LogContext) -> Env:
        return cls(versions=dict(ctx.versions), cuda=dict(ctx.cuda), seen=dict(ctx.seen), libs=dict(ctx.libs),
                   notes=dict(ctx.notes))

    def version(self, package: str) -> str:
        return self.versions.get(canonicalize(package), "")


def v(text: str) -> Version | None:
    """``text`` as a version, or None where it is none."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def public(text: str) -> str:
    """``text`` without its local label (``2.9.1+cu128`` -> ``2.9.1``)."""
    parsed = v(text)
    return parsed.public if parsed is not None else text.split("+", 1)[0]


def local(text: str) -> str | None:
    """``text``'s local label (``cu128``), or None."""
    parsed = v(text)
    return parsed.local if parsed is not None else None


def shown(name: str, version: str) -> str:
    """``name version``, or ``name`` where the version is not known."""
    return f"{name} {version}" if version else name


__all__ = ["Env", "local", "public", "shown", "v"]
