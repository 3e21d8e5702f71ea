"""Renderers of a verify report: a table for a terminal (the JSON is the report itself, :class:`VerifyOutput`)."""

from __future__ import annotations

from collections.abc import Iterator

from glmcompat.model.causes import cause_name
from glmcompat.model.outputs.verify import VerifyOutput

_MARK = {"passed": "ok", "warning": "warn", "failed": "FAIL", "skipped": "skip"}


def table(report: VerifyOutput) -> Iterator[str]:
    dev = report.device
    if dev:
        bits = [f"capability {dev.get('capability')}"]
        if dev.get("driver"):
            bits.append(f"driver {dev['driver']}")
        if dev.get("cuda_runtime"):
            bits.append(f"CUDA runtime {dev['cuda_runtime']}")
        head = f"device: {dev.get('name')} ({', '.join(bits)})"
    else:
        head = "device: none"
    head += f"; target: {report.target or 'none'}"
    if report.rank is not None:
        head += f"; rank {report.rank}"
    yield head
    yield ""
    probes = report.probes
    w = max([len(p.id) for p in probes] + [5])
    yield f"{'PROBE':<{w}}  {'':4}  {'TIME':>6}  DETAIL"
    for p in probes:
        secs = p.seconds
        t = f"{secs:5.2f}s" if isinstance(secs, int | float) else ""
        summary = "" if p.summary is None else p.summary
        yield f"{p.id:<{w}}  {_MARK.get(p.status, p.status):4}  {t:>6}  {summary}"
        if p.status in ("failed", "warning"):
            err = (p.error or "").strip()
            for line in [x for x in err.splitlines() if x.strip() != summary.strip()][:4]:
                yield f"{'':<{w}}  {'':4}  {'':6}    {line[:200]}"
            for w_ in (p.warnings or ())[:2]:
                yield f"{'':<{w}}  {'':4}  {'':6}    {w_[:200]}"
            for e in p.explained or ():
                yield f"{'':<{w}}  {'':4}  {'':6}    known: {cause_name(e.id, e.family or '')}"
                yield f"{'':<{w}}  {'':4}  {'':6}    cause: {e.cause}"
                yield f"{'':<{w}}  {'':4}  {'':6}    hint:  {e.remedy}"
    if report.agreement:
        yield ""
        yield "static vs dynamic:"
        for a in report.agreement:
            why = f" ({'; '.join(a.reasons)})" if a.reasons else ""
            aspect = f" [{a.aspect}]" if a.aspect else ""
            yield (f"  {a.package}{aspect}: static {a.static}{why}, dynamic {a.dynamic} -> "
                   f"{'agree' if a.agree else 'DISAGREE'}")
    if report.findings:
        yield ""
        yield "findings:"
        for f in report.findings:
            pk = f" [{', '.join(f.packages)}]" if f.packages else ""
            yield f"  {f.severity}[{f.rule}]{pk}: {f.message}"
            if f.remedy:
                yield f"    hint: {f.remedy}"
    if report.ranks:
        yield ""
        yield "ranks:"
        for r in report.ranks:
            dev_ = r.device or {}
            failed = ", ".join(r.failed) or "-"
            yield f"  rank {r.rank}: {'ok' if r.ok else 'FAILED'} ({dev_.get('name', '?')}); failed: {failed}"
    c = report.counts
    verdict = "ok" if report.ok else "FAILED"
    yield ""
    yield (f"{verdict}: {c.passed} passed, {c.warning} warning, {c.failed} failed, {c.skipped} skipped "
           f"in {report.elapsed_s or 0:.2f}s")
