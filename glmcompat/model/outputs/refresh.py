"""``glmcompat matrix refresh --json`` and ``matrix audit --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from glmcompat.model.outputs.base import Count, JsonRecord, NonEmpty, Schema


Machine = Annotated[str, Schema(enum=["x86_64", "aarch64"], description=(
    "the machine whose wheels are read (a row without platform is about the x86_64 wheel)"))]


@dataclass(frozen=True, kw_only=True)
class PackageReleaseDoc(JsonRecord):
    """A release refresh reads: the package, its version, and the kind of rows it is read for (the fields a lacking
    release's listing and its outcome share, first in both)."""

    package: NonEmpty
    version: NonEmpty
    kind: NonEmpty


@dataclass(frozen=True, kw_only=True)
class CandidateDoc(PackageReleaseDoc):
    """A release on the index that the matrix lacks."""

    table: NonEmpty
    uploaded: Annotated[str, Schema(pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")] | None
    """when its first file was uploaded (null: the index does not say)"""
    probed: bool
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class SkippedReleaseDoc(JsonRecord):
    """A release refresh leaves alone, and why."""

    version: NonEmpty
    reason: NonEmpty


@dataclass(frozen=True, kw_only=True)
class ListingDoc(JsonRecord):
    """One package's releases on the index against the matrix."""

    package: NonEmpty
    kind: NonEmpty
    table: NonEmpty
    on_index: Count
    lacking: tuple[CandidateDoc, ...]
    skipped: tuple[SkippedReleaseDoc, ...]
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class TableRowDoc(JsonRecord):
    """A row for a matrix table, as it is written."""

    table: NonEmpty
    row: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class WrittenToDoc(JsonRecord):
    """Where a row went."""

    table: NonEmpty
    file: NonEmpty


@dataclass(frozen=True, kw_only=True)
class ReleaseDoc(PackageReleaseDoc):
    """What the METADATA and wheels of one lacking release proved, and the rows written for it."""

    status: Annotated[str, Schema(enum=["complete", "partial", "nothing", "failed"])]
    rows: tuple[TableRowDoc, ...]
    proved: tuple[str, ...]
    not_proved: tuple[str, ...]
    failed: str | None
    """why the index failed for it (nothing was written), else null"""
    from_journal: bool
    """its rows come from the journal of an earlier, interrupted run"""
    written: tuple[WrittenToDoc, ...]
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class BoundDoc(JsonRecord):
    """A bound before and after."""

    before: str | None
    after: str | None


@dataclass(frozen=True, kw_only=True)
class ModelUpdateDoc(JsonRecord):
    """A [[model]] row changed in place."""

    model_type: str
    file: str
    changed: Mapping[str, BoundDoc]
    """key -> its bound before and after"""


@dataclass(frozen=True, kw_only=True)
class RefreshOutput(JsonRecord):
    """The releases on the index the matrix lacks, what their METADATA and wheels proved, and the rows written."""

    version: Literal[1] = 1
    kind: Literal["matrix-refresh"] = "matrix-refresh"
    matrix: NonEmpty
    since: str | None
    dry_run: bool
    packages: tuple[ListingDoc, ...]
    lacking: tuple[CandidateDoc, ...]
    releases: tuple[ReleaseDoc, ...]
    written: Mapping[str, Count]
    """file -> rows written"""
    rows_written: Count
    failed: Count
    seconds: Annotated[float, Schema(minimum=0)]
    models: tuple[ModelUpdateDoc, ...]
    """[[model]] rows changed in place: the bounds releases since they were derived add"""
    models_bytes: Count
    """bytes the model probe fetched"""
    models_failed: str | None
    """why the [[model]] rows could not be refreshed (nothing of them was written)"""


@dataclass(frozen=True, kw_only=True)
class AuditCheckDoc(JsonRecord):
    """One machine-checkable claim of the matrix, re-derived."""

    file: NonEmpty
    line: int | None
    table: NonEmpty
    package: NonEmpty
    version: NonEmpty
    field: NonEmpty
    claimed: Any
    found: Any
    status: Annotated[str, Schema(enum=["ok", "drift", "unverifiable", "error"])]
    detail: str
    platform: Machine


@dataclass(frozen=True, kw_only=True)
class AuditSummaryDoc(JsonRecord):
    """How many checks ended in each status."""

    ok: Count
    drift: Count
    unverifiable: Count
    error: Count


@dataclass(frozen=True, kw_only=True)
class AuditOutput(JsonRecord):
    """The matrix's machine-checkable claims re-derived from the index, and the drift found."""

    version: Literal[1] = 1
    kind: Literal["matrix-audit"] = "matrix-audit"
    matrix: NonEmpty
    deep: bool
    checks_total: Count
    checks: tuple[AuditCheckDoc, ...]
    drift: tuple[AuditCheckDoc, ...]
    summary: AuditSummaryDoc
    seconds: Annotated[float, Schema(minimum=0)]


__all__ = ["AuditCheckDoc", "AuditOutput", "AuditSummaryDoc", "BoundDoc", "CandidateDoc", "ListingDoc", "Machine",
           "ModelUpdateDoc", "PackageReleaseDoc", "RefreshOutput", "ReleaseDoc", "SkippedReleaseDoc", "TableRowDoc",
           "WrittenToDoc"]
