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
from glmcompat.model.outputs.probe import ProbeDoc


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


__all__ = ["AgreementDoc", "CountsDoc", "RankDoc", "VerifyOutput"]
