"""``glmcompat check --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from glmcompat.model.findings import CHECK_RULES, EVIDENCE_KINDS, Finding, FindingDoc, finding_fields
from glmcompat.model.hints import KINDS, Hint
from glmcompat.model.outputs.base import OMIT_EMPTY, Count, JsonRecord, NonEmpty, Pins, Platform, Schema, key
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
class HintDoc(JsonRecord):
    """One change of the remedy (glmcompat.model.hints.Hint): what changes, from what to what, on which index, why."""

    kind: Annotated[str, Schema(enum=list(KINDS))]
    package: NonEmpty
    from_: str | None = field(metadata=key("from"))
    """the user's version (null: the package was not in the set)"""
    to: str | None
    """the remedy's version (null: removed, or replaced by `replaced_by`)"""
    index: str | None
    """the index the new pin comes from, where it is not the default one"""
    replaced_by: str | None
    reason: str

    @classmethod
    def of(cls, h: Hint) -> HintDoc:
        return cls(kind=h.kind, package=h.package, from_=h.from_ or None, to=h.to or None, index=h.index or None,
                   replaced_by=h.replaced_by or None, reason=h.reason)


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
    safe_set: Mapping[str, NonEmpty | None] | None
    """for an unsafe entry: the core pins of the nearest safe set, found by the resolver and checked for every target
    and environment judged (null for a package the remedy removes or replaces by another name); the whole value is null
    when none is found or the entry is safe"""
    machine: MachineDoc
    """the machine judged: targets, NVIDIA driver, glibc, each with where it came from"""
    safe_set_indexes: Pins | None = field(default=None, metadata=OMIT_EMPTY)
    """the index of each pin of safe_set that is not on the default index"""
    remedy: tuple[HintDoc, ...] = field(default=(), metadata=OMIT_EMPTY)
    """one entry per change of the remedy, each saying why"""


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


__all__ = ["CheckEvidenceDoc", "CheckOutput", "CheckedDoc", "CheckedFindingDoc", "HintDoc"]
