"""``glmcompat lock`` (``glmcompat upgrade`` lives in :mod:`glmcompat.cli.commands.upgrade`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from glmcompat.cli.commands._machine import add_machine_options
from glmcompat.cli.commands._common import Output, add_core_options, add_python_option, dump_json, output, paint_line
from glmcompat.cli.commands._common import parser, shown_url
from glmcompat.cli.commands._stackplan import add_stack_tail, stack_plan
from glmcompat.cli.fastlock import Exit
from glmcompat.model.errors import InputError, UnsafeError, classify
from glmcompat.model.outputs.common import EvidenceDoc
from glmcompat.model.outputs.lock import LockOutput
from glmcompat.model.platforms import PLATFORM_NAME, products_on, target_platforms

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.matrix.rows import Target
    from glmcompat.ops.projectspec import LockCheck, Run
    from glmcompat.ops.speculate import Speculation


def build_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("lock", "Lock your project (the pyproject.toml uv finds here, or a requirements.in) with the core made "
                       "safe for the GPU targets; with --stack, or where there is no project, lock a curated stack into "
                       "locks/<stack>/<target>/.")
    p.add_argument("requirements", nargs="?", metavar="REQUIREMENTS_IN",
                   help="requirements mode: compile this requirements.in (its -r/-c includes followed) into a "
                        "hash-pinned requirements.txt with the safe core")
    p.add_argument("-o", "--output-file", metavar="FILE", help="requirements mode: the output (default: the input "
                                                                 "with .txt for .in)")
    p.add_argument("--project", metavar="DIR", help="the project directory (default: found from the current "
                                                    "directory, as uv finds it)")
    p.add_argument("--dry-run", action="store_true", help="print the core and the change to pyproject.toml; write nothing")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    add_core_options(p, "torch==2.10.0", targets=True)
    add_machine_options(p, glibc_default="; else this machine's")
    add_python_option(p, default=None, what="lock for one CPython minor")
    p.add_argument("--upgrade", action="store_true", help="prefer the newest safe set over the stack's pins")
    p.add_argument("--out", metavar="DIR", help="output directory (default locks/<stack>/<target>/, for aarch64 "
                                                "locks/<stack>/<target>-aarch64/)")
    p.add_argument("--check", action="store_true", help="only check that the committed outputs are current (exit 1 if not)")
    p.add_argument("--force", action="store_true",
                   help="replace files in --out that glmcompat did not write (symbolic links are refused regardless)")
    add_stack_tail(p)
    return p


def main(name: str, argv: Sequence[str], *, out: TextIO | None = None, err: TextIO | None = None,
         spec: Speculation | None = None, early: Run | LockCheck | None = None) -> int:
    """``glmcompat lock ARGV``, its answer written to ``out`` and its errors to ``err`` (default: the process's
    stdout and stderr; :func:`glmcompat.cli.fastlock.record` passes streams that keep what is written); ``spec``: the
    speculative uv the entry point started before the heavy imports (:func:`glmcompat.ops.speculate.start_early`);
    ``early``: a project lock's (:func:`glmcompat.ops.projectspec.start_early`)."""
    p = build_parser()
    args = p.parse_args(list(argv))

    mode = _mode(args)
    if mode is not None:
        from glmcompat.cli.commands.projectlock import run_project  # lazy: keeps `lock --help` light

        return run_project(args, mode, out=out, err=err, early=early)
    from glmcompat.ops.lockgen import LockRequest, lock  # lazy: keeps `lock --help` light

    for flag, value in (("--dry-run", args.dry_run), ("-o", args.output_file)):
        if value:
            raise InputError(f"{flag} is for a project or a requirements.in; with --stack, use --out / --check")

    args.target = args.target or []
    facts, stack, plan = stack_plan(args, "lock --stack")
    o = output(args, out=out, err=err)
    tname, machine = plan.target.name, plan.platform
    from glmcompat.edges.index import IndexOptions, client_for  # lazy: keeps `lock --help` light

    req = LockRequest(args.stack, plan, args.python, tuple(args.with_), args.upgrade,
                      IndexOptions(args.index_url, bool(args.no_cache)))
    outdir = _out_dir(args.out, args.stack, tname, machine)
    t0 = time.perf_counter()
    if o.verbose:
        o.detail(f"lock: index {shown_url(args.index_url)}" + ("; no cache" if args.no_cache else ""))
    try:
        s = lock(facts, req, outdir, index=client_for, quiet=bool(args.quiet), check_only=args.check, force=args.force,
                 spec=spec)
    except UnsafeError as e:
        for c in e.causes:  # -v: the evidence the derivation cites, in full
            for kind, src in c.evidence:
                o.detail(f"evidence ({kind}): {src}")
        if args.json:  # the outcome, as one document (no second, error-only one)
            dump_json(_stack_doc(args.stack, outdir, tname, machine, error=e.message,
                                 evidence=[(k, src) for c in e.causes for k, src in c.evidence]).to_json(), o.out)
            code, line = classify(e)
            o.err.write(paint_line(f"error: {line}", o.color) + "\n")
            return code
        raise
    o.detail(f"lock: {'checked' if args.check else 'locked'} {outdir} in {time.perf_counter() - t0:.2f} s")
    say = _printer(o)
    pins = " ".join(f"{n}=={v}" for n, v in s.pins.items())
    plat = "" if machine == "x86_64" else f" --platform {machine}"
    stale = ([f"{outdir}: {', '.join(s.stale)} not current; run `glmcompat lock --stack {args.stack} --target {tname}{plat}`"]
             if s.stale else [])
    if args.json:
        doc = _stack_doc(args.stack, outdir, tname, machine, outcome=s, problems=[*s.problems, *stale],
                         verdict="stale" if args.check and (s.stale or s.problems) else "safe")
        dump_json(doc.to_json(), o.out)
        return Exit(1 if args.check and (s.stale or s.problems) else 0, s.noop)
    if args.check:
        for problem in s.problems:
            print(f"error: {problem}", file=o.err)
        for line in stale:
            print(f"error: {line}", file=o.err)
        if s.stale or s.problems:
            return 1
        say(f"ok: {outdir} is current ({pins}; {PLATFORM_NAME[machine]})")
        return 0
    if not args.quiet:
        what = "wrote " + ", ".join(s.changed) if s.changed else "up to date"
        say(f"Locked {args.stack} for {tname} on {PLATFORM_NAME[machine]} in {outdir} ({what})")
        say(f"  core: {pins}")
        for n, v in s.overrides.items():
            say(f"  override: {n}=={v}")
        departed = [f"{n} {stack.pins[n]} -> {v}" for n, v in s.pins.items() if n in stack.pins and stack.pins[n] != v]
        dropped = [n for n in stack.pins if n not in s.pins]
        if departed or dropped:
            what = ", ".join(departed + [f"{n} dropped" for n in dropped])
            if args.with_ or args.upgrade:
                why = " ".join([f"--with {w}" for w in args.with_] + (["--upgrade"] if args.upgrade else []))
                say(f"  note: this lock departs from stack {args.stack}'s pins ({why}): {what}")
            else:
                engine = stack.engine
                why = (f" (`--with {engine}=={stack.pins[engine]}{plat}` shows why)" if engine in stack.pins else "")
                where = (f"{tname} on {PLATFORM_NAME[machine]} (they are for its x86_64 machines)"
                         if tname in stack.targets and machine != "x86_64" else
                         f"{tname} (its targets: {', '.join(stack.targets)})")
                say(f"  note: the stack's own pins are not safe for {where}; this lock departs from them: {what}{why}")
        for w in s.warnings:
            say(f"  warning: {w}")
        _other_platforms(plan.target, machine, plan.chosen, None if args.out else args.stack, say)
    return Exit(0, s.noop)  # a run that changed nothing: what it read, for the start-up path's record


def _stack_doc(stack: str, outdir: Path, tname: str, machine: str, *, outcome: Any = None, problems: Sequence[str] = (),
               verdict: str = "safe", error: str | None = None,
               evidence: Sequence[tuple[str, str]] = ()) -> LockOutput:
    """``lock --stack ... --json``'s document: what the lock wrote (``outcome``, a :class:`~glmcompat.ops.lockgen.LockOutcome`),
    or why no safe lock exists (``error``, with the evidence its derivation cites; nothing was written)."""
    s = outcome
    return LockOutput(mode="stack", stack=stack, path=str(outdir), targets=(tname,), platform=machine,
                      core=dict(s.pins) if s else {}, overrides=dict(s.overrides) if s else {}, override_reasons={},
                      written=tuple(str(outdir / n) for n in s.changed) if s else (),
                      warnings=tuple(s.warnings) if s else (), verdicts={tname: verdict} if s else {}, diff="",
                      problems=tuple(problems), error=error,
                      evidence=tuple(EvidenceDoc(kind=k, source=src) for k, src in evidence),
                      floors=dict(getattr(s, "floors", None) or {}) if s else {}, machine=None)


def _mode(args: Any) -> tuple[str, Path] | None:
    """("requirements", the .in file), ("project", its pyproject.toml), or None for a curated stack: --stack, --out
    or --with name one; so does a directory with no project above it, or one whose pyproject.toml glmcompat itself
    generated (a stack's output directory)."""
    from glmcompat.readers import pyproject as pp  # lazy: keeps `lock --help` light

    if args.requirements is not None:
        f = Path(args.requirements)
        if not f.is_file():
            raise InputError("no such file" if not f.exists() else "not a regular file", path=args.requirements)
        if f.name == "pyproject.toml":
            raise InputError("a pyproject.toml is locked in project mode: run `glmcompat lock` in its directory "
                             "(or pass --project DIR)", path=args.requirements)
        return "requirements", f
    if args.stack is not None or args.out is not None or args.with_ or args.engine is not None:
        if args.project:
            raise InputError("--project locks your project; --stack, --engine, --out and --with are for the curated stacks")
        return None
    start = Path(args.project) if args.project else Path.cwd()
    if args.project and not start.is_dir():
        raise InputError("--project: no such directory", path=args.project)
    found = pp.find(start)
    if found is None:
        if args.project:
            raise InputError(f"--project: no pyproject.toml with [project] or [tool.uv.workspace] at or above {start}")
        return None
    if pp.read_text(found).startswith("# Generated by `glmcompat lock"):
        return None
    return "project", found


def _printer(o: Output) -> Callable[[str], None]:
    """One line of the answer (:attr:`Output.out`), its leading label (``ok:``, ``note:``, ``warning:``) coloured
    as ``o`` says."""

    def say(line: str) -> None:
        print(o.line(line), file=o.out)

    return say


def _other_platforms(trow: Target, machine: str, chosen: bool, stack: str | None,
                     say: Callable[[str], None] = print) -> None:
    """Which machine the lock is for, and where the target (``trow``, its row) also ships on another, how to lock for
    that one (``stack``: the default output directory's stack; None when --out was given)."""
    tname = trow.name
    here = ", ".join(products_on(trow, machine))
    others = [p for p in target_platforms(trow) if p != machine]
    line = f"  platform: {PLATFORM_NAME[machine]} ({here}{'' if chosen or not others else f'; the default for {tname}'})"
    for other in others:
        where = f" in {_out_dir(None, stack, tname, other)}" if stack else ""
        line += (f"; {tname} also ships on {PLATFORM_NAME[other]} ({', '.join(products_on(trow, other))}): "
                 f"`--platform {other}` locks for it{where}")
    say(line)


def _out_dir(out: str | None, stack: str, target: str, platform: str = "x86_64") -> Path:
    """``--out``, or ``locks/<stack>/<target>`` (``<target>-aarch64`` for an aarch64 lock); the stack name must then
    be one plain path component."""
    from glmcompat.ops.lockgen import out_name  # lazy: keeps `lock --help` light

    if out is not None:
        if not out.strip():
            raise InputError("--out: expected a directory, got an empty string")
        return Path(out)
    if stack in (".", "..") or not stack.strip() or any(c in stack for c in "/\\\0") or not stack.isprintable():
        raise InputError(f"stack name {stack!r} cannot name a directory under locks/; pass --out")
    return Path("locks") / stack / out_name(target, platform)

