"""``glmcompat lock``: resolve the core, write a pyproject.toml, run the real ``uv lock``, check the
result, export host-free requirements.txt and pylock.toml — as one unit, or not at all.

This module orchestrates; the parts live beside it: :mod:`glmcompat.ops.lockrender` (the request, the
resolution and the generated pyproject.toml: data never becomes code), :mod:`glmcompat.ops.publish` (the
output directory: whose files may be replaced, one run at a time, the stamped set published as one unit),
:mod:`glmcompat.ops.speculate` (``uv lock`` started on a predicted pyproject.toml while the core resolves) and
:mod:`glmcompat.ops.progress`. The decisions are in :mod:`glmcompat.decide.resolver` and
:mod:`glmcompat.decide.rules`.

Warm runs stay close to a plain ``uv lock``: the resolution is memoized (exclude-newer makes the index's answer
for a stack immutable), a stamp records the exact bytes of the set that was checked and exported, so an
unchanged lock is not checked or exported twice, and a run that changed nothing returns its :class:`NoopRecord`
(the summary's ``noop``) for the start-up path (:mod:`glmcompat.cli.fastlock`), which answers the next identical run without uv. Cold runs
overlap uv's resolution with the core's: uv starts on the predicted pyproject.toml (the one in ``--out``, else
the stack's pins) and its lock is used only when the prediction was exactly right.

uv never runs in ``--out``: it locks and exports in a private temporary directory (outside ``--out``, so no
project above ``--out`` can be taken for its workspace), seeded with a copy of the previous uv.lock, with
``UV_NO_BUILD=1`` so no source distribution is ever built.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from glmcompat.decide import rules
from glmcompat.decide.explain import resolve
from glmcompat.decide.resolution import parse_spec, pin_override
from glmcompat.decide.roots import Request, root_requirements
from glmcompat.edges.index import default_index_url
from glmcompat.edges.sources import IndexSource
from glmcompat.edges.uv import run_uv, run_uv_all, uv_binary
from glmcompat.matrix.locations import read_bounded, read_stored, seal, text_digest
from glmcompat.matrix.rows import Stack
from glmcompat.matrix.store import atomic_write, cache_dir
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import EnvironmentFailure, InputError, UnsafeError
from glmcompat.model.names import canonicalize
from glmcompat.model.platforms import PLATFORM_NAME
from glmcompat.ops import speculate
from glmcompat.ops.lockrender import (
    LockRequest,
    Resolution,
    comment,
    header_command,
    out_name,
    pyproject_data,
    render_pyproject,
)
from glmcompat.ops.lockset import OUTPUTS, STAGING_PREFIX, STAMP, digest
from glmcompat.ops.progress import Progress
from glmcompat.ops.publish import (
    check_out,
    check_replace,
    claim,
    exclusive,
    make_out,
    pause,
    publish,
    read_regular,
    recover,
    recover_locked,
    sha,
    stamp_files,
    stamp_of,
    verify_outputs,
    write_new,
)
from glmcompat.readers.formats import read_lock

if TYPE_CHECKING:
    from glmcompat.decide.resolution import Source
    from glmcompat.decide.resolver import Outcome
    from glmcompat.edges.index import ClientFactory

__all__ = [  # the output set's names are glmcompat.ops.lockset's
    "RESOLUTION_FORMAT", "LockOutcome", "LockRequest", "NoopRecord", "Resolution", "lock", "out_name", "pyproject_data", "recover",
    "render_pyproject", "resolution_key", "resolve_core", "verify_outputs",
]

RESOLUTION_FORMAT = 5


@dataclass(frozen=True)
class NoopRecord:
    """What a run that changed nothing read that its read log (:class:`glmcompat.matrix.readlog.ReadLog`) does not
    see: ``--out`` (absolute) and the digest of each such file its answer depends on (``""``: absent): a stored thing
    it treats as a fact (the memoized resolution), what uv reads in a project (:func:`glmcompat.edges.uv.reads`; a
    stack's uv runs in a directory of glmcompat's own and reads what that declares for none)."""

    out: str
    files: dict[str, str]


@dataclass(frozen=True)
class LockOutcome:
    """What :func:`lock` did, for the command's report: the output directory, the target and machine locked for,
    the core pins and the stack overrides applied, uv's lock's warnings; after a lock, the outputs rewritten
    (``changed``, in :data:`OUTPUTS` order; empty: up to date) and, for a run that changed nothing, what its answer
    read (``noop``, for the start-up path); after ``check_only``, the outputs not current (``stale``) and the signs
    that ``out`` is not one run's set (``problems``)."""

    out: str
    target: str
    platform: str
    pins: dict[str, str]
    overrides: dict[str, str]
    warnings: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    noop: NoopRecord | None = None
    stale: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _python_spec(facts: Facts, req: LockRequest) -> tuple[str, str]:
    """(requires-python, the interpreter minor to evaluate markers with)."""
    stack = facts.stack(req.stack)
    if req.python:
        parts = req.python.split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise InputError(f"--python: expected X.Y, got {req.python!r}")
        nxt = f"{parts[0]}.{int(parts[1]) + 1}"
        return f">={req.python},<{nxt}", req.python
    spec = stack.python or ">=3.11,<3.13"
    low = spec.split(",")[0].lstrip(">=").strip()
    return spec, low


def resolution_key(facts: Facts, req: LockRequest) -> str:
    stack = facts.stack(req.stack)
    # the index is part of the question: `lock --index-url X` must not reuse a resolution made on another index
    blob = json.dumps([RESOLUTION_FORMAT, facts.key, req.stack, req.target.name, req.model, req.python,
                       sorted(req.with_), req.upgrade, stack.exclude_newer,
                       req.platform, req.index.url or default_index_url()], sort_keys=True)

    return text_digest(blob)  # the one digest kind of stored names


def _memo_path(facts: Facts, req: LockRequest) -> Path:
    return cache_dir() / "resolutions" / f"{resolution_key(facts, req)}.json"


def resolve_core(facts: Facts, req: LockRequest, *, index: ClientFactory | None = None, source: Source | None = None,
                 quiet: bool = False, prefetch: bool = True) -> Resolution:
    """Resolve (or recall) the core pins for ``req``, from exactly one of: ``index``, how to reach the package index
    ``req.index`` names (:func:`glmcompat.edges.index.client_for`; its resolutions are memoized), or ``source``, a
    resolver source the caller holds (a recorded index: never memoized). With the stack's exclude-newer set, the
    index's answer is fixed, so a recalled resolution is exactly what a fresh one would give. ``prefetch``: read the
    index concurrently ahead of the resolver (off while a speculative uv, then on the critical path, uses the
    network and the processors)."""
    if (index is None) == (source is None):
        raise TypeError("resolve_core: pass exactly one of index (a client factory) and source")
    stack = facts.stack(req.stack)
    machine = req.platform
    requires_python, py = _python_spec(facts, req)
    memo = _memo_path(facts, req)
    if index is not None and stack.exclude_newer and not req.index.no_cache:
        try:  # sealed with its name: a damaged, foreign or renamed entry, a link or a FIFO is a miss, resolved again
            body = read_stored(str(memo), "resolution", memo.name)
            recalled = _recall(json.loads(body)) if body is not None else None
        except (ValueError, RecursionError):
            recalled = None
        if recalled is not None:
            return recalled

    request = Request(req.stack, req.target, req.model, req.with_, req.upgrade, py, machine)
    root_requirements(facts, request)  # bad input (a --with, a model no engine serves) fails before any index traffic
    if source is not None:
        return _resolution(facts, req, resolve(facts, source, request), requires_python)
    assert index is not None

    # What the resolver will most likely ask first, fetched concurrently: every core package's page and, unless
    # --upgrade looks past them, the METADATA of the stack's pins (and of --with's exact pins).
    wanted: dict[str, str | None] = dict.fromkeys(stack.pins)
    if not req.upgrade:
        wanted.update(stack.pins)
    for w in req.with_:
        name, eq, version = w.replace(" ", "").partition("==")
        if eq and name and version and not any(c in version for c in ",;<>=!~*[]@"):
            wanted[canonicalize_name(name)] = version
    with index(req.index) as client:
        read = IndexSource(client, python=py, exclude_newer=stack.exclude_newer, platform=machine)
        if prefetch:
            read.prefetch(list(wanted.items()))
        shown = Progress(read, quiet)
        try:
            outcome = resolve(facts, shown, request)
        finally:
            shown.done()
            read.close()  # stops prefetches the resolver did not need
    res = _resolution(facts, req, outcome, requires_python)
    if stack.exclude_newer and not req.index.no_cache:
        memoize(facts, req, res)
    return res


def _resolution(facts: Facts, req: LockRequest, outcome: Outcome, requires_python: str) -> Resolution:
    overrides = {n: outcome.pins[n] for n in outcome.overridden if n in outcome.pins}
    return Resolution(outcome.pins, overrides, outcome.overridden, requires_python, facts.stack(req.stack).exclude_newer)


def memoize(facts: Facts, req: LockRequest, res: Resolution) -> None:
    """Store ``res`` as the memoized resolution of ``req`` (sealed with its name: see :func:`resolve_core`)."""
    memo = _memo_path(facts, req)
    try:
        atomic_write(memo, seal("resolution", memo.name, json.dumps(res.__dict__, sort_keys=True).encode()))
    except OSError:
        pass  # a read-only cache only costs speed


def _recall(d: Any) -> Resolution | None:
    """A memoized resolution, or None when the entry does not have the expected shape (a miss)."""
    def strmap(x: Any) -> bool:
        return isinstance(x, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in x.items())

    if not (isinstance(d, dict) and strmap(d.get("pins")) and strmap(d.get("overrides"))
            and strmap(d.get("override_reasons")) and isinstance(d.get("requires_python"), str)
            and isinstance(d.get("exclude_newer"), (str, type(None)))):
        return None
    return Resolution(d["pins"], d["overrides"], d["override_reasons"], d["requires_python"], d["exclude_newer"])


def _speculate(facts: Facts, req: LockRequest, out: Path) -> speculate.Speculation | None:
    """Start ``uv lock`` on the most likely pyproject.toml while the core resolves from the index (a cold run):
    the one glmcompat wrote in ``out`` for this very request, else the one the stack's own pins give (not with
    ``--with`` or ``--upgrade``, which depart from them). None when there is nothing to predict."""
    if os.environ.get(speculate.OFF_ENV) or _memo_path(facts, req).exists():
        return None  # a recalled resolution is instant: nothing to overlap
    seed = speculate.read_prediction(str(out / "uv.lock"))  # what the lock seeds its own uv with
    pyproject = speculate.read_prediction(str(out / "pyproject.toml"))
    header = ("# " + comment(f"Generated by `{header_command(facts, req)}`: do not edit by hand.") + "\n").encode()
    files = stamp_files(speculate.read_prediction(str(out / STAMP)))
    if seed is not None and files.get("uv.lock") != sha(seed):
        seed = None  # uv starts only on files glmcompat is proven to have written (its stamp records them)
    if pyproject is not None and pyproject.startswith(header) and files.get("pyproject.toml") == sha(pyproject):
        return speculate.start(pyproject, seed, speculate.requires_python_of(pyproject))
    if req.with_ or req.upgrade:
        return None
    stack = facts.stack(req.stack)
    requires_python, _ = _python_spec(facts, req)
    overrides, reasons = _expected_overrides(facts, stack, req.model)
    guess = Resolution(dict(stack.pins), overrides, reasons, requires_python, stack.exclude_newer)
    return speculate.start(render_pyproject(facts, req, guess).encode(), seed, requires_python)


def _expected_overrides(facts: Facts, stack: Stack, model: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """The stack's overrides a lock on its own pins will most likely apply, and why (the resolver's words, for the
    pyproject.toml's comment): an override applies only where the engine's own requirement does not admit the pin,
    which the engine release's matrix row (its METADATA) tells; without one, the overrides the stack declares."""
    overrides = dict(stack.overrides)
    version = stack.pins.get(stack.engine)
    release = next((r for r in facts.rows("release") if r.package == stack.engine and r.version == version), None)
    if release is None or not overrides or version is None:
        return overrides, {}

    needs = {"transformers": facts.model(model).transformers} if model else {}
    reasons: dict[str, str] = {}
    for text in release.requires:
        try:
            r = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize(r.name)
        if name in overrides and r.specifier.contains(overrides[name], prereleases=True):
            del overrides[name]
        elif name in overrides and name in needs:
            why = pin_override(stack.engine, version, name, r.specifier, parse_spec(needs[name]))
            if why is not None:
                reasons[name] = why
    return overrides, reasons


def lock(facts: Facts, req: LockRequest, out: Path, *, index: ClientFactory | None = None, source: Source | None = None,
         quiet: bool = False, check_only: bool = False, force: bool = False,
         spec: speculate.Speculation | None = None) -> LockOutcome:
    """Write (or, with ``check_only``, verify) the lock for ``req`` in ``out``. Returns what it did.

    The core is resolved from exactly one of ``index`` (how to reach the package index: the command line's) and
    ``source`` (a resolver source in its place: tests pass a recorded one), as :func:`resolve_core`; ``force`` replaces
    files in ``out`` that glmcompat did not write (links are refused regardless). A run that changed nothing
    returns what its answer read as the outcome's ``noop`` (a :class:`NoopRecord`, for the start-up path). ``spec``:
    the speculation the command line started on --out's pyproject.toml before the heavy imports
    (:func:`glmcompat.ops.speculate.start_early`); used only if it answers this very lock, discarded either way."""
    check_out(out)  # a link or a file as --out: refuse before any work
    if spec is None and index is not None and not check_only:
        try:
            spec = _speculate(facts, req, out)
        except Exception:
            spec = None  # a request that fails: the resolution below says why, as always
    try:
        return _lock(facts, req, out, index=index, source=source, quiet=quiet, check_only=check_only, force=force,
                     spec=spec)
    finally:
        if spec is not None:
            spec.discard()


def _lock(facts: Facts, req: LockRequest, out: Path, *, index: ClientFactory | None, source: Source | None, quiet: bool,
          check_only: bool, force: bool, spec: speculate.Speculation | None) -> LockOutcome:
    # No prefetch while a speculative uv runs: the resolution is then off the critical path, and its concurrent
    # reads would take the network and the processors from uv, which is on it.
    res = resolve_core(facts, req, index=index, source=source, quiet=quiet, prefetch=spec is None)
    text = render_pyproject(facts, req, res).encode()
    summary = LockOutcome(str(out), req.target.name, req.platform, res.pins, res.overrides)
    if check_only:
        return _check_current(facts, req, res, text, out, summary)
    uv_binary()  # uv missing: fail before anything is created
    speculate.sweep()  # the private directories of runs a kill stopped
    created = make_out(out)
    done = False
    try:
        with exclusive(out, quiet, create=True) as held:
            pause("locked")
            recover_locked(out, held)
            old, stamp = claim(out, force)
            ready = spec.result_for(text, old["uv.lock"], res.requires_python) if spec is not None else None
            if ready is not None:
                try:
                    new, warnings = _relock(facts, req, res, text, ready, old, stamp, spec=spec)
                except OSError as e:  # in the speculation's temporary directory, not in --out
                    raise speculate.temp_failure(e, str(ready)) from None
            else:
                if spec is not None:
                    spec.discard()  # a wrong prediction: stop it before uv runs again on the same cache
                try:
                    tmp = speculate.private_dir(speculate.UV_PREFIX)  # held while used: a kill leaves it to a sweep
                except OSError as e:
                    raise speculate.temp_failure(e) from None
                try:
                    new, warnings = _relock(facts, req, res, text, Path(tmp), old, stamp)
                except OSError as e:  # in the temporary directory, not in --out
                    raise speculate.temp_failure(e, tmp) from None
                finally:
                    speculate.remove_private(tmp)
            if new is None:
                done = True
                return replace(summary, warnings=warnings, noop=_noop_record(facts, req, out, old, stamp, res))
            check_replace(out, old, stamp, new, force)  # a user's file, or one edited since, is never taken
            publish(out, new, stamp_of(facts, new), held)
            done = True
            return replace(summary, warnings=warnings, changed=[n for n in OUTPUTS if old[n] != new[n]])
    except OSError as e:
        raise EnvironmentFailure(f"--out {out}: {e.strerror or e}") from None
    finally:
        if created and not done:
            try:
                os.rmdir(out)  # a failed first run leaves no empty directory behind
            except OSError:
                pass


def _noop_record(facts: Facts, req: LockRequest, out: Path, old: dict[str, bytes | None], stamp: bytes | None,
                 res: Resolution) -> NoopRecord | None:
    """What the next identical run may be answered from (see :mod:`glmcompat.cli.fastlock`): only for a
    resolution the index cannot change (exclude-newer) that is memoized. The files the run read are its read log's;
    this names the one stored thing the answer treats as a fact (a log leaves glmcompat's stores out): the memo."""
    if not res.exclude_newer or stamp is None:
        return None
    try:
        memo = _memo_path(facts, req)
        memo_bytes = read_bounded(str(memo))
    except OSError:
        return None
    if memo_bytes is None:
        return None  # the next run resolves afresh: it must not be answered from a record
    return NoopRecord(os.path.abspath(out), {os.path.abspath(memo): digest(memo_bytes)})


def _relock(facts: Facts, req: LockRequest, res: Resolution, text: bytes, work: Path,
            old: dict[str, bytes | None], stamp: bytes | None, *,
            spec: speculate.Speculation | None = None) -> tuple[dict[str, bytes] | None, list[str]]:
    """In ``work``, a private temporary directory outside ``--out`` (so uv can never take a project above
    ``--out`` for the workspace root): uv lock (seeded with the previous uv.lock), check, export. None when
    uv kept the exact uv.lock of a complete previous set that the stamp says was checked and exported.
    ``spec``: a speculation that already ran that ``uv lock`` in ``work`` (its directory) on the same data and
    seed, and the exports after it. With the new outputs, uv's lock's warnings (a no-op has the same warnings as the
    run that wrote it: it must not hide them)."""
    tname = req.target.name
    if spec is None:
        write_new(work / "pyproject.toml", text)
        if old["uv.lock"] is not None:
            write_new(work / "uv.lock", old["uv.lock"])  # keeps unrelated pins stable, makes uv warm
        run_uv(list(speculate.LOCK), work, res.requires_python, req.index.uv_env())
    now = (work / "uv.lock").read_bytes()

    machine = req.platform
    from glmcompat.ops.indexpins import judged_artifacts  # lazy: judging a new lock only

    read = read_lock(work / "uv.lock")  # judged as check judges it: the compiled packages' own bytes too
    found = rules.evaluate_lock(read, req.target, req.model, facts, allow_unknown=False, platforms=[machine],
                                artifacts=judged_artifacts(read, facts, platforms=[machine]))
    if (old["pyproject.toml"] == text and now == old["uv.lock"] and all(old[n] is not None for n in OUTPUTS)
            and stamp == stamp_of(facts, {n: old[n] or b"" for n in OUTPUTS})):
        return None, [f.message for f in found if f.severity == "warning"]  # nothing to write
    errors = [f for f in found if f.severity == "error"]
    if errors:
        lines = "\n".join(f"  × {f.message}\n      hint: {f.remedy}" for f in errors)
        raise UnsafeError(f"uv's lock for {tname} on {PLATFORM_NAME[machine]} fails the check; nothing was written:\n{lines}")
    if spec is None or not spec.exported():
        run_uv_all([list(args) for args in speculate.EXPORTS], work, res.requires_python, req.index.uv_env())
    return {n: (work / n).read_bytes() for n in OUTPUTS}, [f.message for f in found if f.severity == "warning"]


def _check_current(facts: Facts, req: LockRequest, res: Resolution, text: bytes, out: Path,
                   summary: LockOutcome) -> LockOutcome:
    """``lock --check``: re-lock in a private temporary directory (nothing is written to ``out``) and name
    the committed outputs that are not current, and any sign that ``out`` is not one run's set."""
    exists = check_out(out)
    problems: list[str] = []
    if exists:
        with exclusive(out, quiet=True):  # a run publishing now finishes first
            problems = verify_outputs(out)
            old = {n: read_regular(out / n) for n in OUTPUTS}
    else:
        old = dict.fromkeys(OUTPUTS)
    try:
        with tempfile.TemporaryDirectory(prefix=STAGING_PREFIX) as tmp:
            new, warnings = _relock(facts, req, res, text, Path(tmp), old, None)
    except OSError as e:  # nothing of --out is written by --check: the temporary directory failed
        raise speculate.temp_failure(e) from None
    assert new is not None
    return replace(summary, warnings=warnings, stale=[n for n in ("pyproject.toml", "requirements.txt") if old[n] != new[n]],
                   problems=problems)
