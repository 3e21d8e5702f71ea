"""Probing the releases a refresh lists: each release's METADATA, its ABI probes against the torch releases in its
window, the GPU code of its main modules, and the rows that what they prove makes -- complete or absent (a row is
kept only when every field it needs is proven and the matrix schema admits it). Each release's outcome is journaled
in glmcompat's cache, keyed by the index, the release's files and :data:`REFRESH_VERSION`, so an interrupted run
continues where it stopped."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.outputs.refresh import ReleaseDoc, TableRowDoc, WrittenToDoc
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.matrix.curate import (
    abi_command,
    arch_command,
    check_row,
    plain_row,
    row_of,
    table_of,
)
from glmcompat.matrix.rows import AbiProbe, ArchProbe, Fact, FamilyRule, Jit, Kernel, Release, Requires, TorchBuild
from glmcompat.model.errors import EnvironmentFailure, InputError
from glmcompat.model.gpu import KernelCode
from glmcompat.ops import wheelprobe
from glmcompat.ops.refresh.common import (
    PLATFORM_TAGS,
    TORCH_PYTHON,
    group_files,
    pick_wheel,
    pmap,
    release_time,
)
from glmcompat.ops.refresh.discover import Candidate, tracked_packages
from glmcompat.ops.refresh.floors import ENGINE_FLOORS, floor_note, read_floors
from glmcompat.ops.refresh.metadata import (
    cuda_of,
    exact_pin,
    release_pins,
    requirements,
    torch_requirement,
)
from glmcompat.ops.refresh.options import DEFAULT_JOBS
from glmcompat.readers.wheelzip import RemoteZip

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, IndexFile
    from glmcompat.matrix.schema import Matrix
    from glmcompat.ops.progress import Meter
    from glmcompat.ops.wheelprobe import AbiResult, ArchResult

REFRESH_VERSION = 5  # of the journal entries: bump when what a release's outcome holds changes
WINDOW_DAYS = 92  # torch releases uploaded this long before an extension are in its window
MAX_WINDOW = 4  # at most this many torch releases per window (the newest)
MAX_SERIES = 6  # a range requirement: the newest release of at most this many admitted torch series


def abi_row(result: wheelprobe.AbiResult) -> AbiProbe:
    """An ``[[abi_probe]]`` row from an :class:`wheelprobe.AbiResult`."""
    missing = tuple(s.symbol for s in result.missing)
    judged = [m for m in result.modules if m.needs_from_torch]
    needs = max((m.needs_from_torch for m in judged), default=0)
    platform = result.platform or "x86_64"
    source = (f"{abi_command(result.package, result.version, result.torch, result.wheel, platform)}: {result.wheel} vs "
              f"{result.torch_wheel}: {len(judged)} module(s) link torch (up to {needs} symbols each), "
              f"{len(missing)} missing")
    return AbiProbe(evidence="abi-probe", source=source, package=result.package, version=result.version,
                    torch=result.torch, compatible=result.ok, missing=len(missing), platform=platform, symbols=missing)


def arch_row(result: wheelprobe.ArchResult) -> ArchProbe:
    """An ``[[arch_probe]]`` row from an :class:`wheelprobe.ArchResult` (its main modules)."""
    mods = result.primary or [m.member for m in result.modules if m.sass or m.ptx]
    platform = result.platform or "x86_64"
    source = (f"{arch_command(result.package, result.version, result.wheel, platform)}: fatbins of {result.wheel} "
              f"({', '.join(mods) or 'no GPU code'})")
    groups = result.labelled_kernel_code()
    # kernels that differ in their code: the per-kernel fact decides (model/gpu.py uncovered)
    code = tuple(KernelCode(g["kernels"], tuple(g["code"]), g["example"]) for g in groups) if len(groups) > 1 else ()
    return ArchProbe(evidence="arch-probe", source=source, package=result.package, version=result.version,
                     sass=tuple(result.sass), platform=platform, ptx=tuple(result.ptx), kernel_code=code)


@dataclass
class ReleaseOutcome:
    """What a refresh proved about one release (rows complete and schema-valid) and what it could not."""

    package: str
    version: str
    kind: str
    rows: list[Fact] = field(default_factory=list)
    proved: list[str] = field(default_factory=list)
    unproved: list[str] = field(default_factory=list)
    failed: str | None = None  # the network or index failed: nothing is written, the next run retries
    journaled: bool = False
    written: list[tuple[str, str]] = field(default_factory=list)  # (table, file) of rows written
    platform: str = "x86_64"

    @property
    def status(self) -> str:
        if self.failed:
            return "failed"
        if not self.rows:
            return "nothing"
        return "partial" if self.unproved else "complete"

    def to_output(self) -> ReleaseDoc:
        return ReleaseDoc(package=self.package, version=self.version, kind=self.kind, platform=self.platform,
                          status=self.status,
                          rows=tuple(TableRowDoc(table=table_of(r), row=plain_row(r)) for r in self.rows),
                          proved=tuple(self.proved), not_proved=tuple(self.unproved), failed=self.failed,
                          from_journal=self.journaled, written=tuple(WrittenToDoc(table=t, file=f) for t, f in self.written))


@dataclass
class Work:
    cand: Candidate
    out: ReleaseOutcome
    wheel: IndexFile | None = None
    python: str = "cp311"
    reqs: list[tuple[Requirement, str]] = field(default_factory=list)
    metadata: str = ""
    torch_req: tuple[SpecifierSet, str] | None = None
    pin: str | None = None
    window: list[str] = field(default_factory=list)
    abi: dict[str, AbiResult] = field(default_factory=dict)
    arch: ArchResult | None = None
    arch_error: str | None = None
    stop: bool = False  # the wheel cannot be read: no probe would succeed


class Refresher:
    """Probes releases and turns what it proves into rows. ``index`` and ``cache`` as for the probes."""

    def __init__(self, index: IndexClient, cache: Cache, matrix: Matrix, *,
                 jobs: int = DEFAULT_JOBS, progress: Meter | None = None,
                 tracked: dict[str, str] | None = None) -> None:
        self.index = index
        self.cache = cache
        self.matrix = matrix
        self.jobs = max(1, jobs)
        self.progress = progress
        self.tracked = tracked or tracked_packages(matrix)
        self._torch_times: dict[str, datetime] | None = None
        self._lock = threading.Lock()

    # -- index ------------------------------------------------------------------------------------
    def torch_times(self) -> dict[str, datetime]:
        """{torch release: upload time} of the final torch releases on the index."""
        with self._lock:
            if self._torch_times is None:
                times = {}
                for v, files in group_files(self.index.project("torch")).items():
                    t = release_time(files)
                    if t is not None and not v.is_prerelease and not v.is_devrelease and v.local is None \
                            and not all(f.yanked for f in files):
                        times[str(v)] = t
                self._torch_times = times
            return self._torch_times

    def window(self, uploaded: datetime | None, spec: SpecifierSet | None) -> list[str]:
        """The torch releases an extension uploaded at ``uploaded`` is probed against (see the module doc).

        A range requirement (``torch>=2.11``) is a claim about every torch it admits, and METADATA is
        written by hand: a probe against the oldest admitted release and the newest of each admitted
        series (at most :data:`MAX_SERIES`) is what shows where the claim is wrong (torchaudio 2.11.1
        declares torch>=2.11 and cannot load next to 2.11.0 or 2.12.x)."""
        if uploaded is None:
            return []
        times = self.torch_times()
        before = sorted(((t, v) for v, t in times.items() if t <= uploaded
                         and (spec is None or spec.contains(v, prereleases=True))), reverse=True)
        recent = [v for t, v in before if t >= uploaded - timedelta(days=WINDOW_DAYS)]
        chosen = set(recent[:MAX_WINDOW] or [v for _, v in before[:1]])
        if spec is not None and str(spec) and before:
            series: dict[tuple[int, ...], Version] = {}
            for _, v in before:
                key = Version(v).release[:2]
                if key not in series or Version(v) > series[key]:
                    series[key] = Version(v)
            chosen |= {str(v) for v in sorted(series.values(), reverse=True)[:MAX_SERIES]}
            chosen.add(min((v for _, v in before), key=Version))
        return sorted(chosen, key=Version)

    # -- journal ----------------------------------------------------------------------------------
    def journal_key(self, cand: Candidate) -> str:
        files = sorted((f.filename, f.sha256 or "", f.yanked) for f in cand.files)
        blob = json.dumps([REFRESH_VERSION, wheelprobe.ABI_VERSION, self.index.base_url, cand.package,
                           cand.kind, cand.version, files, WINDOW_DAYS, MAX_WINDOW, MAX_SERIES, cand.platform])
        return f"refresh-v{REFRESH_VERSION}-{hashlib.sha256(blob.encode()).hexdigest()[:40]}"

    def _from_journal(self, cand: Candidate) -> ReleaseOutcome | None:
        hit = self.cache.get_json(self.journal_key(cand))
        if not isinstance(hit, dict):
            return None
        try:
            return ReleaseOutcome(cand.package, cand.version, cand.kind, [row_of(t, dict(r)) for t, r in hit["rows"]],
                                  list(hit["proved"]), list(hit["unproved"]), journaled=True, platform=cand.platform)
        except (KeyError, TypeError, ValueError):
            return None

    def _journal(self, w: Work) -> None:
        o = w.out
        if o.failed:
            return
        # rows as [key, value] pairs: the cache writes JSON objects with sorted keys, rows keep their order
        self.cache.put_json(self.journal_key(w.cand), {"rows": [[table_of(r), list(plain_row(r).items())]
                                                                for r in o.rows],
                                                       "proved": o.proved,
                                                       "unproved": o.unproved})

    # -- the run ----------------------------------------------------------------------------------
    def run(self, cands: Sequence[Candidate]) -> list[ReleaseOutcome]:
        """Probe every candidate (journaled outcomes are reused); return the outcomes in order."""
        outcomes: dict[int, ReleaseOutcome] = {}
        works: list[tuple[int, Work]] = []
        for i, c in enumerate(cands):
            hit = self._from_journal(c)
            if hit is not None:
                outcomes[i] = hit
                self._tick(f"{c.package} {c.version} (journal)")
            else:
                works.append((i, Work(c, ReleaseOutcome(c.package, c.version, c.kind, platform=c.platform))))
        ws = [w for _, w in works]
        # 1. METADATA, wheel choice and windows (small reads)
        pmap(self._guard(self._read), ws, self.jobs)
        # 2. one probe per torch release first, so that each torch wheel is read once; then the rest
        pairs = [(w, t) for w in ws if not w.stop and not w.out.failed for t in w.window]
        leaders: dict[str, tuple[Work, str]] = {}
        for w, t in pairs:
            leaders.setdefault(t, (w, t))
        pmap(lambda p: self._guard(lambda w: self._abi(w, p[1]))(p[0]), list(leaders.values()), self.jobs)
        # 3. per release: the other probes, GPU code, rows, journal
        pmap(self._guard(self._finish), ws, self.jobs)
        for i, w in works:
            outcomes[i] = w.out
        return [outcomes[i] for i in range(len(cands))]

    def _tick(self, label: str) -> None:
        if self.progress is not None:
            self.progress.advance(label)

    def _note(self, label: str) -> None:
        if self.progress is not None:
            self.progress.note(label)

    def _guard(self, fn: Callable[[Work], None]) -> Callable[[Work], None]:
        def run(w: Work) -> None:
            if w.out.failed:
                return
            try:
                fn(w)
            except EnvironmentFailure as e:
                w.out.failed = e.one_line()
        return run

    # -- step 1 -----------------------------------------------------------------------------------
    def _read(self, w: Work) -> None:
        c, o = w.cand, w.out
        self._note(f"{c.package} {c.version}: METADATA")
        picked = pick_wheel(c.files, c.platform)
        if picked is None:
            names = ", ".join(sorted(f.filename for f in c.files)) or "none"
            yanked = pick_wheel([replace(f, yanked=False) for f in c.files], c.platform) is not None
            why = f"its Linux {c.platform} wheel is yanked" if yanked else \
                f"no wheel for CPython on Linux {c.platform}"
            o.unproved.append(f"{why} (files: {names}): nothing can be read")
            w.stop = True
            return
        w.wheel, w.python = picked
        try:
            text = self.index.wheel_metadata(w.wheel)
        except InputError as e:
            o.unproved.append(f"METADATA of {w.wheel.filename} cannot be read: {e.one_line()}")
            w.stop = True
            return
        w.reqs = requirements(text, w.python, c.platform)
        w.metadata = text
        kind = c.kind
        if kind == "torch":
            return
        if kind == "release":
            self._release_row(w)
            return
        w.torch_req = torch_requirement(w.reqs)
        if kind == "jit":
            return
        if w.torch_req is not None:
            w.pin = exact_pin(w.torch_req[0])
        if w.pin is not None:
            w.window = [w.pin]
        else:
            w.window = self.window(c.uploaded, w.torch_req[0] if w.torch_req else None)
            if not w.window:
                o.unproved.append("no torch release in its window on the index (upload times missing, or none "
                                  "admitted by its requirement): no ABI probe")

    # -- step 2/3: probes -------------------------------------------------------------------------
    def _abi(self, w: Work, torch: str) -> None:
        if torch in w.abi or w.stop:
            return
        c = w.cand
        self._note(f"{c.package} {c.version}: abi vs torch {torch}")
        try:
            w.abi[torch] = wheelprobe.probe_abi(c.package, c.version, torch, index=self.index, cache=self.cache,
                                     python=w.python, platform=PLATFORM_TAGS[c.platform], torch_python=TORCH_PYTHON)
        except InputError as e:
            w.out.unproved.append(f"ABI probe against torch {torch} failed: {e.one_line()}")

    def _arch(self, w: Work) -> None:
        c = w.cand
        self._note(f"{c.package} {c.version}: GPU code")
        try:
            w.arch = wheelprobe.probe_arch(c.package, c.version, index=self.index, cache=self.cache, python=w.python,
                                           platform=PLATFORM_TAGS[c.platform],
                                           select=self.primary_patterns(c.package))
        except InputError as e:
            w.arch_error = e.one_line()
            w.out.unproved.append(f"GPU code could not be read: {w.arch_error}")

    def primary_patterns(self, package: str) -> list[str]:
        for r in self.matrix.primary_modules:
            if r.package == package:
                return list(r.modules)
        return []

    def _finish(self, w: Work) -> None:
        c = w.cand
        if not w.stop:
            for t in w.window:
                self._abi(w, t)
            if c.kind in ("torch", "kernel", "family"):
                self._arch(w)
            build = {"torch": self._torch_rows, "family": self._family_rows, "kernel": self._kernel_rows,
                     "jit": self._jit_rows}.get(c.kind)
            if build is not None and not w.out.failed:
                build(w)
        self._check_rows(w)
        self._journal(w)
        self._tick(f"{c.package} {c.version}")

    # -- rows -------------------------------------------------------------------------------------
    def _metadata_source(self, w: Work, what: str) -> str:
        assert w.wheel is not None
        return f"{w.wheel.filename} METADATA: {what}"

    def _abi_rows(self, w: Work) -> None:
        for t in sorted(w.abi, key=Version):
            r = w.abi[t]
            w.out.rows.append(abi_row(r))
            verdict = "compatible" if r.ok else f"INCOMPATIBLE ({len(r.missing)} missing)"
            w.out.proved.append(f"ABI vs torch {t}: {verdict}")

    def _arch_row(self, w: Work) -> ArchProbe | None:
        a = w.arch
        if a is None:
            return None
        if not (a.sass or a.ptx):
            w.out.proved.append("no GPU code in its main modules")
            return None
        row = arch_row(a)
        w.out.rows.append(row)
        w.out.proved.append(f"GPU code: SASS {', '.join(a.sass) or 'none'}; PTX {', '.join(a.ptx) or 'none'}")
        return row

    def _torch_rows(self, w: Work) -> None:
        o = w.out
        cuda = cuda_of(w.reqs)
        a = w.arch
        if cuda is None:
            o.unproved.append("no CUDA variant label on the wheel and no CUDA runtime pinned in its METADATA: "
                              "its CUDA runtime is not proven; no [[torch]] row")
        else:
            o.proved.append(f"CUDA {cuda[0]} (METADATA: {cuda[1]})")
        if a is not None and not (a.sass or a.ptx):
            o.unproved.append("no GPU code found in torch/lib: no [[torch]] row")
            return
        if cuda is None or a is None or w.wheel is None:
            if a is not None:
                o.proved.append(f"GPU code: SASS {', '.join(a.sass) or 'none'}; PTX {', '.join(a.ptx) or 'none'}")
            return
        o.proved.append(f"GPU code: SASS {', '.join(a.sass) or 'none'}; PTX {', '.join(a.ptx) or 'none'}")
        o.rows.append(TorchBuild(
            evidence="arch-probe",
            source=f"{arch_command('torch', w.cand.version, a.wheel, w.cand.platform)}: fatbins of {a.wheel}; "
                   f"CUDA {cuda[0]}: {w.wheel.filename} METADATA: Requires-Dist {cuda[1]}",
            versions=(w.cand.version,), platform=w.cand.platform, cuda=cuda[0], sass=tuple(a.sass),
            ptx=tuple(a.ptx)))

    def _family_rows(self, w: Work) -> None:
        o = w.out
        if w.torch_req is None:
            o.unproved.append("its METADATA has no torch requirement: the torch it was built for is not proven; "
                              "no [[family]] pair")
        else:
            spec, raw = w.torch_req
            if not str(spec):
                o.unproved.append(f"its METADATA names torch without a version ({raw!r}): no [[family]] pair")
            else:
                source = self._metadata_source(w, f"Requires-Dist {raw}")
                runtime = self._cudart(w)
                if runtime is not None:
                    source += f"; CUDA runtime (cudart): {runtime[1]}"
                else:
                    o.unproved.append("the CUDA runtime its modules link is not read (no ABI probe succeeded): "
                                      "no cudart")
                cudart = {w.cand.version: runtime[0]} if runtime is not None else {}
                o.rows.append(FamilyRule(evidence="metadata", source=source, package=w.cand.package,
                                         pairs=MappingProxyType({w.cand.version: str(spec)}),
                                         cudart=MappingProxyType(cudart)))
                o.proved.append(f"torch{spec} (METADATA)")
        self._abi_rows(w)
        self._arch_row(w)

    def _kernel_rows(self, w: Work) -> None:
        o = w.out
        a = w.arch
        if w.pin is None:
            if w.torch_req is None:
                o.unproved.append("its METADATA has no torch requirement: the torch it was built against is not "
                                  "proven; no [[kernel]] row (the [[abi_probe]] rows say which torches it loads with)")
            else:
                o.unproved.append(f"its torch requirement {w.torch_req[1]!r} is not an exact pin: the torch it was "
                                  "built against is not proven; no [[kernel]] row")
        elif a is None:
            o.unproved.append(f"METADATA pins torch=={w.pin}, but without its GPU code the [[kernel]] row would be "
                              "half a row: not written")
            o.proved.append(f"torch=={w.pin} (METADATA)")
        else:
            assert w.torch_req is not None
            source = self._metadata_source(w, f"Requires-Dist {w.torch_req[1]}")
            cuda = self._kernel_cuda(w)
            if cuda is None:
                o.proved.append(f"torch=={w.pin} (METADATA)")
                o.unproved.append(f"METADATA pins torch=={w.pin}, but the CUDA runtime it was built with is not proven "
                                  "(no CUDA pin in its METADATA, and its modules' libcudart major is not that of the "
                                  "torch it pins): without it the [[kernel]] row would be half a row: not written")
            else:
                source += f"; CUDA {cuda[0]}: {cuda[1]}"
                code = bool(a.sass or a.ptx)  # without GPU code the row leaves sass and ptx out (not curated)
                if code:
                    source += f"; GPU code: {arch_command(w.cand.package, w.cand.version, a.wheel, w.cand.platform)}"
                o.rows.append(Kernel(evidence="metadata", source=source, package=w.cand.package,
                                     versions=(w.cand.version,), torch=w.pin, platform=w.cand.platform, cuda=cuda[0],
                                     sass=tuple(a.sass) if code else None, ptx=tuple(a.ptx) if code else None))
                o.proved.append(f"torch=={w.pin} (METADATA); CUDA {cuda[0]}")
        self._abi_rows(w)
        self._arch_row(w)

    def _cudart(self, w: Work) -> tuple[int, str] | None:
        """(major, what shows it) of the CUDA runtime the release's modules link (DT_NEEDED libcudart.so.N,
        read by its ABI probes; 0: none links one); None when no probe read the modules or they disagree."""
        r = next((w.abi[t] for t in sorted(w.abi, key=Version)), None)
        if r is None:
            return None
        majors = sorted({m for mod in r.modules for m in mod.cuda_majors})
        if len(majors) > 1:
            return None
        if not majors:
            return 0, f"no shared object of {r.wheel} has a DT_NEEDED libcudart.so.N"
        return majors[0], f"DT_NEEDED libcudart.so.{majors[0]} of the shared objects of {r.wheel}"

    def _kernel_cuda(self, w: Work) -> tuple[str, str] | None:
        """(CUDA 'X.Y', what shows it) of a kernel release: a CUDA runtime pinned in its METADATA, else the
        major its modules link (DT_NEEDED libcudart.so.N) with the minor of the torch it pins exactly (that
        torch wheel's METADATA pins its CUDA runtime), when the two majors agree; None otherwise."""
        own = cuda_of(w.reqs)
        if own is not None:
            return own[0], f"METADATA Requires-Dist {own[1]}"
        runtime = self._cudart(w)
        if runtime is None or runtime[0] == 0 or w.pin is None:
            return None
        try:
            files = group_files(self.index.project("torch")).get(Version(w.pin), [])
            picked = pick_wheel(files, w.cand.platform)
            if picked is None:
                return None
            torch_cuda = cuda_of(requirements(self.index.wheel_metadata(picked[0]), picked[1], w.cand.platform))
        except InputError:
            return None
        if torch_cuda is None or Version(torch_cuda[0]).major != runtime[0]:
            return None
        return torch_cuda[0], (f"{runtime[1]} (CUDA {runtime[0]}; the wheel states no minor: {torch_cuda[0]} is that "
                               f"of the torch it pins, {picked[0].filename} METADATA Requires-Dist {torch_cuda[1]})")

    def _jit_rows(self, w: Work) -> None:
        o = w.out
        assert w.wheel is not None
        reader = HttpRangeReader(self.index.client, w.wheel.url, name=w.wheel.filename, size=w.wheel.size,
                                 retries=self.index.retries, backoff=self.index.backoff)
        try:
            members = wheelprobe.elf_members(RemoteZip(reader))
        except InputError as e:
            o.unproved.append(f"{w.wheel.filename} cannot be read: {e.one_line()}")
            return
        torch_note = f"; METADATA: Requires-Dist {w.torch_req[1]}" if w.torch_req else ""
        versions = f"=={w.cand.version}"
        if not members:
            o.rows.append(Jit(evidence="metadata", package=w.cand.package, versions=versions,
                              source=f"{w.wheel.filename} holds no shared object (its kernels are compiled or loaded "
                                     f"at run time, not linked against torch){torch_note}"))
            o.proved.append("no shared object in the wheel: does not link the torch C++ ABI")
            return
        window = self.window(w.cand.uploaded, None)
        if not window:
            o.unproved.append(f"{len(members)} shared object(s) and no torch release to probe them against: "
                              "no [[jit]] row")
            return
        t = window[-1]
        self._abi(w, t)
        r = w.abi.get(t)
        if r is None:
            return
        if all(m.needs_from_torch == 0 for m in r.modules):
            o.rows.append(Jit(evidence="abi-probe", package=w.cand.package, versions=versions,
                              source=f"{abi_command(w.cand.package, w.cand.version, t, r.wheel)}: no module of "
                                     f"{r.wheel} needs a symbol from torch{torch_note}"))
            o.proved.append(f"{len(members)} shared object(s), none needs a symbol from torch")
        else:
            o.unproved.append("its shared objects link torch: not a JIT release; record it in [[kernel]] by hand")
            self._abi_rows(w)

    def _release_row(self, w: Work) -> None:
        o = w.out
        keep = [n for n in self.tracked if n != w.cand.package]
        # the core may sit under the extra its install instructions name (sglang[srt], pulled in by sglang[all])
        reqs, extras = release_pins(w.metadata, w.cand.package, keep, w.python)
        what = "Requires-Dist " + (", ".join(reqs) or "(none of the tracked packages)")
        if extras and reqs:
            what = (f"Requires-Dist with extra {extras[0]!r}"
                    + (f" (and {', '.join(repr(x) for x in extras[1:])}, which it requires)" if extras[1:] else "")
                    + f": {', '.join(reqs)}")
        o.rows.append(Release(evidence="metadata", source=self._metadata_source(w, what), package=w.cand.package,
                              version=w.cand.version, requires=tuple(reqs)))
        o.proved.append(f"pins {', '.join(reqs) or 'none of the tracked packages'} (METADATA)")
        if w.cand.package in ENGINE_FLOORS:
            self._floor_rows(w)

    def _floor_rows(self, w: Work) -> None:
        """``[[requires]]`` rows of the floors the release's engine asserts (read from its own file by range
        requests: the central directory and that member)."""
        o = w.out
        assert w.wheel is not None
        member = ENGINE_FLOORS[w.cand.package]
        try:
            floors = read_floors(self.index, self.cache, w.wheel, member)
        except InputError as e:
            o.unproved.append(f"floors: {member} of {w.wheel.filename} cannot be read: {e.one_line()}")
            return
        if floors is None:
            o.proved.append(f"floors: {w.wheel.filename} has no {member} (none recorded)")
            return
        for dist, version, cond, written in floors:
            o.rows.append(Requires(
                evidence="metadata", package=w.cand.package, versions=f"=={w.cand.version}",
                requires=f"{dist}>={version}",
                source=f"{w.wheel.filename}: {member} assert_pkg_version(\"{written}\", \"{version}\")"
                       + floor_note(cond)))
        o.proved.append(f"floors {', '.join(f'{d}>={v}' for d, v, _, _ in floors) or 'none'} ({member})")

    def _check_rows(self, w: Work) -> None:
        """Drop rows the schema rejects (a bug, or an index answer no schema admits): never a half row."""
        keep = []
        for row in w.out.rows:
            why = check_row(row)
            if why is not None:
                w.out.unproved.append(f"[[{table_of(row)}]] row rejected by the matrix schema ({why}): not written")
                continue
            keep.append(row)
        w.out.rows = keep

