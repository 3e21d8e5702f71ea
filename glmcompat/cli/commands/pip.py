"""``glmcompat pip install`` and ``glmcompat pip constraints``: change a live environment without breaking its
compiled core (:mod:`glmcompat.ops.pipguard`).

Exit codes: 0 installed (or, with ``--dry-run``, a safe plan; or nothing to do), 1 no safe plan (nothing
changed), 2 bad input or a request the installer itself cannot resolve (its own error, passed through), 3 the
environment or the installer failed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glmcompat.cli.commands._common import add_output_options, add_target_option, dump_json, output, parser
from glmcompat.model.errors import InputError

if TYPE_CHECKING:
    from glmcompat.model.findings import CauseDoc
    from glmcompat.model.outputs.pip import ChangeDoc, PipInstallOutput

def _add_env(p: Any) -> None:
    p.add_argument("--python", metavar="PY",
                   help="the environment's interpreter, or its folder (default: $VIRTUAL_ENV, else .venv here or above)")


def install_parser() -> Any:
    """The argument parser of `pip install` (also what `glmcompat completion` reads)."""
    p = parser("pip install", "Install into a live environment through uv (or pip where uv is absent), keeping its "
                              "compiled core safe: the installer's plan is judged with the check rules first.")
    p.add_argument("requirements", nargs="*", metavar="REQ", help="requirements, as the installer takes them")
    _add_env(p)
    add_target_option(p, "[tool.glmcompat] targets of the project here, else the GPU NVML reports")
    p.add_argument("--driver", metavar="VERSION",
                   help="the NVIDIA driver the plan must run on (default: GLMCOMPAT_DRIVER, else [tool.glmcompat] "
                        "driver, else the driver of this machine, read as --driver auto reads it)")
    p.add_argument("--model", metavar="MODEL_TYPE", help="HF model_type the environment must serve")
    p.add_argument("--dry-run", action="store_true", help="print the judged plan and install nothing")
    p.add_argument("--installer", choices=("auto", "uv", "pip"), default="auto",
                   help="which installer plans and installs (default auto: uv where installed, else the environment's pip)")
    p.add_argument("--allow-unknown", action="store_true", help="report combinations without evidence as warnings")
    p.add_argument("-r", "--requirement", action="append", default=[], metavar="FILE", help="install from a requirements file")
    p.add_argument("-c", "--constraint", action="append", default=[], metavar="FILE", help="your own constraints file")
    p.add_argument("-i", "--index-url", metavar="URL", help="the index (passed to the installer)")
    p.add_argument("--extra-index-url", action="append", default=[], metavar="URL", help="another index (repeatable)")
    p.add_argument("-f", "--find-links", action="append", default=[], metavar="PATH", help="wheels here too (repeatable)")
    p.add_argument("--no-index", action="store_true", help="no index, only --find-links")
    p.add_argument("-U", "--upgrade", action="store_true", help="upgrade what is asked for")
    p.add_argument("--pre", action="store_true", help="allow pre-releases")
    p.add_argument("--no-deps", action="store_true", help="install without dependencies")
    add_output_options(p, json="versioned JSON on stdout (pip-install.schema.json)")
    return p


def _install_args(argv: Sequence[str]) -> Any:
    p = install_parser()
    rest: list[str] = []
    args_list = list(argv)
    if "--" in args_list:
        i = args_list.index("--")
        args_list, rest = args_list[:i], args_list[i + 1:]
    args = p.parse_args(args_list)
    args.passthrough = rest
    return args


def _installer_args(args: Any) -> list[str]:
    out: list[str] = []
    for f in args.requirement:
        if not Path(f).is_file():
            raise InputError("no such requirements file", path=f)
        out += ["-r", f]
    for f in args.constraint:
        if not Path(f).is_file():
            raise InputError("no such constraints file", path=f)
        out += ["-c", f]
    if args.index_url:
        out += ["--index-url", args.index_url]
    for u in args.extra_index_url:
        out += ["--extra-index-url", u]
    for u in args.find_links:
        out += ["--find-links", u]
    out += [flag for flag, on in (("--no-index", args.no_index), ("--upgrade", args.upgrade), ("--pre", args.pre),
                                  ("--no-deps", args.no_deps)) if on]
    return out + list(args.passthrough) + list(args.requirements)


def pip_parser() -> Any:
    """The argument parser of `pip` (its actions' parsers are :func:`install_parser` and :func:`constraints_parser`)."""
    p = parser("pip", "ChangeDoc a live environment through its installer without breaking its compiled core.")
    sub = p.add_subparsers(dest="action", metavar="{install,constraints}")
    sub.add_parser("install", help="install through uv (or pip), the plan judged first; no safe plan: exit 1, "
                                   "nothing changed (glmcompat pip install --help)",
                   parents=[install_parser()], add_help=False)
    sub.add_parser("constraints", help="print a constraints file pinning the installed core (PIP_CONSTRAINT, "
                                       "UV_CONSTRAINT, -c)", parents=[constraints_parser()], add_help=False)
    add_output_options(p)
    return p


def main(name: str, argv: Sequence[str]) -> int:
    argv = list(argv)
    if argv and argv[0] == "install":
        return _install(argv[1:])
    if argv and argv[0] == "constraints":
        return _constraints(argv[1:])
    p = pip_parser()
    p.parse_args(argv)  # --help, or a usage error (exit 2)
    p.print_usage(sys.stderr)
    return 2


def constraints_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("pip constraints", "Print a constraints file that pins the coupled core installed in an environment.")
    _add_env(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead of stdout")
    add_output_options(p)
    return p


def _constraints(argv: Sequence[str]) -> int:
    from glmcompat.matrix.load import load_facts  # lazy: keeps `pip --help` light
    from glmcompat.ops.pipguard import constraints_text, open_environment  # lazy: keeps `pip --help` light

    p = constraints_parser()
    args = p.parse_args(list(argv))
    live = open_environment(args.python, Path.cwd())
    text = constraints_text(live, load_facts())
    if args.output:
        from glmcompat.matrix.store import atomic_write  # lazy: keeps `pip --help` light

        atomic_write(Path(args.output), text.encode(), mode=0o644)
    else:
        output(args).out.write(text)
    return 0


def _machine(driver: str | None, cwd: Path) -> Any:
    """The machine a plan is judged for: its driver from --driver, GLMCOMPAT_DRIVER or [tool.glmcompat], else read
    here (pip installs on this machine)."""
    from glmcompat.cli.commands._machine import machine_for, read_here  # lazy: keeps `pip --help` light
    from glmcompat.ops import pipguard as pg  # lazy: keeps `pip --help` light

    found = pg.project_settings(cwd)
    settings, where = found if found is not None else ({}, None)
    m = machine_for(None, driver, None, settings, None if where is None else str(where), with_targets=False)
    return m if m.driver is not None else read_here(m)


def _install(argv: Sequence[str]) -> int:
    from glmcompat.edges.installer import InstallerFailed  # lazy: keeps `pip --help` light
    from glmcompat.matrix.load import load_facts  # lazy: keeps `pip --help` light
    from glmcompat.ops import pipguard as pg  # lazy: keeps `pip --help` light

    args = _install_args(argv)
    o = output(args)
    installer_args = _installer_args(args)
    if not args.requirements and not args.requirement:
        raise InputError("nothing to install: name a requirement or pass -r FILE")
    facts = load_facts()
    cwd = Path.cwd()
    targets = pg.find_targets(args.target or [], args.model, cwd, facts)
    targets = pg.with_machine(targets, _machine(args.driver, cwd))
    live = pg.open_environment(args.python, cwd)
    req = pg.GuardRequest(tuple(args.requirements) + tuple(f"-r {f}" for f in args.requirement), tuple(installer_args),
                     args.python, args.installer, args.dry_run, args.allow_unknown)

    core: dict[str, str] = {}
    cause: CauseDoc | None = None
    changed: tuple[ChangeDoc, ...] | None = None

    def out(line: str = "") -> None:
        if not args.json:
            o.out.write(o.line(line) + "\n")
            o.out.flush()

    def finish(rc: int, verdict: str, result: Any = None) -> int:
        if args.json:
            from glmcompat.model.outputs.pip import PipEnvironmentDoc, PipInstallOutput  # lazy: --json only

            i = live.interp
            env = PipEnvironmentDoc(python=i.python, prefix=i.prefix, python_version=i.version, found_by=i.found_by,
                                 problems=tuple(live.env.problems))
            doc = PipInstallOutput(verdict=verdict, environment=env, targets=tuple(targets.names),
                                   targets_from=targets.source, model=targets.model, core=core, cause=cause,
                                   changed=changed)
            dump_json((_with_outcome(doc, result) if result is not None else doc).to_json(), o.out)
        return rc

    def note(line: str) -> None:
        if o.notes:
            out(line)

    core = pg.core_of(live.packages, facts)
    note(f"environment: {live.where}")
    note(f"core: {', '.join(pg.pins(core)) or 'none (no package the matrix tracks is installed)'}")
    if targets.names:
        note(f"target: {', '.join(targets.names)} (from {targets.source})")
    else:  # said even with -q: the target-specific rules did not run
        out(f"target: none ({targets.source}): judged with the rules that hold on every target")
    for problem in live.env.problems[:3]:
        out(f"warning: {problem}")
    try:
        result = pg.decide(req, facts, targets, live)
    except pg.NoSafePlan as e:
        why = e.cause
        o.err.write(o.line(f"error: no safe plan for {', '.join(req.requirements)} in {live.interp.prefix}") + "\n")
        o.err.write(o.line(f"  cause: {pg.because(why)}") + "\n")
        o.err.write(o.line(f"  hint: {why.remedy}") + "\n")
        from glmcompat.model.findings import CauseDoc  # lazy: the report only

        cause = CauseDoc.of(why)
        return finish(1, "no-safe-plan", e.outcome)
    except InstallerFailed as err:
        rc = _installer_failed(o, err)
        if args.json:  # the outcome under --json: the error document, with the same exit code
            from glmcompat.cli import jsonerrors  # lazy: keeps `pip --help` light

            jsonerrors.emit(["pip", "install", "--json"], rc,
                            f"{err.installer} failed (exit {err.returncode}); nothing was changed by glmcompat",
                            quiet=o.quiet)
        return rc
    for f in result.already[:3]:
        out(f"note: the environment already has an error this plan does not add: {f.message}")
    if result.chosen is None and result.constrained:
        # the request's own plan breaks the core and the plan that keeps it changes nothing: refused, said so
        from glmcompat.model.hints import Hint, render_hint  # lazy: the refusal only

        moved = [c for c in result.plan.changes if c.name in result.tracked]
        what = "; ".join(c.shown().lstrip("~+- ") for c in moved) or ", ".join(req.requirements)
        for h in (Hint("refused", what, reason=f"{result.installer}'s plan would break the core: "
                                              f"{result.broken_by_plan[0].message}"),):
            out(f"error: {render_hint(h)}")
        out(f"  nothing was installed; the safe part of the request changes nothing ({result.how})")
        t = " ".join(f"--target {n}" for n in targets.names)
        out(f"  hint: to move the core, move it as one set: `glmcompat upgrade {t}`".rstrip() +
            " names the newest safe set; `glmcompat pip install` with its pins installs it")
        return finish(1, "refused", result)
    if result.chosen is None:
        out(f"{result.installer}: nothing to change")
        return finish(0, "nothing-to-change", result)
    if result.constrained:
        moved = [c for c in result.plan.changes if c.name in result.tracked]
        out(f"{result.installer}'s own plan would break the core ({'; '.join(c.shown() for c in moved)}): "
            f"{result.broken_by_plan[0].message}")
        out(f"instead, {result.how}:")
    else:
        out(f"{result.installer}'s plan keeps the core safe:")
    for c in result.chosen.changes:
        out(f"  {c.shown()}")
    for f in result.warnings:
        out(f"warning: {f.message}" + (f" (hint: {f.remedy})" if f.remedy else ""))
    if args.dry_run:
        out("dry run: nothing was installed")
        return finish(0, "would-install", result)
    try:
        pg.carry_out(req, result)
    except InstallerFailed as err:
        text = str(err.output)
        if text:
            o.err.write(text if text.endswith("\n") else text + "\n")
        left = ("the environment is as it was" if not err.changed else
                "it changed " + ", ".join(c.shown() for c in err.changed) + " (run `glmcompat verify`)")
        o.err.write(o.line(f"error: {err.installer} failed installing the judged plan (exit {err.returncode}); "
                                f"{left}") + "\n")
        changed = tuple(_change(c) for c in err.changed or ())
        return finish(3, "install-failed", result)
    after = result.after or {}
    now = pg.diff(live.packages, after)
    kept = pg.core_of(after, facts)
    out(f"changed: {', '.join(c.shown() for c in now) or 'nothing'}")
    moved_core = any(c.name in result.tracked for c in now)
    out(f"core {'now' if moved_core else 'unchanged'}: {', '.join(pg.pins(kept)) or 'none'}")
    for c in result.drift:
        out(f"warning: the install differs from the judged plan: {c.shown()} (run `glmcompat verify`)")
    changed = tuple(_change(c) for c in now)
    return finish(0, "installed", result)


def _change(c: Any) -> ChangeDoc:
    from glmcompat.model.outputs.pip import ChangeDoc  # lazy: the report only

    return ChangeDoc(name=c.name, old=c.old, new=c.new)


def _with_outcome(doc: PipInstallOutput, r: Any) -> PipInstallOutput:
    """``doc`` with the plans judged: the installer's own, the one chosen, and what each adds."""
    from glmcompat.model.findings import FindingDoc  # lazy: --json only
    from glmcompat.model.outputs.pip import ChosenDoc  # lazy: --json only

    chosen = None
    if r.chosen is not None:
        chosen = ChosenDoc(how=r.how if r.constrained else "the installer's own plan", requirements_added=tuple(r.extra),
                        changes=tuple(_change(c) for c in r.chosen.changes))
    return replace(doc, installer=r.installer, installer_plan=tuple(_change(c) for c in r.plan.changes),
                   breaks=tuple(FindingDoc.of(f) for f in r.broken_by_plan), chosen=chosen,
                   warnings=tuple(FindingDoc.of(f) for f in r.warnings),
                   already=tuple(FindingDoc.of(f) for f in r.already), drift=tuple(_change(c) for c in r.drift))


def _installer_failed(o: Any, err: Any) -> int:
    """The installer's own error, passed through as it printed it, then one line of ours."""
    text = str(err.output)
    if text:
        o.err.write(text if text.endswith("\n") else text + "\n")
    o.err.write(o.line(f"error: {err.installer} failed (exit {err.returncode}); nothing was changed by glmcompat") + "\n")
    return int(err.exit_code)
