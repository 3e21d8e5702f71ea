"""``glmcompat upgrade``: the newest safe core set for a target, and why each newer release was skipped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from glmcompat.cli.commands._machine import add_machine_options
from glmcompat.cli.commands._common import add_core_options, add_python_option, dump_json, index_client, output
from glmcompat.cli.commands._common import paint_text, parser
from glmcompat.cli.commands._stackplan import add_stack_tail, stack_plan
from glmcompat.model.platforms import PLATFORM_NAME, target_platforms

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.matrix.rows import Stack


def build_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("upgrade", "Show the newest safe core set for a target, and for each newer release it skipped, why "
                          "(the first clause that rules it out) and one remedy.")
    add_core_options(p, "torchvision==0.29.2")
    add_machine_options(p)
    p.add_argument("--exclude-newer", metavar="DATE",
                   help="ignore files uploaded after DATE (a date, midnight UTC, or an RFC 3339 UTC timestamp; default: none)")
    p.add_argument("--limit", type=int, default=3, metavar="N", help="newer releases explained per package (default 3)")
    add_python_option(p, what="resolve for this CPython minor")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    add_stack_tail(p)
    return p


def pp_settings() -> tuple[dict[str, Any], str | None]:
    """``[tool.glmcompat]`` of the project around the working directory and its pyproject.toml (({}, None): none)."""
    from pathlib import Path  # lazy: keeps `upgrade --help` light

    from glmcompat.readers import pyproject as pp  # lazy: keeps `upgrade --help` light

    found = pp.find(Path.cwd())
    return ({}, None) if found is None else (pp.load(found).settings, str(found))


def main(name: str, argv: Sequence[str]) -> int:
    p = build_parser()
    args = p.parse_args(list(argv))
    from glmcompat.decide.explain import Skip, resolve, skip_reasons  # lazy: keeps `upgrade --help` light
    from glmcompat.decide.resolution import parse_cutoff  # lazy: keeps `upgrade --help` light
    from glmcompat.decide.roots import Request  # lazy: keeps `upgrade --help` light
    from glmcompat.edges.index import redact  # lazy: keeps `upgrade --help` light
    from glmcompat.edges.sources import IndexSource  # lazy: keeps `upgrade --help` light
    from glmcompat.ops.progress import Progress  # lazy: keeps `upgrade --help` light

    facts, stack, plan = stack_plan(args, "upgrade")
    tname, model, machine = plan.target.name, plan.model, plan.platform
    cutoff = parse_cutoff(args.exclude_newer)
    from glmcompat.cli.commands._machine import machine_for  # lazy: keeps `upgrade --help` light

    found = pp_settings()
    host = machine_for(None, args.driver, args.glibc, found[0], found[1], with_targets=False)
    req = Request(args.stack, plan.target, model, tuple(args.with_), True, python=args.python, platform=machine,
                  driver=host.driver)
    o = output(args)
    client, _ = index_client(args)
    with client:
        o.detail(f"upgrade: index {redact(client.base_url)}" + ("; no cache" if args.no_cache else ""))
        src = Progress(IndexSource(client, python=args.python, exclude_newer=args.exclude_newer, platform=machine),
                        bool(args.quiet))
        try:
            outcome = resolve(facts, src, req)
            skipped = skip_reasons(facts, src, req, outcome, limit=max(args.limit, 0))
        finally:
            src.done()
        o.detail(f"upgrade: read {src.pages} project page(s) and {src.metas} METADATA file(s); "
                 f"{client.requests} request(s), {client.bytes_fetched} bytes fetched")
    dropped = _dropped(stack, outcome)
    engine = stack.engine
    if args.json:
        from glmcompat.model.outputs.upgrade import SkipDoc, SkipNote, UpgradeOutput  # lazy: --json only

        doc = UpgradeOutput(
            stack=args.stack, engine=engine, target=tname, model=model, platform=machine,
            exclude_newer=cutoff + "Z" if cutoff else None, with_=tuple(args.with_), pins=outcome.pins,
            stack_pins=dict(stack.pins), not_required=dropped, overrides=outcome.overridden,
            skipped={n: {v: (SkipDoc.of(s) if isinstance(s, Skip) else SkipNote(note=s))
                         for v, s in d.items()} for n, d in skipped.items()})
        dump_json(doc.to_json(), o.out)
        return 0
    parts: list[str] = []
    out = parts.append
    asof = f"; index as of {cutoff}Z" if cutoff else ""

    on = "" if target_platforms(plan.target) == ["x86_64"] else f" on {PLATFORM_NAME[machine]}"
    out(f"Newest safe core set for {tname}{on} (stack {args.stack}{', model ' + model if model else ''}{asof}):\n")
    for n, v in outcome.pins.items():
        was = stack.pins.get(n)
        note = "" if was == v else (f"  (stack: {was})" if was else "  (new)")
        out(f"  {n}=={v}{note}\n")
    for n, why in dropped.items():
        out(f"  {n}: not in the set (stack: {stack.pins[n]}; {why})\n")
    for why in outcome.overridden.values():
        out(f"  override: {why}\n")
    if any(skipped.values()):
        out("\nNewer releases skipped:\n")
        for n in sorted(skipped):
            for v, s in skipped[n].items():
                if isinstance(s, Skip):
                    out(f"  {n} {v}: {s.because()}\n      hint: {s.remedy}\n")
                else:
                    out(f"  {n} {v}: {s}\n")
    withs = "".join(f" --with {w}" for w in args.with_)
    lock_cutoff = parse_cutoff(stack.exclude_newer)
    note = (f" (it reads the index as of the stack's exclude-newer, {lock_cutoff}Z)"
            if lock_cutoff and lock_cutoff != cutoff else "")
    plat = "" if machine == "x86_64" else f" --platform {machine}"
    out(f"\nhint: `glmcompat lock --stack {args.stack} --target {tname}{plat} --upgrade{withs}` writes a lock for this set{note}\n")
    o.out.write(paint_text("".join(parts), o.color))
    return 0


def _dropped(stack: Stack, outcome: Any) -> dict[str, str]:
    """The stack's packages the chosen set does without, and why (no chosen package requires them)."""
    engine = stack.engine
    top = {n: v for n, v in outcome.pins.items() if n == engine}
    out = {}
    for n in stack.pins:
        if n in outcome.pins:
            continue
        who = ", ".join(f"{p} {v}" for p, v in top.items()) or "the chosen set"
        out[n] = f"{who} does not require it"
    return out
