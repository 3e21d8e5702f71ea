"""``matrix refresh`` end to end (:func:`refresh`): list what the matrix lacks, probe it, write the rows, update
the ``[[model]]`` rows; the report and its text."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from glmcompat.model.outputs.refresh import RefreshOutput
from glmcompat.matrix.curate import add_rows
from glmcompat.matrix.schema import load_matrix
from glmcompat.model.errors import EnvironmentFailure, InputError
from glmcompat.ops.progress import Meter
from glmcompat.ops.refresh.apply import plan_writes
from glmcompat.ops.refresh.common import matrix_files, pmap, show
from glmcompat.ops.refresh.discover import (
    KIND_TABLE,
    Candidate,
    Coverage,
    Listing,
    list_lacking,
    listings_of,
    select_packages,
    tracked_packages,
)
from glmcompat.ops.refresh.models import ModelUpdate, refresh_models
from glmcompat.ops.refresh.options import DEFAULT_JOBS
from glmcompat.ops.refresh.probes import Refresher, ReleaseOutcome

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, Project
    from glmcompat.matrix.schema import Matrix

@dataclass
class RefreshReport:
    matrix: str
    since: str | None
    dry_run: bool
    listings: list[Listing]
    outcomes: list[ReleaseOutcome] = field(default_factory=list)
    written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    models: list[ModelUpdate] = field(default_factory=list)  # [[model]] rows changed in place
    models_bytes: int = 0
    models_failed: str | None = None  # why the [[model]] rows could not be refreshed

    @property
    def lacking(self) -> list[Candidate]:
        return [c for lst in self.listings for c in lst.lacking]

    @property
    def failed(self) -> list[ReleaseOutcome]:
        return [o for o in self.outcomes if o.failed]

    def to_output(self) -> RefreshOutput:
        """``matrix refresh --json``'s document."""
        return RefreshOutput(matrix=self.matrix, since=self.since, dry_run=self.dry_run,
                             packages=tuple(lst.to_output() for lst in self.listings),
                             lacking=tuple(c.to_output() for c in self.lacking),
                             releases=tuple(o.to_output() for o in self.outcomes),
                             written=dict(sorted(self.written.items())), rows_written=sum(self.written.values()),
                             failed=len(self.failed), seconds=round(self.seconds, 3),
                             models=tuple(u.to_output() for u in self.models), models_bytes=self.models_bytes,
                             models_failed=self.models_failed)

    def to_json(self) -> dict[str, Any]:
        return self.to_output().to_json()


def refresh(*, index: IndexClient, cache: Cache, matrix: str | Path | None = None,
            packages: Sequence[str] | None = None, since: date | None = None, dry_run: bool = False,
            jobs: int = DEFAULT_JOBS, progress: bool | None = None, pre: bool = False,
            stream: TextIO | None = None, models: bool = True) -> RefreshReport:
    """List what the matrix lacks and (unless ``dry_run``) probe, write and report (library entry point); with
    ``models``, also update the ``[[model]]`` rows from the newest transformers, sglang and vLLM releases when the
    refresh covers them (:func:`refresh_models`)."""
    t0 = time.perf_counter()
    directory, files = matrix_files(matrix)
    m = load_matrix(files)
    tracked = tracked_packages(m)
    chosen = select_packages(tracked, packages)
    coverage = Coverage(m)

    def page(item: tuple[str, str]) -> Project:
        return index.project(item[0])

    projects = dict(zip([n for n, _ in chosen], pmap(page, chosen, jobs), strict=True))
    listings = [list_lacking(projects[name], name, kind, coverage, since, pre, plat)
                for name, kind, plat in listings_of(tracked, m, chosen)]
    report = RefreshReport(str(directory), since.isoformat() if since else None, dry_run, listings)
    if dry_run:
        report.seconds = time.perf_counter() - t0
        return report
    _refresh_rows(report, index, cache, m, tracked, directory, files, jobs, progress, stream)
    if models:
        try:
            report.models, report.models_bytes = refresh_models(index, cache, matrix_files(matrix)[1],
                                                                [n for n, _ in chosen], jobs=jobs)
        except (EnvironmentFailure, InputError) as e:  # the index failed, or lacks a package: no row changed
            report.models_failed = e.one_line()
    report.seconds = time.perf_counter() - t0
    return report


def _refresh_rows(report: RefreshReport, index: IndexClient, cache: Cache, m: Matrix,
                  tracked: dict[str, str], directory: Path, files: Sequence[Path], jobs: int,
                  progress: bool | None, stream: TextIO | None) -> None:
    """Probe the lacking releases and add their rows (the per-release part of :func:`refresh`)."""
    cands = report.lacking
    if not cands:
        return
    with Meter("refresh", stream=stream, enabled=progress, items=len(cands), unit="release(s)") as meter:
        report.outcomes = Refresher(index, cache, m, jobs=jobs, progress=meter, tracked=tracked).run(cands)
    plan = plan_writes(report.outcomes, directory, files, m)
    if plan:
        added = add_rows(files, [a for a, _ in plan])
        for a, o in plan:
            o.written.append((a.table, str(a.path)))
        report.written = {str(p): len(v) for p, v in added.items()}


def _day(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d") if t else "upload time unknown"


def render_refresh(report: RefreshReport, out: TextIO) -> None:
    w = out.write
    for lst in report.listings:
        if lst.kind == "model":
            w(f"{lst.package}: {lst.on_index} release(s) on the index; no per-release rows (its model support is "
              "judged by [[model]] rows, which a refresh updates in place)\n")
            continue
        on = "" if lst.platform == "x86_64" else f" ({lst.platform} wheels)"
        if not lst.lacking:
            w(f"{lst.package}{on}: nothing lacking from [[{KIND_TABLE[lst.kind]}]] ({lst.on_index} release(s) on the "
              "index)\n")
        else:
            w(f"{lst.package}{on}: {len(lst.lacking)} release(s) lacking from [[{KIND_TABLE[lst.kind]}]]\n")
            if report.dry_run:
                for c in lst.lacking:
                    probed = "  (has [[abi_probe]] rows)" if c.probed else ""
                    w(f"  {c.version:<16} {_day(c.uploaded)}{probed}\n")
        for v, why in lst.skipped:
            w(f"  {v}: skipped, {why}\n")
    if report.dry_run:
        w(f"{len(report.lacking)} release(s) lacking; dry run: nothing probed or written\n")
        return
    for o in report.outcomes:
        src = " (journal)" if o.journaled else ""
        on = "" if o.platform == "x86_64" else f" ({o.platform})"
        w(f"{o.package} {o.version}{on} [[{KIND_TABLE[o.kind]}]]: {o.status}{src}\n")
        for p in o.proved:
            w(f"    proved: {p}\n")
        for u in o.unproved:
            w(f"    not proved: {u}\n")
        if o.failed:
            w(f"    failed: {o.failed}\n")
        for t, f in o.written:
            w(f"    + [[{t}]] -> {f}\n")
    if report.written:
        files = ", ".join(f"{f} (+{n})" for f, n in sorted(report.written.items()))
        w(f"wrote {sum(report.written.values())} row(s): {files}\n")
    else:
        w("nothing new to write\n")
    for mu in report.models:
        ch = ", ".join(f"{k} {show(a)} -> {b}" for k, (a, b) in sorted(mu.changed.items()))
        w(f"[[model]] {mu.model_type}: {ch} -> {mu.file}\n")
    if report.models_failed:
        w(f"[[model]] rows not refreshed: {report.models_failed}\n")
