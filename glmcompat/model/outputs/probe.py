"""The record of one probe of ``glmcompat verify`` (:class:`ProbeDoc`), from the probe process that emits it to the
report that carries it (``verify --json``'s ``probes``). Its own module, standard library only: every probe process
imports it inside the serving container, before any package under test, and loads nothing else of the report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from glmcompat.model.outputs.base import OMIT_NONE, JsonRecord, NonEmpty, Schema

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
    family: str | None = None
    """the more general cause this one is always a case of (its signature row's ``family``), a signature id; null
    where it declares none"""


# A probe's verdict; ``pending``: a static record the parent of ``verify`` judges against the device (``gpu-code:``)
# before it enters the report.
STATUSES = ("passed", "warning", "failed", "skipped")
RECORD_STATUSES = (*STATUSES, "pending")


@dataclass(frozen=True, kw_only=True)
class ProbeDoc(JsonRecord):
    """One probe's record: its verdict and what it found (the fields a probe did not report are absent)."""

    # The one record of a probe, from its probe process to the report: a probe process emits it as one JSON line
    # (:meth:`to_line`, without ``explained``), the parent reads it back (:meth:`parse`), judges it into new records
    # (``dataclasses.replace``) and adds the signatures its text shows (``explained``). ``data`` is what the probe
    # measured, per probe kind (``glmcompat.ops.verify.records``: ``AbiData``, ``GpuCodeData``, ...).

    id: NonEmpty
    status: Annotated[str, Schema(enum=list(STATUSES))]
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

    def to_line(self) -> str:
        """The record as one JSON line (keys sorted; a value JSON cannot hold is written as its ``str``)."""
        return json.dumps(self.to_json(), sort_keys=True, default=str)

    @classmethod
    def parse(cls, rec: Any) -> ProbeDoc | None:
        """The record of ``rec`` (a probe line's JSON), or None where it is not a well-formed one."""
        if not (isinstance(rec, dict) and isinstance(rec.get("id"), str) and rec.get("status") in RECORD_STATUSES
                and isinstance(rec.get("summary", ""), str) and isinstance(rec.get("error", ""), str)
                and isinstance(rec.get("seconds", 0.0), int | float) and not isinstance(rec.get("seconds"), bool)
                and isinstance(rec.get("data", {}), dict) and isinstance(rec.get("warnings", []), list)
                and isinstance(rec.get("absent", ""), str)):
            return None
        w = rec.get("warnings")
        return cls(id=rec["id"], status=rec["status"], summary=rec.get("summary"), seconds=rec.get("seconds"),
                   error=rec.get("error"), data=rec.get("data"), warnings=None if w is None else tuple(w),
                   absent=rec.get("absent"))


__all__ = ["RECORD_STATUSES", "STATUSES", "ExplainedDoc", "ProbeDoc"]
