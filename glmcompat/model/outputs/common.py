"""The parts several documents share: the error document and evidence (a finding's record and a cause's,
:class:`glmcompat.model.findings.FindingDoc` and :class:`glmcompat.model.findings.CauseDoc`, are declared beside the
finding and the cause)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from glmcompat.model.outputs.base import JsonRecord, NonEmpty, Schema


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


__all__ = ["ErrorDocument", "ErrorInfo", "EvidenceDoc"]
