"""``glmcompat matrix validate|show|schema|probe|refresh|audit`` and ``glmcompat targets``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ._common import dump_json, parser


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
    try:
        from ..curate import configure_probe
    except ImportError:  # pragma: no cover - the curation module ships with the probes
        configure_probe = None
    if configure_probe is not None:
        configure_probe(pr)
    from ..refresh import configure_audit, configure_refresh

    rf = sub.add_parser("refresh", help="add the releases on the index that the matrix lacks, with what their "
                        "wheels prove")
    configure_refresh(rf)
    au = sub.add_parser("audit", help="re-derive the matrix's machine-checkable rows from the index and report drift")
    configure_audit(au)
    args = p.parse_args(list(argv))
    if args.action == "refresh":
        from ..refresh import run_refresh

        return run_refresh(args)
    if args.action == "audit":
        from ..refresh import run_audit

        return run_audit(args)
    if args.action == "validate":
        from ..matrix import load_matrix

        m = load_matrix(args.files or None)
        n = sum(len(getattr(m, t)) for t in _tables())
        print(f"ok: {len(m.files)} file(s), {n} facts")
        return 0
    if args.action == "schema":
        from ..matrix import matrix_json_schema

        dump_json(matrix_json_schema())
        return 0
    if args.action == "probe":
        from ..curate import run_probe

        return run_probe(args)
    from ..matrix import load_matrix

    m = load_matrix(args.matrix)
    if args.json:
        from ..matrix import SCHEMA_VERSION

        data: dict[str, Any] = {"version": SCHEMA_VERSION}
        for t in _tables():
            data[t] = [r.model_dump(mode="json") for r in getattr(m, t)]
        dump_json(data)
        return 0
    _show_text(m)
    return 0


def _tables() -> tuple[str, ...]:
    from ..matrix import TABLES

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
    from ..matrix import load_matrix

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
