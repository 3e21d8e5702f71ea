"""``glmcompat verify --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from glmcompat.model.outputs.base import (
    OMIT_NONE,
    Count,
    JsonRecord,
    NonEmpty,
    Schema,
)
from glmcompat.model.findings import FindingDoc


@dataclass(frozen=True, kw_only=True)
class ExplainedDoc(JsonRecord):
    """A known failure signature in a probe's error text: what it means and one remedy."""

    id: NonEmpty
    cause: NonEmpty
    remedy: NonEmpty
    match: str
    """the matched text"""
    package: str | None
    """the package the text blames; null when it names none"""
    version: str | None
    """that package's version where the text shows it"""
    rule: str | None = None
    """the cause's id: the check rule that reports the same break (glmcompat.model.causes.CAUSE_OF); null where the
    check has no counterpart"""


@dataclass(frozen=True, kw_only=True)
class ProbeDoc(JsonRecord):
    """One probe's record: its verdict and what it found (the fields a probe did not report are absent)."""

    id: NonEmpty
    status: Annotated[str, Schema(enum=["passed", "warning", "failed", "skipped"])]
    seconds: float | None = field(default=None, metadata=OMIT_NONE)
    summary: str | None = field(default=None, metadata=OMIT_NONE)
    error: str | None = field(default=None, metadata=OMIT_NONE)
    """the exact error, with its chain (cause first), one exception per line"""
    data: Mapping[str, Any] | None = field(default=None, metadata=OMIT_NONE)
    """what the probe measured (free form, per probe)"""
    warnings: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)
    explained: tuple[ExplainedDoc, ...] | None = field(default=None, metadata=OMIT_NONE)
    """the known failure signatures its error text shows"""
    absent: NonEmpty | None = field(default=None, metadata=OMIT_NONE)
    """skipped because this module is not installed"""


@dataclass(frozen=True, kw_only=True)
class CountsDoc(JsonRecord):
    """How many probes ended in each status."""

    passed: Count
    warning: Count
    failed: Count
    skipped: Count


@dataclass(frozen=True, kw_only=True)
class AgreementDoc(JsonRecord):
    """The static verdict on one extension package against what its dynamic probes saw."""

    package: NonEmpty
    aspect: Annotated[str, Schema(enum=["load", "gpu-code"])]
    static: Annotated[str, Schema(enum=["compatible", "incompatible"])]
    dynamic: NonEmpty
    reasons: tuple[str, ...]
    probes: tuple[str, ...]
    agree: bool


@dataclass(frozen=True, kw_only=True)
class RankDoc(JsonRecord):
    """One rank's verdict under torchrun (--distributed), as rank 0 gathered it."""

    rank: Count
    ok: bool
    device: Mapping[str, Any] | None
    failed: tuple[str, ...]
    """the ids of its failed probes"""


@dataclass(frozen=True, kw_only=True)
class VerifyOutput(JsonRecord):
    """Whether the installed stack loads and runs its kernels on this GPU: one entry per probe."""

    version: Literal[1] = 1
    ok: bool
    target: str | None
    device: Mapping[str, Any] | None
    """the GPU probed (name, capability, driver, ...)"""
    counts: CountsDoc
    probes: tuple[ProbeDoc, ...]
    findings: tuple[FindingDoc, ...]
    agreement: tuple[AgreementDoc, ...]
    elapsed_s: Annotated[float, Schema(minimum=0)] | None = field(default=None, metadata=OMIT_NONE)
    rank: Count | None = field(default=None, metadata=OMIT_NONE)
    """under torchrun (--distributed): this process's rank"""
    ranks: tuple[RankDoc, ...] | None = field(default=None, metadata=OMIT_NONE)
    """on rank 0 under torchrun: every rank's verdict"""


__all__ = ["AgreementDoc", "CountsDoc", "ExplainedDoc", "ProbeDoc", "RankDoc", "VerifyOutput"]
