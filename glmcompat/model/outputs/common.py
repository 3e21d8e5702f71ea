"""The parts several documents share: the error document, evidence and causes (a finding's record,
:class:`glmcompat.model.findings.FindingDoc`, is declared beside the finding)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Protocol, Self

from glmcompat.model.outputs.base import OMIT_EMPTY, JsonRecord, NonEmpty, Schema


class CauseParts(Protocol):
    """What a cause's record reads of it (glmcompat.model.findings.Cause)."""

    @property
    def kind(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def clauses(self) -> tuple[str, ...]: ...
    @property
    def conclusion(self) -> str: ...
    @property
    def remedy(self) -> str: ...
    @property
    def evidence(self) -> tuple[tuple[str, str], ...]: ...
    def because(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class ErrorInfo(JsonRecord):
    """Why the command failed: the exit code, the one-line message (as stderr shows it, without the file and line),
    and the input at fault where there is one."""

    code: Annotated[int, Schema(enum=[1, 2, 3, 4, 130])]
    """the exit code"""
    message: str
    file: str | None
    line: Annotated[int, Schema(minimum=1)] | None


@dataclass(frozen=True, kw_only=True)
class ErrorDocument(JsonRecord):
    """Any command's failure under ``--json``: its JSON version and the error alone."""

    version: int
    error: ErrorInfo


@dataclass(frozen=True, kw_only=True)
class EvidenceDoc(JsonRecord):
    """One piece of evidence: its kind and its source in full."""

    kind: NonEmpty
    source: str


@dataclass(frozen=True, kw_only=True)
class CauseDoc(JsonRecord):
    """Why what was asked for cannot be made safe: uv-style clauses, the conclusion and one remedy."""

    kind: NonEmpty
    subject: str
    because: Annotated[tuple[NonEmpty, ...], Schema(minItems=1)]
    conclusion: NonEmpty
    reason: NonEmpty
    """the clauses and conclusion as one sentence ("Because ..., we can conclude that ...")"""
    remedy: NonEmpty
    evidence: tuple[EvidenceDoc, ...] = field(default=(), metadata=OMIT_EMPTY)
    """the evidence the clauses cite, in full (a clause names only the probe that reproduces it)"""

    @classmethod
    def of(cls, c: CauseParts, reason: str | None = None) -> Self:
        """The record of the cause ``c`` with its derivation in one sentence: ``reason``, else ``c.because()``."""
        return cls(kind=c.kind, subject=c.subject, because=c.clauses, conclusion=c.conclusion,
                   reason=c.because() if reason is None else reason,
                   remedy=c.remedy, evidence=tuple(EvidenceDoc(kind=k, source=s) for k, s in c.evidence))


__all__ = ["CauseDoc", "CauseParts", "ErrorDocument", "ErrorInfo", "EvidenceDoc"]
