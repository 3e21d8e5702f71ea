"""``glmcompat lock`` in a user's project (project mode) or on a requirements.in (requirements mode): the options
as the command line gave them, the settings of ``[tool.glmcompat]``, and the output (text or ``--json``)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from glmcompat.cli.commands._common import Output, dump_json, output, paint_line
from glmcompat.cli.commands._common import setting as _setting
from glmcompat.cli.commands._machine import machine_for
from glmcompat.cli.commands._common import settings_targets as _settings_targets
from glmcompat.cli.fastlock import Exit
from glmcompat.decide.plan import plan
from glmcompat.edges.indexconfig import IndexOptions
from glmcompat.matrix.load import load_facts
from glmcompat.model.errors import InputError, UnsafeError, classify
from glmcompat.model.platforms import PLATFORM_NAME
from glmcompat.ops import projectspec
from glmcompat.ops.projectlock import (
    NoTarget,
    ProjectLockRequest,
    ProjectLockResult,
    default_output,
    lock_project_recorded,
    lock_requirements,
)
from glmcompat.ops.projectresult import replayed
from glmcompat.readers import pyproject as pp

if TYPE_CHECKING:
    from glmcompat.matrix.view import Facts
    from glmcompat.ops.projectlock import ProjectLockResult


def _around(start: Path) -> tuple[dict[str, Any], Path | None]:
    """``[tool.glmcompat]`` of the project around ``start`` (for requirements mode), and its file."""
    found = pp.find(start)
    if found is None:
        return {}, None
    return pp.load(found).settings, found


def request(facts: Facts, args: Any, settings: dict[str, Any], where: Path | None, *,
            compiled: bool = True) -> ProjectLockRequest:
    """The :class:`ProjectLockRequest` from the flags, else ``[tool.glmcompat]``, its plan resolved once (targets,
    platform, model, machine: :func:`glmcompat.decide.plan.plan`); no target anywhere: exit 2 naming both places. ``compiled``: a requirements compile, for this machine's glibc unless one is named (a
    project's uv.lock is universal)."""
    machine = machine_for(args.target or None, getattr(args, "driver", None), getattr(args, "glibc", None),
                          settings, str(where) if where else None, glibc_default=compiled)
    targets = list(machine.targets) if args.target else (_settings_targets(settings, where) if where else [])
    if not targets:
        raise NoTarget(str(where) if where else None)
    platform = args.platform or (_setting(settings, "platform", where) if where else None)
    model = args.model or (_setting(settings, "model", where) if where else None)

    return ProjectLockRequest(plan(facts, targets, platform, model, machine), bool(args.upgrade), args.python,
                              IndexOptions(args.index_url, bool(args.no_cache)))


def _client_for(options: IndexOptions) -> Any:
    """:func:`glmcompat.edges.index.client_for`, imported when the index is first read: a cold project lock starts its
    predicted uv before (issue 39), and the client's module costs 12 ms of it."""
    from glmcompat.edges.index import client_for  # lazy: the index client, once the index is read

    return client_for(options)


def run_project(args: Any, mode: tuple[str, Path], *, out: TextIO | None = None, err: TextIO | None = None,
                early: projectspec.Run | projectspec.LockCheck | None = None) -> int:
    """Lock the project or requirements.in ``mode`` names; the answer on ``out``, errors on ``err`` (default: the
    process's stdout and stderr). A project lock takes ``early``, the speculative ``uv lock`` the entry point started
    (:func:`glmcompat.ops.projectspec.start_early`), else starts it first, before the matrix loads; it is discarded
    when the run ends."""
    kind, path = mode
    spec = early
    if spec is not None and (kind != "project" or args.dry_run or args.check):
        spec.discard()
        spec = None
    elif spec is None and kind == "project" and not (args.dry_run or args.check):
        spec = projectspec.start(path, IndexOptions(args.index_url, bool(args.no_cache)))
    try:
        return _run_project(args, mode, out, err, spec)
    finally:
        if spec is not None:
            spec.discard()


def _run_project(args: Any, mode: tuple[str, Path], out: TextIO | None, err: TextIO | None,
                 spec: projectspec.Run | projectspec.LockCheck | None) -> int:
    if args.out or args.with_ or args.force:
        raise InputError("--out, --with and --force are for the curated stacks (--stack); in a project, add the "
                         "requirement to its pyproject.toml")
    kind, path = mode
    o = output(args, out=out, err=err)
    facts = load_facts(args.matrix)
    if args.model:
        facts.model(args.model)
    if kind == "project":
        settings = pp.load(path).settings
        req = request(facts, args, settings, path, compiled=False)
    else:
        settings, where = _around(path.parent)
        req = request(facts, args, settings, where)
    noop = None
    try:
        if kind == "project":
            result, noop = lock_project_recorded(facts, path, req, dry_run=args.dry_run, check_only=args.check,
                                                 index=_client_for, quiet=bool(args.quiet), spec=spec)
        else:
            dest = Path(args.output_file) if args.output_file else default_output(path)
            result = lock_requirements(facts, path, dest, req, dry_run=args.dry_run, check_only=args.check,
                                       index=_client_for, quiet=bool(args.quiet))
    except UnsafeError as e:
        for c in e.causes:  # -v: the evidence the derivation cites, in full
            for ekind, src in c.evidence:
                o.detail(f"evidence ({ekind}): {src}")
        if args.json:
            failed = ProjectLockResult(kind, str(path), req.plan.names, req.platform, {}, error=e.message,
                                       evidence=[{"kind": k, "source": src} for c in e.causes for k, src in c.evidence])
            dump_json(failed.to_json(), o.out)  # the outcome, as one document (no second, error-only one)

            code, line = classify(e)
            o.err.write(paint_line(f"error: {line}", o.color) + "\n")
            return code
        raise
    # A run that wrote: the record of the run right after it holds that run's answer, not this one's
    replay = _replay(replayed(result), args, o) if noop is not None and result.written else None
    if args.json:
        dump_json(result.to_json(), o.out)
        return Exit(1 if args.check and result.problems else 0, noop, replay)
    return Exit(_render(result, args, o), noop, replay)


def _replay(again: ProjectLockResult, args: Any, o: Output) -> str:
    """What ``again`` prints on stdout, as :func:`run_project` would print it (same colour, same quietness)."""
    buf = io.StringIO()
    rep = Output(out=buf, quiet=o.quiet, verbose=o.verbose)
    rep.color = o.color
    if args.json:
        dump_json(again.to_json(), rep.out)
    else:
        _render(again, args, rep)
    return buf.getvalue()


def _render(result: Any, args: Any, o: Output) -> int:
    def say(line: str) -> None:
        print(o.line(line), file=o.out)

    targets = ", ".join(result.targets)
    shown = os.path.relpath(result.path)
    result.path = shown if not shown.startswith("..") else result.path
    core = " ".join(f"{n}=={v}" for n, v in sorted(result.core.items()) if n not in result.overrides)
    where = f"{result.path} for {targets} on {PLATFORM_NAME[result.platform]}"
    if args.check:
        for p in result.problems:
            print(f"error: {p}", file=o.err)
        if result.problems:
            fix = "glmcompat lock" + ("" if result.mode == "project" else f" {args.requirements}")
            print(f"hint: run `{fix}` to write the safe core and relock", file=o.err)
            return 1
        if not args.quiet:
            say(f"ok: {where}: the lock is current and safe ({core or 'no core package'})")
            for w in result.warnings:
                say(f"  warning: {w}")
        return 0
    if args.quiet and not args.dry_run:
        return 0
    if args.dry_run:
        say(f"Would lock {where}")
    else:
        what = ("wrote " + ", ".join(Path(w).name for w in result.written)) if result.written else "up to date"
        say(f"Locked {where} ({what})")
    if core:
        say(f"  core: {core}")
    if result.floors:
        say("  needs: " + "; ".join(f"{k} {'>= ' if k == 'driver' else ''}{v}" for k, v in sorted(result.floors.items())))
    if result.machine is not None and (result.machine.driver or result.machine.glibc):
        say(f"  machine: {'; '.join(result.machine.lines())}")
    for n, v in sorted(result.overrides.items()):
        say(f"  override: {n}=={v} ({result.override_reasons.get(n, 'an engine pin overridden')})")
    for w in result.warnings:
        say(f"  warning: {w}")
    if args.dry_run:
        if result.diff:
            o.out.write(result.diff if result.diff.endswith("\n") else result.diff + "\n")
        elif result.mode == "project":
            say("  pyproject.toml: no change")
    return 0
