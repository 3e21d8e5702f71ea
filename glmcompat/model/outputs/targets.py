"""``glmcompat targets --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from glmcompat.model.outputs.base import (
    JsonRecord,
    NonEmpty,
    Platform,
    Schema,
)


@dataclass(frozen=True, kw_only=True)
class RunsDoc(JsonRecord):
    """Which GPU code runs on the target."""

    sass: NonEmpty
    sass_arch_specific: NonEmpty
    sass_family: NonEmpty
    ptx: NonEmpty
    ptx_arch_specific: NonEmpty


@dataclass(frozen=True, kw_only=True)
class TargetDoc(JsonRecord):
    """One GPU target."""

    name: Annotated[str, Schema(pattern="^sm[0-9]+$")]
    compute_capability: Annotated[str, Schema(pattern="^[0-9]+\\.[0-9]+$")]
    products: Annotated[tuple[NonEmpty, ...], Schema(minItems=1)]
    platforms: Mapping[str, Annotated[tuple[Platform, ...], Schema(minItems=1)]]
    """product -> the machines it ships on"""
    ships_on: Annotated[tuple[Platform, ...], Schema(minItems=1)]
    smem_per_block_optin: Annotated[int, Schema(minimum=1)] | None
    min_cuda: NonEmpty
    runs: RunsDoc
    evidence: NonEmpty
    source: NonEmpty


@dataclass(frozen=True, kw_only=True)
class TargetsOutput(JsonRecord):
    """The GPU targets: capability, products and the machines each ships on, shared memory per block, and which GPU
    code runs there."""

    version: Literal[1] = 1
    targets: tuple[TargetDoc, ...]


__all__ = ["RunsDoc", "TargetDoc", "TargetsOutput"]
