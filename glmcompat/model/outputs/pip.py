"""``glmcompat pip install --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from glmcompat.model.outputs.base import (
    JsonRecord,
    NonEmpty,
    Schema,
)
from glmcompat.model.findings import CauseDoc, FindingDoc


@dataclass(frozen=True, kw_only=True)
class ChangeDoc(JsonRecord):
    """One distribution a plan or an install changes."""

    name: NonEmpty
    old: str | None
    """the installed version (null: newly installed)"""
    new: str | None
    """the version after (null: removed)"""


@dataclass(frozen=True, kw_only=True)
class PipEnvironmentDoc(JsonRecord):
    """The live environment installed into."""

    python: NonEmpty
    prefix: NonEmpty
    python_version: Annotated[str, Schema(pattern="^[0-9]+\\.[0-9]+\\.[0-9]+$")]
    found_by: Annotated[str, Schema(enum=["--python", "VIRTUAL_ENV", ".venv"])]
    problems: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ChosenDoc(JsonRecord):
    """The plan chosen: the installer's own, or a re-plan that keeps the core safe."""

    how: NonEmpty
    requirements_added: tuple[str, ...]
    changes: tuple[ChangeDoc, ...]


@dataclass(frozen=True, kw_only=True)
class PipInstallOutput(JsonRecord):
    """The installer's plan for a live environment, judged with the check rules; the plan chosen (the installer's
    own, or a re-plan that keeps the core safe) and what the install changed, or why no safe plan exists. An
    installer that refuses the request prints its own error instead (exit 2 or 3, no JSON)."""

    version: Literal[1] = 1
    verdict: Annotated[str, Schema(enum=["installed", "would-install", "nothing-to-change", "refused", "no-safe-plan",
                                         "install-failed"])]
    """installed (exit 0); would-install (--dry-run, exit 0); nothing-to-change (exit 0); refused (exit 1: the request's
    own plan breaks the core and the plan that keeps it changes nothing; nothing changed); no-safe-plan (exit 1,
    nothing changed); install-failed (exit 3: the plan was safe, the installer failed; see changed)"""
    environment: PipEnvironmentDoc
    targets: tuple[Annotated[str, Schema(pattern="^sm[0-9]+$")], ...]
    """the targets judged; empty: none known (the rules that hold on every target were run)"""
    targets_from: NonEmpty
    model: str | None
    core: Mapping[str, str]
    """the installed coupled core: package -> version"""
    installer: Annotated[str, Schema(enum=["uv", "pip"])] | None = None
    installer_plan: tuple[ChangeDoc, ...] = ()
    """the installer's own plan (uv pip install --dry-run / pip install --dry-run --report)"""
    breaks: tuple[FindingDoc, ...] = ()
    """the errors the installer's own plan would add"""
    chosen: ChosenDoc | None = None
    warnings: tuple[FindingDoc, ...] = ()
    """warnings the chosen plan adds"""
    already: tuple[FindingDoc, ...] = ()
    """errors the environment had before any change"""
    changed: tuple[ChangeDoc, ...] | None = None
    """what the environment, read again, changed (null: nothing was installed)"""
    drift: tuple[ChangeDoc, ...] = ()
    """where the installed environment differs from the judged plan"""
    cause: CauseDoc | None = None
    """why no safe plan exists (null: one does)"""


__all__ = ["ChangeDoc", "ChosenDoc", "PipEnvironmentDoc", "PipInstallOutput"]
