"""What a project lock is asked and what it answers: :class:`ProjectLockRequest` and :class:`ProjectLockResult`
(``glmcompat lock --json``'s document, and the answer a project's record keeps: :mod:`glmcompat.ops.projectrecord`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from glmcompat.decide.plan import LockPlan, Planned
from glmcompat.edges.indexconfig import IndexOptions
from glmcompat.model.outputs.common import EvidenceDoc
from glmcompat.model.machine import Machine, from_json
from glmcompat.model.outputs.lock import LockOutput
from glmcompat.model.outputs.machine import MachineDoc

RESULT_VERSION = LockOutput.version  # of the recorded answer: lock --json's document


@dataclass(frozen=True)
class ProjectLockRequest(Planned):
    """What to lock for: the command's :class:`~glmcompat.decide.plan.LockPlan` (the targets' rows, one set for all; the
    platform; the model; the machine: its NVIDIA driver and glibc), and how."""

    plan: LockPlan
    upgrade: bool = False
    python: str | None = None  # the CPython minor to resolve the core for (default: this one, if the project allows it)
    index: IndexOptions = IndexOptions()  # --index-url / --no-cache, for the resolution and for uv


@dataclass
class ProjectLockResult:
    """What a project lock did (``glmcompat lock --json`` prints it; ``version`` is :data:`RESULT_VERSION`)."""

    mode: str  # "project" | "requirements"
    path: str  # the pyproject.toml or the requirements output
    targets: list[str]
    platform: str
    core: dict[str, str]  # name -> version: the safe set
    overrides: dict[str, str] = field(default_factory=dict)  # name -> version, overriding an engine's pin
    override_reasons: dict[str, str] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)  # files changed on disk
    warnings: list[str] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)  # target -> "safe" | "unsafe" | "stale"
    diff: str = ""  # the pyproject.toml change (--dry-run, --check)
    problems: list[str] = field(default_factory=list)  # --check: why the project's lock is not current or safe
    error: str | None = None  # why no safe lock exists (the UnsafeError's message); nothing was written
    evidence: list[dict[str, str]] = field(default_factory=list)  # what ``error`` cites, in full ({kind, source})
    floors: dict[str, str] = field(default_factory=dict)  # what the lock needs of the machine: driver, glibc
    machine: Machine | None = None  # the machine it was locked for

    def to_output(self) -> LockOutput:
        """``lock --json``'s document."""
        return LockOutput(mode=self.mode, path=self.path, targets=tuple(self.targets), platform=self.platform,
                          core=self.core, overrides=self.overrides, override_reasons=self.override_reasons,
                          written=tuple(self.written), warnings=tuple(self.warnings), verdicts=self.verdicts,
                          diff=self.diff, problems=tuple(self.problems), error=self.error,
                          evidence=tuple(EvidenceDoc(kind=e["kind"], source=e["source"]) for e in self.evidence),
                          floors=self.floors, machine=None if self.machine is None else MachineDoc.of(self.machine))

    def to_json(self) -> dict[str, Any]:
        """``lock --json``'s document as data (:meth:`to_output`), and the recorded answer (:meth:`from_json`)."""
        return self.to_output().to_json()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ProjectLockResult:
        """A result :meth:`to_json` wrote (the recorded answer of :func:`lock_project`); TypeError for any other."""
        if d.get("version") != RESULT_VERSION:
            raise TypeError(f"project lock result version {d.get('version')!r}")
        m = d.get("machine")
        return cls(**{k: v for k, v in d.items() if k not in ("version", "machine")},
                   machine=None if m is None else from_json(m))



def replayed(result: ProjectLockResult) -> ProjectLockResult:
    """The answer the next identical run gives after ``result`` (recalled from the record: nothing written, no diff)."""
    return ProjectLockResult.from_json(replace(result, written=[], diff="", problems=[]).to_json())


def result_json(result: ProjectLockResult) -> str:
    return json.dumps(result.to_json(), sort_keys=True, indent=2)
