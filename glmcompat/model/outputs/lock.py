"""``glmcompat lock --json`` (project, requirements and stack modes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from glmcompat.model.outputs.base import OMIT_NONE, JsonRecord, NonEmpty, Pins, Platform, Schema
from glmcompat.model.outputs.common import EvidenceDoc
from glmcompat.model.outputs.machine import MachineDoc


@dataclass(frozen=True, kw_only=True)
class LockOutput(JsonRecord):
    """What a project, requirements or stack lock did, or why it could not."""

    version: Literal[1] = 1
    mode: Annotated[str, Schema(enum=["project", "requirements", "stack"])]
    path: NonEmpty
    """the pyproject.toml locked, the requirements output, or a stack's output directory (--out)"""
    targets: Annotated[tuple[NonEmpty, ...], Schema(minItems=1)]
    platform: Platform
    core: Pins
    """the safe core set: package -> version"""
    overrides: Pins
    """package -> version written to override-dependencies (an engine's pin overridden)"""
    override_reasons: Pins
    """package -> why its upstream pin was overridden"""
    written: tuple[str, ...]
    """files changed on disk (none with --dry-run or --check, or when up to date)"""
    warnings: tuple[str, ...]
    verdicts: Mapping[str, Annotated[str, Schema(enum=["safe", "unsafe", "stale"])]]
    """target -> the check's verdict on the lock (empty with --dry-run)"""
    diff: str
    """unified diff of pyproject.toml (project mode)"""
    problems: tuple[str, ...]
    """--check: why the lock is not current or not safe (exit 1 when any)"""
    error: str | None
    """why no safe lock exists (exit 1; nothing was written), else null"""
    evidence: tuple[EvidenceDoc, ...]
    """the evidence the error's derivation cites, in full (the error names only the probe that reproduces it)"""
    floors: Mapping[Annotated[str, Schema(enum=["driver", "glibc"])], NonEmpty]
    """what the lock needs of the machine: the lowest NVIDIA driver every CUDA build runs on, the glibc its wheels
    were chosen for"""
    machine: MachineDoc | None
    """the machine locked for (its targets, NVIDIA driver and glibc, each with where it came from)"""
    stack: NonEmpty | None = field(default=None, metadata=OMIT_NONE)
    """the curated stack locked (stack mode only)"""


__all__ = ["LockOutput"]
