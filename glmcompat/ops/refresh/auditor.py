"""``matrix audit``: re-derive every machine-checkable row from the wheels of its own platform -- METADATA pins of
``[[family]]``, ``[[kernel]]`` and ``[[release]]`` rows whose evidence is ``metadata``, the CUDA runtime of
``[[torch]]`` rows, and with ``deep`` ``[[abi_probe]]`` / ``[[arch_probe]]`` rows by re-running the probes and the
``cuda`` of ``[[kernel]]`` rows against the toolkit that built their cubins (the first cubin of each main module, read
from its header: a few MB per wheel by range requests, :func:`glmcompat.ops.wheelprobe.probe_toolkit`) -- and report
drift (row, claimed, found)."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from glmcompat.model.outputs.refresh import AuditCheckDoc, AuditOutput, AuditSummaryDoc
from glmcompat.matrix.curate import abi_command, arch_command
from glmcompat.matrix.rows import AbiProbe, Fact
from glmcompat.matrix.schema import load_file, load_matrix, locate_row
from glmcompat.model.errors import EnvironmentFailure, GlmcompatError
from glmcompat.ops.refresh.common import (
    PLATFORM_TAGS,
    TORCH_PYTHON,
    group_files,
    matrix_files,
    pick_wheel,
    pmap,
    show,
)
from glmcompat.ops.refresh.discover import select_packages, tracked_packages
from glmcompat.ops.refresh.metadata import cuda_of, release_pins, requirements, same_spec, torch_requirement
from glmcompat.ops.refresh.options import DEFAULT_JOBS
from glmcompat.ops.wheelprobe import probe_abi, probe_arch, probe_toolkit

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, IndexFile

CUBIN_CUDA = "cuda (cubins)"  # the audit's claim about a kernel row's CUDA toolkit, read from its cubins

@dataclass
class Check:
    file: str
    line: int | None
    table: str
    package: str
    version: str
    what: str  # the claim checked: "torch", "cuda", "requires", "vs torch 2.9.1", "gpu code"
    claimed: Any
    found: Any = None
    status: str = "pending"  # ok | drift | unverifiable | error
    detail: str = ""
    row: Fact | None = field(default=None, repr=False)  # the row that claims it
    platform: str = "x86_64"  # the machine whose wheels the row is about, and which are read

    @property
    def where(self) -> str:
        f = self.file
        try:
            rel = os.path.relpath(f)
            f = rel if not rel.startswith("..") else f
        except ValueError:
            pass
        return f"{f}:{self.line}" if self.line else f

    def to_output(self) -> AuditCheckDoc:
        return AuditCheckDoc(file=self.file, line=self.line, table=self.table, package=self.package,
                             version=self.version, platform=self.platform, field=self.what, claimed=self.claimed,
                             found=self.found, status=self.status, detail=self.detail)


def audit_checks(files: Sequence[Path], *, deep: bool = False, packages: Sequence[str] | None = None) -> list[Check]:
    """Every machine-checkable claim of the matrix files, in file order (pure: reads only the files)."""
    wanted = {str(canonicalize_name(p)) for p in packages} if packages else None
    out: list[Check] = []
    for path in files:
        mf, text = load_file(path)

        def add(table: str, i: int, pkg: str, ver: str, fld: str, claimed: Any, row: Fact,
                key: str | None = None, path: Path = path, text: str = text) -> None:
            if wanted is None or pkg in wanted:
                out.append(Check(str(path), locate_row(text, table, i, key), table, pkg, ver, fld, claimed, row=row,
                                 platform=str(getattr(row, "platform", None) or "x86_64")))

        for i, r in enumerate(mf.family):
            if r.evidence == "metadata":
                for v, spec in r.pairs.items():
                    add("family", i, r.package, v, "torch", spec, r, v)
        for i, r in enumerate(getattr(mf, "kernel", ())):
            if r.evidence == "metadata" and not r.variant:
                for v in r.versions:
                    add("kernel", i, r.package, v, "torch", f"=={r.torch}", r, "torch")
        for i, r in enumerate(getattr(mf, "release", ())):
            if r.evidence == "metadata":
                add("release", i, r.package, r.version, "requires", sorted(r.requires), r, "requires")
        for i, r in enumerate(getattr(mf, "torch", ())):
            if not r.variant:
                for v in r.versions:
                    add("torch", i, "torch", v, "cuda", r.cuda, r, "cuda")
        if deep:
            for i, r in enumerate(getattr(mf, "kernel", ())):
                if r.cuda and not r.variant:  # a labelled variant is not on the package index
                    for v in r.versions:
                        add("kernel", i, r.package, v, CUBIN_CUDA, r.cuda, r, "cuda")
            for i, r in enumerate(getattr(mf, "abi_probe", ())):
                add("abi_probe", i, r.package, r.version, f"vs torch {r.torch}",
                    {"compatible": r.compatible, "missing": r.missing}, r, "compatible")
            for i, r in enumerate(getattr(mf, "arch_probe", ())):
                if not r.variant:
                    add("arch_probe", i, r.package, r.version, "gpu code",
                        {"sass": list(r.sass), "ptx": list(r.ptx)}, r, "sass")
    return out


class Auditor:
    def __init__(self, index: IndexClient, cache: Cache, tracked: dict[str, str],
                 patterns: dict[str, list[str]]) -> None:
        self.index = index
        self.cache = cache
        self.tracked = tracked
        self.patterns = patterns

    def _metadata(self, pkg: str, version: str, platform: str = "x86_64") -> tuple[IndexFile, str, str]:
        """(wheel, its Python tag, its requirements on Linux ``platform``): the wheel the row is about."""
        project = self.index.project(pkg)
        files = group_files(project).get(Version(version), [])
        if not files:
            raise NotOnIndex(f"{pkg} {version} is not on the index")
        picked = pick_wheel(files, platform)
        if picked is None:
            raise NotOnIndex(f"{pkg} {version} has no wheel for CPython on Linux {platform}")
        wheel, py = picked
        return wheel, py, self.index.wheel_metadata(wheel)

    def run(self, c: Check) -> None:
        try:
            self._run(c)
        except NotOnIndex as e:
            c.status, c.found, c.detail = "drift", None, str(e)
        except EnvironmentFailure:
            raise
        except GlmcompatError as e:
            c.status, c.detail = "error", e.one_line()

    def _run(self, c: Check) -> None:
        if c.what == CUBIN_CUDA:
            self._cubin_cuda(c)
            return
        if c.table in ("family", "kernel", "release", "torch"):
            wheel, py, text = self._metadata(c.package, c.version, c.platform)
            reqs = requirements(text, py, c.platform)
            c.detail = f"{wheel.filename} METADATA"
            if c.table == "torch":
                cuda = cuda_of(reqs)
                if cuda is None and c.claimed is None:  # a CPU-only build (torch's aarch64 wheels to 2.10.0)
                    c.status, c.detail = "ok", f"{wheel.filename}: no CUDA runtime pinned in METADATA (a CPU-only build)"
                    return
                if cuda is None:
                    c.status, c.detail = "unverifiable", f"{wheel.filename}: no CUDA runtime pinned in METADATA"
                    return
                c.found = cuda[0]
                c.status = "ok" if cuda[0] == c.claimed else "drift"
                return
            if c.table == "release":
                claimed_names = {str(canonicalize_name(Requirement(x).name)) for x in c.claimed}
                keep = set(self.tracked) | claimed_names
                keep.discard(c.package)
                found, _ = release_pins(text, c.package, sorted(keep), py)
                c.found = found
                c.status = "ok" if _req_map(found) == _req_map(c.claimed) else "drift"
                return
            tr = torch_requirement(reqs)
            c.found = str(tr[0]) if tr else None
            if tr is None:
                c.status = "drift"
                c.detail += ": no torch requirement"
                return
            c.status = "ok" if same_spec(str(tr[0]), c.claimed) else "drift"
            return
        if c.table == "abi_probe":
            assert isinstance(c.row, AbiProbe)
            torch = c.row.torch
            r = probe_abi(c.package, c.version, torch, index=self.index, cache=self.cache, torch_python=TORCH_PYTHON,
                          platform=PLATFORM_TAGS[c.platform])
            c.found = {"compatible": r.ok, "missing": len(r.missing)}
            c.detail = abi_command(c.package, c.version, torch, r.wheel, c.platform)
            c.status = "ok" if c.found == c.claimed else "drift"
            return
        if c.table == "arch_probe":
            a = probe_arch(c.package, c.version, index=self.index, cache=self.cache,
                           platform=PLATFORM_TAGS[c.platform], select=self.patterns.get(c.package, []))
            c.found = {"sass": list(a.sass), "ptx": list(a.ptx)}
            c.detail = arch_command(c.package, c.version, a.wheel, c.platform)
            c.status = "ok" if (set(a.sass), set(a.ptx)) == (set(c.claimed["sass"]), set(c.claimed["ptx"])) else "drift"
            return
        c.status = "unverifiable"  # pragma: no cover


    def _cubin_cuda(self, c: Check) -> None:
        """A kernel row's ``cuda`` against the CUDA release that built the cubins of the release's main modules
        (as :func:`glmcompat.ops.wheelprobe.kernel_cuda_drift` judges a row: one release and no other)."""
        r = probe_toolkit(c.package, c.version, index=self.index, cache=self.cache,
                          platform=PLATFORM_TAGS[c.platform], modules=self.patterns.get(c.package) or None)
        c.found = r.toolkits
        read = f"{r.bytes_fetched} bytes read" if r.bytes_fetched else "cached"
        c.detail = f"{r.wheel}: the toolkit in its cubins' headers, {read} (`" \
            + arch_command(c.package, c.version, r.wheel, c.platform) + " --json`: toolkits)"
        if not r.toolkits:
            c.status = "unverifiable"
            c.detail = f"{r.wheel}: no cubin in its main modules"
            return
        c.status = "ok" if r.toolkits == [c.claimed] else "drift"


class NotOnIndex(Exception):
    pass


def _req_map(reqs: Iterable[str]) -> dict[str, frozenset[Any]]:
    out: dict[str, frozenset[Any]] = {}
    for x in reqs:
        r = Requirement(x)
        out[str(canonicalize_name(r.name))] = frozenset(r.specifier)
    return out


@dataclass
class AuditReport:
    matrix: str
    checks: list[Check]
    total: int
    deep: bool
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)

    def to_output(self) -> AuditOutput:
        """``matrix audit --json``'s document."""
        return AuditOutput(matrix=self.matrix, deep=self.deep, checks_total=self.total,
                           checks=tuple(c.to_output() for c in self.checks),
                           drift=tuple(c.to_output() for c in self.checks if c.status == "drift"),
                           summary=AuditSummaryDoc(ok=self.count("ok"), drift=self.count("drift"),
                                                   unverifiable=self.count("unverifiable"), error=self.count("error")),
                           seconds=round(self.seconds, 3))

    def to_json(self) -> dict[str, Any]:
        return self.to_output().to_json()


def audit(*, index: IndexClient, cache: Cache, matrix: str | Path | None = None,
          packages: Sequence[str] | None = None, sample: int | None = None, seed: int = 0, deep: bool = False,
          jobs: int = DEFAULT_JOBS) -> AuditReport:
    t0 = time.perf_counter()
    directory, files = matrix_files(matrix)
    m = load_matrix(files)
    tracked = tracked_packages(m)
    if packages:
        probed = {**{r.package: "probe" for r in m.abi_probe}, **{r.package: "probe" for r in m.arch_probe}}
        select_packages({**tracked, **probed}, packages)  # an unknown name is an error (exit 2)
    checks = audit_checks(files, deep=deep, packages=packages)
    total = len(checks)
    if sample is not None and sample < total:
        picked = set(random.Random(seed).sample(range(total), sample))
        checks = [c for i, c in enumerate(checks) if i in picked]
    patterns = {r.package: list(r.modules) for r in m.primary_modules}
    auditor = Auditor(index, cache, tracked, patterns)
    pmap(auditor.run, checks, jobs)
    return AuditReport(str(directory), checks, total, deep, time.perf_counter() - t0)


def render_audit(report: AuditReport, out: TextIO) -> None:
    w = out.write
    for c in report.checks:
        if c.status == "ok":
            continue
        head = {"drift": "DRIFT", "error": "ERROR", "unverifiable": "UNVERIFIABLE"}.get(c.status, c.status.upper())
        on = "" if c.platform == "x86_64" else f" ({c.platform})"
        w(f"{head} {c.where} [[{c.table}]] {c.package} {c.version}{on} {c.what}: claimed {show(c.claimed)}, "
          f"found {show(c.found)}" + (f" ({c.detail})" if c.detail else "") + "\n")
    sampled = f" (a sample of {len(report.checks)} of {report.total})" if len(report.checks) < report.total else ""
    w(f"{len(report.checks)} claim(s) checked{sampled}: {report.count('ok')} ok, {report.count('drift')} drift, "
      f"{report.count('unverifiable')} unverifiable, {report.count('error')} error\n")
