"""``glmcompat matrix validate|show|schema|probe|refresh|audit`` and ``glmcompat targets``."""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from glmcompat.cli.commands._common import (
    Output,
    add_index_options,
    add_output_options,
    add_python_option,
    dump_json,
    fetch_finished,
    fetch_started,
    index_client,
    output,
    paint_line,
    paint_text,
    parser,
    python_tag,
    shown_url,
)
from glmcompat.edges.cache import Cache, NoCache
from glmcompat.matrix.rows import AbiProbe, ArchProbe, to_plain
from glmcompat.matrix.store import default_matrix_dir
from glmcompat.model.errors import EnvironmentFailure, InputError
from glmcompat.ops import refresh as refresh_ops
from glmcompat.ops.progress import Meter, watch
from glmcompat.ops.refresh.options import DEFAULT_JOBS
from glmcompat.ops.wheelprobe import parse_pin, probe_abi, probe_arch

if TYPE_CHECKING:
    from glmcompat.model.outputs.targets import TargetDoc


def matrix_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("matrix", "Validate, show, describe or extend the compatibility matrix.")
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    v = sub.add_parser("validate", help="validate matrix files (default: the shipped matrix)")
    v.add_argument("files", nargs="*", metavar="FILE")
    add_output_options(v)
    s = sub.add_parser("show", help="print the matrix")
    s.add_argument("--json", action="store_true", help="versioned JSON")
    s.add_argument("--matrix", action="append", metavar="PATH", help="matrix file or directory (repeatable)")
    add_output_options(s)
    add_output_options(sub.add_parser("schema", help="print the JSON Schema of a matrix file"))
    pr = sub.add_parser("probe", help="probe wheels and record the result in the matrix as evidence")
    configure_probe(pr)
    add_output_options(pr)
    # refresh and audit: their own options here, the index options and -q/-v/--color from _common, like every other
    # command's
    rf = sub.add_parser("refresh", help="add the releases on the index that the matrix lacks, with what their "
                        "wheels prove")
    configure_refresh(rf)
    au = sub.add_parser("audit", help="re-derive the matrix's machine-checkable rows from the index and report drift")
    configure_audit(au)
    for sp in (rf, au):
        add_index_options(sp)
        add_output_options(sp)
    return p


def main(name: str, argv: Sequence[str]) -> int:
    if name == "targets":
        return _targets(argv)
    p = matrix_parser()
    args = p.parse_args(list(argv))
    o = output(args)
    if args.action in ("refresh", "audit"):
        return _refresh_or_audit(args, o)
    if args.action == "validate":
        from glmcompat.matrix.schema import load_matrix  # lazy: the schema (pydantic), not for `matrix --help`

        m = load_matrix(args.files or None)
        n = sum(len(getattr(m, t)) for t in _tables())
        print(paint_line(f"ok: {len(m.files)} file(s), {n} facts", o.color), file=o.out)
        return 0
    if args.action == "schema":
        from glmcompat.matrix.schema import matrix_json_schema  # lazy: the schema (pydantic), not for `matrix --help`

        dump_json(matrix_json_schema(), o.out)
        return 0
    if args.action == "probe":
        return run_probe(args, o)
    from glmcompat.matrix.schema import load_matrix  # lazy: the schema (pydantic), not for `matrix --help`

    m = load_matrix(args.matrix)
    if args.json:
        from glmcompat.matrix.schema import SCHEMA_VERSION  # lazy: the schema (pydantic), not for `matrix --help`

        data: dict[str, Any] = {"version": SCHEMA_VERSION}
        for t in _tables():
            data[t] = [to_plain(t, r) for r in getattr(m, t)]
        dump_json(data, o.out)
        return 0
    _show_text(m, o.out)
    return 0


def configure_refresh(p: argparse.ArgumentParser) -> None:
    """The options of ``matrix refresh`` (:func:`glmcompat.ops.refresh.refresh`'s), before the shared ones."""
    jobs = DEFAULT_JOBS
    p.add_argument("--package", action="append", metavar="NAME", help="refresh only this package (repeatable; "
                   "default: every package the matrix tracks)")
    p.add_argument("--since", default=None, metavar="DATE", help="only releases uploaded on or after DATE (YYYY-MM-DD)")
    p.add_argument("--dry-run", action="store_true", help="list the releases the matrix lacks; probe and write nothing")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    p.add_argument("--matrix", default=None, metavar="DIR",
                   help="the matrix directory to extend (default: the shipped one)")
    p.add_argument("--jobs", type=int, default=jobs, metavar="N",
                   help=f"parallel downloads (HTTP connections; default {jobs})")
    p.add_argument("--pre", action="store_true", help="include pre-releases and dev releases")


def configure_audit(p: argparse.ArgumentParser) -> None:
    """The options of ``matrix audit`` (:func:`glmcompat.ops.refresh.audit`'s), before the shared ones."""
    jobs = DEFAULT_JOBS
    p.add_argument("--package", action="append", metavar="NAME", help="audit only this package's rows (repeatable)")
    p.add_argument("--sample", type=int, default=None, metavar="N",
                   help="check N claims chosen at random (--seed)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed of --sample (default 0)")
    p.add_argument("--deep", action="store_true",
                   help="also re-run the probes behind [[abi_probe]] and [[arch_probe]] rows")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    p.add_argument("--matrix", default=None, metavar="DIR", help="the matrix directory (default: the shipped one)")
    p.add_argument("--jobs", type=int, default=jobs, metavar="N", help=f"parallel downloads (default {jobs})")


def parse_since(text: str | None) -> date | None:
    """``--since``: a date (YYYY-MM-DD)."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"invalid --since date {text!r} (expected YYYY-MM-DD)") from None


def check_jobs(jobs: int) -> int:
    """``--jobs``: 1 to 32 connections."""
    if not 1 <= jobs <= 32:
        raise InputError(f"--jobs {jobs} is out of range (1..32)")
    return jobs


def _refresh_or_audit(args: argparse.Namespace, o: Output) -> int:
    """``matrix refresh`` / ``matrix audit`` (:mod:`glmcompat.ops.refresh`'s library functions) with the shared
    options passed explicitly: ``--index-url`` to the index client, ``--no-cache`` as no cache at all, ``-q`` as no
    progress; the report is rendered into text here and coloured with ``--color``."""
    rf = refresh_ops
    if o.verbose:
        o.detail(f"matrix {args.action}: index {shown_url(args.index_url)}" + ("; no cache" if args.no_cache else ""))
    jobs = check_jobs(args.jobs)
    cache = NoCache() if args.no_cache else Cache()
    text = io.StringIO()
    report: Any
    if args.action == "refresh":
        since = parse_since(args.since)
        with rf.make_index(args.index_url, jobs, cache) as index:
            report = rf.refresh(index=index, cache=cache, matrix=args.matrix, packages=args.package, since=since,
                                dry_run=args.dry_run, jobs=jobs, pre=args.pre, progress=False if o.quiet else None)
        rc = EnvironmentFailure.exit_code if report.failed else 0
        if not args.json:
            rf.render_refresh(report, text)
            if report.failed:
                o.err.write(o.line(f"error: the index failed for {len(report.failed)} release(s); nothing was "
                                        f"written for them (run again to continue): {report.failed[0].failed}") + "\n")
    else:
        if args.sample is not None and args.sample < 1:
            raise InputError(f"--sample {args.sample}: expected a positive number")
        with rf.make_index(args.index_url, jobs, cache) as index, \
                Meter("auditing the matrix", quiet=o.quiet, unit="request(s)") as meter:
            stop = watch(index.client, meter)
            try:
                report = rf.audit(index=index, cache=cache, matrix=args.matrix, packages=args.package,
                                  sample=args.sample, seed=args.seed, deep=args.deep, jobs=jobs)
            finally:
                stop()
        rc = 1 if report.count("drift") else 0
        if not args.json:
            rf.render_audit(report, text)
    if args.json:
        dump_json(report.to_json(), o.out)
    else:
        o.out.write(paint_text(text.getvalue(), o.color))
    return rc


def _tables() -> tuple[str, ...]:
    from glmcompat.matrix.schema import TABLES  # lazy: the schema (pydantic), not for `matrix --help`

    return TABLES


def _stack_lines(s: Any) -> str:
    pins = " ".join(f"{k}=={v}" for k, v in sorted(s.pins.items()))
    return f"  {s.name} (targets: {', '.join(s.targets)})\n      {pins}\n" + "".join(
        f"      override: {k}=={v}\n" for k, v in sorted(s.overrides.items()))


# `matrix show`'s sections: heading, table, the lines of one row
_SECTIONS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("Kernel wheels (built against torch, CUDA, GPU code)", "kernel", lambda k: (
        f"  {k.package} {', '.join(k.versions)}\n      torch {k.torch}  CUDA {k.cuda or '?'}  "
        f"SASS {', '.join(k.sass) if k.sass else '?'}  PTX {', '.join(k.ptx) if k.ptx else 'none'}  [{k.evidence}]\n")),
    ("ABI probes", "abi_probe", lambda a: (
        f"  {a.package} {a.version} vs torch {a.torch}: "
        f"{'compatible' if a.compatible else f'INCOMPATIBLE ({a.missing} missing)'}  [{a.evidence}]\n")),
    ("torch default wheels", "torch",
     lambda t: f"  torch {', '.join(t.versions)}: CUDA {t.cuda}, SASS {', '.join(t.sass)}  [{t.evidence}]\n"),
    ("Family pairs", "family",
     lambda f: "".join(f"  {f.package} {v} -> torch{spec}  [{f.evidence}]\n" for v, spec in f.pairs.items())),
    ("Equal-version pairs", "equal_version", lambda e: f"  {e.packages[0]} == {e.packages[1]}  [{e.evidence}]\n"),
    ("Models", "model",
     lambda mo: f"  {mo.model_type}: transformers{mo.transformers}, sglang{mo.sglang or ''}  [{mo.evidence}]\n"),
    ("Target requirements", "target_requirement",
     lambda r: f"  {', '.join(r.targets)}: {r.package}{r.specifier} ({r.reason})  [{r.evidence}]\n"),
    ("Stacks", "stack", _stack_lines),
)


def _show_text(m: Any, stream: TextIO) -> None:
    for i, (heading, table, lines) in enumerate(_SECTIONS):
        rows = getattr(m, table)
        if table == "kernel":
            rows = sorted(rows, key=lambda k: (k.package, k.versions[0]))
        stream.write(("\n" if i else "") + heading + ":\n" + "".join(lines(r) for r in rows))


def targets_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("targets", "List the GPU targets and the rule for which GPU code runs on each.")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    p.add_argument("--matrix", action="append", metavar="PATH", help="matrix file or directory (repeatable)")
    add_output_options(p)
    return p


def _target_doc(t: Any) -> TargetDoc:
    """One target of ``targets --json`` (and of its table): a matrix target and which GPU code runs on it."""
    from glmcompat.model.outputs.targets import RunsDoc, TargetDoc  # lazy: `targets` only

    major, minor = t.capability
    return TargetDoc(
        name=t.name, compute_capability=t.compute_capability, products=tuple(t.products),
        platforms={p: tuple(t.platforms.get(p, ("x86_64",))) for p in t.products}, ships_on=tuple(t.ships_on),
        smem_per_block_optin=t.smem_per_block_optin, min_cuda=t.min_cuda,
        runs=RunsDoc(sass=f"sm_{major}X with X <= {minor} (same major, minor at most {minor})",
                  sass_arch_specific=f"sm_{major}{minor}a only", sass_family=f"sm_{major}Xf with X <= {minor}",
                  ptx=f"compute_XY with XY <= {major}{minor} (JIT by the driver)",
                  ptx_arch_specific=f"compute_{major}{minor}a only"),
        evidence=t.evidence, source=t.source)


def _targets(argv: Sequence[str]) -> int:
    p = targets_parser()
    args = p.parse_args(list(argv))
    from glmcompat.matrix.schema import load_matrix  # lazy: the schema (pydantic), not for `matrix --help`

    o = output(args)
    m = load_matrix(args.matrix)
    rows = [_target_doc(t) for t in m.targets()]
    if args.json:
        from glmcompat.model.outputs.targets import TargetsOutput  # lazy: --json only

        dump_json(TargetsOutput(targets=tuple(rows)).to_json(), o.out)
        return 0
    print(f"{'target':<8} {'cc':<5} {'smem/block':>10}  {'min CUDA':<8} {'platforms':<16} products", file=o.out)
    for r in rows:
        smem = str(r.smem_per_block_optin) if r.smem_per_block_optin is not None else "unknown"
        prods = ", ".join(f"{p} ({'/'.join(r.platforms[p])})" if len(r.ships_on) > 1 else p for p in r.products)
        print(f"{r.name:<8} {r.compute_capability:<5} {smem:>10}  {r.min_cuda:<8} {', '.join(r.ships_on):<16} {prods}",
              file=o.out)
    if o.notes:
        print("\nSASS sm_XY runs on the same major with minor >= Y; sm_XYa only on X.Y; sm_XYf on its family;", file=o.out)
        print("PTX compute_XY is JIT-compiled for any newer GPU; compute_XYa for none.", file=o.out)
    return 0


def configure_probe(p: argparse.ArgumentParser) -> None:
    p.add_argument("package", metavar="PKG==VER", help="the wheel to probe, e.g. sgl-kernel==0.3.21")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--torch", action="append", metavar="VER", help="record an ABI probe against this torch "
                      "(repeatable)")
    mode.add_argument("--arch", action="store_true", help="record the GPU code (SASS/PTX) of the wheel")
    p.add_argument("--file", default=None, metavar="PATH", help="matrix file to extend (default: the shipped "
                   "glmcompat/matrix/data/kernels.toml)")
    add_python_option(p, what="interpreter whose wheel to read")
    p.add_argument("--platform", default="manylinux_x86_64", metavar="PLAT",
                   help="the machine whose wheels to read: x86_64 or aarch64, or a manylinux tag of one "
                        "(default: x86_64)")
    add_index_options(p)
    p.add_argument("--dry-run", action="store_true", help="print the lines that would be added; write nothing")


def _default_file() -> Path:
    return default_matrix_dir() / "kernels.toml"


def run_probe(args: argparse.Namespace, o: Output | None = None) -> int:
    from glmcompat.matrix.curate import add_row  # lazy: tomlkit and the schema (pydantic)
    from glmcompat.ops.refresh.probes import abi_row, arch_row  # lazy: the probes (httpx, pydantic)

    o = o or Output()
    pkg, ver = parse_pin(args.package)
    path = Path(args.file) if args.file else _default_file()
    if not path.is_file():
        raise InputError(f"no such matrix file {str(path)!r}")
    tag = python_tag(args.python)
    rows: list[tuple[str, AbiProbe | ArchProbe, str]] = []
    index, cache = index_client(args)
    with index:
        if args.arch:
            fetch_started(o, index, f"{pkg} {ver} ({tag})", args.platform)
            r = probe_arch(pkg, ver, index=index, cache=cache, python=tag, platform=args.platform)
            fetch_finished(o, r.wheel, r)
            rows.append(("arch_probe", arch_row(r), f"{pkg} {ver}: SASS {', '.join(r.sass) or 'none'}; "
                                                      f"PTX {', '.join(r.ptx) or 'none'}"))
        else:
            for torch in args.torch:
                parse_pin(f"torch=={torch}")
                fetch_started(o, index, f"{pkg} {ver} and torch {torch} ({tag})", args.platform)
                a = probe_abi(pkg, ver, torch, index=index, cache=cache, python=tag, platform=args.platform)
                fetch_finished(o, f"{a.wheel} and {a.torch_wheel}", a)
                verdict = "compatible" if a.ok else f"INCOMPATIBLE ({len(a.missing)} missing)"
                rows.append(("abi_probe", abi_row(a), f"{pkg} {ver} vs torch {torch}: {verdict}"))
    out = o.out.write
    for table, row, summary in rows:
        added = add_row(path, table, row, dry_run=args.dry_run)
        if added is None:
            out(f"{summary}: already recorded in {path}\n")
            continue
        verb = "would add to" if args.dry_run else "added to"
        out(f"{summary}: {verb} {path}\n")
        for line in added.splitlines():
            out(f"+ {line}\n")
    return 0
