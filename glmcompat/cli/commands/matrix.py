"""``glmcompat matrix validate|show|schema|probe|refresh|audit`` and ``glmcompat targets``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from glmcompat.cli.commands._common import dump_json, parser
from glmcompat.matrix.curate import abi_row, add_row, arch_row
from glmcompat.model.errors import InputError


def main(name: str, argv: Sequence[str]) -> int:
    if name == "targets":
        return _targets(argv)
    p = parser("matrix", "Validate, show, describe or extend the compatibility matrix.")
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    v = sub.add_parser("validate", help="validate matrix files (default: the shipped matrix)")
    v.add_argument("files", nargs="*", metavar="FILE")
    s = sub.add_parser("show", help="print the matrix")
    s.add_argument("--json", action="store_true", help="versioned JSON")
    s.add_argument("--matrix", action="append", metavar="PATH", help="matrix file or directory (repeatable)")
    sub.add_parser("schema", help="print the JSON Schema of a matrix file")
    pr = sub.add_parser("probe", help="probe wheels and record the result in the matrix as evidence")
    configure_probe(pr)
    from glmcompat.ops.refresh import configure_audit, configure_refresh

    rf = sub.add_parser("refresh", help="add the releases on the index that the matrix lacks, with what their "
                        "wheels prove")
    configure_refresh(rf)
    au = sub.add_parser("audit", help="re-derive the matrix's machine-checkable rows from the index and report drift")
    configure_audit(au)
    args = p.parse_args(list(argv))
    if args.action == "refresh":
        from glmcompat.ops.refresh import run_refresh

        return run_refresh(args)
    if args.action == "audit":
        from glmcompat.ops.refresh import run_audit

        return run_audit(args)
    if args.action == "validate":
        from glmcompat.matrix.schema import load_matrix

        m = load_matrix(args.files or None)
        n = sum(len(getattr(m, t)) for t in _tables())
        print(f"ok: {len(m.files)} file(s), {n} facts")
        return 0
    if args.action == "schema":
        from glmcompat.matrix.schema import matrix_json_schema

        dump_json(matrix_json_schema())
        return 0
    if args.action == "probe":
        return run_probe(args)
    from glmcompat.matrix.schema import load_matrix

    m = load_matrix(args.matrix)
    if args.json:
        from glmcompat.matrix.schema import SCHEMA_VERSION

        data: dict[str, Any] = {"version": SCHEMA_VERSION}
        for t in _tables():
            data[t] = [r.model_dump(mode="json") for r in getattr(m, t)]
        dump_json(data)
        return 0
    _show_text(m)
    return 0


def _tables() -> tuple[str, ...]:
    from glmcompat.matrix.schema import TABLES

    return TABLES


def _show_text(m: Any) -> None:
    out = sys.stdout.write
    out("Kernel wheels (built against torch, CUDA, GPU code):\n")
    for k in sorted(m.kernel, key=lambda k: (k.package, k.versions[0])):
        code = ", ".join(k.sass) if k.sass else "?"
        out(f"  {k.package} {', '.join(k.versions)}\n      torch {k.torch}  CUDA {k.cuda or '?'}  SASS {code}"
            f"  PTX {', '.join(k.ptx) if k.ptx else 'none'}  [{k.evidence}]\n")
    out("\nABI probes:\n")
    for a in m.abi_probe:
        verdict = "compatible" if a.compatible else f"INCOMPATIBLE ({a.missing} missing)"
        out(f"  {a.package} {a.version} vs torch {a.torch}: {verdict}  [{a.evidence}]\n")
    out("\ntorch default wheels:\n")
    for t in m.torch:
        out(f"  torch {', '.join(t.versions)}: CUDA {t.cuda}, SASS {', '.join(t.sass)}  [{t.evidence}]\n")
    out("\nFamily pairs:\n")
    for f in m.family:
        for v, spec in f.pairs.items():
            out(f"  {f.package} {v} -> torch{spec}  [{f.evidence}]\n")
    out("\nEqual-version pairs:\n")
    for e in m.equal_version:
        out(f"  {e.packages[0]} == {e.packages[1]}  [{e.evidence}]\n")
    out("\nModels:\n")
    for mo in m.model:
        out(f"  {mo.model_type}: transformers{mo.transformers}, sglang{mo.sglang or ''}  [{mo.evidence}]\n")
    out("\nTarget requirements:\n")
    for r in m.target_requirement:
        out(f"  {', '.join(r.targets)}: {r.package}{r.specifier} ({r.reason})  [{r.evidence}]\n")
    out("\nStacks:\n")
    for s in m.stack:
        pins = " ".join(f"{k}=={v}" for k, v in sorted(s.pins.items()))
        out(f"  {s.name} (targets: {', '.join(s.targets)})\n      {pins}\n")
        for k, v in sorted(s.overrides.items()):
            out(f"      override: {k}=={v}\n")


def _targets(argv: Sequence[str]) -> int:
    p = parser("targets", "List the GPU targets and the rule for which GPU code runs on each.")
    p.add_argument("--json", action="store_true")
    p.add_argument("--matrix", action="append", metavar="PATH")
    args = p.parse_args(list(argv))
    from glmcompat.matrix.schema import load_matrix

    m = load_matrix(args.matrix)
    rows = []
    for t in m.targets():
        major, minor = t.capability
        rows.append({
            "name": t.name,
            "compute_capability": t.compute_capability,
            "products": list(t.products),
            "platforms": {p: list(t.platforms.get(p, ("x86_64",))) for p in t.products},
            "ships_on": list(t.ships_on),
            "smem_per_block_optin": t.smem_per_block_optin,
            "min_cuda": t.min_cuda,
            "runs": {
                "sass": f"sm_{major}X with X <= {minor} (same major, minor at most {minor})",
                "sass_arch_specific": f"sm_{major}{minor}a only",
                "sass_family": f"sm_{major}Xf with X <= {minor}",
                "ptx": f"compute_XY with XY <= {major}{minor} (JIT by the driver)",
                "ptx_arch_specific": f"compute_{major}{minor}a only",
            },
            "evidence": t.evidence,
            "source": t.source,
        })
    if args.json:
        dump_json(rows)
        return 0
    print(f"{'target':<8} {'cc':<5} {'smem/block':>10}  {'min CUDA':<8} {'platforms':<16} products")
    for r in rows:
        smem = str(r["smem_per_block_optin"]) if r["smem_per_block_optin"] is not None else "unknown"
        prods = ", ".join(f"{p} ({'/'.join(r['platforms'][p])})" if len(r["ships_on"]) > 1 else p for p in r["products"])
        print(f"{r['name']:<8} {r['compute_capability']:<5} {smem:>10}  {r['min_cuda']:<8} {', '.join(r['ships_on']):<16} {prods}")
    print("\nSASS sm_XY runs on the same major with minor >= Y; sm_XYa only on X.Y; sm_XYf on its family;")
    print("PTX compute_XY is JIT-compiled for any newer GPU; compute_XYa for none.")
    return 0


def configure_probe(p: argparse.ArgumentParser) -> None:
    p.add_argument("package", metavar="PKG==VER", help="the wheel to probe, e.g. sgl-kernel==0.3.21")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--torch", action="append", metavar="VER", help="record an ABI probe against this torch "
                      "(repeatable)")
    mode.add_argument("--arch", action="store_true", help="record the GPU code (SASS/PTX) of the wheel")
    p.add_argument("--file", default=None, metavar="PATH", help="matrix file to extend (default: the shipped "
                   "glmcompat/matrix/data/kernels.toml)")
    p.add_argument("--python", default="cp311", metavar="TAG")
    p.add_argument("--platform", default="manylinux_x86_64", metavar="PLAT")
    p.add_argument("--index-url", default=None, metavar="URL")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="print the lines that would be added; write nothing")


def _default_file() -> Path:
    from glmcompat.matrix.store import default_matrix_dir

    return default_matrix_dir() / "kernels.toml"


def run_probe(args: argparse.Namespace) -> int:
    from glmcompat.edges.cache import Cache, NoCache
    from glmcompat.edges.index import IndexClient
    from glmcompat.ops.wheelprobe import parse_pin, probe_abi, probe_arch

    pkg, ver = parse_pin(args.package)
    path = Path(args.file) if args.file else _default_file()
    if not path.is_file():
        raise InputError(f"no such matrix file {str(path)!r}")
    cache = NoCache() if args.no_cache else Cache()
    rows: list[tuple[str, dict[str, Any], str]] = []
    with IndexClient(args.index_url, cache=cache) as index:
        if args.arch:
            r = probe_arch(pkg, ver, index=index, cache=cache, python=args.python, platform=args.platform)
            rows.append(("arch_probe", arch_row(r), f"{pkg} {ver}: SASS {', '.join(r.sass) or 'none'}; "
                                                      f"PTX {', '.join(r.ptx) or 'none'}"))
        else:
            for torch in args.torch:
                parse_pin(f"torch=={torch}")
                a = probe_abi(pkg, ver, torch, index=index, cache=cache, python=args.python, platform=args.platform)
                verdict = "compatible" if a.ok else f"INCOMPATIBLE ({len(a.missing)} missing)"
                rows.append(("abi_probe", abi_row(a), f"{pkg} {ver} vs torch {torch}: {verdict}"))
    out = sys.stdout.write
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
