"""``glmcompat check --json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from glmcompat.model.findings import CHECK_RULES, EVIDENCE_KINDS, Finding, FindingDoc, finding_fields
from glmcompat.model.outputs.base import (
    Count,
    JsonRecord,
    NonEmpty,
    Pins,
    Platform,
    Schema,
)
from glmcompat.model.outputs.common import EvidenceDoc
from glmcompat.model.outputs.machine import MachineDoc


@dataclass(frozen=True, kw_only=True)
class CheckEvidenceDoc(EvidenceDoc):
    """One piece of evidence of the matrix: its kind and its source in full."""

    kind: Annotated[str, Schema(enum=list(EVIDENCE_KINDS))]


@dataclass(frozen=True, kw_only=True)
class CheckedFindingDoc(FindingDoc):
    """A finding of one (lock, target) verdict."""

    rule: Annotated[str, Schema(enum=list(CHECK_RULES))]
    evidence: tuple[CheckEvidenceDoc, ...]
    path: NonEmpty
    target: NonEmpty

    @classmethod
    def at(cls, f: Finding, path: str, target: str) -> CheckedFindingDoc:
        return cls(**finding_fields(f, CheckEvidenceDoc), path=path, target=target)


@dataclass(frozen=True, kw_only=True)
class CheckedDoc(JsonRecord):
    """One (lock, target) verdict."""

    path: NonEmpty
    target: NonEmpty
    model: str | None
    ok: bool
    environments: Count
    """how many installable environments the file has (each judged on its own)"""
    notes: tuple[str, ...]
    """what was judged when not every combination was (e.g. too many extra combinations)"""
    platforms: Annotated[tuple[Platform, ...], Schema(minItems=1, uniqueItems=True)]
    """the machines whose environments were judged (--platform or [tool.glmcompat] platform, else every machine the
    target ships on)"""
    safe_set: Pins | None
    """for an unsafe entry: the core pins of one consistent safe set (from the matrix; null when none is found or the
    entry is safe); `glmcompat lock` writes them"""
    machine: MachineDoc
    """the machine judged: targets, NVIDIA driver, glibc, each with where it came from"""


@dataclass(frozen=True, kw_only=True)
class CheckOutput(JsonRecord):
    """The offline verdict on one or more locks for one or more GPU targets."""

    version: Literal[1] = 1
    ok: bool
    """false when any finding is an error"""
    target: str | None
    """the first target checked (null when nothing was checked)"""
    checked: tuple[CheckedDoc, ...]
    """one entry per (lock, target)"""
    findings: tuple[CheckedFindingDoc, ...]


__all__ = ["CheckEvidenceDoc", "CheckOutput", "CheckedDoc", "CheckedFindingDoc"]
