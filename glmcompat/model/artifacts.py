"""What glmcompat read from the bytes of one artifact a set installs (a wheel from an index, a URL or a local path),
for the rules to judge with no curated row: the torch symbols its extensions leave undefined and which of them a torch
release lacks, the NumPy C API its extensions import, the CUDA runtime they link. Pure data, built by
:mod:`glmcompat.ops.artifacts` before the rules run and handed to them in the rules' ``Context``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ArtifactFacts:
    """One artifact of ``name`` ``version`` as read (``unread`` empty), or why it was not (``unread``: the reason,
    ``command``: the one command that would read it).

    ``numpy_abi``: 1 when an extension imports NumPy's C API the NumPy 1.x way only (``numpy.core._multiarray_umath``:
    built against NumPy 1.x headers), 2 when it imports ``numpy._core._multiarray_umath`` (NumPy 2 headers, which
    fall back to the 1.x name and so also run on NumPy 1.x), None when no extension imports it; ``numpy_member``: the
    module that decided it. ``torch_needs``: how many symbols its extensions need from torch; ``torch_missing``: torch
    release (public version) -> the mangled symbols that release does not export, for each torch it was compared with;
    ``demangled``: symbol -> its readable form. ``cuda_majors``: the CUDA runtime majors its extensions link
    (``libcudart.so.12``). ``recorded_sha256``: the hash the lock records, set when the file's own differs (a mismatch:
nothing else was read). ``unverified``: for a wheel read from a URL by range requests, why the sha256 the file records
could not be checked (the server states no hash) and the command that checks it. ``partial``: what of a read artifact
was left unread, beyond the wheel's byte budget (the verdict stands on the rest, and a warning names it)."""

    name: str
    version: str
    artifact: str
    sha256: str = ""
    numpy_abi: int | None = None
    numpy_member: str = ""
    torch_needs: int = 0
    torch_missing: dict[str, tuple[str, ...]] = field(default_factory=dict)
    demangled: dict[str, str] = field(default_factory=dict)
    cuda_majors: tuple[int, ...] = ()
    unread: str = ""
    command: str = ""
    recorded_sha256: str = ""  # set only when the file's sha256 is not the one the lock records (nothing else is read)
    unverified: str = ""  # a URL wheel read by range requests whose recorded sha256 could not be checked: what to run
    cpu_only: bool = False  # a torch wheel whose file list has no torch/lib/libtorch_cuda.so (a build without CUDA)
    partial: str = ""  # read, but some module of it was not (beyond the wheel's byte budget): which and why

    @property
    def read(self) -> bool:
        return not self.unread

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "artifact": self.artifact, "sha256": self.sha256,
                "numpy_abi": self.numpy_abi, "numpy_member": self.numpy_member, "torch_needs": self.torch_needs,
                "torch_missing": {k: list(v) for k, v in self.torch_missing.items()}, "demangled": dict(self.demangled),
                "cuda_majors": list(self.cuda_majors), "unread": self.unread, "command": self.command, "recorded_sha256": self.recorded_sha256,
                **({"unverified": self.unverified} if self.unverified else {}),
                **({"cpu_only": True} if self.cpu_only else {}), **({"partial": self.partial} if self.partial else {})}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ArtifactFacts:
        """Read back :meth:`to_json` (its shape checked by the cache: ``glmcompat.edges.cache.SHAPES['artifact']``)."""
        return cls(d["name"], d["version"], d["artifact"], d["sha256"], d["numpy_abi"], d["numpy_member"],
                   d["torch_needs"], {k: tuple(v) for k, v in d["torch_missing"].items()}, dict(d["demangled"]),
                   tuple(d["cuda_majors"]), d["unread"], d["command"], d["recorded_sha256"],
                   str(d.get("unverified", "")), bool(d.get("cpu_only", False)), str(d.get("partial", "")))
