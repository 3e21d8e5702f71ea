"""``glmcompat upgrade --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from glmcompat.model.findings import CauseDoc
from glmcompat.model.outputs.base import JsonRecord, NonEmpty, Pins, Platform, Schema, key


@dataclass(frozen=True, kw_only=True)
class SkipDoc(CauseDoc):
    """Why a newer release was skipped: uv-style clauses, the conclusion and one remedy."""

    subject: NonEmpty


@dataclass(frozen=True, kw_only=True)
class SkipNote(JsonRecord):
    """Why a newer release was skipped, where no derivation says it."""

    note: NonEmpty


@dataclass(frozen=True, kw_only=True)
class UpgradeOutput(JsonRecord):
    """The newest safe core set for a target and why each newer release was skipped."""

    version: Literal[2] = 2
    stack: NonEmpty
    engine: Annotated[str, Schema(enum=["sglang", "vllm"])]
    target: NonEmpty
    model: str | None
    platform: Platform
    exclude_newer: Annotated[str, Schema(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")] | None
    """the index as of this time (--exclude-newer); null: as it is now"""
    with_: tuple[str, ...] = field(metadata=key("with"))
    """the requirements added with --with"""
    pins: Pins
    """the chosen set: package -> version"""
    stack_pins: Pins
    """the stack's own pins"""
    not_required: Pins
    """the stack's packages the chosen set does without, and why"""
    overrides: Pins
    """package -> why an upstream pin on it was overridden"""
    skipped: Mapping[str, Mapping[str, SkipDoc | SkipNote]]
    """package -> newer version -> why it is not in the set"""


__all__ = ["SkipDoc", "SkipNote", "UpgradeOutput"]
