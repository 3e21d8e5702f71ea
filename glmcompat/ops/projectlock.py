"""``glmcompat lock`` on the user's own project: their pyproject.toml (project mode) or requirements.in
(requirements mode), made safe for the GPU targets.

Project mode, in order:

1. **Read** the project as uv finds it (:mod:`glmcompat.readers.pyproject`): every member's dependencies, extras
   and dependency groups. The core packages among them (torch and its family, the kernels, flashinfer,
   transformers, the engines), with the user's own specifiers, are the resolver's roots; so is every core
   package the existing uv.lock holds (what the project's other dependencies pull in), and the versions that
   lock holds are preferred (least change; ``--upgrade``: the newest safe).
2. **Resolve** the core against the matrix for each target (:mod:`glmcompat.decide.resolver`, roots from
   :func:`~glmcompat.decide.resolver.project_roots`); one set that every target's rules accept, or an
   :class:`UnsafeError` that says which targets need which builds.
3. **Write** the set as ``[tool.uv] constraint-dependencies`` (and ``override-dependencies`` where an engine's
   pure-Python pin must give way, with the reason), each line marked ``# glmcompat lock``; a re-run replaces
   exactly those lines (:func:`glmcompat.readers.pyproject.with_core`).
4. **Lock** with the real ``uv lock`` in the project (its indexes, sources, environments, conflicts and
   workspace members are uv's to honour), then **check** every environment of the new uv.lock for every target
   on the lock's machine. A core package that appears only now (pulled in by a package the resolver does not
   follow) joins the roots and the round repeats (at most three rounds).
5. **Publish both or neither**: on any failure -- an unsafe lock, uv's error, an interrupt -- pyproject.toml and
   uv.lock are restored byte for byte (uv.lock removed when there was none).

Requirements mode compiles ``requirements.in`` (its ``-r``/``-c`` includes followed) with ``uv pip compile``
under a constraints file that holds the safe core, hash-pinned, checks the result and writes it atomically; the
``.in`` files are never modified.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from glmcompat.decide.plan import plan
from glmcompat.decide.stacks import CORE
from glmcompat.edges.indexconfig import IndexOptions
from glmcompat.edges.uv import uv_binary
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.locations import text_digest
from glmcompat.matrix.store import LockFile, atomic_write, cache_dir
from glmcompat.matrix.rows import Target
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import EnvironmentFailure, InputError, NoTarget, UnsafeError
from glmcompat.model.machine import Machine
from glmcompat.model.findings import Finding
from glmcompat.model.names import canonicalize
from glmcompat.model.platforms import PLATFORM_NAME, marker_env
from glmcompat.ops import lockprefetch, machinelock, projectspec
from glmcompat.ops.projectspec import restore as _restore
from glmcompat.ops.speculate import OFF_ENV
from glmcompat.ops.progress import Progress
from glmcompat.ops.projectrecord import _digests, _inputs, _recall, _record_path, _remember
from glmcompat.ops.projectresult import RESULT_VERSION, ProjectLockRequest, ProjectLockResult
from glmcompat.readers import pyproject as pp

MAX_ROUNDS = 3
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")

if TYPE_CHECKING:
    from glmcompat.ops.lockgen import NoopRecord

    from glmcompat.decide.resolver import Source
    from glmcompat.edges.index import ClientFactory


# ------------------------------------------------------------------------------------------------
# The core: what the project asks of it, and the set that serves every target
# ------------------------------------------------------------------------------------------------


def _python(requires_python: str | None, asked: str | None) -> str:
    """The CPython minor the core is resolved for: ``asked``, else this interpreter's when the project allows it,
    else the lowest the project allows."""
    if asked:
        return asked
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if not requires_python:
        return here
    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        raise InputError(f"requires-python: invalid specifier {requires_python!r}") from None
    if spec.contains(f"{here}.0", prereleases=True) or spec.contains(f"{here}.99", prereleases=True):
        return here
    ok = [p for p in PYTHONS if spec.contains(f"{p}.0", prereleases=True) or spec.contains(f"{p}.99", prereleases=True)]
    return ok[0] if ok else here


def _locked_core(lock: Path) -> dict[str, str]:
    """The core packages an existing uv.lock holds, each at its newest locked version (local label dropped). Only its
    ``[[package]]`` names and versions are read (the environments are the check's to build): from the lines uv writes
    first in each (:func:`glmcompat.ops.projectspec.packages`), else, for a lock of another layout, parsed."""
    try:
        data = lock.read_bytes()
        packages = projectspec.packages(data) or tomllib.loads(data.decode("utf-8")).get("package", [])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return {}  # absent or broken: uv's to replace
    out: dict[str, str] = {}
    for p in packages if isinstance(packages, list) else []:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not isinstance(p.get("version"), str):
            continue
        name = canonicalize(p["name"])
        if name not in CORE:
            continue
        try:
            v = Version(p["version"]).public
        except InvalidVersion:
            continue
        if name not in out or Version(v) > Version(out[name]):
            out[name] = v
    return out


def _name(text: str) -> str:
    """The canonical name of a requirement's text."""
    from packaging.requirements import Requirement  # lazy: resolving only (a recalled lock parses no requirement)

    return canonicalize(Requirement(text).name)


def _marker_applies(marker: str | None, python: str, machine: str) -> bool:
    if not marker:
        return True
    from packaging.markers import Marker  # lazy: resolving only (a recalled lock evaluates no marker)

    try:
        return bool(Marker(marker).evaluate({**marker_env(python, machine), "extra": ""}))
    except Exception:
        return True  # a marker packaging cannot evaluate here: keep the requirement (uv judges it)


def _source(facts: Facts, python: str, machine: str, exclude_newer: str | None, quiet: bool,
            wanted: dict[str, str | None], index_options: IndexOptions,
            open_client: ClientFactory) -> tuple[Source, Callable[[], None]]:
    from glmcompat.edges.sources import IndexSource  # lazy: resolving only (a recalled lock imports none of the resolver)

    client = open_client(index_options)
    index = IndexSource(client, python=python, exclude_newer=exclude_newer, platform=machine)
    index.prefetch(list(wanted.items()))
    shown = Progress(index, quiet)

    def close() -> None:
        shown.done()
        index.close()
        client.close()

    return shown, close


@dataclass(frozen=True)
class Core:
    pins: dict[str, str]
    overrides: dict[str, str]
    reasons: dict[str, str]


def resolve_set(facts: Facts, reqs: Sequence[str], origin: str, req: ProjectLockRequest, python: str,
                prefer: dict[str, str], *, exclude_newer: str | None = None, index: ClientFactory | None = None,
                source: Source | None = None,
                quiet: bool = False) -> Core:
    """The one core set that serves every target of ``req`` (UnsafeError when none does, naming which target
    needs what). ``reqs``: the project's requirements on the core, as text. The core is resolved from exactly one of
    ``index`` (how to reach the package index ``req.index`` names: :func:`glmcompat.edges.index.client_for`) and
    ``source`` (a resolver source in its place: a recorded index)."""
    from glmcompat.decide.explain import resolve  # lazy: resolving only (a recalled lock imports none of the resolver)
    from glmcompat.decide.roots import Request  # lazy: resolving only (a recalled lock imports none of the resolver)
    from glmcompat.decide.rules import evaluate  # lazy: resolving only (a recalled lock imports none of the resolver)

    machine = req.platform  # the plan's: every target ships on it
    close: Callable[[], None] = lambda: None  # noqa: E731
    if (index is None) == (source is None):
        raise TypeError("resolve_set: pass exactly one of index (a client factory) and source")
    if source is None:
        assert index is not None
        wanted: dict[str, str | None] = {_name(r): None for r in reqs}
        wanted.update({n: v for n, v in prefer.items() if not req.upgrade})
        source, close = _source(facts, python, machine, exclude_newer, quiet, wanted, req.index, index)
    outcomes: dict[str, Any] = {}
    try:
        failures: dict[str, UnsafeError] = {}
        for t in req.targets:
            tname = t.name
            r = Request("", t, req.model, tuple(reqs), req.upgrade, python, machine, origin=origin,
                        prefer=() if req.upgrade else tuple(sorted(prefer.items())),
                        driver=req.machine.driver if req.machine is not None else None)
            try:
                outcomes[tname] = resolve(facts, source, r)
            except UnsafeError as e:
                failures[tname] = e
    finally:
        close()
    names = req.plan.names
    if len(names) == 1 and failures:
        raise failures[names[0]]
    # One set for all: the first outcome that every target's rules accept.
    for outcome in outcomes.values():
        ok = all(not [f for f in evaluate(dict(outcome.pins), target=other, model=req.model, matrix=facts.on(machine))
                      if f.severity == "error"] for other in req.targets)
        if ok:
            overrides = {n: outcome.pins[n] for n in outcome.overridden if n in outcome.pins}
            return Core(dict(outcome.pins), overrides, dict(outcome.overridden))
    parts = [f"{t} needs {', '.join(f'{n} {v}' for n, v in o.pins.items() if n in ('torch', 'sgl-kernel', 'sglang-kernel', 'vllm'))}"
             for t, o in outcomes.items()] + [f"{t} has no safe set ({e.message.splitlines()[0]})" for t, e in failures.items()]
    raise UnsafeError(f"Because {'; '.join(parts)}, we can conclude that no one core set serves {', '.join(names)} "
                      f"together.\nhint: lock one project per target (`glmcompat lock --target {names[0]}` in each), or "
                      "give each target its own extra and declare them in uv's `conflicts`")


# ------------------------------------------------------------------------------------------------
# Project mode
# ------------------------------------------------------------------------------------------------


def project_requirements(project: pp.UvProject, python: str, machine: str) -> tuple[list[str], list[str]]:
    """(the project's requirements on the core, as text without extras; notes on what is left to uv)."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: resolving only (not a recalled lock)

    out: list[str] = []
    notes: list[str] = []
    own = set()
    for m in project.members:
        try:
            own.add(canonicalize(str(pp.parse(m, pp.read_text(m)).get("project", {}).get("name", ""))))
        except (AttributeError, InputError):
            pass
    for r in project.requirements:
        if r.name not in CORE or r.name in own:
            continue
        if r.url:
            notes.append(f"{r.where}: {r.text!r} is a direct reference; uv locks it as given and the check judges it")
            continue
        if not _marker_applies(r.marker, python, machine):
            continue
        spec = str(Requirement(r.text).specifier)
        out.append(f"{r.name}{spec}")
    # The user's own [tool.uv] constraints on the core narrow what the project asks for.
    mine = pp.ours(project.pyproject, project.text)
    for key in pp.KEYS:
        for raw in project.uv.get(key, []) if isinstance(project.uv.get(key), list) else []:
            if not isinstance(raw, str) or raw in mine[key]:
                continue
            try:
                r2 = Requirement(raw)
            except InvalidRequirement:
                raise InputError(f"[tool.uv] {key}: invalid requirement {raw!r}", path=str(project.pyproject)) from None
            name = canonicalize(r2.name)
            if name in CORE and str(r2.specifier) and any(_name(x) == name for x in out):
                out.append(f"{name}{r2.specifier}")
    return list(dict.fromkeys(out)), notes


def entries_of(core: Core) -> dict[str, list[tuple[str, str]]]:
    return {
        "constraint-dependencies": [(f"{n}=={v}", "") for n, v in sorted(core.pins.items()) if n not in core.overrides],
        "override-dependencies": [(f"{n}=={v}", core.reasons.get(n, "")) for n, v in sorted(core.overrides.items())],
    }


def _diff(path: str, old: str, new: str) -> str:
    import difflib  # lazy: after the predicted uv starts (issue 39: it and heapq cost that start 4 ms)

    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def _uv(args: list[str], cwd: Path, index: IndexOptions, python: str | None = None) -> subprocess.CompletedProcess[str]:
    """uv ``args`` in ``cwd``, with the command line's index options (``index``) in its environment."""
    try:
        return subprocess.run([uv_binary(), *args], cwd=cwd, env=projectspec.uv_env(index), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
    except OSError as e:
        raise EnvironmentFailure(f"cannot run uv: {e.strerror}") from None


def _uv_error(args: list[str], p: subprocess.CompletedProcess[str], where: str) -> str:
    text = (p.stderr or p.stdout).strip().splitlines()
    tail = " ".join(line.strip() for line in text if line.strip())[-600:]
    return f"`uv {' '.join(args)}` in {where} failed (exit {p.returncode}): {tail}"


def judge(facts: Facts, lock: Path, targets: Sequence[Target], model: str | None, machine: str,
          host: Machine | None = None) -> dict[str, list[Finding]]:
    """The check's findings for every target, on the lock's machine, strictly (as ``check --platform``)."""
    from glmcompat.decide.rules import evaluate_lock  # lazy: judging a new lock only (not a recalled one)
    from glmcompat.readers.formats import read_lock  # lazy: judging a new lock only (not a recalled one)

    from glmcompat.ops.indexpins import judged_artifacts, with_index_pins  # lazy: judging a new lock only

    read = with_index_pins(read_lock(lock), facts)
    # what check reads, so the lock written is one check passes: the compiled packages' own bytes (stored by sha256)
    arts = judged_artifacts(read, facts, platforms=[machine], ships_on={m for t in targets for m in t.ships_on})
    return {t.name: evaluate_lock(read, t, model, facts, allow_unknown=False, platforms=[machine],
                                  machine=host, artifacts=arts)
            for t in targets}


def _errors(found: dict[str, list[Finding]]) -> list[str]:
    return [f"{t}: {f.message}\n      hint: {f.remedy}" for t, fs in found.items() for f in fs if f.severity == "error"]


def _warnings(found: dict[str, list[Finding]]) -> list[str]:
    out: list[str] = []
    for fs in found.values():
        for f in fs:
            if f.severity == "warning" and f.message not in out:
                out.append(f.message)
    return out


def _exclude_newer(project: pp.UvProject) -> str | None:
    v = project.uv.get("exclude-newer")
    return v if isinstance(v, str) else None


class _Held:
    """One run at a time per project: a lock file in glmcompat's cache, and a ``flock`` on the project directory
    itself (the start-up path's recorded no-op is read under a shared one, so it never answers mid-write)."""

    def __init__(self, pyproject: Path, root: Path) -> None:
        self.pyproject, self.root = pyproject, root
        self.fd: int | None = None
        self.file: LockFile | None = None

    def __enter__(self) -> _Held:
        guard = _guard_key(self.pyproject)
        guard.parent.mkdir(parents=True, exist_ok=True)
        file = LockFile(str(guard))
        try:
            file.acquire(timeout=600)
        except TimeoutError:
            raise EnvironmentFailure(f"{self.pyproject}: another glmcompat lock of this project did not finish in 600 s") from None
        self.file = file
        try:
            import fcntl  # lazy: POSIX only (its ImportError is handled below)

            self.fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except (OSError, ImportError):
            if self.fd is not None:
                os.close(self.fd)
            self.fd = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
        if self.file is not None:
            self.file.release()


def _guard_key(path: Path) -> Path:
    return cache_dir() / "project-locks" / (text_digest(str(path.resolve())) + ".lock")


def lock_project(facts: Facts, pyproject: Path, req: ProjectLockRequest, *, dry_run: bool = False,
                 check_only: bool = False, index: ClientFactory | None = None, source: Source | None = None,
                 quiet: bool = False) -> ProjectLockResult:
    """Lock the project whose (workspace root) pyproject.toml is ``pyproject``; see the module's docstring.

    A project this function locked, with every input unchanged since (its pyproject.toml files, uv.lock, uv's
    configuration, the environment, the index, glmcompat and its matrix), is answered from the record that run
    left: the same core, warnings and verdicts, without resolving or running uv (``--upgrade`` always runs)."""
    return lock_project_recorded(facts, pyproject, req, dry_run=dry_run, check_only=check_only, index=index, source=source,
                                 quiet=quiet)[0]


def lock_project_recorded(facts: Facts, pyproject: Path, req: ProjectLockRequest, *, dry_run: bool = False,
                          check_only: bool = False, index: ClientFactory | None = None, source: Source | None = None,
                          quiet: bool = False, spec: projectspec.Run | projectspec.LockCheck | None = None
                          ) -> tuple[ProjectLockResult, NoopRecord | None]:
    """:func:`lock_project`, and what a run that changed nothing read (a
    :class:`~glmcompat.ops.lockgen.NoopRecord`, for the start-up path :mod:`glmcompat.cli.fastlock`), else None.
    ``spec``: the speculative ``uv lock`` the command line started (:func:`glmcompat.ops.projectspec.start`; the
    caller discards it); without one, a run that resolves starts its own."""
    project = pp.load(pyproject)
    machine = req.platform
    python = _python(project.requires_python, req.python)
    noop: NoopRecord | None = None
    record = None if req.upgrade else _record_path(facts, project, req, python, source)
    recalled = _recall(record, project)
    remembered: dict[str, str] | None = None  # the inputs' digests the record was written with
    if recalled is None:
        own = None if spec is not None or dry_run or check_only else projectspec.start(project.pyproject, req.index)
        try:
            result = _lock_project(facts, project, req, machine, python, dry_run=dry_run, check_only=check_only,
                                   index=index, source=source, quiet=quiet, early=spec or own)
        finally:
            if own is not None:
                own.discard()
        if not dry_run and not result.problems and result.verdicts and all(v == "safe" for v in result.verdicts.values()):
            remembered = _remember(record, project, result)
    else:
        result = recalled
    # A run that wrote leaves the record of the run right after it too: that run would find every input as this one
    # left it and answer from the record just remembered (what :func:`replayed` says), without resolving or running uv.
    if (not dry_run and not check_only and not req.upgrade and result.verdicts
            and (not result.written or remembered is not None)):
        from glmcompat.ops.lockgen import NoopRecord  # lazy: the stack lock's modules, for a no-op's record only

        files = remembered if remembered is not None else _digests(_inputs(project))  # hashed once a run
        if files is not None:
            noop = NoopRecord(os.path.abspath(project.root), files)
    return result, noop


def _lock_project(facts: Facts, project: pp.UvProject, req: ProjectLockRequest, machine: str, python: str, *,
                  dry_run: bool, check_only: bool, index: ClientFactory | None, source: Source | None,
                  quiet: bool, early: projectspec.Run | projectspec.LockCheck | None = None) -> ProjectLockResult:
    pyproject = project.pyproject
    lock = project.root / "uv.lock"
    reqs, notes = project_requirements(project, python, machine)
    locked = _locked_core(lock)
    extra = [n for n in locked if n not in {_name(r) for r in reqs}]
    targets = req.plan.names
    result = ProjectLockResult("project", str(pyproject), targets, machine, {}, warnings=list(notes))
    if not reqs and not extra:
        result.warnings.append("the project uses no package of the coupled core "
                               f"({', '.join(CORE)}): nothing for glmcompat to constrain")
    # each the caller's to discard: the entry point's uv lock --check in a locked project, else its run
    checked = early if isinstance(early, projectspec.LockCheck) else None
    spec = early if isinstance(early, projectspec.Run) else None
    if not req.upgrade and not dry_run:
        kept = _as_is(facts, project, req, machine, result, check_only, checked)
        if kept is not None:
            return kept
    predicted: projectspec.Run | None = None
    if spec is not None and spec.guessed and not (dry_run or check_only):
        # the entry point's run on the pyproject.toml the shipped table guessed: the very one _predicted gives for
        # each project it guesses (glmcompat.ops.projectguess), so it is not computed again; settle takes its lock
        # only where the pyproject.toml written is that one
        predicted, spec = spec, None
    else:
        seed = None if dry_run or check_only or not (reqs or extra) else _predicted(facts, project, reqs + extra, req,
                                                                                    python, locked)
        if seed is not None and spec is not None and spec.files.get("pyproject.toml") == seed:
            predicted, spec = spec, None  # the run on the project as written asks the predicted question: the same run
        else:
            predicted = None if seed is None else projectspec.start_predicted(project.root, seed, req.index)
    if predicted is not None and spec is not None:
        spec.discard()  # one uv at a time: the prediction is the likelier answer, and two uv slow each other
        spec = None
    # the compiled wheels the judge will read, read as uv selects them (a cold lock's judge then finds them stored),
    # of the run whose lock is the likely answer: the predicted one; where the matrix predicts nothing, the run on the
    # project as written, the only one running (the SGLang API project: its lock is the one taken, and the judge read
    # its one compiled wheel not shipped after uv's answer, 0.35 s); and one settle starts on the pyproject.toml written
    ahead = None if spec is None and predicted is None else lockprefetch.start(facts, python, machine, req.index, index)
    followed = predicted if predicted is not None else spec
    if ahead is not None and followed is not None:
        ahead.follow(followed)
    try:
        return _resolve_publish(facts, project, req, machine, python, reqs, extra, locked, result, dry_run=dry_run,
                                check_only=check_only, index=index, source=source, quiet=quiet, spec=spec,
                                predicted=predicted, ahead=ahead)
    finally:
        if predicted is not None:
            predicted.discard()
        if ahead is not None:
            ahead.close()


def _predicted(facts: Facts, project: pp.UvProject, reqs: list[str], req: ProjectLockRequest, python: str,
               locked: dict[str, str]) -> bytes | None:
    """The pyproject.toml this lock most likely writes, from the matrix alone: the core resolved over the releases its
    rows record (:class:`glmcompat.decide.remedysearch.MatrixSource`, the versions the project's uv.lock holds among
    them), written as :func:`_publish_held` writes it. Usually the index's resolution picks the same set (a kernel
    release pins its torch build, and torch its family); where it does not, nothing is lost but the run started on
    it. In a project that holds glmcompat's lines and no uv.lock, the core those lines hold instead (the run on the
    project as written then asks this very question, and is the one taken). None where the matrix finds no safe
    set; never fails."""
    from glmcompat.decide.remedysearch import MatrixSource  # lazy: resolving only (a recalled lock imports none)

    if os.environ.get(OFF_ENV):
        return None
    try:
        # glmcompat's own lines in a project without a uv.lock (committed without it): the core they hold, which the
        # index's resolution gave last time (the matrix may not record every release it picked)
        written = None if req.upgrade or (project.root / "uv.lock").is_file() else _written_core(project)
        core = written or resolve_set(facts, reqs, "pyproject.toml", req, python, locked,
                                      exclude_newer=_exclude_newer(project),
                                      source=MatrixSource(facts.on(req.platform), req.platform, dict(locked)), quiet=True)
        text = pp.with_core(project.pyproject, pp.without_ours(project.pyproject, project.text), entries_of(core))
        bom = project.pyproject.read_bytes().startswith(b"\xef\xbb\xbf")
    except Exception:
        return None
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode()


def _resolve_publish(facts: Facts, project: pp.UvProject, req: ProjectLockRequest, machine: str, python: str,
                     reqs: list[str], extra: list[str], locked: dict[str, str], result: ProjectLockResult, *,
                     dry_run: bool, check_only: bool, index: ClientFactory | None, source: Source | None, quiet: bool,
                     spec: projectspec.Run | None, predicted: projectspec.Run | None,
                     ahead: lockprefetch.Prefetch | None = None) -> ProjectLockResult:
    pyproject = project.pyproject
    core = Core({}, {}, {})
    if reqs or extra:
        core = resolve_set(facts, reqs + extra, "pyproject.toml", req, python, locked,
                           exclude_newer=_exclude_newer(project), index=index, source=source,
                           quiet=quiet)
    base = pp.without_ours(pyproject, project.text)
    new_text = pp.with_core(pyproject, base, entries_of(core))
    _fill(result, core)
    result.floors, result.machine = machinelock.driver_floor(facts, core.pins), req.machine
    result.diff = _diff("pyproject.toml", project.text, new_text)
    if dry_run:
        return result
    if check_only:
        return _check(facts, project, new_text, req, machine, result)
    uv_binary()
    return _publish(facts, project, new_text, reqs, req, machine, python, locked, result, index, source, quiet, spec,
                    predicted, ahead)


def _written_core(project: pp.UvProject) -> Core | None:
    """The core glmcompat's own lines in pyproject.toml hold (each ``name==version``), or None when there are none
    or one is not of that form."""
    mine = pp.ours(project.pyproject, project.text)
    if not any(mine.values()):
        return None
    why = pp.reasons(project.text)
    found: dict[str, dict[str, str]] = {}
    for key in pp.KEYS:
        found[key] = {}
        for value in mine[key]:
            name, eq, version = value.partition("==")
            try:
                ok = bool(eq) and canonicalize(name) == name and str(Version(version)) == version
            except InvalidVersion:
                ok = False
            if not ok:
                return None
            found[key][name] = version
    pins = {**found["constraint-dependencies"], **found["override-dependencies"]}
    reasons = {n: why.get(f"{n}=={v}", "") for n, v in found["override-dependencies"].items()}
    return Core(dict(sorted(pins.items())), found["override-dependencies"], reasons)


def _as_is(facts: Facts, project: pp.UvProject, req: ProjectLockRequest, machine: str, result: ProjectLockResult,
           check_only: bool, checked: projectspec.LockCheck | None = None) -> ProjectLockResult | None:
    """Least change, without resolving: where pyproject.toml already holds glmcompat's core, `uv lock` (``--check``
    with ``check_only``) under it succeeds, and the uv.lock it leaves passes the check for every target with every
    core package in it pinned by those lines, there is nothing to change. None otherwise (the lock as it was
    restored): the full path resolves. ``checked``: the ``uv lock --check`` the entry point started in the project
    (:class:`glmcompat.ops.projectspec.LockCheck`); where it confirms the files as they are, `uv lock` would leave the lock
    byte for byte as it is, so it is not run again (issue 39: a fresh clone's uv then ran beside the imports)."""
    core = _written_core(project)
    lock = project.root / "uv.lock"
    if core is None or not lock.is_file():
        return None
    old_lock = lock.read_bytes()
    if check_only:
        if not (checked is not None and checked.confirms(project.root, projectspec.uv_env(req.index))) and _uv(
                ["lock", "--check"], project.root, req.index).returncode != 0:
            return None
        return _judged_as_is(facts, project, req, machine, result, core, old_lock, None)
    with _Held(project.pyproject, project.root):
        if project.pyproject.read_bytes().decode("utf-8", "replace").removeprefix("\ufeff") != project.text:
            return None  # changed meanwhile: the full path says so
        mode = lock.stat().st_mode & 0o7777
        try:
            current = checked is not None and checked.confirms(project.root, projectspec.uv_env(req.index))
            ok = current or _uv(["lock"], project.root, req.index).returncode == 0
            kept = _judged_as_is(facts, project, req, machine, result, core, old_lock, mode) if ok else None
        except BaseException:
            _restore(lock, old_lock, mode)
            raise
        if kept is None:
            _restore(lock, old_lock, mode)
        return kept


def _judged_as_is(facts: Facts, project: pp.UvProject, req: ProjectLockRequest, machine: str, result: ProjectLockResult,
                  core: Core, old_lock: bytes, mode: int | None) -> ProjectLockResult | None:
    lock = project.root / "uv.lock"
    if any(n not in core.pins for n in _locked_core(lock)):
        return None  # a core package the lines do not pin: resolve it
    found = judge(facts, lock, req.targets, req.model, machine, req.machine)
    if _errors(found):
        return None
    _fill(result, core)
    result.floors, result.machine = machinelock.driver_floor(facts, core.pins), req.machine
    result.verdicts = dict.fromkeys(found, "safe")
    result.warnings += _warnings(found)
    if lock.read_bytes() != old_lock:
        result.written.append(str(lock))
    return result


def _fill(result: ProjectLockResult, core: Core) -> None:
    result.core = dict(core.pins)
    result.overrides = dict(core.overrides)
    result.override_reasons = dict(core.reasons)


def _check(facts: Facts, project: pp.UvProject, new_text: str, req: ProjectLockRequest, machine: str,
           result: ProjectLockResult) -> ProjectLockResult:
    lock = project.root / "uv.lock"
    if new_text != project.text:
        result.problems.append("pyproject.toml does not hold the safe core's constraints")
    if not lock.is_file():
        result.problems.append("there is no uv.lock")
    else:
        p = _uv(["lock", "--check"], project.root, req.index)
        if p.returncode != 0:
            result.problems.append("uv.lock is not current with pyproject.toml (`uv lock --check` fails)")
        found = judge(facts, lock, req.targets, req.model, machine, req.machine)
        result.warnings += _warnings(found)
        for t, fs in found.items():
            result.verdicts[t] = "unsafe" if any(f.severity == "error" for f in fs) else "safe"
        result.problems += _errors(found)
    return result


def _publish(facts: Facts, project: pp.UvProject, new_text: str, reqs: list[str], req: ProjectLockRequest, machine: str,
             python: str, locked: dict[str, str], result: ProjectLockResult, index: ClientFactory | None,
             source: Source | None, quiet: bool, spec: projectspec.Run | None = None,
             predicted: projectspec.Run | None = None, ahead: lockprefetch.Prefetch | None = None) -> ProjectLockResult:
    pyproject = project.pyproject
    with _Held(pyproject, project.root):
        return _publish_held(facts, project, new_text, reqs, req, machine, python, locked, result, index, source, quiet,
                             spec, predicted, ahead)


def _publish_held(facts: Facts, project: pp.UvProject, new_text: str, reqs: list[str], req: ProjectLockRequest,
                  machine: str, python: str, locked: dict[str, str], result: ProjectLockResult, index: ClientFactory | None,
                  source: Source | None, quiet: bool, spec: projectspec.Run | None = None,
                  predicted: projectspec.Run | None = None, ahead: lockprefetch.Prefetch | None = None
                  ) -> ProjectLockResult:
    pyproject, lock = project.pyproject, project.root / "uv.lock"

    def judged() -> dict[str, list[Finding]]:
        if ahead is not None:
            ahead.drain()  # what it is reading, the judge would read again
        return judge(facts, lock, req.targets, req.model, machine, req.machine)

    old_py = pyproject.read_bytes()
    if old_py.decode("utf-8", "replace").removeprefix("\ufeff") != project.text:
        raise EnvironmentFailure(f"{pyproject}: changed while glmcompat was resolving; run it again")
    mode = pyproject.stat().st_mode & 0o7777
    old_lock = lock.read_bytes() if lock.is_file() else None
    lock_mode = lock.stat().st_mode & 0o7777 if old_lock is not None else None
    if not os.access(project.root, os.W_OK) or not os.access(pyproject, os.W_OK):
        raise EnvironmentFailure(f"{project.root}: not writable; nothing was changed")
    bom = old_py.startswith(b"\xef\xbb\xbf")
    try:
        text = new_text
        for _round in range(MAX_ROUNDS):
            if text.encode() != old_py.removeprefix(b"\xef\xbb\xbf"):
                atomic_write(pyproject, (b"\xef\xbb\xbf" if bom else b"") + text.encode(), mode=mode)
            if not _round and (spec is not None or predicted is not None):
                _warm(project.requires_python)
            p, early = (None, None) if _round or (spec is None and predicted is None) else projectspec.settle(
                spec, project.root, old_py, old_lock, pyproject.read_bytes(), result.core, result.overrides, req.index,
                lock_mode, predicted, meanwhile=judged, started=ahead.follow if ahead is not None else None)
            p = p or _uv(["lock"], project.root, req.index)
            if p.returncode != 0:
                msg = _uv_error(["lock"], p, str(project.root))
                raise UnsafeError(f"uv cannot lock the project under the safe core; nothing was changed:\n  {msg}\n"
                                  "hint: the requirement uv names conflicts with the core glmcompat chose "
                                  f"({', '.join(f'{n}=={v}' for n, v in sorted(result.core.items()))}); relax it, "
                                  "or pin the core yourself and run `glmcompat lock --dry-run` to see what fails")
            # A core package that only now appears (another dependency pulls it in) joins the roots.
            now = _locked_core(lock)
            missing = [n for n in now if n not in result.core]
            if not missing:
                break
            core = resolve_set(facts, reqs + list(result.core) + missing, "pyproject.toml", req, python,
                               {**now, **locked}, exclude_newer=_exclude_newer(project), index=index, source=source,
                           quiet=quiet)
            _fill(result, core)
            result.floors, result.machine = machinelock.driver_floor(facts, core.pins), req.machine
            text = pp.with_core(pyproject, pp.without_ours(pyproject, project.text), entries_of(core))
        # the lock judged while uv checked it, where it is the one kept (the first round's, never changed since)
        found = early if early is not None and not _round else judged()
        errors = _errors(found)
        if errors:
            lines = "\n".join(f"  × {e}" for e in errors)
            raise UnsafeError(f"uv's lock of {pyproject} fails the check on {PLATFORM_NAME[machine]}; nothing was "
                              f"changed:\n{lines}")
    except BaseException:
        _restore(pyproject, old_py, mode)
        _restore(lock, old_lock, lock_mode)
        raise
    result.diff = _diff("pyproject.toml", project.text, text)
    result.verdicts = dict.fromkeys(found, "safe")
    result.warnings += _warnings(found)
    new_lock = lock.read_bytes()
    if pyproject.read_bytes() != old_py:
        result.written.append(str(pyproject))
    if new_lock != old_lock:
        result.written.append(str(lock))
    return result


def _warm(requires_python: str | None) -> None:
    """Do now what judging the new lock and recording the run take whatever the lock holds, while the speculative uv
    still runs: the process only waits on uv then, and each of these would otherwise follow uv's answer (issue 39: a
    cold lock): the imports, and the wheel tags of each environment the judge reads (a uv.lock's requires-python is
    its project's)."""
    import glmcompat.decide.rules.lockjudge  # noqa: F401  # lazy: judging a new lock only (not a recalled one)
    import glmcompat.ops.artifacts  # noqa: F401  # lazy: judging a new lock only (its compiled wheels)
    import glmcompat.ops.indexpins  # noqa: F401  # lazy: judging a new lock only (45 ms of imports)
    import glmcompat.ops.lockgen  # noqa: F401  # lazy: a no-op's record only (see lock_project_recorded)
    import glmcompat.readers.formats  # noqa: F401  # lazy: judging a new lock only (not a recalled one)
    from glmcompat.model.environments import python_envs  # lazy: judging a new lock only (not a recalled one)
    from glmcompat.model.platforms import PLATFORMS  # lazy: judging a new lock only (not a recalled one)
    from glmcompat.model.wheeltags import prepare  # lazy: judging a new lock only (not a recalled one)

    for machine in PLATFORMS:
        for env in python_envs(requires_python, machine):
            prepare(env["python_version"], machine)


# ------------------------------------------------------------------------------------------------
# Requirements mode
# ------------------------------------------------------------------------------------------------


def default_output(infile: Path) -> Path:
    return infile.with_suffix(".txt") if infile.suffix == ".in" else infile.with_name(infile.name + ".txt")


def lock_requirements(facts: Facts, infile: Path, out: Path, req: ProjectLockRequest, *, dry_run: bool = False,
                      check_only: bool = False, index: ClientFactory | None = None, source: Source | None = None,
                      quiet: bool = False) -> ProjectLockResult:
    """Compile ``infile`` (pip-tools style) into a hash-pinned ``out`` whose core is the safe set."""
    from packaging.markers import Marker  # lazy: requirements mode only
    from glmcompat.readers.formats import read_bytes  # lazy: requirements mode only
    from glmcompat.readers.formats.common import decode_text  # lazy: requirements mode only
    from glmcompat.readers.formats.requirements import parse_requirements  # lazy: requirements mode only

    if out.resolve() == infile.resolve():
        raise InputError("the output would replace the input; pass -o requirements.txt", path=str(infile))
    read = parse_requirements(infile, decode_text(infile, read_bytes(infile)))
    machine = req.platform
    python = req.python or f"{sys.version_info[0]}.{sys.version_info[1]}"
    env = {**marker_env(python, machine), "extra": ""}
    reqs: list[str] = []
    names: set[str] = set()
    for e in read.entries:
        if e.name not in CORE or e.source != "registry":
            continue
        if e.marker:
            try:
                if not Marker(e.marker).evaluate(env):
                    continue
            except Exception:
                pass
        spec = f"=={e.version}" if e.version else (e.spec or "")
        if e.constraint and e.name not in names:
            continue
        names.add(e.name)
        reqs.append(f"{e.name}{spec}")
    prefer = _prefer_from(out)
    result = ProjectLockResult("requirements", str(out), req.plan.names, machine, {},
                               machine=req.machine)
    core = (resolve_set(facts, reqs, str(infile), req, python, prefer, index=index, source=source, quiet=quiet)
            if reqs else Core({}, {}, {}))
    _fill(result, core)
    if not reqs:
        result.warnings.append(f"{infile} names no package of the coupled core: nothing for glmcompat to constrain")
    if dry_run:
        return result
    uv_binary()
    shown = " ".join(["glmcompat lock", os.path.relpath(infile, out.parent or ".")] + [f"--target {t}" for t in result.targets]
                     + ([f"--platform {machine}"] if req.plan.chosen else []) + (["--model", req.model] if req.model else [])
                     + machinelock.flags(req.machine)
                     + ([] if out == default_output(infile) else ["-o", os.path.relpath(out, out.parent or ".")]))
    import tempfile  # lazy: requirements mode only (a project lock's predicted uv starts without it, issue 39)

    with tempfile.TemporaryDirectory(prefix="glmcompat-compile-") as tmp:
        cons = Path(tmp) / "glmcompat-core.txt"
        cons.write_text("".join(f"{n}=={v}\n" for n, v in sorted(core.pins.items()) if n not in core.overrides))
        ovr = Path(tmp) / "glmcompat-overrides.txt"
        ovr.write_text("".join(f"{n}=={v}\n" for n, v in sorted(core.overrides.items())))
        target_file = Path(tmp) / "out.txt"
        if out.is_file():
            target_file.write_bytes(out.read_bytes())  # uv prefers what the output already pins (least change)
        args = ["pip", "compile", os.path.abspath(infile), "-c", str(cons), "--generate-hashes", "--quiet",
                "-o", str(target_file), "--python-version", python,
                "--python-platform", machinelock.python_platform(machine, req.machine), "--custom-compile-command", shown]
        if core.overrides:
            args += ["--overrides", str(ovr)]
        if req.upgrade:
            args.append("--upgrade")
        p = _uv(args, infile.parent if str(infile.parent) else Path("."), req.index)
        if p.returncode != 0:
            glibc = machinelock.glibc_cause(p.stderr or p.stdout or "", machine, req.machine)
            if glibc is not None:
                raise UnsafeError(f"{glibc[0]}; nothing was written\nhint: {glibc[1]}")
            raise UnsafeError("uv cannot compile the requirements under the safe core; nothing was written:\n  "
                              + _uv_error(["pip", "compile", str(infile)], p, str(infile.parent or ".")))
        # uv names the constraints file it was given in its "via" notes: name it the way the header does, not by
        # its temporary path (the output must be the same bytes from one run to the next).
        data = target_file.read_bytes()
        for tmpfile, label in ((cons, "glmcompat-core (the safe core)"), (ovr, "glmcompat-overrides")):
            data = data.replace(str(tmpfile).encode(), label.encode())
        found = judge(facts, target_file, req.targets, req.model, machine, req.machine)
        pins = _pins_of(target_file)
        result.floors = machinelock.floors(facts, pins, req.machine)
        data = machinelock.with_header(data, machinelock.header(facts, pins, req.machine))
        target_file.write_bytes(data)
    errors = _errors(found)
    if errors:
        lines = "\n".join(f"  × {e}" for e in errors)
        raise UnsafeError(f"the compiled {out} fails the check on {PLATFORM_NAME[machine]}; nothing was written:\n{lines}")
    result.warnings += _warnings(found)
    result.verdicts = {t: "safe" for t in found}
    old = out.read_bytes() if out.is_file() else None
    if check_only:
        if old != data:
            result.problems.append(f"{out} is not what `{shown}` writes")
            result.verdicts = {t: "stale" for t in found}
        return result
    if old != data:
        try:
            atomic_write(out, data, mode=(out.stat().st_mode & 0o7777) if old is not None else 0o644)
        except OSError as e:
            raise EnvironmentFailure(f"{out}: {e.strerror or e}; nothing was written") from None
        result.written.append(str(out))
    return result


def _pins_of(path: Path) -> dict[str, str]:
    """name -> version of every entry a compiled requirements file pins."""
    from glmcompat.readers.formats import read_lock  # lazy: requirements mode only

    return {e.name: e.version for e in read_lock(path, use_cache=False).entries if e.version}


def _prefer_from(out: Path) -> dict[str, str]:
    """The core versions an existing compiled output pins (least change)."""
    if not out.is_file():
        return {}
    from glmcompat.readers.formats import read_lock  # lazy: requirements mode only

    try:
        return {e.name: e.version.split("+")[0] for e in read_lock(out, use_cache=False).entries
                if e.name in CORE and e.version}
    except InputError:
        return {}


def _settings_targets(facts: Facts, settings: dict[str, Any], where: str) -> list[str]:
    """``[tool.glmcompat] targets`` (or ``target``) of ``where``, canonical; a name there that is no target: one line
    naming the file."""
    t = settings.get("targets", settings.get("target"))
    want = [t] if isinstance(t, str) else [x for x in (t or []) if isinstance(x, str)] if isinstance(t, list) else []
    try:
        return [facts.target(x).name for x in want]
    except InputError as e:
        raise InputError(f"[tool.glmcompat] targets: {e.message}", path=where) from None


def lock(path: str | os.PathLike[str] = ".", targets: Sequence[str] | str | None = None, *,
         platform: str | None = None, model: str | None = None, upgrade: bool = False, dry_run: bool = False,
         check: bool = False, output: str | os.PathLike[str] | None = None, index: ClientFactory | None = None,
         source: Source | None = None, machine: Machine | None = None) -> ProjectLockResult:
    """The library's ``glmcompat lock``: lock the project found from ``path`` (a directory, as uv finds it, or its
    pyproject.toml), or compile ``path`` when it is a requirements file (into ``output``, default ``.in`` -> ``.txt``).
    The core is resolved from exactly one of ``index`` (how to reach the package index:
    :func:`glmcompat.edges.index.client_for`) and ``source`` (a resolver source in its place: a recorded index), as
    :func:`resolve_set` takes them. Targets, platform and model default to ``[tool.glmcompat]``. Raises
    :class:`~glmcompat.model.errors.InputError` for bad input (:class:`NoTarget` where no target is named anywhere),
    :class:`~glmcompat.model.errors.UnsafeError` when no safe lock exists (nothing written)."""
    if targets is not None and not isinstance(targets, str | Sequence):
        raise InputError(f"targets: expected a target name or a list of them, not {type(targets).__name__}")
    if (index is None) == (source is None):
        raise TypeError("lock: pass exactly one of index (a client factory) and source")
    facts = load_facts()
    p = Path(path)
    requirements = p.is_file() and p.name != "pyproject.toml"
    found = None if requirements else pp.find(p.parent if p.is_file() else p)
    if not requirements and found is None:
        raise InputError(f"no pyproject.toml with [project] or [tool.uv.workspace] at or above {p}")
    settings = pp.load(found).settings if found is not None else {}
    want = [targets] if isinstance(targets, str) else list(targets or [])
    for t in want:
        if not isinstance(t, str):
            raise InputError(f"targets: expected a target name such as \"sm120\", not {t!r}")
    names = ([facts.target(t).name for t in want] if want
             else _settings_targets(facts, settings, str(found)) if found is not None else [])
    if not names:
        raise NoTarget(None if found is None else str(found), argument="targets")
    req = ProjectLockRequest(plan(facts, names, platform or settings.get("platform"), model or settings.get("model"),
                                  machine), upgrade)
    if requirements:
        out = Path(output) if output is not None else default_output(p)
        return lock_requirements(facts, p, out, req, dry_run=dry_run, check_only=check, index=index, source=source,
                                 quiet=True)
    assert found is not None
    return lock_project(facts, found, req, dry_run=dry_run, check_only=check, index=index, source=source, quiet=True)


__all__ = ["NoTarget", "ProjectLockRequest", "ProjectLockResult", "RESULT_VERSION", "default_output", "lock", "lock_project",
           "lock_project_recorded",
           "lock_requirements", "resolve_set"]
